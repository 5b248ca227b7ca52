#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The daemon's symbol ordering file, from daemon/hot_functions.txt and
the archives it links: each listed function, and every copy the compiler
made of it (name.isra.N, name.part.N, name.constprop.N: gcov counts the
function under its own name, the binary runs the copy); never a
function's .cold part, which the compiler split off as unlikely.
    hot_order_expand.py OUT LIST ARCHIVE...
"""
import subprocess
import sys


def main():
    out, listed, archives = sys.argv[1], sys.argv[2], sys.argv[3:]
    names = []
    for line in open(listed):
        line = line.strip()
        if line and not line.startswith("#"):
            names.append(line)
    want = set(names)
    copies = []
    for a in archives:
        text = subprocess.run(["nm", "--defined-only", a],
                              capture_output=True, text=True,
                              check=True).stdout
        for line in text.splitlines():
            f = line.split()
            if len(f) != 3 or f[1] not in "tT" or "." not in f[2]:
                continue
            base, _, rest = f[2].partition(".")
            if base in want and "cold" not in rest.split("."):
                copies.append(f[2])
    seen = set()
    with open(out, "w") as o:
        for n in names + sorted(set(copies)):
            if n not in seen:
                seen.add(n)
                o.write(n + "\n")


if __name__ == "__main__":
    main()
