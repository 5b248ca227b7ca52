#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# sched_pair.sh: ns per run of the sched programs (bpf/sched/sched.bpf.c) of
# two or more vitalsd binaries over one task population (issue 20), from the
# kernel's BPF statistics. One population (spawn_tasks, 10 % busy by
# default) lives for the whole run; bpf_floor's empty programs stay attached
# to sched_switch and sched_wakeup throughout, so every measured interval
# also has the floor over the very same switches. Each round runs every
# binary in turn (the order rotates from round to round), alone, for the
# same seconds after a warm-up: one line per binary and round with
# vitals_switch and vitals_wakeup ns/run, the floor's, and runs/s. With
# BENCH_TOGETHER=1 a round runs all of them at once instead, attached in
# the round's order (pos: a program attached later runs after the others
# on the same switch, on lines they warmed, so rotate through every order):
# the same switches for every binary, which the machine's ±30 % from
# minute to minute does not allow one after another.
#
#   [BENCH_TOGETHER=1] bench/sched_pair.sh [--rounds N] [--seconds N]
#       [--procs N] [--threads N] [--busy PCT] [--burn-us N] BIN...
#
# Needs root, bpftool, python3 and a BPF build (build/bench/bpf_floor,
# build/bpf/sched_floor.bpf.o). Hold the bench lock:
#   flock /tmp/vitals-bench.lock bench/sched_pair.sh A B
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=bench/lib.sh
. "$here/lib.sh"

secs=${BENCH_SECONDS:-20}
warmup=${BENCH_WARMUP:-5}
procs=${BENCH_PROCS:-500}
threads=${BENCH_THREADS:-4}
busy=${BENCH_BUSY_PCT:-10}
burn_us=${BENCH_BURN_US:-1000}
rounds=2
floor=${BPF_FLOOR:-$repo/build/bench/bpf_floor}
floor_obj=${BPF_FLOOR_OBJ:-$repo/build/bpf/sched_floor.bpf.o}
# shellcheck disable=SC2034 # population_opt may set them
tools=vitalsd vitalsd='' vitalsd_args='' keep=0
bins=()

die() {
	echo "sched_pair: $*" >&2
	exit 1
}

while (($#)); do
	if [[ $1 == --rounds ]]; then
		rounds=${2:?--rounds needs N}
		shift 2
	elif population_opt "$@"; then
		shift "$opt_words"
	elif [[ $1 == -* ]]; then
		die "unknown option $1"
	else
		bins+=("$1")
		shift
	fi
done
population_check
isnum "$rounds" --rounds
((${#bins[@]} >= 1)) || die "usage: $0 [options] BIN..."
for b in "${bins[@]}"; do
	[[ -x $b ]] || die "$b: not executable"
done
[[ -x $floor && -f $floor_obj ]] || die "no $floor or $floor_obj"
[[ $(id -u) -eq 0 ]] || die "needs root"
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sched_pair.XXXXXX")
# the daemons' spools in a directory of the run's own, removed with it
spooldir=$(mktemp -d /dev/shm/vitals-sched_pair.XXXXXX)
dpid='' floor_pid='' pins=''
cleanup() {
	set +e
	for p in $dpid; do stop_pid "$p"; done
	[[ -n $floor_pid ]] && stop_pid "$floor_pid"
	[[ -n $pins ]] && rm -rf "$pins"*
	rm -rf "$spooldir"
	population_stop
	((keep)) || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

population_start "$tmp" -p "$procs" -t "$threads" -b "$busy" -c "$burn_us" \
    -i 100 -I
"$floor" "$floor_obj" >"$tmp/floor.out" 2>&1 </dev/null {ctlfd}>&- &
floor_pid=$!
declare -A fid
for _ in $(seq 100); do
	(($(grep -c '^tp_btf/' "$tmp/floor.out") >= 2)) && break
	alive "$floor_pid" || die "bpf_floor: $(cat "$tmp/floor.out")"
	sleep 0.1
done
while read -r sec id; do
	case $sec in tp_btf/*) fid[${sec#tp_btf/}]=$id ;; esac
done <"$tmp/floor.out"
[[ -n ${fid[sched_switch]:-} && -n ${fid[sched_wakeup]:-} ]] ||
    die "bpf_floor did not attach: $(cat "$tmp/floor.out")"

# "run_cnt run_time_ns" of a program: "pinned PATH" or "id N"
stats() {
	# shellcheck disable=SC2086
	bpftool -j prog show $1 | python3 -c 'import json,sys
p=json.load(sys.stdin); print(p.get("run_cnt", 0), p.get("run_time_ns", 0))'
}

# run_group BIN...: the binaries at once, attached in this order (each
# daemon's programs are pinned before the next starts), measured over the
# same seconds; one line each
run_group() {
	local i b p q c t dc dt load
	local -a gb=("$@") dp=()
	for ((i = 0; i < ${#gb[@]}; i++)); do
		b=${gb[$i]}
		printf 'bpf_stats = on\nftrace_instance = vitals_sched_pair_%s_%s\n' \
		    $$ "$i" >"$tmp/conf$i"
		mkdir -p "$spooldir/$i"
		printf 'store_spool_dir = %s/%s\n' "$spooldir" "$i" >>"$tmp/conf$i"
		rm -rf "$tmp/state$i"
		"$b" --foreground -c "$tmp/conf$i" --state-dir "$tmp/state$i" \
		    --socket "$tmp/s$i" --bpffs "$pins$i" </dev/null \
		    >"$tmp/d$i.log" 2>&1 {ctlfd}>&- &
		dp[i]=$!
		dpid="${dp[*]}"
		for _ in $(seq 100); do
			[[ -e $pins$i/prog_vitals_tp_btf_sched_switch ]] && break
			alive "${dp[$i]}" || die "$b exited: $(tail -3 "$tmp/d$i.log")"
			sleep 0.1
		done
	done
	sleep "$warmup"
	load=$(cut -d' ' -f1 /proc/loadavg)
	declare -A c0 t0 ns rate
	snap() {
		for p in sched_switch sched_wakeup; do
			for ((i = 0; i < ${#gb[@]}; i++)); do
				read -r c t < <(stats "pinned $pins$i/prog_vitals_tp_btf_$p")
				c1["$i$p"]=$c t1["$i$p"]=$t
			done
			read -r c t < <(stats "id ${fid[$p]}")
			c1["f$p"]=$c t1["f$p"]=$t
		done
	}
	declare -A c1 t1
	snap
	for q in "${!c1[@]}"; do c0[$q]=${c1[$q]} t0[$q]=${t1[$q]}; done
	sleep "$secs"
	snap
	for q in "${!c1[@]}"; do
		dc=$((c1[$q] - c0[$q])) dt=$((t1[$q] - t0[$q]))
		ns[$q]=$(awk -v a="$dt" -v b="$dc" 'BEGIN { printf "%.1f", b ? a / b : 0 }')
		rate[$q]=$(awk -v a="$dc" -v s="$secs" 'BEGIN { printf "%.0f", a / s }')
	done
	for ((i = 0; i < ${#gb[@]}; i++)); do
		stop_pid "${dp[$i]}"
		rm -rf "$pins$i"
	done
	dpid=
	for ((i = 0; i < ${#gb[@]}; i++)); do
		printf '%-5s %-3s %-24s %8s %8s %8s %8s %9s %9s %6s\n' \
		    $((r + 1)) $((i + 1)) "$(label "${gb[$i]}")" \
		    "${ns[${i}sched_switch]}" "${ns[fsched_switch]}" \
		    "${ns[${i}sched_wakeup]}" "${ns[fsched_wakeup]}" \
		    "${rate[${i}sched_switch]}" "${rate[${i}sched_wakeup]}" "$load"
	done
}

# A binary's name in the table: its place on the command line and its
# file name (builds of one tree are all called vitalsd).
label() {
	local k

	for ((k = 0; k < ${#bins[@]}; k++)); do
		if [[ ${bins[$k]} == "$1" ]]; then
			echo "$((k + 1)):$(basename "$1")"
			return
		fi
	done
	basename "$1"
}

echo "population: $procs x $threads, $busy % busy; $secs s per run," \
    "$rounds rounds; $(nproc) CPUs; ${BENCH_TOGETHER:+together}"
printf '%-5s %-3s %-24s %8s %8s %8s %8s %9s %9s %6s\n' round pos binary \
    switch floor wakeup floor sw/s wk/s load
pins=/sys/fs/bpf/vitals_sched_pair_$$_
n=${#bins[@]}
for ((r = 0; r < rounds; r++)); do
	order=()
	for ((k = 0; k < n; k++)); do
		order+=("${bins[$(((k + r) % n))]}")
	done
	if [[ -n ${BENCH_TOGETHER:-} ]]; then
		run_group "${order[@]}"
	else
		for b in "${order[@]}"; do
			run_group "$b"
		done
	fi
done
