#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# scan_cost.sh: CPU that a per-task sampler spends per 1-second interval on a
# large task population, vitalsd against top and pidstat.
#
# One synthetic population (spawn_tasks.c) serves every tool; the tools run
# one after another, never together. A tool's CPU is the difference of two
# reads of utime+stime (+cutime+cstime, + live descendants) from
# /proc/<pid>/stat, taken after a warm-up so startup cost is left out.
# See bench/README.md for the formulas.
set -euo pipefail
export LC_ALL=C	# EPOCHREALTIME and awk must agree on the decimal point

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=bench/lib.sh
. "$here/lib.sh"	# alive, stop_pid, population_start/stop

vitalsd=${VITALSD:-$repo/build/daemon/vitalsd}
secs=${BENCH_SECONDS:-30}
warmup=${BENCH_WARMUP:-2}
procs=${BENCH_PROCS:-500}
threads=${BENCH_THREADS:-4}
busy=${BENCH_BUSY_PCT:-10}
burn_us=${BENCH_BURN_US:-1000}
idle=${BENCH_IDLE:-1}
window=${BENCH_WINDOW_S:-10}
tools=${BENCH_TOOLS:-vitalsd-all,vitalsd-changed,top,pidstat}
vitalsd_args=${VITALSD_ARGS:-}
keep=0
interval=1	# seconds; every tool samples at this period

usage() {
	cat <<EOF
usage: $(basename "$0") [options]

  --vitalsd PATH   daemon binary (default: $repo/build/daemon/vitalsd)
  --seconds N      measured seconds per tool (default $secs; env BENCH_SECONDS)
  --warmup N       seconds before the first read (default $warmup; env BENCH_WARMUP)
  --procs N        processes to spawn (default $procs; env BENCH_PROCS)
  --threads N      threads per process, main included (default $threads; env BENCH_THREADS)
  --busy PCT       percent of processes that burn CPU (default $busy; env BENCH_BUSY_PCT)
  --burn-us N      CPU burnt per busy thread every 100 ms (default $burn_us; env BENCH_BURN_US)
  --no-idle        run the population at normal priority, not SCHED_IDLE (env BENCH_IDLE=0)
  --tools LIST     comma-separated subset of vitalsd-all,vitalsd-changed,top,pidstat
                   (default: all four; env BENCH_TOOLS)
  --vitalsd-args S extra arguments for both vitalsd runs, split on blanks
                   (e.g. "--scanner procfs --bpf-load off"; env VITALSD_ARGS)
  --keep           keep the temporary directory (logs, state dirs)
  -h, --help       this text
EOF
}

die() {
	echo "scan_cost: $*" >&2
	exit 1
}

while (($#)); do
	if population_opt "$@"; then
		shift "$opt_words"
		continue
	fi
	case $1 in
	--warmup) warmup=${2:?--warmup needs N}; shift ;;
	--no-idle) idle=0 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done
population_check
isnum "$warmup" --warmup
isnum "$window" BENCH_WINDOW_S
((secs > 0)) || die "--seconds must be > 0"

IFS=, read -ra tool_list <<<"$tools"
for t in "${tool_list[@]}"; do
	case $t in
	vitalsd-all | vitalsd-changed | top | pidstat) ;;
	*) die "unknown tool '$t' (known: vitalsd-all,vitalsd-changed,top,pidstat)" ;;
	esac
done

# ------------------------------------------------------------ prerequisites
# Nothing is installed here: name what is missing and stop.
missing=()
want_vitalsd=0
need() {	# need COMMAND HINT
	command -v "$1" >/dev/null 2>&1 || missing+=("$1 ($2)")
}
need "${CC:-cc}" "a C compiler: package gcc or clang"
need getconf "package libc-bin"
need awk "package mawk or gawk"
need mkfifo "package coreutils"
need uname "package coreutils"
for t in "${tool_list[@]}"; do
	case $t in
	top) need top "package procps" ;;
	pidstat) need pidstat "package sysstat" ;;
	vitalsd-*) want_vitalsd=1 ;;
	esac
done
if ((want_vitalsd)) && [[ ! -x $vitalsd ]]; then
	missing+=("vitalsd: no executable at $vitalsd (build it with
    'ninja -C $repo/build', pass --vitalsd PATH, or measure only the
    others with --tools top,pidstat)")
fi
[[ -r /proc/self/stat ]] || missing+=("a mounted /proc")
if ((${#missing[@]})); then
	echo "scan_cost: missing prerequisites:" >&2
	printf '  - %s\n' "${missing[@]}" >&2
	exit 1
fi

# A vitalsd with BPF pins its programs under --bpffs: give each run a
# directory of its own so it neither drains nor replaces the pins of a
# daemon already running here, and remove it afterwards. With stats on, the
# programs' run time (spent in other tasks' context, invisible in the
# daemon's utime/stime) is read from bpftool.
bpf_ok=0
if ((want_vitalsd)) && "$vitalsd" --help 2>&1 | grep -q -- --bpffs &&
    [[ $(stat -f -c %T /sys/fs/bpf 2>/dev/null) == bpf_fs ]]; then
	bpf_ok=1
fi
read -ra extra_args <<<"$vitalsd_args"

clk=$(getconf CLK_TCK)
isnum "$clk" CLK_TCK
((clk > 0)) || die "CLK_TCK is $clk"

# ------------------------------------------------------------ cleanup
tmp=$(mktemp -d "${TMPDIR:-/tmp}/scan_cost.XXXXXX")
tool_pid=
bpfdir=

# A foreground sleep would hold off the INT/TERM trap until it ends;
# "wait" returns as soon as a trapped signal arrives.
sleep_pid=
pause() {	# pause SECONDS
	if [[ -n $ctlfd ]]; then
		sleep "$1" {ctlfd}>&- &
	else
		sleep "$1" &
	fi
	sleep_pid=$!
	wait "$sleep_pid"
	sleep_pid=
}

cleanup() {
	set +e
	[[ -n $sleep_pid ]] && kill "$sleep_pid" 2>/dev/null
	[[ -n $tool_pid ]] && stop_pid "$tool_pid"
	[[ -n $bpfdir ]] && unpin_dir
	population_stop
	if ((keep)); then
		echo "scan_cost: kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# ------------------------------------------------------------ helpers
unpin_dir() {	# remove the run's pins: that detaches its programs
	[[ -n $bpfdir ]] || return 0
	if [[ -e $bpfdir ]] && ! rm -rf "$bpfdir" 2>/dev/null; then
		echo "scan_cost: warning: could not remove $bpfdir" >&2
	fi
	bpfdir=
}

foreign=0
count_foreign() {	# bench-p* processes that are not our population
	local f line rest
	local -a x
	foreign=0
	for f in /proc/[0-9]*/stat; do
		read -r line 2>/dev/null <"$f" || continue
		[[ $line == *"(bench-p"* ]] || continue
		rest=${line##*) }
		read -ra x <<<"$rest"
		[[ ${x[1]} == "${spawn_pid:-none}" ]] || foreign=$((foreign + 1))
	done
}

# ------------------------------------------------------------ population
count_foreign
((foreign == 0)) || echo "scan_cost: warning: $foreign bench-p* processes" \
    "from another spawn_tasks are running; results will be skewed" >&2

spawn_args=(-p "$procs" -t "$threads" -b "$busy" -c "$burn_us" -i 100)
((idle)) && spawn_args+=(-I)
population_start "$tmp" "${spawn_args[@]}"

echo "== machine"
echo "nproc:   $(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)"
echo "kernel:  $(uname -srm)"
echo "cpu:     $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
echo "CLK_TCK: $clk"
for t in "${tool_list[@]}"; do
	case $t in
	top) echo "top:     $(top -V 2>&1 | head -n1)" ;;
	pidstat) echo "pidstat: $(pidstat -V 2>&1 | head -n1)" ;;
	esac
done
echo "== population"
cat "$tmp/spawn.err"
echo "measure: ${secs} s per tool after ${warmup} s warm-up, interval ${interval} s"

# ------------------------------------------------------------ measurement
declare -A res_ms res_us res_tasks res_bpf
start_tool() {	# start_tool NAME: background the tool, set tool_pid
	local name=$1
	case $name in
	vitalsd-all | vitalsd-changed)
		mkdir -p "$tmp/state-$name"
		local -a bpf_args=()
		if ((bpf_ok)); then
			# bpffs refuses names with a dot.
			bpfdir=/sys/fs/bpf/vitals_bench_$$_${name#vitalsd-}
			echo "bpf_stats = on" >"$tmp/vitalsd.conf"
			bpf_args=(-c "$tmp/vitalsd.conf" --bpffs "$bpfdir")
		fi
		"$vitalsd" --foreground --state-dir "$tmp/state-$name" \
		    --interval-ms $((interval * 1000)) --window-s "$window" \
		    --threads "${name#vitalsd-}" "${bpf_args[@]}" \
		    "${extra_args[@]}" \
		    </dev/null >"$tmp/$name.log" 2>&1 {ctlfd}>&- &
		;;
	top)
		# A private HOME: no user toprc changes the fields top formats.
		HOME=$tmp top -b -H -d "$interval" \
		    </dev/null >/dev/null 2>"$tmp/$name.log" {ctlfd}>&- &
		;;
	pidstat)
		pidstat -t "$interval" \
		    </dev/null >/dev/null 2>"$tmp/$name.log" {ctlfd}>&- &
		;;
	esac
	tool_pid=$!
}

for name in "${tool_list[@]}"; do
	echo "-- $name: running $((warmup + secs)) s" >&2
	start_tool "$name"
	pause "$warmup"
	if ! alive "$tool_pid"; then
		wait "$tool_pid" 2>/dev/null || true
		tool_pid=
		unpin_dir
		echo "scan_cost: $name exited during warm-up; log tail:" >&2
		tail -n 5 "$tmp/$name.log" >&2 || true
		echo "RESULT tool=$name status=failed"
		continue
	fi
	count_tasks
	tasks0=$n_tasks procs0=$n_procs
	t0=$EPOCHREALTIME
	tree_ticks "$tool_pid"
	ticks0=$acc
	bpf_prog_ns
	bpf0=$bpf_ns
	pause "$secs"
	t1=$EPOCHREALTIME
	tree_ticks "$tool_pid"
	ticks1=$acc
	bpf_prog_ns
	bpf1=$bpf_ns
	still_up=1
	alive "$tool_pid" || still_up=0
	count_tasks
	stop_pid "$tool_pid"
	tool_pid=
	unpin_dir
	if ((!still_up)); then
		echo "scan_cost: $name exited during the measurement" >&2
		tail -n 5 "$tmp/$name.log" >&2 || true
		echo "RESULT tool=$name status=failed"
		continue
	fi
	count_foreign
	((foreign == 0)) || echo "scan_cost: warning: $foreign foreign" \
	    "bench-p* processes ran during the $name measurement" >&2
	tasks=$(((tasks0 + n_tasks) / 2))
	nprocs=$(((procs0 + n_procs) / 2))
	read -r ms us ivs < <(awk -v d=$((ticks1 - ticks0)) -v hz="$clk" \
	    -v t0="$t0" -v t1="$t1" -v iv="$interval" -v n="$tasks" 'BEGIN {
		ivs = (t1 - t0) / iv
		ms = d * 1000 / hz / ivs
		printf "%.3f %.3f %.2f\n", ms, ms * 1000 / n, ivs
	}')
	res_ms[$name]=$ms
	res_us[$name]=$us
	res_tasks[$name]=$tasks
	bpf_ms=n/a
	if [[ -n $bpf0 && -n $bpf1 ]]; then
		bpf_ms=$(awk -v d=$((bpf1 - bpf0)) -v n="$ivs" \
		    'BEGIN { printf "%.3f", d / 1e6 / n }')
	fi
	res_bpf[$name]=$bpf_ms
	echo "RESULT tool=$name cpu_ms_per_interval=$ms us_per_task=$us" \
	    "tasks=$tasks procs=$nprocs intervals=$ivs" \
	    "ticks=$((ticks1 - ticks0)) clk_tck=$clk" \
	    "bpf_prog_ms_per_interval=$bpf_ms"
	if [[ $name == vitalsd-* ]]; then
		# Its own view of its cost, for comparison: the last window line.
		line=$(grep -E '\] window [0-9]+:' "$tmp/$name.log" |
		    tail -n 1 || true)
		if [[ -n $line ]]; then
			echo "   $name says: ${line#*] }"
			# "samples V/N valid ... own cpu U us": per sample.
			awk '{
				if (match($0, /samples [0-9]+\/[0-9]+/) == 0) exit
				split(substr($0, RSTART + 8, RLENGTH - 8), s, "/")
				if (match($0, /own cpu [0-9]+ us/) == 0) exit
				u = substr($0, RSTART + 8, RLENGTH - 11)
				if (s[2] > 0)
					printf "   %s self-reported: %.2f ms per sample\n",
					    n, u / 1000 / s[2]
			}' n="$name" <<<"$line"
		fi
	fi
done

# ------------------------------------------------------------ report
echo
echo "== scan cost per ${interval} s interval (${secs} s each)"
base=${res_ms[vitalsd-all]:-}
printf '%-16s %8s %16s %14s %14s %12s\n' tool tasks cpu_ms/interval \
    us/task/intvl "vs vitalsd-all" "+bpf ms"
for name in "${tool_list[@]}"; do
	[[ -n ${res_ms[$name]:-} ]] || {
		printf '%-16s %8s %16s\n' "$name" - failed
		continue
	}
	ratio=-
	[[ -n $base ]] && ratio=$(awk -v a="${res_ms[$name]}" -v b="$base" \
	    'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "inf" }')
	printf '%-16s %8d %16.2f %14.2f %14s %12s\n' "$name" \
	    "${res_tasks[$name]}" "${res_ms[$name]}" "${res_us[$name]}" \
	    "$ratio" "${res_bpf[$name]}"
done
if [[ -n $base ]]; then
	echo
	for name in "${tool_list[@]}"; do
		[[ $name == vitalsd-all || -z ${res_ms[$name]:-} ]] && continue
		awk -v a="${res_ms[$name]}" -v b="$base" -v n="$name" 'BEGIN {
			if (b > 0) printf "%s/vitalsd-all = %.1fx\n", n, a / b
		}'
	done
fi
echo "(+bpf ms: run time per interval of vitalsd's BPF programs, spent in"
echo " other tasks' context and not in the figures to its left; n/a: none)"
awk -v hz="$clk" -v s="$secs" 'BEGIN {
	printf "(resolution: 1 tick = %.0f ms per read, about +-%.1f ms/interval over %d s)\n",
	    1000 / hz, 2 * 1000 / hz / s, s
}'
