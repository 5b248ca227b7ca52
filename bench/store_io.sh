#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# store_io.sh: what a history store costs on flash, vitalsd against atop and
# sadc, all three running at once on one synthetic population.
#
# Per window of --window seconds (10 by default, the period atop and sadc
# are given as well) it reports, for each tool:
#   stored   growth of what the tool keeps: vitalsd's live database bytes
#            ((page_count − freelist_count) × page_size, WAL content
#            included, read with the sqlite3 shell), atop's raw log and
#            sadc's data file (their file sizes)
#   written  bytes the kernel counted as written to storage for the tool's
#            process (/proc/PID/io write_bytes − cancelled_write_bytes):
#            the WAL, checkpoints and fsyncs included; logs go to tmpfs
#            and are not counted
# and the ratios written/stored and vitalsd/peer. See bench/README.md
# ("Store I/O") for the formulas and the reading of the results.
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
# shellcheck source=bench/lib.sh
. "$here/lib.sh"

vitalsd=${VITALSD:-$repo/build/daemon/vitalsd}
# two of the spool's moves at the daemon's default store_commit_s (900):
# vitalsd's stored and written bytes grow only at a move
secs=${BENCH_SECONDS:-1850}
procs=${BENCH_PROCS:-500}
threads=${BENCH_THREADS:-4}
busy=${BENCH_BUSY_PCT:-10}
burn_us=${BENCH_BURN_US:-1000}
window=${BENCH_WINDOW_S:-10}
tools=${BENCH_TOOLS:-vitalsd,atop,sadc}
workdir=${BENCH_DIR:-/var/tmp}
vitalsd_args=${VITALSD_ARGS:-}
readers=${BENCH_READERS:-2}
reader_procs=0
keep=0

usage() {
	cat <<EOF
usage: $(basename "$0") [options]

  --vitalsd PATH   daemon binary (default: $repo/build/daemon/vitalsd)
  --seconds N      measured seconds, after one window of warm-up
                   (default $secs, two moves at store_commit_s 900: a
                   shorter run may see none; env BENCH_SECONDS)
  --window N       vitalsd's window, atop's and sadc's interval, seconds
                   (default $window; env BENCH_WINDOW_S)
  --procs N        processes to spawn (default $procs; env BENCH_PROCS)
  --threads N      threads per process, main included (default $threads)
  --busy PCT       percent of processes that burn CPU (default $busy)
  --burn-us N      CPU burnt per busy thread every 100 ms (default $burn_us)
  --tools LIST     comma-separated subset of vitalsd,atop,sadc (default all)
  --dir DIR        where the tools' files go: a disk, not tmpfs, or nothing
                   is written to storage (default $workdir; env BENCH_DIR)
  --vitalsd-args S extra vitalsd arguments, split on blanks
  --readers N      clients asking vitalsd a top-20 over the last hour and a
                   summary every 100 ms, so moves meet readers: threads of
                   one bench/query_latency process, one connection each
                   (default $readers; env BENCH_READERS)
  --reader-procs   the readers as before 4 Dec 2026: a shell loop each,
                   a 'vitals top --since 5m' process and a 'sleep 0.1'
                   every 100 ms (~400 short-lived processes a 10 s window,
                   which vitalsd's BPF rows then store)
  --keep           keep the work directory
  -h, --help       this text
EOF
}

die() {
	echo "store_io: $*" >&2
	exit 1
}

while (($#)); do
	if population_opt "$@"; then
		shift "$opt_words"
		continue
	fi
	case $1 in
	--window) window=${2:?--window needs N}; shift ;;
	--dir) workdir=${2:?--dir needs a directory}; shift ;;
	--readers) readers=${2:?--readers needs N}; shift ;;
	--reader-procs) reader_procs=1 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done
population_check
isnum "$window" --window
isnum "$readers" --readers
((secs >= window && window > 0)) || die "--seconds must be >= --window > 0"

IFS=, read -ra tool_list <<<"$tools"
missing=()
need() {
	command -v "$1" >/dev/null 2>&1 || missing+=("$1 ($2)")
}
need "${CC:-cc}" "a C compiler: package gcc or clang"
need mkfifo "package coreutils"
for t in "${tool_list[@]}"; do
	case $t in
	vitalsd)
		[[ -x $vitalsd ]] || missing+=("vitalsd at $vitalsd (ninja -C build)")
		need sqlite3 "package sqlite3"
		;;
	atop) need atop "package atop" ;;
	sadc)
		sadc=$(command -v sadc || echo /usr/lib/sysstat/sadc)
		[[ -x $sadc ]] || missing+=("sadc (package sysstat)")
		;;
	*) die "unknown tool '$t' (known: vitalsd,atop,sadc)" ;;
	esac
done
if ((${#missing[@]})); then
	echo "store_io: missing prerequisites:" >&2
	printf '  - %s\n' "${missing[@]}" >&2
	exit 1
fi
[[ $(stat -f -c %T "$workdir") != tmpfs ]] ||
    die "$workdir is tmpfs: nothing would reach storage (--dir)"
# vitalsd's BPF part is most of a window's bytes: without bpffs (a fresh
# machine) it would run without it and store a third of them
# (unmounted again at the end: only what this run mounted)
mounted=()
if [[ $(id -u) == 0 && ,$tools, == *,vitalsd,* ]]; then
	if ! mountpoint -q /sys/fs/bpf; then
		mount -t bpf bpf /sys/fs/bpf && mounted+=(/sys/fs/bpf)
	fi
	if ! mountpoint -q /sys/kernel/tracing; then
		mount -t tracefs nodev /sys/kernel/tracing &&
			mounted+=(/sys/kernel/tracing)
	fi
fi
read -ra extra_args <<<"$vitalsd_args"

# ------------------------------------------------------------ cleanup
tmp=$(mktemp -d "$workdir/store_io.XXXXXX")
logs=$(mktemp -d /dev/shm/store_io.XXXXXX 2>/dev/null || mktemp -d)
declare -A pid
reader_pids=()
bpfdir=
cleanup() {
	set +e
	local t
	for t in "${reader_pids[@]}"; do
		stop_pid "$t"
	done
	for t in "${!pid[@]}"; do
		stop_pid "${pid[$t]}"
	done
	[[ -n $bpfdir && -e $bpfdir ]] && rm -rf "$bpfdir"
	for t in "${mounted[@]}"; do
		umount "$t"
	done
	population_stop
	if ((keep)); then
		cp -r "$logs" "$tmp/logs"
		echo "store_io: kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
	rm -rf "$logs"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# ------------------------------------------------------------ measures
stored=
stored_bytes() {	# stored_bytes TOOL -> $stored
	local db
	stored=
	case $1 in
	vitalsd)
		db=$tmp/vitalsd/vitals.db
		[[ -e $db ]] || return 0
		stored=$(sqlite3 -readonly -cmd '.timeout 5000' "$db" \
		    'SELECT (p.page_count - f.freelist_count) * s.page_size
		     FROM pragma_page_count() p, pragma_freelist_count() f,
		          pragma_page_size() s' 2>/dev/null) || stored=
		;;
	atop) stored=$(stat -c %s "$tmp/atop.raw" 2>/dev/null) || stored= ;;
	sadc) stored=$(stat -c %s "$tmp/sa.data" 2>/dev/null) || stored= ;;
	esac
}

files_bytes() {	# on-disk bytes of everything the tool keeps
	du -sb "$@" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'
}

start_tool() {
	case $1 in
	vitalsd)
		mkdir -p "$tmp/vitalsd"
		local -a b=()
		if "$vitalsd" --help 2>&1 | grep -q -- --bpffs &&
		    [[ $(stat -f -c %T /sys/fs/bpf 2>/dev/null) == bpf_fs ]]; then
			bpfdir=/sys/fs/bpf/vitals_storeio_$$
			b=(--bpffs "$bpfdir")
		fi
		"$vitalsd" --foreground --state-dir "$tmp/vitalsd" \
		    --socket "$tmp/vitalsd.sock" \
		    --store-spool-dir "$logs/spool" \
		    --interval-ms 1000 --window-s "$window" "${b[@]}" \
		    "${extra_args[@]}" </dev/null >"$logs/vitalsd.log" 2>&1 \
		    {ctlfd}>&- &
		;;
	atop)
		atop -w "$tmp/atop.raw" "$window" </dev/null \
		    >"$logs/atop.log" 2>&1 {ctlfd}>&- &
		;;
	sadc)
		"$sadc" "$window" "$tmp/sa.data" </dev/null \
		    >"$logs/sadc.log" 2>&1 {ctlfd}>&- &
		;;
	esac
	pid[$1]=$!
}

# ------------------------------------------------------------ run
spawn_args=(-p "$procs" -t "$threads" -b "$busy" -c "$burn_us" -i 100 -I)
population_start "$tmp" "${spawn_args[@]}"
echo "== machine"
echo "nproc: $(nproc), kernel $(uname -srm)"
echo "storage: $(stat -f -c %T "$workdir") at $workdir"
echo "== population"
cat "$tmp/spawn.err"
for t in "${tool_list[@]}"; do
	case $t in
	atop) echo "atop: $(atop -V 2>&1 | head -n1)" ;;
	sadc) echo "sadc: $("$sadc" -V 2>&1 | head -n1)" ;;
	vitalsd) echo "vitalsd: $vitalsd ${extra_args[*]}" ;;
	esac
	start_tool "$t"
done
# One window of warm-up: the first window's creation (schema, atop's
# header, sadc's file header) is not a per-window cost.
sleep $((window + 2))
if [[ -n ${pid[vitalsd]:-} ]] && ((readers > 0)) && ((!reader_procs)); then
	ql=${QUERY_LATENCY:-$repo/build/bench/query_latency}
	[[ -x $ql ]] || die "no $ql (ninja -C build)"
	# paced: every reader a top-20 and a summary 10 times a second, for
	# a little longer than the measurement; its report comes at the end
	"$ql" run "$tmp/vitalsd.sock" "$readers" $((secs + 10)) paced=10 \
	    >"$logs/readers.out" 2>>"$logs/readers.err" </dev/null {ctlfd}>&- &
	reader_pids+=($!)
elif [[ -n ${pid[vitalsd]:-} ]] && ((readers > 0)); then
	client=${VITALS:-$repo/build/client/vitals}
	[[ -x $client ]] || die "no client at $client (ninja -C build)"
	for ((i = 0; i < readers; i++)); do
		while :; do
			"$client" --socket "$tmp/vitalsd.sock" top --since 5m \
			    >/dev/null 2>>"$logs/readers.err" ||
			    echo "reader: exit $?" >>"$logs/readers.err"
			sleep 0.1
		done </dev/null {ctlfd}>&- &
		reader_pids+=($!)
	done
fi
declare -A s0 w0 s1 w1
for t in "${tool_list[@]}"; do
	alive "${pid[$t]}" || die "$t exited: $(tail -n 3 "$logs/$t.log")"
	stored_bytes "$t"
	s0[$t]=$stored
	io_written "${pid[$t]}"
	w0[$t]=$io
done
t0=$EPOCHREALTIME
echo "measuring ${secs} s (${window} s windows) ..." >&2
sleep "$secs"
t1=$EPOCHREALTIME
for t in "${tool_list[@]}"; do
	if ! alive "${pid[$t]}"; then
		# a peer that stopped loses its own figures, not the others'
		[[ $t != vitalsd ]] || die "$t exited: $(tail -n 3 "$logs/$t.log")"
		st=0
		wait "${pid[$t]}" 2>/dev/null || st=$?
		echo "store_io: $t exited before the end (status $st):" \
		    "$(tail -n 3 "$logs/$t.log")" >&2
		s1[$t]= w1[$t]=
		continue
	fi
	stored_bytes "$t"
	s1[$t]=$stored
	io_written "${pid[$t]}"
	w1[$t]=$io
done
on_disk=$(files_bytes "$tmp/vitalsd")

# ------------------------------------------------------------ report
nwin=$(awk -v a="$t0" -v b="$t1" -v w="$window" 'BEGIN { printf "%.2f", (b - a) / w }')
echo
echo "== per ${window} s window, over ${nwin} windows, all tools at once"
printf '%-8s %14s %14s %12s\n' tool stored_B/win written_B/win written/stored
declare -A ps pw
for t in "${tool_list[@]}"; do
	if [[ -z ${s0[$t]} || -z ${s1[$t]} || -z ${w0[$t]} || -z ${w1[$t]} ]]; then
		printf '%-8s %14s\n' "$t" "unreadable"
		continue
	fi
	ps[$t]=$(awk -v d=$((s1[$t] - s0[$t])) -v n="$nwin" 'BEGIN { printf "%.0f", d / n }')
	pw[$t]=$(awk -v d=$((w1[$t] - w0[$t])) -v n="$nwin" 'BEGIN { printf "%.0f", d / n }')
	printf '%-8s %14s %14s %12s\n' "$t" "${ps[$t]}" "${pw[$t]}" \
	    "$(awk -v a="${pw[$t]}" -v b="${ps[$t]}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')"
	echo "RESULT tool=$t stored_bytes_per_window=${ps[$t]}" \
	    "written_bytes_per_window=${pw[$t]} windows=$nwin" \
	    "stored_delta=$((s1[$t] - s0[$t])) written_delta=$((w1[$t] - w0[$t]))"
done
if [[ -n ${ps[vitalsd]:-} ]]; then
	echo
	for t in atop sadc; do
		[[ -n ${ps[$t]:-} ]] || continue
		awk -v vs="${ps[vitalsd]}" -v vw="${pw[vitalsd]}" \
		    -v ps="${ps[$t]}" -v pw="${pw[$t]}" -v t="$t" 'BEGIN {
			a = "n/a"
			b = "n/a"
			if (ps > 0)
				a = sprintf("%.2fx", vs / ps)
			if (pw > 0)
				b = sprintf("%.2fx", vw / pw)
			printf "vitalsd/%s: stored %s, written %s\n", t, a, b
		}'
	done
	awk -v w="${pw[vitalsd]}" -v win="$window" 'BEGIN {
		printf "vitalsd written per day: %.1f MiB\n", w * 86400 / win / 1048576
	}'
	echo "vitalsd state directory on disk at the end: $on_disk bytes"
	# the lock waits of the main file, logged by vitalsd as it stops
	if ((!reader_procs)); then
		for t in "${reader_pids[@]}"; do
			for ((i = 0; i < 30; i++)); do
				kill -0 "$t" 2>/dev/null || break
				sleep 1
			done
		done
	fi
	for t in "${reader_pids[@]}"; do
		stop_pid "$t"
	done
	reader_pids=()
	stop_pid "${pid[vitalsd]}"
	unset 'pid[vitalsd]'
	grep -E 'store waits:' "$logs/vitalsd.log" | tail -n 1 |
	    sed 's/^.*\] /vitalsd /' || true
	if [[ -s $logs/readers.out ]]; then
		grep -E '^(summary|top20-1h) ' "$logs/readers.out" |
		    sed 's/^/readers: /' || true
	fi
	if [[ -s $logs/readers.err ]]; then
		echo "reader errors: $(grep -c . "$logs/readers.err")," \
		    "first: $(head -n 1 "$logs/readers.err")"
	else
		echo "reader errors: 0 (${readers} readers)"
	fi
	grep -E '\] window [0-9]+:' "$logs/vitalsd.log" | tail -n 1 |
	    sed 's/^.*\] /vitalsd last window: /' || true
fi
