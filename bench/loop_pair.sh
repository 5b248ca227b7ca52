#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# loop_pair.sh: the loop thread's CPU of two vitalsd binaries watching one
# population at the same time (issue 20). Both daemons run side by side
# for the same seconds (each with its own state, socket, pins and ftrace
# instance; the first started alternates per round), so the machine's
# noise hits both alike: compare the ratio. Per daemon and round: the loop
# thread's (the main thread's) time on a CPU from
# /proc/PID/task/PID/schedstat over the measured seconds, in ms per second
# of wall time, and its wake-ups per second (schedstat's timeslices).
# Then the same for each of its other threads by name (vitalsd-writer,
# -worker, -drain, -query summed): THREAD lines; VmRSS and VmHWM at the
# round's end.
# LOOP_PAIR_CONF: config lines both daemons get (e.g. 'syscall_trace =
# on'; "\n" between lines). LOOP_PAIR_REQUEST: a client request (e.g.
# '--json health') sent to both daemons, one after the other, every
# 1/LOOP_PAIR_REQUEST_HZ s (default 10) over the measured seconds: its
# answers are then in each loop's figure (REQUESTS lines: how many each
# answered).
# bench/README.md ("Loop thread, fifth pass") has
# figures.
#
#   bench/loop_pair.sh --vitalsd A --other B [--rounds N] [--seconds N]
#       [--procs N] [--threads N] [--busy PCT] [--burn-us N]
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=bench/lib.sh
. "$here/lib.sh"

vitalsd=${VITALSD:-$repo/build/daemon/vitalsd}
other=
secs=${BENCH_SECONDS:-60}
warmup=${BENCH_WARMUP:-15}
procs=${BENCH_PROCS:-500}
threads=${BENCH_THREADS:-4}
busy=${BENCH_BUSY_PCT:-10}
burn_us=${BENCH_BURN_US:-1000}
rounds=2
# shellcheck disable=SC2034 # population_opt sets it
tools=vitalsd
vitalsd_args=${VITALSD_ARGS:-}
keep=0
vitals=${VITALS:-$repo/build/client/vitals}
request=${LOOP_PAIR_REQUEST:-}
req_hz=${LOOP_PAIR_REQUEST_HZ:-10}
rqpid=

die() {
	echo "loop_pair: $*" >&2
	exit 1
}

while (($#)); do
	if population_opt "$@"; then
		shift "$opt_words"
		continue
	fi
	case $1 in
	--other) other=${2:?--other needs a path}; shift 2 ;;
	--rounds) rounds=${2:?--rounds needs N}; shift 2 ;;
	*) die "unknown option $1" ;;
	esac
done
population_check
[[ -x $vitalsd && -x $other ]] || die "need --vitalsd A --other B"
[[ $(id -u) == 0 ]] || die "needs root"
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
read -ra extra_args <<<"$vitalsd_args"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/loop_pair.XXXXXX")
declare -a vpid=() t0=() t1=() rss=() hwm=()
cleanup() {
	set +e
	[[ -n $rqpid ]] && kill "$rqpid"
	for p in "${vpid[@]}"; do
		[[ -n $p ]] && stop_pid "$p"
	done
	rm -rf /sys/fs/bpf/vitals_pair_$$_*
	population_stop
	((keep)) || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

population_start "$tmp" -p "$procs" -t "$threads" -b "$busy" -c "$burn_us" \
    -i 100 -I

start() {	# start IDX BIN: daemon IDX, pid into vpid[IDX]
	local i=$1 bin=$2 d=$tmp/d$1
	mkdir -p "$d/state"
	printf 'ftrace_instance = vitals_pair_%s_%s\n' $$ "$i" >"$d/conf"
	[[ -z ${LOOP_PAIR_CONF:-} ]] || printf '%b\n' "$LOOP_PAIR_CONF" >>"$d/conf"
	"$bin" --foreground -c "$d/conf" --state-dir "$d/state" \
	    --socket "$d/sock" --bpffs "/sys/fs/bpf/vitals_pair_$$_$i" \
	    "${extra_args[@]}" </dev/null >"$d/log" 2>&1 {ctlfd}>&- &
	vpid[i]=$!
}

snap() {	# snap PID: "ns slices" of its main thread
	local ns sl
	read -r ns _ sl <"/proc/$1/task/$1/schedstat"
	echo "$ns $sl"
}

threads_snap() {	# threads_snap PID: "comm ns slices" per thread name, summed
	local t c ns sl
	for t in /proc/"$1"/task/*; do
		[[ $t == "/proc/$1/task/$1" ]] && continue
		read -r c <"$t/comm" 2>/dev/null || continue
		read -r ns _ sl <"$t/schedstat" 2>/dev/null || continue
		echo "$c $ns $sl"
	done | awk '{ n[$1] += $2; s[$1] += $3 } END {
		for (c in n) print c, n[c], s[c] }' | sort
}

bins=("$vitalsd" "$other")
echo "== loop_pair: ${procs} x ${threads} at ${busy} %, ${secs} s a round, A=$vitalsd B=$other"
for ((r = 0; r < rounds; r++)); do
	if ((r % 2 == 0)); then order=(0 1); else order=(1 0); fi
	for i in "${order[@]}"; do
		start "$i" "${bins[i]}"
	done
	sleep "$warmup"
	count_tasks
	n0=$n_tasks
	for i in 0 1; do
		alive "${vpid[i]}" || die "daemon $i exited: $(tail -n 3 "$tmp/d$i/log")"
		s0[i]=$(snap "${vpid[i]}")
		t0[i]=$(threads_snap "${vpid[i]}")
	done
	w0=$(date +%s%N)
	if [[ -n $request ]]; then
		read -ra req_args <<<"$request"
		: >"$tmp/req0"
		: >"$tmp/req1"
		(
			while :; do
				for i in 0 1; do
					"$vitals" --socket "$tmp/d$i/sock" \
					    "${req_args[@]}" >/dev/null 2>&1 &&
					    echo >>"$tmp/req$i"
				done
				sleep "$(awk -v h="$req_hz" 'BEGIN { print 1 / h }')"
			done
		) &
		rqpid=$!
	fi
	sleep "$secs"
	if [[ -n $rqpid ]]; then
		kill "$rqpid" 2>/dev/null
		wait "$rqpid" 2>/dev/null || true
		rqpid=
		echo "REQUESTS round=$r A=$(wc -l <"$tmp/req0") B=$(wc -l <"$tmp/req1")"
	fi
	for i in 0 1; do
		s1[i]=$(snap "${vpid[i]}")
		t1[i]=$(threads_snap "${vpid[i]}")
		rss[i]=$(awk '/^VmRSS:/ { print $2 }' "/proc/${vpid[i]}/status")
		hwm[i]=$(awk '/^VmHWM:/ { print $2 }' "/proc/${vpid[i]}/status")
	done
	w1=$(date +%s%N)
	count_tasks
	for i in 0 1; do
		read -r a0 b0 <<<"${s0[i]}"
		read -r a1 b1 <<<"${s1[i]}"
		awk -v r="$r" -v i="$i" -v ns=$((a1 - a0)) -v sl=$((b1 - b0)) \
		    -v w=$((w1 - w0)) -v t=$(((n0 + n_tasks) / 2)) -v rss="${rss[i]}" -v hwm="${hwm[i]}" 'BEGIN {
			printf "RESULT round=%d daemon=%s loop_ms_per_s=%.3f wakeups_per_s=%.2f tasks=%d vmrss_kib=%d vmhwm_kib=%d\n",
			    r, (i == 0 ? "A" : "B"), ns / 1e6 / (w / 1e9),
			    sl / (w / 1e9), t, rss, hwm }'
		# a thread that came or went in between counts from 0
		join -a 2 -e 0 -o 0,1.2,1.3,2.2,2.3 <(echo "${t0[i]}") \
		    <(echo "${t1[i]}") |
		    awk -v r="$r" -v d="$(if ((i == 0)); then echo A; else echo B; fi)" \
		    -v w=$((w1 - w0)) '{
			printf "THREAD round=%d daemon=%s thread=%s ms_per_s=%.3f runs_per_s=%.2f\n",
			    r, d, $1, ($4 - $2) / 1e6 / (w / 1e9),
			    ($5 - $3) / (w / 1e9) }'
	done
	for i in 0 1; do
		stop_pid "${vpid[i]}"
		vpid[i]=
	done
	rm -rf "/sys/fs/bpf/vitals_pair_$$_"* "$tmp/d0" "$tmp/d1"
done
