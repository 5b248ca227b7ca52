#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""
Names bionic exports to an arm64 module built for API level N, from a
bionic checkout's version scripts (libc/libc.map.txt, libm/libm.map.txt,
libdl/libdl.map.txt). Writes one name a line, sorted: the list that
scripts/bionic/check.sh holds the build's libc calls against.

    symbols.py BIONIC_DIR [API] > scripts/bionic/api34.txt

A symbol counts when its version section and its own tags allow it:
  - sections with `introduced=M` (or `introduced-arm64=M`) need M <= API;
    LIBC_PRIVATE, LIBC_PLATFORM and LIBC_DEPRECATED are not the NDK's;
  - a symbol tagged with architectures counts only when arm64 is one;
  - a symbol's own `introduced=M` needs M <= API.
"""
import os
import re
import sys

ARCHES = {"arm", "arm64", "x86", "x86_64", "riscv64"}
SKIP_SECTIONS = {"LIBC_PRIVATE", "LIBC_PLATFORM", "LIBC_DEPRECATED"}


def level(tags, key="introduced"):
    for t in tags:
        for k in (key + "-arm64=", key + "="):
            if t.startswith(k):
                try:
                    return int(t[len(k):])
                except ValueError:
                    return 10**6  # a codename: not released
    return 0


def parse(path, api):
    out = set()
    sec_ok = False
    with open(path) as f:
        for raw in f:
            line = raw.strip()
            code, _, comment = line.partition("#")
            code = code.strip()
            tags = comment.split()
            m = re.match(r"^([A-Za-z0-9_]+)\s*\{$", code)
            if m:
                name = m.group(1)
                sec_ok = name not in SKIP_SECTIONS and level(tags) <= api
                continue
            if code.startswith("}") or code in ("global:", "local:", "*;"):
                continue
            m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*);$", code)
            if not m or not sec_ok:
                continue
            arches = ARCHES.intersection(tags)
            if arches and "arm64" not in arches:
                continue
            if level(tags) > api:
                continue
            out.add(m.group(1))
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    api = int(sys.argv[2]) if len(sys.argv) > 2 else 34
    names = set()
    for rel in ("libc/libc.map.txt", "libm/libm.map.txt",
                "libdl/libdl.map.txt"):
        names |= parse(os.path.join(root, rel), api)
    for n in sorted(names):
        print(n)


if __name__ == "__main__":
    main()
