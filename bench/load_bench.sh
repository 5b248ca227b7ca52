#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# load_bench.sh: 500 well-behaved clients (five reader uids), 50 slowloris
# connections and a query flood (a sixth uid) against one daemon at once;
# prints the sampling jitter (tick lateness p99/max from health), a
# well-behaved reader's p50/p99 and the BUSY/refused counts. Root (the
# clients setuid to their reader uids). The store first gets an hour of
# synthetic windows (query_latency fill) so reads read real rows. See
# bench/README.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
builddir=${BUILDDIR:-$repo/build}
vitalsd=${VITALSD:-$builddir/daemon/vitalsd}
bench=${LOAD_BENCH:-$builddir/bench/load_bench}
fill=${QUERY_LATENCY:-$builddir/bench/query_latency}
secs=${BENCH_SECONDS:-30}
good=${BENCH_GOOD:-500}
loris=${BENCH_LORIS:-50}
uids=${BENCH_UIDS:-"61001 61002 61003 61004 61005 61009"}
hours=${BENCH_HOURS:-1}
threads=${BENCH_QUERY_THREADS:-2}
keep=0

while (($#)); do
	case $1 in
	--seconds) secs=$2; shift ;;
	--good) good=$2; shift ;;
	--loris) loris=$2; shift ;;
	--uids) uids=$2; shift ;;
	--query-threads) threads=$2; shift ;;
	--keep) keep=1 ;;
	-h|--help)
		echo "usage: $(basename "$0") [--seconds N] [--good N]" \
		    "[--loris N] [--uids \"U ...\"] [--query-threads N] [--keep]"
		exit 0 ;;
	*) echo "unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" = 0 ] || { echo "load_bench: run as root" >&2; exit 1; }
if [ -f "$builddir/build.ninja" ]; then
	ninja -C "$builddir" daemon/vitalsd bench/load_bench \
	    bench/query_latency >/dev/null
fi

tmp=$(mktemp -d /tmp/vitals-load.XXXXXX)
chmod 755 "$tmp"
dpid=
cleanup() {
	if [ -n "$dpid" ] && kill -0 "$dpid" 2>/dev/null; then
		kill -TERM "$dpid"
		wait "$dpid" || true
	fi
	if [ "$keep" = 1 ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

echo "machine: $(nproc) CPUs, $(uname -sr); load before:" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$tmp/state"
"$fill" fill "$tmp/state/vitals.db" "$hours" 300 200
cat >"$tmp/vitalsd.conf" <<CONF
user = none
reader_uids = $(echo "$uids" | tr ' ' ',')
max_connections = 1024
query_threads = $threads
CONF
ulimit -n 4096
"$vitalsd" -f -c "$tmp/vitalsd.conf" --state-dir "$tmp/state" \
    --socket "$tmp/s" --interval-ms 100 --window-s 1 \
    2>"$tmp/vitalsd.log" &
dpid=$!
for _ in $(seq 50); do
	[ -S "$tmp/s" ] && break
	sleep 0.1
done
[ -S "$tmp/s" ] || { echo "daemon did not start:" \
    "$(tail -3 "$tmp/vitalsd.log")" >&2; exit 1; }
chmod 666 "$tmp/s"
sleep 3
# shellcheck disable=SC2086
"$bench" "$tmp/s" "$secs" "$good" "$loris" $uids
kill -0 "$dpid" 2>/dev/null ||
	{ echo "daemon died: $(tail -3 "$tmp/vitalsd.log")" >&2; exit 1; }
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
