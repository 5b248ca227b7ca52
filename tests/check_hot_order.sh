#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The daemon's link laid the running daemon's functions out together
# (daemon/meson.build, hot_order): of the symbols daemon/hot_functions.txt
# lists, those in the binary sit in one run of its text, with at most a
# tenth of that run other code (a cold static function sharing a hot
# one's name is ordered too; alignment pads). Built without the ordering
# they spread over the whole text and this fails. And the list still
# names the code: most of its names are in the binary (inlined ones are
# not), or bench/hot_order.sh is to be run again.
#   check_hot_order.sh VITALSD HOT_LIST
set -euo pipefail
export LC_ALL=C
bin=$1
list=$2
[ -x "$bin" ] || { echo "no binary $bin"; exit 1; }

nm -S --defined-only "$bin" | awk '$3 ~ /^[tT]$/ && $2 != "" {
	print $1, $2, $4 }' >"${TMPDIR:-/tmp}/hot_syms.$$"
trap 'rm -f "${TMPDIR:-/tmp}/hot_syms.$$"' EXIT
python3 - "${TMPDIR:-/tmp}/hot_syms.$$" "$list" <<'PY'
import sys

syms = []
for line in open(sys.argv[1]):
    a, s, name = line.split()
    syms.append((int(a, 16), int(s, 16), name))
listed = [l.strip() for l in open(sys.argv[2])
          if l.strip() and not l.startswith("#")]
want = set(listed)
hot = [x for x in syms if x[2] in want]
found = {x[2] for x in hot}
text = max(a + s for a, s, _ in syms) - min(a for a, _, _ in syms)
print(f"listed {len(want)}, in the binary {len(found)}; "
      f"text {text} bytes in {len(syms)} functions")
if len(found) * 2 < len(want):
    sys.exit("fewer than half the listed functions are in the binary: "
             "run bench/hot_order.sh again")
lo = min(a for a, _, _ in hot)
hi = max(a + s for a, s, _ in hot)
hot_bytes = sum(s for _, s, _ in hot)
cold_in = sum(s for a, s, n in syms if lo <= a < hi and n not in want)
print(f"hot: {hot_bytes} bytes in {len(hot)} functions, one run of "
      f"{hi - lo} bytes ({(hi - lo) / text:.0%} of the text), "
      f"{cold_in} bytes of other code inside it")
if cold_in * 10 > hi - lo:
    sys.exit("the listed functions are not laid out together")
PY
