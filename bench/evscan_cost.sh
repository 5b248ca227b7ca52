#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# evscan_cost.sh: CPU per 1 s process sample of the event-driven scan
# (partial samples between full walks, doc/bpf.md "Event-driven samples")
# against a full walk every sample, both in bench/evscan_cost side by side
# on the same ticks, over two populations of spawn_tasks.c in one run:
# 500 processes x 4 threads, 10 % busy (~2,100 tasks with the machine's),
# then 2,000 x 4 with 1 % busy (~8,000, mostly idle). Root (BPF).
#
# Three scanners side by side: full walks at most --full-walk-s apart
# (default 60, the daemon's), a full walk at every window close (0, the
# scan before full_walk_s), a walk every sample.
#
# usage: evscan_cost.sh [--build DIR] [--samples N] [--window N]
#                       [--full-walk-s N] [--pops 500,2100,8000]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build
samples=90
window=10
walk_s=60
pops=500,2100,8000
while (($#)); do
	case $1 in
	--build) build=$2; shift 2 ;;
	--samples) samples=$2; shift 2 ;;
	--window) window=$2; shift 2 ;;
	--full-walk-s) walk_s=$2; shift 2 ;;
	--pops) pops=$2; shift 2 ;;
	*) echo "usage: $0 [--build DIR] [--samples N] [--window N]" \
	    "[--full-walk-s N] [--pops LIST]" >&2; exit 2 ;;
	esac
done
die() { echo "evscan_cost: $*" >&2; exit 1; }
tool=$build/bench/evscan_cost
[[ -x $tool ]] || die "no $tool: build it with 'ninja -C $build'"
((EUID == 0)) || die "loading BPF needs root"
load=$(cut -d' ' -f1 /proc/loadavg)
awk -v l="$load" 'BEGIN { exit !(l < 3) }' ||
    echo "evscan_cost: load average $load >= 3: figures are noisy" >&2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/evscan_cost.XXXXXX")
spawn_pid=
ctlfd=
stop_pop() {
	[[ -n $ctlfd ]] && exec {ctlfd}>&-
	ctlfd=
	if [[ -n $spawn_pid ]]; then
		kill -TERM "$spawn_pid" 2>/dev/null || true
		wait "$spawn_pid" 2>/dev/null || true
	fi
	spawn_pid=
}
cleanup() { set +e; stop_pop; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
"${CC:-cc}" -O2 -Wall -o "$tmp/spawn_tasks" "$here/spawn_tasks.c" -pthread ||
    die "building spawn_tasks failed"

run() {	# run PROCS THREADS BUSY_PCT
	rm -f "$tmp/ctl" "$tmp/spawn.out"
	mkfifo "$tmp/ctl"
	"$tmp/spawn_tasks" -p "$1" -t "$2" -b "$3" -c 2000 -i 100 \
	    <"$tmp/ctl" >"$tmp/spawn.out" 2>"$tmp/spawn.err" &
	spawn_pid=$!
	exec {ctlfd}>"$tmp/ctl"
	for ((i = 0; i < 600; i++)); do
		grep -qx ready "$tmp/spawn.out" 2>/dev/null && break
		sleep 0.1
	done
	grep -qx ready "$tmp/spawn.out" || die "spawn_tasks not ready"
	shopt -s nullglob
	t=(/proc/[0-9]*/task/[0-9]*)
	shopt -u nullglob
	echo "== $1 x $2, $3 % busy: ${#t[@]} tasks on the machine," \
	    "load $(cut -d' ' -f1-3 /proc/loadavg)"
	"$tool" -n "$samples" -w "$window" -s 1000 -f "$walk_s"
	stop_pop
}
echo "kernel: $(uname -srm); nproc $(nproc)"
IFS=, read -ra want <<<"$pops"
for p in "${want[@]}"; do
	case $p in
	500) run 125 4 10 ;;	# ~500 tasks with the machine's
	2100) run 500 4 10 ;;
	8000) run 2000 4 1 ;;
	*) die "--pops: 500, 2100 or 8000, not $p" ;;
	esac
done
