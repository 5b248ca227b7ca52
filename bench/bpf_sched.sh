#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Cost of the sched_switch accounting (bpf/sched/sched.bpf.c) at a high context
# switch rate: ns per program run from the kernel's BPF statistics
# (run_time_ns / run_cnt of the pinned programs), measured while two
# threads pinned to one CPU ping-pong a byte over pipes; plus the ping-pong
# rate without and with the programs attached, and the drain cost.
#
#   bench/bpf_sched.sh [--seconds N] [--vitalsd PATH] [--cpu N]
#
# Needs root, cc, bpftool and python3. Loads the programs through the
# real daemon into a temporary pin directory and removes it afterwards.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
secs=${BENCH_SECONDS:-10}
cpu=${BENCH_CPU:-0}
vitalsd=${VITALSD:-$top/build/daemon/vitalsd}
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) secs=$2; shift 2 ;;
	--vitalsd) vitalsd=$2; shift 2 ;;
	--cpu) cpu=$2; shift 2 ;;
	*) echo "usage: $0 [--seconds N] [--vitalsd PATH] [--cpu N]" >&2
	   exit 1 ;;
	esac
done
missing=()
for t in "${CC:-cc}" bpftool python3; do
	command -v "$t" >/dev/null || missing+=("$t")
done
[ -x "$vitalsd" ] || missing+=("$vitalsd (ninja -C build)")
[ "$(id -u)" -eq 0 ] || missing+=("root")
if [ ${#missing[@]} -gt 0 ]; then
	echo "missing: ${missing[*]}" >&2
	exit 1
fi
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf

tmp=$(mktemp -d /tmp/vitals-bpfbench-XXXXXX)
pins=/sys/fs/bpf/vitals-bench-$$
dpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	rm -rf "$pins" "$tmp"
}
trap cleanup EXIT

"${CC:-cc}" -O2 -pthread -o "$tmp/pingpong" "$top/bench/pingpong.c"

# prog stats: "run_cnt run_time_ns" of one pinned program
stats() {
	bpftool -j prog show pinned "$pins/prog_vitals_tp_btf_$1" |
	    python3 -c 'import json,sys; p=json.load(sys.stdin);
print(p.get("run_cnt", 0), p.get("run_time_ns", 0))'
}

echo "ping-pong on CPU $cpu for $secs s, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
read -r _ base_rate < <("$tmp/pingpong" "$secs" "$cpu")

printf 'bpf_stats = on\n' > "$tmp/conf"
"$vitalsd" -f -c "$tmp/conf" --state-dir "$tmp/state" --socket "$tmp/s" \
    --window-s 2 --interval-ms 1000 --bpffs "$pins" 2> "$tmp/log" &
dpid=$!
for _ in $(seq 100); do
	grep -qs "bpf: " "$tmp/log" && break
	sleep 0.1
done
if ! grep -qs "bpf: loaded\|bpf: reused" "$tmp/log"; then
	echo "vitalsd did not load its programs:" >&2
	cat "$tmp/log" >&2
	exit 1
fi
sleep 1

progs="sched_switch sched_wakeup sched_wakeup_new sched_process_free"
declare -A c0 t0
for p in $progs; do read -r "c0[$p]" "t0[$p]" < <(stats "$p"); done
ctxt0=$(awk '/^ctxt/ {print $2}' /proc/stat)
read -r _ bpf_rate < <("$tmp/pingpong" "$secs" "$cpu")
ctxt1=$(awk '/^ctxt/ {print $2}' /proc/stat)
for p in $progs; do
	read -r c1 t1 < <(stats "$p")
	dc=$((c1 - c0[$p])); dt=$((t1 - t0[$p]))
	if [ "$dc" -gt 0 ]; then
		printf '%-20s %12d runs %10.0f runs/s %8.1f ns/run\n' "$p" \
		    "$dc" "$(echo "$dc / $secs" | bc -l)" \
		    "$(echo "$dt / $dc" | bc -l)"
	else
		printf '%-20s %12d runs\n' "$p" 0
	fi
done
printf 'context switches     %12d (%.0f/s, all CPUs)\n' \
    $((ctxt1 - ctxt0)) "$(echo "($ctxt1 - $ctxt0) / $secs" | bc -l)"
printf 'ping-pong round trips/s: %.0f without, %.0f with the programs (%+.1f%%)\n' \
    "$base_rate" "$bpf_rate" \
    "$(echo "($bpf_rate - $base_rate) * 100 / $base_rate" | bc -l)"
sleep 2.5 # a window closes: its drain cost is in the dump
kill -USR2 "$dpid"
sleep 0.5
grep -o "bpf health: [0-9]* drains ([0-9]* failed, [0-9.]* ms), [0-9]* entries" \
    "$tmp/log" | tail -1 | sed 's/^/last window: /'
