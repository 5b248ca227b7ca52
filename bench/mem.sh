#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# mem.sh: where vitalsd's memory goes at a task population. Starts one
# population (spawn_tasks.c, as peers.sh), then vitalsd in its default
# configuration with its own bpffs directory, socket, state directory and
# ftrace instance; after the measured seconds prints VmRSS and VmHWM, the
# kernel's split (smaps_rollup), the largest mappings (smaps), the
# threads and the daemon's own breakdown (`vitals health`, Health.memory).
# bench/README.md ("Memory") says how to read it.
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=bench/lib.sh
. "$here/lib.sh"

vitalsd=${VITALSD:-$repo/build/daemon/vitalsd}
vitals=${VITALS:-$repo/build/client/vitals}
secs=${BENCH_SECONDS:-60}
procs=${BENCH_PROCS:-500}
threads=${BENCH_THREADS:-4}
busy=${BENCH_BUSY_PCT:-10}
burn_us=${BENCH_BURN_US:-1000}
tools=vitalsd
vitalsd_args=${VITALSD_ARGS:-}
keep=0
MEM_QUERY=${MEM_QUERY:-0}

usage() {
	cat <<USAGE
usage: $(basename "$0") [options]

  --seconds N      seconds the daemon runs before the figures (default $secs)
  --procs N        processes to spawn (default $procs)
  --threads N      threads per process, main included (default $threads)
  --busy PCT       percent of processes that burn CPU (default $busy)
  --burn-us N      CPU burnt per busy thread every 100 ms (default $burn_us)
  --vitalsd PATH   daemon binary (default $vitalsd)
  --vitalsd-args S extra daemon arguments, split on blanks
  --keep           keep the temporary directory
Needs root (BPF, tracefs). MEM_HOLD=N keeps the daemon N more seconds;
MEM_QUERY=1 asks it for a top every 30 s. MEM_CONF adds configuration
lines (e.g. MEM_CONF='query_warm = 1').
USAGE
}

die() {
	echo "mem: $*" >&2
	exit 1
}

while (($#)); do
	if population_opt "$@"; then
		shift "$opt_words"
		continue
	fi
	case $1 in
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
population_check
[[ -x $vitalsd ]] || die "no daemon at $vitalsd (ninja -C build)"
[[ $(id -u) == 0 ]] || die "needs root"
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
read -ra extra_args <<<"$vitalsd_args"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mem.XXXXXX")
# the spool in a directory of the run's own, removed with it
spooldir=$(mktemp -d /dev/shm/vitals-mem.XXXXXX)
vpid=
bpfdir=/sys/fs/bpf/vitals_mem_$$
cleanup() {
	set +e
	[[ -n $vpid ]] && stop_pid "$vpid"
	[[ -e $bpfdir ]] && rm -rf "$bpfdir"
	rm -rf "$spooldir"
	population_stop
	if ((keep)); then
		echo "mem: kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

population_start "$tmp" -p "$procs" -t "$threads" -b "$busy" -c "$burn_us" \
    -i 100 -I
# the default configuration, but its own ftrace instance
printf 'ftrace_instance = vitals_mem_%s\nstore_spool_dir = %s\n' $$ \
    "$spooldir" >"$tmp/vitalsd.conf"
# MEM_CONF: more configuration lines (e.g. "query_warm = 1")
[[ -n ${MEM_CONF:-} ]] && printf '%s\n' "$MEM_CONF" >>"$tmp/vitalsd.conf"
mkdir -p "$tmp/state"
"$vitalsd" --foreground -c "$tmp/vitalsd.conf" --state-dir "$tmp/state" \
    --socket "$tmp/vitals.sock" --bpffs "$bpfdir" "${extra_args[@]}" \
    </dev/null >"$tmp/vitalsd.log" 2>&1 {ctlfd}>&- &
vpid=$!
# VmRSS and VmHWM every 5 s (a peak between two reads shows in VmHWM
# only: the first read whose VmHWM rose past VmRSS came after it)
timeline=
for ((i = 0; i < secs; i += 5)); do
	step=$((secs - i < 5 ? secs - i : 5))
	sleep "$step"
	alive "$vpid" || break
	rss_point "$vpid"
	timeline+=" $((i + step))s:$rss_at"
	# a query every 30 s, as a user would: a reader opens, answers, idles
	if ((MEM_QUERY && (i + step) % 30 == 0)) && [[ -x $vitals ]]; then
		"$vitals" --socket "$tmp/vitals.sock" top -n 5 >/dev/null 2>&1 || true
	fi
done
alive "$vpid" || die "vitalsd exited: $(tail -n 3 "$tmp/vitalsd.log")"
count_tasks

echo "== mem: $n_tasks tasks ($procs processes x $threads threads, $busy % busy), vitalsd after ${secs} s"
grep -E '^(VmHWM|VmRSS|RssAnon|RssFile|RssShmem|Threads):' \
    "/proc/$vpid/status" | tr -s '\t ' ' '
echo "-- VmRSS/VmHWM (kB) every 5 s:$timeline"
echo "-- smaps_rollup (kB)"
grep -E '^(Rss|Pss|Anonymous|Private_Dirty|Shared_Clean|Private_Clean):' \
    "/proc/$vpid/smaps_rollup" | tr -s '\t ' ' '
echo "-- mappings by Rss (kB): rss anon name"
awk '/^[0-9a-f]+-[0-9a-f]+ / { name = ($6 == "" ? "[anon]" : $6) }
    /^Rss:/ { rss[name] += $2 }
    /^Anonymous:/ { anon[name] += $2 }
    END { for (n in rss) if (rss[n] > 0) printf "%8d %8d %s\n", rss[n], anon[n], n }' \
    "/proc/$vpid/smaps" | sort -rn | head -n 25
echo "-- anonymous mappings (kB): size rss range"
awk '/^[0-9a-f]+-[0-9a-f]+ / { anon = ($6 == "" || $6 ~ /^\[/); r = $1 " " $6 }
    /^Size:/ { sz = $2 }
    /^Rss:/ { if (anon && $2 > 0) printf "%8d %8d %s\n", sz, $2, r }' \
    "/proc/$vpid/smaps" | sort -k2 -rn | head -n 25
echo "-- threads"
for t in /proc/"$vpid"/task/*; do
	printf '%s %s\n' "${t##*/}" "$(cat "$t/comm")"
done
if [[ -x $vitals ]]; then
	echo "-- vitals health (memory)"
	"$vitals" --socket "$tmp/vitals.sock" health 2>/dev/null |
	    sed -n '/^Memory:/,/^[^ ]/p' || true
fi
rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$vpid/status")
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$vpid/status")
# CPU over the whole run, start-up included: what the memory costs in time
tree_ticks "$vpid"
cpu_ms=$((acc * 1000 / $(getconf CLK_TCK)))
echo "cpu: ${cpu_ms} ms over ${secs} s (utime + stime, start-up included)"
echo "RESULT tasks=$n_tasks rss_kib=$rss hwm_kib=$hwm cpu_ms=$cpu_ms"
if [[ -n ${MEM_HOLD:-} ]]; then
	echo "mem: holding for $MEM_HOLD s, pid $vpid" >&2
	sleep "$MEM_HOLD"
fi
