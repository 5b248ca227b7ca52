#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# iter_cost.sh: the full process + thread scan's CPU per task with the BPF
# task iterator against the /proc scanner, in one run over one synthetic
# population of ~2000 tasks (spawn_tasks.c). Both sources run vitalsd's own
# scanner (procscan_run, threads = all) inside bench/iter_cost, alternating
# in rounds, twice: scans back to back (caches warm from the scan before)
# and scans 200 ms apart (caches as a sampling daemon finds them). See
# bench/README.md for the figures and the target (>= 30x).
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")

build=${BUILD_DIR:-$repo/build}
procs=${BENCH_PROCS:-500}
threads=${BENCH_THREADS:-4}
busy=${BENCH_BUSY_PCT:-10}
burn_us=${BENCH_BURN_US:-1000}
rounds=${BENCH_ROUNDS:-20}
idle=${BENCH_IDLE:-1}
target=30

usage() {
	cat <<EOF
usage: $(basename "$0") [options]

  --build DIR      meson build directory holding bench/iter_cost
                   (default: $repo/build; env BUILD_DIR)
  --procs N        processes to spawn (default $procs; env BENCH_PROCS)
  --threads N      threads per process, main included (default $threads)
  --busy PCT       percent of processes that burn CPU (default $busy)
  --rounds N       alternating rounds per run (default $rounds; env BENCH_ROUNDS)
  --no-idle        run the population at normal priority, not SCHED_IDLE
  -h, --help       this text
EOF
}

die() {
	echo "iter_cost: $*" >&2
	exit 1
}

while (($#)); do
	case $1 in
	--build) build=${2:?--build needs a directory}; shift ;;
	--procs) procs=${2:?}; shift ;;
	--threads) threads=${2:?}; shift ;;
	--busy) busy=${2:?}; shift ;;
	--rounds) rounds=${2:?}; shift ;;
	--no-idle) idle=0 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done
for v in "$procs" "$threads" "$busy" "$rounds"; do
	[[ $v =~ ^[0-9]+$ ]] || die "not a number: $v"
done

tool=$build/bench/iter_cost
[[ -x $tool ]] || die "no $tool: build it with 'ninja -C $build'"
((EUID == 0)) || die "loading the task iterator needs root"
command -v "${CC:-cc}" >/dev/null || die "no C compiler for spawn_tasks"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/iter_cost.XXXXXX")
spawn_pid=
ctlfd=
cleanup() {
	set +e
	[[ -n $ctlfd ]] && exec {ctlfd}>&-
	if [[ -n $spawn_pid ]]; then
		kill -TERM "$spawn_pid" 2>/dev/null
		wait "$spawn_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

"${CC:-cc}" -O2 -Wall -Wextra -o "$tmp/spawn_tasks" "$here/spawn_tasks.c" \
    -pthread || die "building spawn_tasks failed"
spawn_args=(-p "$procs" -t "$threads" -b "$busy" -c "$burn_us" -i 100)
((idle)) && spawn_args+=(-I)
mkfifo "$tmp/ctl"
"$tmp/spawn_tasks" "${spawn_args[@]}" <"$tmp/ctl" >"$tmp/spawn.out" \
    2>"$tmp/spawn.err" &
spawn_pid=$!
# The population lives as long as this write end stays open.
exec {ctlfd}>"$tmp/ctl"
for ((i = 0; i < 600; i++)); do
	grep -qx ready "$tmp/spawn.out" 2>/dev/null && break
	kill -0 "$spawn_pid" 2>/dev/null ||
	    die "spawn_tasks failed: $(cat "$tmp/spawn.err")"
	sleep 0.1
done
grep -qx ready "$tmp/spawn.out" || die "spawn_tasks not ready after 60 s"

shopt -s nullglob
p=(/proc/[0-9]*)
t=(/proc/[0-9]*/task/[0-9]*)
shopt -u nullglob
echo "== machine"
echo "nproc:   $(nproc)"
echo "kernel:  $(uname -srm)"
echo "cpu:     $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== population"
cat "$tmp/spawn.err"
echo "on the machine: ${#p[@]} processes, ${#t[@]} tasks"
verdict() {	# verdict FILE LABEL
	awk -v target="$target" -v label="$2" '/^RATIO/ {
		for (i = 1; i <= NF; i++)
			if ($i ~ /^median_of_rounds=/) {
				split($i, kv, "=")
				r = kv[2] + 0
			}
		printf "target (%s): iterator >= %dx cheaper per task: %s (%.1fx)\n",
		    label, target, (r >= target) ? "met" : "NOT met", r
	}' "$1"
}

echo "== back to back: threads = all, $rounds rounds x 10 scans per source"
"$tool" -r "$rounds" -n 10 -s 0 | tee "$tmp/warm"
echo "== 200 ms apart: threads = all, $rounds rounds x 3 scans per source"
"$tool" -r "$rounds" -n 3 -s 200 | tee "$tmp/cold"
echo
verdict "$tmp/warm" "back to back"
verdict "$tmp/cold" "200 ms apart"
