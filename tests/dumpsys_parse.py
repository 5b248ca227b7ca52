#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Read `vitals` summary text as a dumpsys cpuinfo parser would and check
every field of every line against the JSON of the same answer.

Usage: dumpsys_parse.py TEXT JSON NOW_MS|- dumpsys|full

NOW_MS is the client's monotonic "now" in ms; "-" (a live run, now
unknown) checks the header's two spans against each other instead.

The rules are the ones AOSP's text follows, taken as facts from
ProcessCpuTracker (printCurrentLoad, printCurrentState, printProcessCPU,
printRatio, sLoadComparator) and from the bugreport tool's CpuUsageParser
(its header pattern, and TOTAL as the line that ends the block). The
expected figures are worked out here, independently of the client, from
the raw fields of the JSON (64-bit integers may be strings there, as in
proto3's JSON). Exit 0 when everything agrees; otherwise the first
disagreement on stderr, exit 1. Rendered times are read as UTC.
"""
import datetime
import json
import re
import struct
import sys

# CpuUsageParser.CPU_USAGE_RE and TOTAL_RE (a whole-line match each).
CPU_USAGE_RE = re.compile(r"CPU usage from (-?\d+)ms to (-?\d+)ms ago "
                          r"\((.*) to (.*)\):")
TOTAL_RE = re.compile(r".*TOTAL:.*")

# printCurrentState's header in general (ago or later, awake share).
HEADER_RE = re.compile(r"CPU usage from (\d+)ms to (\d+)ms (ago|later) "
                       r"\((.+) to (.+)\)(?: with (\d+)% awake)?:")
NUM = r"(\d+(?:\.\d)?%|n/a)"
PROC_RE = re.compile(r" ([ +-])" + NUM + r" (\d+)/(.*): " + NUM +
                     r" user \+ " + NUM + r" kernel"
                     r"(?: / faults:(?: (\d+) minor)?(?: (\d+) major)?)?")
TOTAL_FIELDS_RE = re.compile(NUM + r" TOTAL: " + NUM + r" user \+ " + NUM +
                             r" kernel(?: \+ " + NUM + r" iowait)?"
                             r"(?: \+ " + NUM + r" irq)?"
                             r"(?: \+ " + NUM + r" softirq)?")
LOAD_RE = re.compile(r"Load: (\S+) / (\S+) / (\S+)")
EXTRA_ROW_RE = re.compile(r"  ([ +-]) +(\d+) +(\S+) +(\S+) +(\d+) +(\d+)  "
                          r"(.*)")


class Mismatch(Exception):
    pass


def want(what, got, expected):
    if got != expected:
        raise Mismatch("%s: read %r, expected %r" % (what, got, expected))


def i(v):
    """A JSON integer, number or (proto3 canonical) decimal string."""
    if v is None:
        return 0
    return int(v)


def ratio(num, den):
    """printRatio, then the '%' printProcessCPU adds; n/a without den."""
    if den == 0:
        return "n/a"
    th = num * 1000 // den
    h = th // 10
    r = th - h * 10
    return ("%d.%d%%" % (h, r)) if h < 10 and r else "%d%%" % h


def as_float(tok):
    """A parsed figure as a number (None for n/a)."""
    return None if tok == "n/a" else float(tok.rstrip("%"))


def java_float(v):
    f = struct.unpack("f", struct.pack("f", v))[0]
    for d in range(1, 9):
        s = "%.*f" % (d, f)
        if struct.unpack("f", struct.pack("f", float(s)))[0] == f:
            return s
    return "%.9f" % f


def label(t):
    s = t.get("name") or t.get("comm") or ""
    if not s:
        return "?"
    return "".join("?" if ord(c) < 0x20 or ord(c) == 0x7f else c
                   for c in s)


def stamp(ns):
    ns = i(ns)
    if ns <= 0:
        return "n/a"
    t = datetime.datetime.fromtimestamp(ns // 10**9, datetime.timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M:%S") + ".%03d" % (ns % 10**9 // 10**6)


def check(lines, w, now_ms, mode):
    n = 0
    # printCurrentLoad
    m = LOAD_RE.fullmatch(lines[n])
    if not m:
        raise Mismatch("line 1 is not a Load line: %r" % lines[n])
    for k, key in enumerate(("load1", "load5", "load15")):
        g = w.get(key)
        exp = java_float(g["last"]) if g and i(g.get("n")) else "n/a"
        want(key, m.group(k + 1), exp)
    n += 1

    # the header: CpuUsageParser's pattern, and printCurrentState's rule
    h = lines[n]
    m = HEADER_RE.fullmatch(h)
    if not m:
        raise Mismatch("not a header: %r" % h)
    last = i(w.get("mono_start_ns")) // 10**6
    cur = i(w.get("mono_end_ns")) // 10**6
    if now_ms is None:
        # live: now is the client's; the window's length is known
        now_ms = last + int(m.group(1))
        if m.group(3) != "ago":
            raise Mismatch("a live window is in the past: %r" % h)
    if now_ms > last:
        exp = (now_ms - last, now_ms - cur, "ago")
    else:
        exp = (last - now_ms, cur - now_ms, "later")
    want("header span", (int(m.group(1)), int(m.group(2)), m.group(3)), exp)
    want("header start", m.group(4), stamp(w.get("wall_start_ns")))
    want("header end", m.group(5), stamp(w.get("wall_end_ns")))
    bs, be = i(w.get("boot_start_ns")), i(w.get("boot_end_ns"))
    boot = be // 10**6 - bs // 10**6
    awake = None
    if bs > 0 and boot > 0 and (cur - last) * 100 // boot != 100:
        awake = str((cur - last) * 100 // boot)
    want("awake", m.group(6), awake)
    cu = CPU_USAGE_RE.fullmatch(h)
    if exp[2] == "ago" and awake is None:
        if not cu:
            raise Mismatch("CpuUsageParser's header pattern fails: %r" % h)
        want("CpuUsageParser start", cu.group(3), m.group(4))
        want("CpuUsageParser end", cu.group(4), m.group(5))
    n += 1

    # processes, in AOSP's order, until TOTAL (where CpuUsageParser stops)
    hz = i(w.get("hz"))
    jms = 1000 // hz if 0 < hz <= 1000 else 0
    procs = sorted(w.get("procs") or [],
                   key=lambda t: (-(i(t.get("d_utime")) + i(t.get("d_stime"))),
                                  not t.get("born"), not t.get("exited"),
                                  i(t.get("id"))))
    fields = 0
    for t in procs:
        m = PROC_RE.fullmatch(lines[n])
        if not m:
            raise Mismatch("line %d is not a process line: %r" %
                           (n + 1, lines[n]))
        ut, st = i(t.get("d_utime")), i(t.get("d_stime"))
        den = i(t.get("wall_ns")) // 10**6 if jms else 0
        mark = "+" if t.get("born") else "-" if t.get("exited") else " "
        mi, ma = i(t.get("d_minflt")), i(t.get("d_majflt"))
        got = (m.group(1), m.group(2), int(m.group(3)), m.group(4),
               m.group(5), m.group(6),
               int(m.group(7)) if m.group(7) else 0,
               int(m.group(8)) if m.group(8) else 0)
        exp = (mark, ratio((ut + st) * jms, den), i(t.get("id")), label(t),
               ratio(ut * jms, den), ratio(st * jms, den), mi, ma)
        want("process line %d" % (n + 1), got, exp)
        # each number a number, and the whole no less than its parts' sum:
        # AOSP truncates each figure (to 1 from 10 % up, else to 0.1), so
        # u + k <= the exact whole < the printed whole + its unit
        p, u, k = (as_float(m.group(x)) for x in (2, 5, 6))
        unit = 1.0 if p is not None and p >= 10 else 0.1
        if p is not None and u + k >= p + unit + 1e-9:
            raise Mismatch("line %d: %s%% < %s%% + %s%%" % (n + 1, p, u, k))
        fields += 8
        n += 1

    if not TOTAL_RE.fullmatch(lines[n]):
        raise Mismatch("line %d: TOTAL expected, read %r" % (n + 1, lines[n]))
    m = TOTAL_FIELDS_RE.fullmatch(lines[n])
    if not m:
        raise Mismatch("TOTAL line does not follow the rule: %r" % lines[n])
    d = (w.get("all") or {}).get("d")
    if d:
        u = i(d.get("user")) + i(d.get("nice"))
        sy, io = i(d.get("system")), i(d.get("iowait"))
        irq, si = i(d.get("irq")), i(d.get("softirq"))
        used = u + sy + io + irq + si
        tot = used + i(d.get("idle"))
    else:
        u = sy = io = irq = si = used = tot = 0
    exp = (ratio(used, tot), ratio(u, tot), ratio(sy, tot),
           ratio(io, tot) if io else None, ratio(irq, tot) if irq else None,
           ratio(si, tot) if si else None)
    want("TOTAL", m.groups(), exp)
    fields += 6
    n += 1

    if mode == "dumpsys":
        if n != len(lines):
            raise Mismatch("text after TOTAL: %r" % lines[n])
        return fields
    # vitals' own section: after exactly one blank line
    want("blank line after TOTAL", lines[n], "")
    n += 1
    if not lines[n].startswith("vitals: window %d " % i(w.get("seq"))):
        raise Mismatch("vitals' section does not start: %r" % lines[n])
    n += 3  # its title, legend and column heads
    for t in procs:
        m = EXTRA_ROW_RE.fullmatch(lines[n])
        if not m:
            raise Mismatch("line %d is not a row: %r" % (n + 1, lines[n]))
        ut, st = i(t.get("d_utime")), i(t.get("d_stime"))
        wall, tt = i(t.get("wall_ns")), i(t.get("total_ticks"))
        core = ("%.1f%%" % ((ut + st) / hz / (wall / 1e9) * 100)
                if hz and wall else "n/a")
        share = "%.1f%%" % ((ut + st) / tt * 100) if tt else "n/a"
        mark = "+" if t.get("born") else "-" if t.get("exited") else " "
        want("row %d" % (n + 1),
             (m.group(1), int(m.group(2)), m.group(3), m.group(4),
              int(m.group(5)), int(m.group(6)), m.group(7)),
             (mark, i(t.get("id")), core, share, ut, st, label(t)))
        fields += 7
        n += 1
    more = i(w.get("nprocs_total")) - len(procs)
    if more > 0:
        want("more", lines[n], "  (%d more processes with activity)" % more)
        n += 1
    if not lines[n].startswith("CPU busy "):
        raise Mismatch("no CPU line: %r" % lines[n])
    return fields


def main():
    text = open(sys.argv[1], encoding="utf-8").read()
    doc = json.loads(open(sys.argv[2], encoding="utf-8").read())
    now_ms = None if sys.argv[3] == "-" else int(sys.argv[3])
    mode = sys.argv[4]
    if not text.endswith("\n"):
        print("dumpsys_parse: no final newline", file=sys.stderr)
        return 1
    try:
        fields = check(text[:-1].split("\n"), doc["snapshot"]["window"],
                       now_ms, mode)
    except (Mismatch, IndexError, KeyError, ValueError) as e:
        print("dumpsys_parse: %s" % e, file=sys.stderr)
        return 1
    print("dumpsys_parse: %d fields agree" % fields)
    return 0


if __name__ == "__main__":
    sys.exit(main())
