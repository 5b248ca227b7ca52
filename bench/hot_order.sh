#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# hot_order.sh: write daemon/hot_functions.txt, the functions the running
# daemon executes, which its link lays out together (daemon/meson.build,
# hot_order). A --coverage build whose counters are reset when the loop
# starts and written when it stops (VITALS_HOT_PROFILE, daemon.c) runs
# bench/mem.sh's population and queries (MEM_QUERY=1: a top every 30 s)
# for --seconds; every function gcov then counts as run is listed, by
# file and name. Set-up and stop code stays out, so the pages it is on
# are the ones the start-up pageout gives back for good. Run it again when
# the tick's code moves (bench/README.md, "Hot functions together").
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# 150 s: the store's checkpoint clock runs too (90 s missed it)
secs=150
builddir=$repo/build-hot
out=$repo/daemon/hot_functions.txt
while (($#)); do
	case $1 in
	--seconds) secs=$2; shift 2 ;;
	--builddir) builddir=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h | --help)
		echo "usage: $(basename "$0") [--seconds N] [--builddir DIR] [--out FILE]"
		exit 0 ;;
	*) echo "hot_order: unknown option $1" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "hot_order: needs root (mem.sh)" >&2; exit 1; }

reconf=()
[ -d "$builddir" ] && reconf=(--reconfigure)
meson setup "${reconf[@]}" "$builddir" "$repo" -Db_coverage=true \
	-Dc_args=-DVITALS_HOT_PROFILE -Dhot_order=disabled >/dev/null
ninja -C "$builddir" daemon/vitalsd client/vitals >/dev/null
find "$builddir" -name '*.gcda' -delete
MEM_QUERY=1 VITALS="$builddir/client/vitals" \
	bash "$here/mem.sh" --seconds "$secs" \
	--vitalsd "$builddir/daemon/vitalsd" | grep '^RESULT'

python3 - "$builddir" "$out" "$secs" <<'PY'
import glob, json, os, subprocess, sys

build, out, secs = sys.argv[1], sys.argv[2], sys.argv[3]
ran = set()
for gcda in glob.glob(os.path.join(build, "**", "*.gcda"), recursive=True):
    text = subprocess.run(["gcov", "-t", "--json-format", "-o",
                           os.path.dirname(gcda), gcda],
                          capture_output=True, text=True, cwd=build,
                          check=True).stdout
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        for f in json.loads(line).get("files", []):
            src = os.path.normpath(os.path.join(build, f["file"]))
            src = os.path.relpath(src, os.path.dirname(build))
            if src.startswith(os.path.basename(build) + os.sep):
                src = "<build>" + src[len(os.path.basename(build)):]
            elif not src.startswith("daemon" + os.sep):
                continue  # the client's queries: not the daemon's code
            for fn in f.get("functions", []):
                if fn["blocks_executed"] > 0:
                    ran.add((src, fn["name"]))
if len(ran) < 100:
    sys.exit(f"hot_order: only {len(ran)} functions ran: no profile?")
with open(out, "w") as o:
    o.write("# The functions the running daemon executes (bench/hot_order.sh,\n"
            f"# {secs} s at ~2,100 tasks with queries), laid out together by\n"
            "# the link (lld --symbol-ordering-file). Generated; one\n"
            "# symbol a line, by source file.\n")
    last = None
    for src, name in sorted(ran):
        if src != last:
            o.write(f"# {src}\n")
            last = src
        o.write(name + "\n")
    # not the project's code, so no gcov counts: seen running by uprobes
    # on every function the list left out (bench/README.md)
    o.write("# libgcc: 128-bit division, ~740 calls a second\n__udivti3\n")
print(f"hot_order: {len(ran)} functions in {out}")
PY
