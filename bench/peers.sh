#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# peers.sh: vitalsd and its peers sampling one task population at the same
# time, for the same seconds: top, pidstat, atop, sadc and
# prometheus-process-exporter (scraped every second). Run together, the
# machine's noise hits every tool alike: compare the ratios, not the
# absolute times.
#
# Per tool: CPU per second of wall time from /proc/<pid>/stat (utime +
# stime, reaped and live children included) over the measured seconds,
# per own sample (atop samples every 10 s, the others every second) and
# per task; peak RSS (VmHWM of the tool's main process). For vitalsd also
# the run time of its BPF programs (the kernel's BPF statistics: spent in
# other tasks' context, so not in its utime/stime) and its own view of its
# loop (tick lateness, drain time) from `vitals --json health`.
# bench/README.md says how to read the table.
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=bench/lib.sh
. "$here/lib.sh"

vitalsd=${VITALSD:-$repo/build/daemon/vitalsd}
vitals=${VITALS:-$repo/build/client/vitals}
secs=${BENCH_SECONDS:-60}
warmup=${BENCH_WARMUP:-5}
procs=${BENCH_PROCS:-500}
threads=${BENCH_THREADS:-4}
busy=${BENCH_BUSY_PCT:-10}
burn_us=${BENCH_BURN_US:-1000}
tools=${BENCH_TOOLS:-vitalsd,top,pidstat,atop,sadc,process-exporter}
vitalsd_args=${VITALSD_ARGS:-}
keep=0
port=${BENCH_EXPORTER_PORT:-19256}

usage() {
	cat <<EOF
usage: $(basename "$0") [options]

  --seconds N      measured seconds (default $secs)
  --procs N        processes to spawn (default $procs)
  --threads N      threads per process, main included (default $threads)
  --busy PCT       percent of processes that burn CPU (default $busy)
  --burn-us N      CPU burnt per busy thread every 100 ms (default $burn_us)
  --tools LIST     subset of $tools
  --vitalsd PATH   daemon binary (default $vitalsd)
  --vitalsd-args S extra daemon arguments, split on blanks
  --keep           keep the temporary directory
Needs root (BPF, every process's /proc) and the peers: bash scripts/deps.sh bench

Environment: BENCH_SECONDS, BENCH_WARMUP; BENCH_VITALSD_CONF (more lines
for vitalsd's configuration, printf %b); BENCH_FLOOR=1 (empty programs on
sched_switch and sched_wakeup beside vitalsd's: the floor over the same
switches); BENCH_PERF=1 (perf record -p vitalsd, BENCH_PERF_HZ per second).
After the table: vitalsd's CPU per thread and per BPF program.
EOF
}

die() {
	echo "peers: $*" >&2
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
IFS=, read -ra tool_list <<<"$tools"
missing=()
for t in "${tool_list[@]}"; do
	case $t in
	vitalsd) [[ -x $vitalsd ]] || missing+=("$vitalsd (ninja -C build)") ;;
	top) command -v top >/dev/null || missing+=("top (procps)") ;;
	pidstat) command -v pidstat >/dev/null || missing+=("pidstat (sysstat)") ;;
	atop) command -v atop >/dev/null || missing+=("atop") ;;
	sadc) [[ -x /usr/lib/sysstat/sadc ]] || missing+=("sadc (sysstat)") ;;
	process-exporter)
		command -v prometheus-process-exporter >/dev/null ||
		    missing+=("prometheus-process-exporter")
		command -v curl >/dev/null || missing+=("curl")
		;;
	*) die "unknown tool $t" ;;
	esac
done
((${#missing[@]} == 0)) || die "missing: ${missing[*]} (bash scripts/deps.sh bench)"
[[ $(id -u) == 0 ]] || die "needs root"
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
read -ra extra_args <<<"$vitalsd_args"
clk=$(getconf CLK_TCK)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/peers.XXXXXX")
# the daemon's spool in a directory of the run's own (the default one,
# /dev/shm/vitalsd on a host without a tmpfs /run, would be left behind)
spooldir=$(mktemp -d /dev/shm/vitals-peers.XXXXXX)
declare -A pid_of
scraper=
bpfdir=
cleanup() {
	set +e
	[[ -n $scraper ]] && kill "$scraper" 2>/dev/null && wait "$scraper" 2>/dev/null
	for t in "${!pid_of[@]}"; do
		stop_pid "${pid_of[$t]}"
	done
	[[ -n ${floor_pid:-} ]] && stop_pid "$floor_pid"
	[[ -n $bpfdir && -e $bpfdir ]] && rm -rf "$bpfdir"
	rm -rf "$spooldir"
	population_stop
	if ((keep)); then
		echo "peers: kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

spawn_args=(-p "$procs" -t "$threads" -b "$busy" -c "$burn_us" -i 100 -I)
population_start "$tmp" "${spawn_args[@]}"

start() {	# start TOOL: background it, record its pid
	local t=$1
	case $t in
	vitalsd)
		bpfdir=/sys/fs/bpf/vitals_peers_$$
		# BENCH_VITALSD_CONF: more lines for its configuration
		# its own ftrace instance: another vitalsd's (the default
		# "vitals") is never removed under it
		printf 'bpf_stats = on\nftrace_instance = vitals_peers_%s\n' \
		    $$ >"$tmp/vitalsd.conf"
		printf 'store_spool_dir = %s\n%b' "$spooldir" \
		    "${BENCH_VITALSD_CONF:-}" >>"$tmp/vitalsd.conf"
		mkdir -p "$tmp/state"
		"$vitalsd" --foreground -c "$tmp/vitalsd.conf" \
		    --state-dir "$tmp/state" --socket "$tmp/vitals.sock" \
		    --bpffs "$bpfdir" "${extra_args[@]}" \
		    </dev/null >"$tmp/vitalsd.log" 2>&1 {ctlfd}>&- &
		;;
	top)
		HOME=$tmp top -b -H -d 1 </dev/null >/dev/null \
		    2>"$tmp/top.log" {ctlfd}>&- &
		;;
	pidstat)
		pidstat -t 1 </dev/null >/dev/null 2>"$tmp/pidstat.log" \
		    {ctlfd}>&- &
		;;
	atop)
		atop -w "$tmp/atop.raw" 10 </dev/null >/dev/null \
		    2>"$tmp/atop.log" {ctlfd}>&- &
		;;
	sadc)
		/usr/lib/sysstat/sadc -S XALL 1 "$tmp/sa.data" </dev/null \
		    >/dev/null 2>"$tmp/sadc.log" {ctlfd}>&- &
		;;
	process-exporter)
		# every process, grouped by name, threads too (its defaults)
		printf 'process_names:\n  - name: "{{.Comm}}"\n    cmdline:\n    - ".+"\n' \
		    >"$tmp/pe.yml"
		prometheus-process-exporter -config.path "$tmp/pe.yml" \
		    -web.listen-address "127.0.0.1:$port" </dev/null \
		    >"$tmp/pe.log" 2>&1 {ctlfd}>&- &
		;;
	esac
	pid_of[$t]=$!
}

for t in "${tool_list[@]}"; do
	start "$t"
done
floor_pid=
if [[ -n ${BENCH_FLOOR:-} && -n ${pid_of[vitalsd]:-} ]]; then
	# empty programs on sched_switch and sched_wakeup beside vitalsd's
	# (BENCH_FLOOR=1): what the kernel's statistics put under every run
	# at this population's switches, the floor of any program there
	"$repo/build/bench/bpf_floor" "$repo/build/bpf/sched_floor.bpf.o" \
	    >"$tmp/floor.out" 2>&1 </dev/null {ctlfd}>&- &
	floor_pid=$!
fi
if [[ -n ${pid_of[process-exporter]:-} ]]; then
	# a Prometheus scraping every second; its own CPU is not counted
	(while sleep 1; do
		curl -s -o /dev/null "http://127.0.0.1:$port/metrics" || true
	done) {ctlfd}>&- &
	scraper=$!
fi
# vitalsd's VmRSS/VmHWM every 5 s from the start, warm-up included:
# where in the run its peak came (a peak between two reads shows in
# VmHWM only)
rss_line=
started=$SECONDS
nap() {	# nap SECONDS, in steps of at most 5 s, reading vitalsd's RSS
	local left=$1 step
	while ((left > 0)); do
		step=$((left < 5 ? left : 5))
		sleep "$step"
		left=$((left - step))
		if [[ -n ${pid_of[vitalsd]:-} ]]; then
			rss_point "${pid_of[vitalsd]}"
			rss_line+=" $((SECONDS - started))s:$rss_at"
			loop_point
		fi
	done
}
# every closed window's loop figures (issue 20: no work over 1 ms on the
# loop), read as the RSS is: a line per window into $tmp/loop.tsv (id,
# longest callback ns and its name, callbacks over 1 ms, tick lateness
# max, full walks off the loop and dropped, the longest wait for one,
# sample_ns_max, the longest callback's thread CPU ns), a window read
# twice kept once. Each reading is a health request the daemon answers on
# its loop: its CPU is in vitalsd's figures
loop_point() {
	[[ -x $vitals ]] || return 0
	"$vitals" --socket "$tmp/vitals.sock" --json health 2>/dev/null |
	    python3 -c '
import json, sys
try:
    w = json.load(sys.stdin)["health"]["last"]
except Exception:
    sys.exit(0)
h = w.get("health") or {}
i = lambda k: int(h.get(k) or 0)
print("\t".join(str(v) for v in (w.get("id") or w.get("seq") or 0,
      i("loop_cb_ns_max"), h.get("loop_cb_what") or "-",
      i("loop_cb_over_1ms"), i("tick_late_ns_max"), i("walks_off_loop"),
      i("walks_dropped"), i("walk_wait_ns_max"), i("sample_ns_max"),
      i("loop_cb_cpu_ns"))))
' >>"$tmp/loop.tsv" 2>/dev/null || true
}
nap "$warmup"
for t in "${tool_list[@]}"; do
	alive "${pid_of[$t]}" || die "$t exited during warm-up: $(tail -n 3 "$tmp/$t.log" 2>/dev/null)"
done

declare -A t0 t1
count_tasks
tasks0=$n_tasks
for t in "${tool_list[@]}"; do
	tree_ticks "${pid_of[$t]}"
	t0[$t]=$acc
done
bpf_prog_ns
bpf0=$bpf_ns
[[ -n ${pid_of[vitalsd]:-} ]] && parts_snap "${pid_of[vitalsd]}" "$tmp/parts0" $floor_pid
w0=$EPOCHREALTIME
perf_pid=
if [[ -n ${BENCH_PERF:-} && -n ${pid_of[vitalsd]:-} ]]; then
	# where vitalsd's own CPU goes, by function (BENCH_PERF=1)
	perf record -q -F "${BENCH_PERF_HZ:-4999}" --call-graph dwarf,16384 -p "${pid_of[vitalsd]}" -o "$tmp/perf.data" \
	    -- sleep "$secs" >/dev/null 2>&1 {ctlfd}>&- &
	perf_pid=$!
fi
nap "$secs"
[[ -n $perf_pid ]] && wait "$perf_pid" || true
w1=$EPOCHREALTIME
for t in "${tool_list[@]}"; do
	tree_ticks "${pid_of[$t]}"
	t1[$t]=$acc
done
bpf_prog_ns
bpf1=$bpf_ns
[[ -n ${pid_of[vitalsd]:-} ]] && parts_snap "${pid_of[vitalsd]}" "$tmp/parts1" $floor_pid
count_tasks
tasks=$(((tasks0 + n_tasks) / 2))

hwm() {	# hwm PID: VmHWM in KiB
	awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0
}

echo "== peers: $tasks tasks ($procs processes x $threads threads, $busy % busy), ${secs} s, all tools at once"
echo "machine: $(nproc) CPUs, kernel $(uname -r), CLK_TCK $clk"
health=
if [[ -n ${pid_of[vitalsd]:-} && -x $vitals ]]; then
	health=$("$vitals" --socket "$tmp/vitals.sock" --json health 2>/dev/null || true)
fi
bpf_ms=
if [[ -n $bpf0 && -n $bpf1 ]]; then
	bpf_ms=$(awk -v d=$((bpf1 - bpf0)) -v w0="$w0" -v w1="$w1" \
	    'BEGIN { printf "%.3f", d / 1e6 / (w1 - w0) }')
fi
printf '%-17s %11s %10s %10s %9s %9s %12s\n' tool "cpu ms/s" "per sample" \
    "us/task" "RSS MiB" "+BPF ms" "vs vitalsd"
base=
declare -A ms_of
for t in "${tool_list[@]}"; do
	ms=$(awk -v d=$((t1[$t] - t0[$t])) -v hz="$clk" -v w0="$w0" -v w1="$w1" \
	    'BEGIN { printf "%.3f", d * 1000 / hz / (w1 - w0) }')
	if [[ $t == vitalsd && -n $bpf_ms ]]; then
		ms=$(awk -v a="$ms" -v b="$bpf_ms" 'BEGIN { printf "%.3f", a + b }')
	fi
	ms_of[$t]=$ms
	[[ $t == vitalsd ]] && base=$ms
done
for t in "${tool_list[@]}"; do
	per=1
	[[ $t == atop ]] && per=10
	awk -v t="$t" -v ms="${ms_of[$t]}" -v per="$per" -v n="$tasks" \
	    -v rss="$(hwm "${pid_of[$t]}")" -v bpf="${bpf_ms:-}" \
	    -v base="${base:-}" 'BEGIN {
		b = (t == "vitalsd" && bpf != "") ? bpf : "-"
		r = (base != "" && base > 0) ? sprintf("%.1fx", ms / base) : "-"
		printf "%-17s %11.3f %10.3f %10.3f %9.1f %9s %12s\n", t, ms,
		    ms * per, ms * 1000 / n, rss / 1024, b, r
	}'
	echo "RESULT tool=$t cpu_ms_per_s=${ms_of[$t]} tasks=$tasks rss_kib=$(hwm "${pid_of[$t]}")"
done
echo "(cpu ms/s: the tool's CPU per second, vitalsd's with its BPF programs' run"
echo " time; per sample: x10 for atop's 10 s samples; RSS: VmHWM; resolution"
awk -v hz="$clk" -v s="$secs" 'BEGIN { printf " 1 tick = %.0f ms over %d s, +-%.2f ms/s)\n", 1000 / hz, s, 2 * 1000 / hz / s }'
[[ -n $rss_line ]] && echo "vitalsd VmRSS/VmHWM (KiB) from its start:$rss_line"
if [[ -n $health ]]; then
	python3 - "$health" <<'PY' || true
import json, sys
h = json.loads(sys.argv[1]).get("health", {})
last = h.get("last") or {}
wh = last.get("health") or {}
b = wh.get("bpf") or {}
def i(v):
    return int(v) if isinstance(v, (int, str)) and v != "" else 0
n = i(last.get("samples")) or i(last.get("n_samples")) or 1
print("vitalsd says (last window): tick late max %.2f ms, bpf drain %.2f ms, "
      "sampling %.2f ms per sample (own thread, BPF programs excluded)"
      % (i(wh.get("tick_late_ns_max")) / 1e6, i(b.get("drain_ns")) / 1e6,
         i(wh.get("sample_ns_sum")) / 1e6 / n))
print("  tick lateness (last window): sum %.2f ms = held by a callback %.2f + waiting for a CPU %.2f "
      "+ the rest; latest tick %.2f ms = held %.2f + waiting %.2f + the rest"
      % (i(wh.get("tick_late_ns_sum")) / 1e6, i(wh.get("tick_late_held_ns_sum")) / 1e6,
         i(wh.get("tick_late_runq_ns_sum")) / 1e6, i(wh.get("tick_late_ns_max")) / 1e6,
         i(wh.get("tick_late_max_held_ns")) / 1e6, i(wh.get("tick_late_max_runq_ns")) / 1e6))
coll = {c.get("name"): i(c.get("value")) for c in wh.get("coll_ns_sum") or []}
if coll:
    print("  per sample by collector (ms): " + ", ".join(
        "%s %.3f" % (k, v / 1e6 / n) for k, v in sorted(coll.items(), key=lambda kv: -kv[1])))
print("  window: self utime %.1f ms stime %.1f ms over %d samples; longest loop callback %.2f ms (%s)"
      % (i(wh.get("self_utime_us")) / 1e3, i(wh.get("self_stime_us")) / 1e3, n,
         i(wh.get("loop_cb_ns_max")) / 1e6, wh.get("loop_cb_what") or "-"))
PY
fi
if [[ -s $tmp/loop.tsv ]]; then
	# the windows closed during the measured seconds and the warm-up:
	# each, then their maxima and sums
	echo "vitalsd loop per window: seq, longest callback ms (name; its CPU ms), callbacks over 1 ms, tick late max ms, sample max ms, walks off the loop (dropped), longest wait ms"
	sort -u -k1,1n "$tmp/loop.tsv" | awk -F'\t' '{ printf "  %s: %.2f (%s; %.2f), %d, %.2f, %.2f, %d (%d), %.2f\n",
	    $1, $2 / 1e6, $3, $10 / 1e6, $4, $5 / 1e6, $9 / 1e6, $6, $7, $8 / 1e6 }'
	sort -u -k1,1n "$tmp/loop.tsv" | awk -F'\t' '
	{ n++; if ($2 > cb) { cb = $2; what = $3 }; over += $4
	  if ($5 > late) late = $5; walks += $6; dropped += $7
	  if ($8 > wait) wait = $8; if ($9 > smax) smax = $9
	  if ($2 > 1000000) big++ }
	END { printf "vitalsd loop over %d windows: longest callback %.2f ms (%s), " \
	    "%d windows with one over 1 ms, %d callbacks over 1 ms in all; tick " \
	    "late max %.2f ms; sample max %.2f ms; full walks off the loop %d " \
	    "(%d dropped), longest wait for one %.2f ms\n", n, cb / 1e6, what,
	    big, over, late / 1e6, smax / 1e6, walks, dropped, wait / 1e6 }'
fi
if [[ -n ${pid_of[vitalsd]:-} ]]; then
	echo
	parts_report "$tmp/parts0" "$tmp/parts1" || true
fi
if [[ -n $perf_pid && -s $tmp/perf.data ]]; then
	echo
	echo "perf (vitalsd, time under each function, callees included, top 80):"
	perf report -i "$tmp/perf.data" --children --sort comm,sym \
	    --stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' |
	    head -n 80 || true
fi
