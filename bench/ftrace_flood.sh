#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# ftrace reading under an ATrace marker flood: vitalsd against
# `trace-cmd record`, both reading the same events in the same run.
# Each reader has its own instance with the same buffer size (2 MiB per
# CPU) and copy_trace_marker on, so every marker the flood writes to the
# top-level trace_marker reaches both; both also enable
# sched/sched_process_exit (vitalsd's slice bookkeeping needs it).
#
# For each flood rate (markers per second; 0: as fast as the writers go)
# the script reports, per reader: events read (the instance's "read
# events"), events lost (overrun + dropped + commit overrun of the
# instance's per-CPU stats), CPU time (user + system, children included)
# and CPU ns per event read, raw and net of an idle run of the same length
# (vitalsd also samples /proc once a second).
#
#   bench/ftrace_flood.sh [--seconds N] [--rates "R1 R2 ..."] [--threads N]
#
# Needs root, trace-cmd, unshare and /usr/bin/time. trace-cmd
# writes /proc/sys/kernel/ftrace_enabled at start; where /proc/sys is
# read-only (containers) and the value is already 1, it runs in a private
# mount namespace with that file bound to a scratch file holding "1".
# The top-level buffer's settings are compared before and after.
# VITALSD_CONF: extra vitalsd config lines (e.g. "ftrace_max_pages = 256").
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILDDIR:-$top/build}
secs=5
rates="20000 50000 100000 200000 400000 0"
threads=2
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) secs=$2; shift 2 ;;
	--rates) rates=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	*) echo "usage: $0 [--seconds N] [--rates \"R ...\"] [--threads N]" >&2
	   exit 1 ;;
	esac
done
vitalsd=$build/daemon/vitalsd
flood=$build/bench/marker_flood
trace_sum=$build/bench/trace_sum
missing=()
for t in trace-cmd unshare /usr/bin/time awk; do
	command -v "$t" >/dev/null || missing+=("$t")
done
[ -x "$vitalsd" ] && [ -x "$flood" ] && [ -x "$trace_sum" ] || missing+=("$build (ninja -C build)")
[ "$(id -u)" -eq 0 ] || missing+=("root")
if [ ${#missing[@]} -gt 0 ]; then
	echo "missing: ${missing[*]}" >&2
	exit 1
fi
T=/sys/kernel/tracing
[ -d $T/instances ] || mount -t tracefs nodev $T

tmp=$(mktemp -d /tmp/ftrace_flood.XXXXXX)
vinst=vitals_bench_$$
tinst=tcmd_bench_$$
cleanup() {
	[ -n "${vpid:-}" ] && kill "$vpid" 2>/dev/null || true
	[ -n "${tpid:-}" ] && kill "$tpid" 2>/dev/null || true
	wait 2>/dev/null || true
	rmdir $T/instances/$tinst 2>/dev/null || true
	rmdir $T/instances/$vinst 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

snap() {
	for f in tracing_on current_tracer buffer_size_kb set_event trace_clock \
	    options/overwrite options/copy_trace_marker; do
		printf '%s=%s\n' "$f" "$(cat $T/$f | tr '\n' ' ')"
	done
}
snap > "$tmp/top.before"

echo 1 > "$tmp/ftrace_enabled"
tcmd_run() { # seconds
	if echo 1 2>/dev/null > /proc/sys/kernel/ftrace_enabled; then
		exec trace-cmd record -k -B $tinst -b 2048 -O copy_trace_marker \
		    -e sched:sched_process_exit -o "$tmp/tc.dat" sleep "$1"
	fi
	exec unshare -m sh -c "mount --bind $tmp/ftrace_enabled \
	    /proc/sys/kernel/ftrace_enabled && exec trace-cmd record -k \
	    -B $tinst -b 2048 -O copy_trace_marker \
	    -e sched:sched_process_exit -o $tmp/tc.dat sleep $1"
}

# Σ over CPUs of one key of the instance's per-CPU stats
stat_sum() { # instance key
	cat $T/instances/$1/per_cpu/cpu*/stats 2>/dev/null |
	    awk -v k="$2:" 'index($0, k) == 1 { s += $NF } END { print s + 0 }'
}

# utime + stime of a live process (all its threads), ns; taken just
# before the stop so the final flush is not in it
proc_cpu_ns() { # pid
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); \
	    printf "%.0f\n", ($12 + $13) * 1e9 / hz }' /proc/$1/stat
}

cpu_ns() { # /usr/bin/time -f "%U %S" output
	awk 'NF == 2 && $1 ~ /^[0-9.]+$/ { printf "%.0f\n", ($1 + $2) * 1e9 }' "$1" |
	    tail -1
}

# One step: both readers, a flood at rate for secs; prints
# rate written v_read v_lost v_cpu t_read t_lost t_cpu
step() { # rate
	local rate=$1 st=$tmp/state.$1 n i
	rm -rf "$st" "$tmp/tc.dat"
	cat > "$tmp/v.conf" <<EOF
ftrace_instance = $vinst
ftrace_sched = off
bpf_load = off
scanner = procfs
threads = none
interval_ms = 1000
window_s = 2
${VITALSD_CONF:-}
EOF
	"$vitalsd" -f -c "$tmp/v.conf" --state-dir "$st" 2>"$tmp/v.log" &
	vpid=$!
	/usr/bin/time -f "%U %S" -o "$tmp/t.time" \
	    bash -c "$(declare -f tcmd_run); T=$T tinst=$tinst tmp=$tmp \
	    tcmd_run $((secs + 3))" >"$tmp/t.log" 2>&1 &
	tpid=$!
	for i in $(seq 100); do
		[ -d $T/instances/$vinst ] && [ -d $T/instances/$tinst ] &&
		    grep -q "ftrace: instance" "$tmp/v.log" && break
		sleep 0.1
	done
	sleep 1
	n=$("$flood" "$rate" "$secs" "$threads")
	sleep 2
	local v_cpu
	v_cpu=$(proc_cpu_ns "$vpid")
	kill "$vpid"
	wait "$vpid" || true
	vpid=
	wait "$tpid" || true
	tpid=
	local v_read v_lost t_read t_lost
	read -r v_read v_lost < <("$trace_sum" "$st/vitals.db")
	t_read=$(stat_sum $tinst "read events")
	t_lost=$(( $(stat_sum $tinst overrun) + $(stat_sum $tinst "commit overrun") +
	    $(stat_sum $tinst "dropped events") ))
	rmdir $T/instances/$tinst 2>/dev/null || true
	echo "$rate $n $v_read $v_lost $v_cpu $t_read $t_lost $(cpu_ns "$tmp/t.time")"
}

calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }

echo "ftrace_flood: $threads writer threads, ${secs}s per step, $(nproc) CPUs, kernel $(uname -r)"
echo "idle run (baseline CPU)..."
read -r _ _ _ _ v_idle _ _ t_idle < <(step 10)
printf "baseline CPU over a step: vitalsd %.1f ms, trace-cmd %.1f ms\n\n" \
    "$(calc "$v_idle / 1e6")" "$(calc "$t_idle / 1e6")"
printf "%9s %10s | %10s %8s %9s %7s %7s | %10s %8s %9s %7s %7s\n" \
    "rate/s" "written" "vitalsd" "lost" "cpu ms" "ns/ev" "net" \
    "trace-cmd" "lost" "cpu ms" "ns/ev" "net"
best_v=0
best_t=0
for r in $rates; do
	read -r rate n vr vl vc tr tl tc < <(step "$r")
	eps=$(( n / secs ))
	printf "%9s %10s | %10s %8s %9.1f %7.0f %7.0f | %10s %8s %9.1f %7.0f %7.0f\n" \
	    "$([ "$rate" = 0 ] && echo max || echo "$rate")" "$n" \
	    "$vr" "$vl" "$(calc "$vc / 1e6")" "$(calc "$vc / ($vr + 1)")" \
	    "$(calc "($vc - $v_idle) / ($vr + 1)")" \
	    "$tr" "$tl" "$(calc "$tc / 1e6")" "$(calc "$tc / ($tr + 1)")" \
	    "$(calc "($tc - $t_idle) / ($tr + 1)")"
	[ "$vl" -eq 0 ] && [ "$eps" -gt "$best_v" ] && best_v=$eps
	[ "$tl" -eq 0 ] && [ "$eps" -gt "$best_t" ] && best_t=$eps
done
echo
echo "sustained without loss: vitalsd $best_v events/s, trace-cmd $best_t events/s"
snap > "$tmp/top.after"
if ! diff -u "$tmp/top.before" "$tmp/top.after"; then
	echo "WARNING: top-level tracing settings changed during the run" >&2
fi
