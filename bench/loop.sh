#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# loop.sh: how long vitalsd's libevent loop is held (issue 20: no work
# over 1 ms on the loop). One population (spawn_tasks.c, as mem.sh), a
# working-set target (python3 holding a 64 MiB bytearray it touches, heap
# mode: the doc/wss.md case of ~15 ms a pass), vitalsd with
# syscall_trace = on and 5 s windows. Every window's health is read as it
# closes; the script prints, per window, tick_late_ns_max and the longest
# loop callback (loop_cb_ns_max, loop_cb_what, loop_cb_over_1ms; absent in
# a daemon older than them), then their maxima. bench/README.md ("Loop")
# has figures.
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
wss_mib=${LOOP_WSS_MIB:-64}
dmabuf_s=${LOOP_DMABUF_S:-}

usage() {
	cat <<USAGE
usage: $(basename "$0") [options]

  --seconds N      seconds measured (default $secs)
  --procs N        processes to spawn (default $procs)
  --threads N      threads per process, main included (default $threads)
  --busy PCT       percent of processes that burn CPU (default $busy)
  --burn-us N      CPU burnt per busy thread every 100 ms (default $burn_us)
  --vitalsd PATH   daemon binary (default $vitalsd)
  --vitalsd-args S extra daemon arguments, split on blanks
  --keep           keep the temporary directory
Needs root (BPF, tracefs). LOOP_WSS_MIB: the target's heap (default 64;
0: no working-set target). LOOP_DMABUF_S: dmabuf_interval_s (default the
daemon's, 60 s: one DMA-BUF pass in a 60 s run, at the first close; 0: a
pass at every window's close).
USAGE
}

die() {
	echo "loop: $*" >&2
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
[[ -x $vitals ]] || die "no client at $vitals (ninja -C build)"
[[ $(id -u) == 0 ]] || die "needs root"
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
read -ra extra_args <<<"$vitalsd_args"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/loop.XXXXXX")
vpid=
tpid=
bpfdir=/sys/fs/bpf/vitals_loop_$$
cleanup() {
	set +e
	[[ -n $vpid ]] && stop_pid "$vpid"
	[[ -n $tpid ]] && stop_pid "$tpid"
	[[ -e $bpfdir ]] && rm -rf "$bpfdir"
	population_stop
	if ((keep)); then
		echo "loop: kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

population_start "$tmp" -p "$procs" -t "$threads" -b "$busy" -c "$burn_us" \
    -i 100 -I
if ((wss_mib > 0)); then
	# a quarter of its pages touched every 200 ms: passes see both kinds
	python3 -c '
import sys, time
b = bytearray(int(sys.argv[1]) << 20)
n = len(b) // 4096
for i in range(0, len(b), 4096):
	b[i] = 1
while True:
	for i in range(0, n // 4):
		b[i * 4096] = 2
	time.sleep(0.2)
' "$wss_mib" &
	tpid=$!
fi
cat >"$tmp/vitalsd.conf" <<CONF
ftrace_instance = vitals_loop_$$
window_s = 5
syscall_trace = on
${dmabuf_s:+dmabuf_interval_s = $dmabuf_s}
CONF
mkdir -p "$tmp/state"
"$vitalsd" --foreground -c "$tmp/vitalsd.conf" --state-dir "$tmp/state" \
    --socket "$tmp/vitals.sock" --bpffs "$bpfdir" "${extra_args[@]}" \
    </dev/null >"$tmp/vitalsd.log" 2>&1 {ctlfd}>&- &
vpid=$!
for ((i = 0; i < 100; i++)); do
	[[ -S $tmp/vitals.sock ]] && break
	sleep 0.1
done
if [[ -n $tpid ]]; then
	"$vitals" --socket "$tmp/vitals.sock" wss start --pid "$tpid" \
	    --mode heap >/dev/null || die "wss start failed"
fi
# one health read per window, just after its close
sleep 6
: >"$tmp/health.jsonl"
for ((i = 0; i < secs; i += 5)); do
	sleep 5
	alive "$vpid" || die "vitalsd exited: $(tail -n 3 "$tmp/vitalsd.log")"
	"$vitals" --socket "$tmp/vitals.sock" --json health >>"$tmp/health.jsonl" ||
	    true
	echo >>"$tmp/health.jsonl"
done
count_tasks
if [[ -n $tpid ]]; then
	"$vitals" --socket "$tmp/vitals.sock" --json wss "$tpid" \
	    >"$tmp/wss.json" 2>/dev/null || true
fi
echo "== loop: $n_tasks tasks ($procs processes x $threads threads, $busy % busy), syscall_trace on, wss target ${wss_mib} MiB heap, ${secs} s"
python3 - "$tmp/health.jsonl" "$tmp/wss.json" <<'PY'
import json, sys

seen, rows = set(), []
text = open(sys.argv[1]).read()
dec = json.JSONDecoder()
i = 0
while i < len(text):
    if text[i].isspace():
        i += 1
        continue
    j, i = dec.raw_decode(text, i)
    last = (j.get("health") or {}).get("last") or {}
    h = last.get("health") or {}
    seq = last.get("seq")
    if seq is None or seq in seen:
        continue
    seen.add(seq)
    num = lambda k: int(h[k]) if h.get(k) not in (None, "") else None
    rows.append((int(seq), num("tick_late_ns_max"), num("sample_ns_max"),
                 num("loop_cb_ns_max"), h.get("loop_cb_what"),
                 num("loop_cb_over_1ms"), num("loop_cb_cpu_ns")))
print("window  tick_late_max_ms  sample_max_ms  loop_cb_max_ms  cpu_ms  what  over_1ms")
for r in rows:
    f = lambda v: "-" if v is None else "%.3f" % (v / 1e6)
    print("%6d  %16s  %13s  %14s  %6s  %s  %s" % (r[0], f(r[1]), f(r[2]),
          f(r[3]), f(r[6]), r[4] if r[4] is not None else "-",
          "-" if r[5] is None else r[5]))
def mx(k):
    v = [r[k] for r in rows if r[k] is not None]
    return max(v) if v else None
late, cb = mx(1), mx(3)
top = max((r for r in rows if r[3] is not None), key=lambda r: r[3],
          default=None)
try:
    w = json.load(open(sys.argv[2]))
    t = ((w.get("wss_get") or {}).get("targets") or [{}])[0]
    passes = int(t.get("passes", 0))
    pmax = int(t.get("pass_ns_max", 0))
    psum = int(t.get("pass_ns_sum", 0))
    wss = "wss passes %d, pass max %.3f ms, mean %.3f ms" % (
        passes, pmax / 1e6, psum / 1e6 / passes if passes else 0)
except Exception:
    wss = "wss: no figures"
print("-- %s" % wss)
# the first window holds the start-up (threads made, the first BPF
# drains, the target's first pass begun): shown, and the maxima without it
steady = rows[1:] if len(rows) > 1 else rows
late2 = max([r[1] for r in steady if r[1] is not None], default=None)
cb2 = max([r[3] for r in steady if r[3] is not None], default=None)
g = lambda v: "-" if v is None else "%.3f" % (v / 1e6)
print("RESULT windows=%d tick_late_ms_max=%s loop_cb_ms_max=%s what=%s "
      "after_first: tick_late_ms_max=%s loop_cb_ms_max=%s" % (
      len(rows), g(late), g(cb), top[4] if top else "-", g(late2), g(cb2)))
PY
