#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# partial_cost.sh: the kernel's run time of taskiter_partial by part
# (bench/partial_cost.c) at the peers' population (500 processes x 4
# threads, 10 % busy, the machine's own tasks besides), for one build or,
# paired, for two: the same population, the builds' tools one after the
# other, the order alternating, --rounds times (ratios in the same
# minutes). Root (BPF). Run it under the bench lock:
#   flock /tmp/vitals-bench.lock bench/partial_cost.sh --ab OLD NEW
#
# usage: partial_cost.sh [--build DIR | --ab DIR_A DIR_B] [--samples N]
#                        [--window N] [--rounds N] [--procs N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
builds=("$here/../build")
samples=60
window=10
rounds=2
procs=500
while (($#)); do
	case $1 in
	--build) builds=("$2"); shift 2 ;;
	--ab) builds=("$2" "$3"); shift 3 ;;
	--samples) samples=$2; shift 2 ;;
	--window) window=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--procs) procs=$2; shift 2 ;;
	*) echo "usage: $0 [--build DIR | --ab DIR_A DIR_B] [--samples N]" \
	    "[--window N] [--rounds N] [--procs N]" >&2; exit 2 ;;
	esac
done
die() { echo "partial_cost: $*" >&2; exit 1; }
((EUID == 0)) || die "loading BPF needs root"
for b in "${builds[@]}"; do
	[[ -x $b/bench/partial_cost ]] ||
	    die "no $b/bench/partial_cost: build it with 'ninja -C $b'"
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/partial_cost.XXXXXX")
cleanup() { set +e; population_stop; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

population_start "$tmp" -p "$procs" -t 4 -b 10 -c 1000 -i 100 -I
shopt -s nullglob
t=(/proc/[0-9]*/task/[0-9]*)
shopt -u nullglob
echo "kernel $(uname -sr), nproc $(nproc), $(date -u +%FT%TZ)"
echo "population $procs x 4, 10 % busy: ${#t[@]} tasks on the machine"
for ((r = 0; r < rounds; r++)); do
	for ((i = 0; i < ${#builds[@]}; i++)); do
		# alternate which build goes first
		j=$(((i + r) % ${#builds[@]}))
		echo "== round $((r + 1)), ${builds[j]}," \
		    "load $(cut -d' ' -f1-3 /proc/loadavg)"
		"${builds[j]}/bench/partial_cost" -n "$samples" -w "$window" \
		    -s 1000
	done
done
