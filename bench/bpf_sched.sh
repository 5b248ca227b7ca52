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
# With build/bench/bpf_floor and build/bpf/sched_floor.bpf.o (a BPF build),
# empty programs on the same two tracepoints run over the same ping-pong:
# their ns/run is what the kernel's statistics put under every run (the
# sched_clock() reads around it, the call), printed as the floor, and the
# real programs' figure less it as "net".
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
secs=${BENCH_SECONDS:-10}
cpu=${BENCH_CPU:-0}
vitalsd=${VITALSD:-$top/build/daemon/vitalsd}
floor=${BPF_FLOOR:-$top/build/bench/bpf_floor}
floor_obj=${BPF_FLOOR_OBJ:-$top/build/bpf/sched_floor.bpf.o}
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
fpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	[ -n "$fpid" ] && kill "$fpid" 2>/dev/null && wait "$fpid" 2>/dev/null
	rm -rf "$pins" "$tmp"
}
trap cleanup EXIT

"${CC:-cc}" -O2 -pthread -o "$tmp/pingpong" "$top/bench/pingpong.c"

# prog stats: "run_cnt run_time_ns" of one pinned program, or of the
# floor's program on that tracepoint (floor_<tp>)
stats() {
	local what
	case $1 in
	floor_*) what="id ${fid[${1#floor_}]}" ;;
	*) what="pinned $pins/prog_vitals_tp_btf_$1" ;;
	esac
	# shellcheck disable=SC2086
	bpftool -j prog show $what |
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
declare -A fid
if [ -x "$floor" ] && [ -f "$floor_obj" ]; then
	"$floor" "$floor_obj" > "$tmp/floor" 2>&1 &
	fpid=$!
	for _ in $(seq 100); do
		[ "$(grep -c '^tp_btf/' "$tmp/floor")" -ge 2 ] && break
		kill -0 "$fpid" 2>/dev/null || break
		sleep 0.1
	done
	while read -r sec id; do
		case $sec in tp_btf/*) fid[${sec#tp_btf/}]=$id ;; esac
	done < "$tmp/floor"
	if [ -z "${fid[sched_switch]:-}" ] || [ -z "${fid[sched_wakeup]:-}" ]; then
		echo "bpf_floor did not attach (no floor figures):" >&2
		cat "$tmp/floor" >&2
		fid=()
	fi
fi
sleep 1

progs="sched_switch sched_wakeup sched_wakeup_new sched_process_free"
[ -n "${fid[sched_switch]:-}" ] && progs="$progs floor_sched_switch floor_sched_wakeup"
declare -A c0 t0 nsrun
for p in $progs; do read -r "c0[$p]" "t0[$p]" < <(stats "$p"); done
ctxt0=$(awk '/^ctxt/ {print $2}' /proc/stat)
read -r _ bpf_rate < <("$tmp/pingpong" "$secs" "$cpu")
ctxt1=$(awk '/^ctxt/ {print $2}' /proc/stat)
for p in $progs; do
	read -r c1 t1 < <(stats "$p")
	dc=$((c1 - c0[$p])); dt=$((t1 - t0[$p]))
	if [ "$dc" -gt 0 ]; then
		nsrun[$p]=$(echo "$dt / $dc" | bc -l)
		printf '%-20s %12d runs %10.0f runs/s %8.1f ns/run\n' "$p" \
		    "$dc" "$(echo "$dc / $secs" | bc -l)" "${nsrun[$p]}"
	else
		printf '%-20s %12d runs\n' "$p" 0
	fi
done
for p in sched_switch sched_wakeup; do
	[ -n "${nsrun[floor_$p]:-}" ] && [ -n "${nsrun[$p]:-}" ] || continue
	printf '%-20s %8.1f ns/run net of the floor (%.1f)\n' "$p" \
	    "$(echo "${nsrun[$p]} - ${nsrun[floor_$p]}" | bc -l)" \
	    "${nsrun[floor_$p]}"
done
printf 'context switches     %12d (%.0f/s, all CPUs)\n' \
    $((ctxt1 - ctxt0)) "$(echo "($ctxt1 - $ctxt0) / $secs" | bc -l)"
printf 'ping-pong round trips/s: %.0f without, %.0f with the programs (%+.1f%%)\n' \
    "$base_rate" "$bpf_rate" \
    "$(echo "($bpf_rate - $base_rate) * 100 / $base_rate" | bc -l)"
sleep 2.5 # a window closes: its drain cost is in the dump
kill -USR2 "$dpid"
sleep 0.5
grep -oE "bpf health: [0-9]+ drains \([0-9]+ failed, [0-9.]+ ms\), ([0-9]+ counter regressions, )?[0-9]+ entries" \
    "$tmp/log" | tail -1 | sed 's/^/last window: /' || true
