#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Check that suites said to be the same without BPF and ftrace are.

    scripts/nobpf_same.py BUILDDIR SUITE...

tests/meson.build tags as procfs_same the suites whose code is the same
whether BPF and ftrace are built or not; CI's -Dbpf=disabled
-Dftrace=disabled build leaves them out (--no-suite procfs_same). The
options change the sources that test HAVE_BPF or HAVE_FTRACE, and put
trace/ftrace_none.c for trace/ftrace.c, ftrace_open.c, ftrace_events.c.
This reads every object of BUILDDIR with nm (as scripts/file_cycles.py
does): a SUITE whose object reaches one of those files through the
functions and data it uses, directly or through other files, or whose own
source tests HAVE_BPF, is printed with the path, and the check fails. The
name tables (ftrace_state_name, ftrace_ev_name, scanner_name,
scanner_why_name, partial_why_name, dmabuf_iter_why_name) are outside the #if, the same in both
builds, and not followed. A SUITE without a source of its own (a script) is passed over; one whose
object was not built fails.

Exits 1 when a suite reaches a changed file, 2 when nothing was read."""
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

NAMES = {"ftrace_state_name", "ftrace_ev_name", "scanner_name",
         "scanner_why_name", "partial_why_name", "dmabuf_iter_why_name"}
FTRACE = ("daemon/trace/ftrace.c", "daemon/trace/ftrace_open.c",
          "daemon/trace/ftrace_events.c", "daemon/trace/ftrace_none.c")
DEFINES = set("TDBRVWCGS")
SWITCH = re.compile(r"HAVE_BPF|HAVE_FTRACE")


def symbols(path):
    out = subprocess.run(["nm", "-P", path], check=True,
                         capture_output=True, text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        if parts[1] == "U":
            used.add(parts[0])
        elif parts[1] in DEFINES:
            defined.add(parts[0])
    return defined, used


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    build, suites = sys.argv[1], sys.argv[2:]
    with open(os.path.join(build, "compile_commands.json")) as f:
        cmds = json.load(f)
    with open(os.path.join(build, "meson-info", "meson-info.json")) as f:
        top = json.load(f)["directories"]["source"]
    src = {}
    wanted = {name + ".p" for name in suites}
    for e in cmds:
        s = os.path.normpath(os.path.join(e["directory"], e["file"]))
        o = os.path.join(build, e["output"])
        r = os.path.relpath(s, top)
        # the libraries' objects and the listed suites' own
        if not os.path.exists(o) or (
                r.startswith(("tests/", "bench/", "fuzz/")) and
                not r.startswith("tests/lib/") and
                os.path.basename(os.path.dirname(o)) not in wanted):
            continue
        src[o] = s
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        syms = dict(zip(src, pool.map(symbols, src)))
    if not syms:
        print("nobpf_same: no objects read", file=sys.stderr)
        return 2

    def rel(o):
        return os.path.relpath(src[o], top)

    def switched(o):
        with open(src[o], errors="replace") as f:
            return bool(SWITCH.search(f.read()))

    changed = {o for o in syms
               if rel(o) in FTRACE or
               (not rel(o).startswith(("tests/", "bench/", "fuzz/")) and
                switched(o))}
    definer = {}
    for o, (d, _) in syms.items():
        if rel(o).startswith(("tests/check_", "bench/", "fuzz/")):
            continue
        for n in d:
            definer.setdefault(n, []).append(o)
    bad = 0
    for name in suites:
        objs = [o for o in syms
                if os.path.basename(os.path.dirname(o)) == name + ".p"]
        if not objs and os.path.exists(os.path.join(top, "tests",
                                                    name + ".c")):
            print(f"{name}: no object in {build} (not built)")
            bad += 1
        for o in objs:
            if switched(o):
                print(f"{name}: tests HAVE_BPF or HAVE_FTRACE itself")
                bad += 1
                continue
            prev = {o: None}
            todo = [o]
            hit = None
            while todo and hit is None:
                x = todo.pop(0)
                for n in sorted(syms[x][1] - NAMES):
                    for y in definer.get(n, ()):
                        if y in prev:
                            continue
                        prev[y] = (x, n)
                        if y in changed:
                            hit = y
                            break
                        todo.append(y)
                    if hit:
                        break
            if hit:
                chain = []
                k = hit
                while prev[k]:
                    chain.append(f"{rel(prev[k][0])} -{prev[k][1]}-> {rel(k)}")
                    k = prev[k][0]
                print(f"{name}: reaches {rel(hit)}: " +
                      "; ".join(reversed(chain)))
                bad += 1
    print(f"{len(suites)} suites, {bad} reaching a file the options change")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
