#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# query_latency.sh: latency of the control plane's two common queries —
# the summary (a snapshot of the last window, top 10) and top-20 processes
# by CPU over the last hour — with 32 concurrent clients, and the daemon's
# sampling-timer lateness meanwhile. The daemon runs on the real machine
# (real /proc); its store first gets an hour of synthetic 10 s windows
# (300 processes + 200 threads each) so that "over one hour" reads an hour
# of rows. See bench/README.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
builddir=${BUILDDIR:-$repo/build}
vitalsd=${VITALSD:-$builddir/daemon/vitalsd}
bench=${QUERY_LATENCY:-$builddir/bench/query_latency}
clients=${BENCH_CLIENTS:-32}
secs=${BENCH_SECONDS:-20}
warmup=${BENCH_WARMUP:-10}
hours=${BENCH_HOURS:-1}
procs=${BENCH_PROCS:-300}
threads=${BENCH_THREADS:-200}
interval=${BENCH_INTERVAL_MS:-1000}
window=${BENCH_WINDOW_S:-10}
reconnect=
unshared=
paced=
nice=${BENCH_NICE:-0}
qthreads=${BENCH_QUERY_THREADS:-}
uidq=${BENCH_UID_QUEUE:-}
qnice=${BENCH_QUERY_NICE:-}
qwarm=${BENCH_QUERY_WARM:-}
qidle=${BENCH_QUERY_IDLE_S:-}
spool=${BENCH_SPOOL:-1}
keep=0

usage() {
	cat <<USAGE
usage: $(basename "$0") [options]

  --vitalsd PATH     daemon binary (default: \$BUILDDIR/daemon/vitalsd)
  --bench PATH       query_latency binary (default: \$BUILDDIR/bench/query_latency)
  --clients N        concurrent clients (default $clients; env BENCH_CLIENTS)
  --seconds N        measured seconds (default $secs; env BENCH_SECONDS)
  --warmup N         seconds of sampling first (default $warmup; env BENCH_WARMUP)
  --hours H          hours of synthetic windows in the store (default $hours)
  --procs N          processes per synthetic window (default $procs)
  --threads N        threads per synthetic window (default $threads)
  --interval-ms N    the daemon's cadence (default $interval)
  --window-s N       the daemon's window length (default $window)
  --reconnect        a new connection per request (as the CLI does)
  --unshared         no two top requests equal (every one reads the store)
  --paced HZ         each client asks top + summary HZ times a second, all
                     at once, instead of back to back
  --nice N           run the daemon at nice N, as a service might (default 0)
  --query-threads N  the daemon's read pool (query_threads; default: its own)
  --no-spool         every window its own commit in vitals.db (default: a
                     spool of the bench's own under /dev/shm, as deployed)
  --query-nice N     the read threads' nice value (query_nice; default 10)
  --query-warm 0|1   1: each read thread opens its connection and makes a
                     warm read at start; 0: opened at its first read
                     (query_warm; default: the daemon's 0)
  --query-idle-s N   seconds without a read before a read thread gives back
                     its caches (query_idle_s; default: the daemon's 30)
  --uid-queue N      reads one uid may queue (query_queue_per_uid; default:
                     the daemon's 16; every client here is one uid)
  --keep             keep the temporary directory (daemon log, database)
  -h, --help         this text
USAGE
}

die() {
	echo "query_latency: $*" >&2
	exit 1
}

while (($#)); do
	case $1 in
	--vitalsd) vitalsd=$2; shift ;;
	--bench) bench=$2; shift ;;
	--clients) clients=$2; shift ;;
	--seconds) secs=$2; shift ;;
	--warmup) warmup=$2; shift ;;
	--hours) hours=$2; shift ;;
	--procs) procs=$2; shift ;;
	--threads) threads=$2; shift ;;
	--interval-ms) interval=$2; shift ;;
	--window-s) window=$2; shift ;;
	--reconnect) reconnect=reconnect ;;
	--unshared) unshared=unshared ;;
	--paced) paced=paced=$2; shift ;;
	--nice) nice=$2; shift ;;
	--query-threads) qthreads=$2; shift ;;
	--uid-queue) uidq=$2; shift ;;
	--query-nice) qnice=$2; shift ;;
	--query-warm) qwarm=$2; shift ;;
	--query-idle-s) qidle=$2; shift ;;
	--no-spool) spool=0 ;;
	--keep) keep=1 ;;
	-h|--help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done

# Build what is missing when the build directory is a meson one.
if [ -f "$builddir/build.ninja" ]; then
	ninja -C "$builddir" daemon/vitalsd bench/query_latency >/dev/null
fi
[ -x "$vitalsd" ] || die "no daemon at $vitalsd (ninja -C build)"
[ -x "$bench" ] || die "no query_latency at $bench (ninja -C build)"

tmp=$(mktemp -d /tmp/vitals-qlat.XXXXXX)
dpid=
spooldir=
cleanup() {
	[ -z "$spooldir" ] || rm -rf "$spooldir"
	if [ -n "$dpid" ] && kill -0 "$dpid" 2>/dev/null; then
		kill -TERM "$dpid"
		wait "$dpid" || true
	fi
	if [ "$keep" = 1 ]; then
		echo "kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT

echo "machine: $(nproc) CPUs, $(uname -sr), $(grep -m1 'model name' \
    /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$tmp/state"
"$bench" fill "$tmp/state/vitals.db" "$hours" "$procs" "$threads"
conf=()
: >"$tmp/vitalsd.conf"
# the spool as the daemon runs it (a RAM file system), but a directory of
# the bench's own: the default one may belong to another user
if [ "$spool" = 1 ]; then
	spooldir=$(mktemp -d /dev/shm/vitals-qlat.XXXXXX)
	echo "store_spool_dir = $spooldir" >>"$tmp/vitalsd.conf"
	# a batch (a maintenance pass and its move) every minute
	echo "store_commit_s = ${BENCH_COMMIT_S:-60}" >>"$tmp/vitalsd.conf"
else
	echo "store_spool_dir = off" >>"$tmp/vitalsd.conf"
fi
[ -z "$qthreads" ] || echo "query_threads = $qthreads" >>"$tmp/vitalsd.conf"
[ -z "$uidq" ] || echo "query_queue_per_uid = $uidq" >>"$tmp/vitalsd.conf"
[ -z "$qnice" ] || echo "query_nice = $qnice" >>"$tmp/vitalsd.conf"
[ -z "$qwarm" ] || echo "query_warm = $qwarm" >>"$tmp/vitalsd.conf"
[ -z "$qidle" ] || echo "query_idle_s = $qidle" >>"$tmp/vitalsd.conf"
[ ! -s "$tmp/vitalsd.conf" ] || conf=(-c "$tmp/vitalsd.conf")
thread_cpu() {	# thread_cpu PID: "tid comm ns" a thread
	local t c ns
	for t in /proc/"$1"/task/*; do
		{ read -r c <"$t/comm"; } 2>/dev/null || continue
		{ read -r ns _ <"$t/schedstat"; } 2>/dev/null || continue
		echo "${t##*/} $c $ns"
	done
}
nice -n "$nice" "$vitalsd" -f "${conf[@]}" --state-dir "$tmp/state" \
    --socket "$tmp/state/s" --interval-ms "$interval" --window-s "$window" \
    2>"$tmp/vitalsd.log" &
dpid=$!
for _ in $(seq 50); do
	[ -S "$tmp/state/s" ] && break
	sleep 0.1
done
[ -S "$tmp/state/s" ] ||
	die "daemon did not start: $(tail -3 "$tmp/vitalsd.log")"
echo "daemon pid $dpid (nice $nice), interval ${interval} ms," \
    "window ${window} s; warm-up ${warmup} s"
sleep "$warmup"
# what the daemon holds before the first request (with --warmup over 30:
# its read connections idle since their warm read)
echo "daemon before the run: $(awk '/^Vm(RSS|HWM)/ { printf "%s %.1f MiB ", \
    $1, $2 / 1024 }' /proc/"$dpid"/status)"
cpu0=$(thread_cpu "$dpid")
t0=$EPOCHREALTIME
"$bench" run "$tmp/state/s" "$clients" "$secs" $reconnect $unshared $paced
kill -0 "$dpid" 2>/dev/null ||
	die "daemon died: $(tail -3 "$tmp/vitalsd.log")"
# The daemon's CPU over the client's run, summed by thread name
# (schedstat: on-CPU ns, each thread against its own first read; one
# started meanwhile counts from 0; one that ended meanwhile is missing,
# with its CPU since the first read).
cpu1=$(thread_cpu "$dpid")
awk -v a="$t0" -v z="$EPOCHREALTIME" '
	BEGIN { s = z - a }
	NR == FNR { b[$1] = $3; next }
	{ d[$2] += ($3 - b[$1]) / 1e6 }
	END { n = 0
	  for (c in d) k[++n] = c
	  for (i = 1; i <= n; i++)	# by name, as sort would
		for (j = i + 1; j <= n; j++)
			if (k[j] < k[i]) { x = k[i]; k[i] = k[j]; k[j] = x }
	  for (i = 1; i <= n; i++) {
		t += d[k[i]]
		l = l sprintf(" %s %.1f", k[i], d[k[i]])
	  }
	  printf "daemon cpu over the run (%.1f s), ms:%s; all %.1f" \
	      " (%.2f ms/s)\n", s, l, t, t / s }' \
    <(echo "$cpu0") <(echo "$cpu1")
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
