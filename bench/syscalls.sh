#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Cost of the syscall latency programs (bpf/syscalls/syscalls.bpf.c) on a
# write() loop to /dev/null (bench/sc_bench.c): ns per traced call
# (sys_enter + sys_exit, from the kernel's BPF statistics), the loop's
# slowdown flat out, and the collector's own CPU while a paced loop makes
# 100 k calls/s; then the same with a bpftrace peer (a syscount-like
# @[pid, nr] = count() and a latency histogram on tracepoint:raw_syscalls)
# when bpftrace is installed (scripts/deps.sh bench). Prints ratios.
#
#   bench/syscalls.sh [--calls N] [--rate R] [--seconds S]
#
# Needs root. Loads nothing pinned: the collector lives in sc_bench.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
bench=${SC_BENCH:-$top/build/bench/sc_bench}
calls=2000000
rate=100000
secs=10
while [ $# -gt 0 ]; do
	case $1 in
	--calls) calls=$2; shift 2 ;;
	--rate) rate=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	*) echo "usage: $0 [--calls N] [--rate R] [--seconds S]" >&2; exit 1 ;;
	esac
done
die() { echo "syscalls.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$bench" ] || die "$bench: build it (ninja -C build)"
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

field() { sed -n "s/.*\\b$1 \\([0-9.]*\\).*/\\1/p" "$2" | tail -1; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

# the best of three flat-out runs
flat() {
	local best="" v i
	for i in 1 2 3; do
		"$bench" loop "$calls" > "$tmp/loop"
		v=$(field ns_per_call "$tmp/loop")
		if [ -z "$best" ] || awk "BEGIN{exit !($v < $best)}"; then
			best=$v
		fi
	done
	echo "$best"
}

base=$(flat)
echo "untraced: $base ns a write()"

# ours: the collector for the flat runs and a paced run of $secs s
"$bench" collect $((secs + 8)) > "$tmp/coll" &
cpid=$!
pids+=("$cpid")
for _ in $(seq 100); do grep -q ready "$tmp/coll" && break; sleep 0.1; done
grep -q ready "$tmp/coll" || die "collector did not start"
ours=$(flat)
t0=$(ticks "$cpid")
"$bench" loop $((rate * secs)) "$rate" > "$tmp/paced"
t1=$(ticks "$cpid")
wait "$cpid"
pids=()
echo "vitalsd programs: $ours ns a write() flat out"
echo "  paced: $(cat "$tmp/paced")"
echo "  BPF statistics: $(cat "$tmp/coll" | tail -1)"
ours_run=$(field ns_per_call "$tmp/coll")
ours_cpu=$(awk "BEGIN{printf \"%.3f\", ($t1 - $t0) / $hz / $secs * 100}")
echo "  collector CPU during the paced run: $ours_cpu % of one CPU"

bt=""
if command -v bpftrace > /dev/null; then
	cat > "$tmp/peer.bt" <<'BT'
tracepoint:raw_syscalls:sys_enter { @start[tid] = nsecs; @[pid, args->id] = count(); }
tracepoint:raw_syscalls:sys_exit /@start[tid]/ {
	@lat = hist(nsecs - @start[tid]); delete(@start[tid]);
}
BT
	bpftrace "$tmp/peer.bt" > "$tmp/bt.out" 2>&1 &
	bpid=$!
	pids+=("$bpid")
	for _ in $(seq 300); do
		grep -q Attaching "$tmp/bt.out" 2>/dev/null && break
		sleep 0.1
	done
	sleep 1
	bt=$(flat)
	b0=$(ticks "$bpid")
	"$bench" loop $((rate * secs)) "$rate" > "$tmp/btpaced"
	b1=$(ticks "$bpid")
	kill -INT "$bpid"
	wait "$bpid" 2>/dev/null || true
	pids=()
	bt_cpu=$(awk "BEGIN{printf \"%.3f\", ($b1 - $b0) / $hz / $secs * 100}")
	echo "bpftrace peer (every syscall, @[pid, nr] + latency hist): $bt ns a write() flat out"
	echo "  bpftrace CPU during the paced run: $bt_cpu % of one CPU"
else
	echo "bpftrace: not installed (scripts/deps.sh bench)"
fi

# the programs as built, against their raw_tp and per-CPU variants
objdir=$(dirname "$bench")/../bpf
for o in syscalls syscalls_raw_tp syscalls_percpu; do
	[ -f "$objdir/$o.bpf.o" ] || continue
	"$bench" objcost "$objdir/$o.bpf.o" 4 > "$tmp/obj" &
	opid=$!
	pids+=("$opid")
	for _ in $(seq 100); do grep -q ready "$tmp/obj" && break; sleep 0.1; done
	"$bench" loop "$calls" > /dev/null
	"$bench" loop "$calls" > /dev/null
	wait "$opid"
	pids=()
	echo "variant $o: $(tail -1 "$tmp/obj")"
done

awk -v b="$base" -v o="$ours" -v t="$bt" -v r="$ours_run" 'BEGIN {
	printf "ours: +%.1f ns a call (x%.3f the untraced loop); kernel BPF %s ns a traced call (enter+exit)\n", o - b, o / b, r
	if (t != "")
		printf "bpftrace: +%.1f ns a call (x%.3f); ours / bpftrace added cost: %.2f\n", t - b, t / b, (o - b) / (t - b)
}'
