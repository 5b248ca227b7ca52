# SPDX-License-Identifier: Apache-2.0
#
# bench/lib.sh: what the shell benchmarks share. Sourced, never run.
#
#   alive PID          the process exists and is not a zombie
#   stop_pid PID       TERM, KILL after 5 s, reap
#   population_start DIR SPAWN_ARGS...
#                      build spawn_tasks.c into DIR and start it with
#                      SPAWN_ARGS; sets spawn_pid and ctlfd (the population
#                      lives while ctlfd stays open); dies when it is not
#                      ready within 60 s
#   population_stop    close ctlfd and stop spawn_tasks
#   isnum VALUE WHAT   die unless VALUE is a whole number
#   population_opt ARGS...
#                      the options every population bench takes (--vitalsd,
#                      --seconds, --procs, --threads, --busy, --burn-us,
#                      --tools, --vitalsd-args, --keep): sets the variable
#                      of the same name (burn_us, vitalsd_args, secs) and
#                      opt_words to the words used; returns 1 for any other
#                      option
#   population_check   die unless --procs, --threads, --busy and --burn-us
#                      are numbers in range
#   io_written PID     bytes the kernel counted as written to storage for
#                      PID (write_bytes − cancelled_write_bytes of
#                      /proc/PID/io, every thread, reaped children
#                      included), in $io; empty when unreadable
#
#   tree_ticks PID     utime+stime+cutime+cstime of PID and its live
#                      descendants, in $acc (ticks)
#   count_tasks        processes and threads in /proc, in $n_procs and
#                      $n_tasks
#   bpf_prog_ns        run_time_ns summed over the programs pinned in
#                      $bpfdir (kernel BPF statistics on), in $bpf_ns; empty
#                      when unknown
#   parts_snap PID FILE [PID...]
#                      one snapshot of where PID's CPU goes, into FILE:
#                      "T tid comm ns runs" per thread of PID and of its
#                      child processes (schedstat's time on CPU, ns, and
#                      its timeslices: how often it was woken), "P id type
#                      name run_time_ns run_cnt" per BPF program any of
#                      them or the other PIDs hold (their fdinfo's
#                      prog_id), "S ctxt N" (the
#                      machine's context switches) and "W ns" (wall clock)
#   parts_report FILE0 FILE1
#                      ms/s per thread and per program between two
#                      snapshots, with runs/s and ns/run
#
# The caller defines die() and uses "set -euo pipefail".

isnum() {
	[[ $1 =~ ^[0-9]+$ ]] || die "$2: not a number: $1"
}

opt_words=1
population_opt() {
	opt_words=2
	case $1 in
	--vitalsd) vitalsd=${2:?--vitalsd needs a path} ;;
	--seconds) secs=${2:?--seconds needs N} ;;
	--procs) procs=${2:?--procs needs N} ;;
	--threads) threads=${2:?--threads needs N} ;;
	--busy) busy=${2:?--busy needs PCT} ;;
	--burn-us) burn_us=${2:?--burn-us needs N} ;;
	--tools) tools=${2:?--tools needs a list} ;;
	--vitalsd-args) vitalsd_args=${2?--vitalsd-args needs a value} ;;
	--keep) keep=1; opt_words=1 ;;
	*) return 1 ;;
	esac
}

population_check() {
	isnum "$secs" --seconds
	isnum "$procs" --procs
	isnum "$threads" --threads
	isnum "$busy" --busy
	isnum "$burn_us" --burn-us
	((procs > 0 && threads > 0 && busy <= 100)) ||
	    die "need --procs > 0, --threads > 0, --busy <= 100"
}

# kill -0 succeeds on a zombie, and with SIGCHLD blocked (as some
# supervisors leave it) bash may not reap a child until "wait": look at the
# state instead.
alive() {
	local line
	read -r line 2>/dev/null <"/proc/$1/stat" || return 1
	line=${line##*) }
	[[ ${line:0:1} != [ZX] ]]
}

rss_point() {	# rss_point PID -> "VmRSS/VmHWM" in KiB in $rss_at
	rss_at=$(awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 }
	    END { print r "/" h }' "/proc/$1/status" 2>/dev/null) || rss_at=-
}

stop_pid() {
	local pid=$1 i
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do
		alive "$pid" || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

spawn_pid=
ctlfd=
population_start() {
	local dir=$1 i
	shift
	"${CC:-cc}" -O2 -Wall -Wextra -o "$dir/spawn_tasks" \
	    "$(dirname "${BASH_SOURCE[0]}")/spawn_tasks.c" -pthread ||
	    die "building spawn_tasks failed"
	mkfifo "$dir/ctl"
	"$dir/spawn_tasks" "$@" <"$dir/ctl" >"$dir/spawn.out" \
	    2>"$dir/spawn.err" &
	spawn_pid=$!
	exec {ctlfd}>"$dir/ctl"
	for ((i = 0; i < 600; i++)); do
		grep -qx ready "$dir/spawn.out" 2>/dev/null && return 0
		alive "$spawn_pid" ||
		    die "spawn_tasks failed: $(cat "$dir/spawn.err")"
		sleep 0.1
	done
	die "spawn_tasks not ready after 60 s"
}

population_stop() {
	# EOF on its stdin is enough; TERM in case the fifo never opened.
	if [[ -n $ctlfd ]]; then
		exec {ctlfd}>&-
		ctlfd=
	fi
	if [[ -n $spawn_pid ]]; then
		stop_pid "$spawn_pid"
		spawn_pid=
	fi
}

io=
io_written() {
	local k v w=
	local c=0
	io=
	while read -r k v; do
		case $k in
		write_bytes:) w=$v ;;
		cancelled_write_bytes:) c=$v ;;
		esac
	done 2>/dev/null <"/proc/$1/io" || return 0
	[[ -n $w ]] && io=$((w - c))
	return 0
}

acc=0
add_ticks() {	# add_ticks PID: utime+stime+cutime+cstime of PID's tree into acc
	local pid=$1 line tf c
	local -a f kids
	read -r line 2>/dev/null <"/proc/$pid/stat" || return 0	# gone
	# comm may hold spaces and ')': the fields start after the last ')'.
	read -ra f <<<"${line##*) }"
	# f[0] is field 3 (state): utime 14 -> f[11], stime, cutime, cstime.
	acc=$((acc + f[11] + f[12] + f[13] + f[14]))
	# Live descendants (CONFIG_PROC_CHILDREN); reaped ones are in cutime.
	for tf in "/proc/$pid/task/"*/children; do
		kids=()
		read -ra kids 2>/dev/null <"$tf" || true
		for c in "${kids[@]}"; do
			add_ticks "$c"
		done
	done
}

tree_ticks() {	# tree_ticks PID -> ticks in $acc
	acc=0
	add_ticks "$1"
}

n_procs=0
n_tasks=0
count_tasks() {	# processes and threads (all /proc/*/task/* entries)
	local -a p t
	shopt -s nullglob
	p=(/proc/[0-9]*)
	t=(/proc/[0-9]*/task/[0-9]*)
	shopt -u nullglob
	n_procs=${#p[@]}
	n_tasks=${#t[@]}
}

bpf_ns=
bpf_prog_ns() {	# run_time_ns summed over the programs pinned in $bpfdir
	local f out
	bpf_ns=
	command -v bpftool >/dev/null 2>&1 && [[ -n $bpfdir ]] || return 0
	for f in "$bpfdir"/prog_*; do
		[[ -e $f ]] || continue
		out=$(bpftool -j prog show pinned "$f" 2>/dev/null) || continue
		# Absent while the kernel's BPF statistics are off.
		[[ $out =~ \"run_time_ns\":([0-9]+) ]] || continue
		bpf_ns=$((${bpf_ns:-0} + BASH_REMATCH[1]))
	done
}

parts_snap() {	# parts_snap PID FILE [PID...]
	local pid=$1 out=$2 p t ns wait slices comm
	local -a pids=("$pid")
	local -a more=("${@:3}")
	{
		echo "W $(date +%s%N)"
		# its helper processes (pgrep: no CONFIG_PROC_CHILDREN needed)
		for p in $(pgrep -P "$pid" 2>/dev/null); do
			pids+=("$p")
		done
		for p in "${pids[@]}"; do
			for t in "/proc/$p/task/"*; do
				read -r ns wait slices <"$t/schedstat" 2>/dev/null ||
				    continue
				comm=$(<"$t/comm") 2>/dev/null || comm=?
				echo "T ${t##*/} ${comm// /_} $ns $slices"
			done
		done
		awk '/^ctxt / { print "S ctxt", $2 }' /proc/stat
		# the programs they hold: prog_id in each fd's fdinfo
		if command -v bpftool >/dev/null 2>&1; then
			for p in "${pids[@]}" "${more[@]}"; do
				grep -h '^prog_id:' "/proc/$p/fdinfo/"* 2>/dev/null || true
			done | awk '{ print $2 }' | sort -un | while read -r id; do
				bpftool -j prog show id "$id" 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)
print("P", p["id"], p.get("type", "?"), p.get("name", "?"),
      p.get("run_time_ns", 0), p.get("run_cnt", 0))
' || true
			done
		fi
	} >"$out"
}

parts_report() {	# parts_report FILE0 FILE1
	python3 - "$1" "$2" <<'PY'
import sys
def load(path):
    d = {"T": {}, "P": {}, "S": {}, "W": 0}
    for line in open(path):
        f = line.split()
        if f[0] == "W":
            d["W"] = int(f[1])
        elif f[0] == "T":
            d["T"][f[1]] = (f[2], int(f[3]), int(f[4]) if len(f) > 4 else 0)
        elif f[0] == "P":
            d["P"][f[1]] = (f[2], f[3], int(f[4]), int(f[5]))
        elif f[0] == "S":
            d["S"][f[1]] = int(f[2])
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
wall = (b["W"] - a["W"]) / 1e9
by = {}
for tid, (comm, ns, sl) in b["T"].items():
    _, ns0, sl0 = a["T"].get(tid, (comm, 0, 0))
    c = by.setdefault(comm, [0, 0, 0])
    c[0] += ns - ns0
    c[1] += 1
    c[2] += sl - sl0
ctxt = (b["S"].get("ctxt", 0) - a["S"].get("ctxt", 0)) / wall
print("vitalsd parts over %.1f s (machine: %.0f context switches/s)" % (wall, ctxt))
print("%-22s %8s %10s" % ("thread (count)", "ms/s", "runs/s"))
tot = 0
for comm, (ns, n, sl) in sorted(by.items(), key=lambda kv: -kv[1][0]):
    tot += ns
    print("%-22s %8.3f %10.1f" % ("%s (%d)" % (comm, n), ns / 1e6 / wall, sl / wall))
print("%-22s %8.3f" % ("threads total", tot / 1e6 / wall))
print("%-22s %8s %10s %9s %8s %s" % ("BPF program", "ms/s", "runs/s", "ns/run", "type", "context"))
btot = 0
for pid, (typ, name, rt, rc) in sorted(b["P"].items()):
    rt0, rc0 = a["P"].get(pid, (typ, name, 0, 0))[2:]
    drt, drc = rt - rt0, rc - rc0
    # iterators and syscall programs run inside vitalsd's own reads (in
    # its threads' time already); floor_* are bench/bpf_floor's empty ones
    where = "own" if typ == "syscall" or name.startswith("taskiter") else \
        "floor" if name.startswith("floor_") else "others'"
    if where == "others'":
        btot += drt
    print("%-22s %8.3f %10.0f %9.1f %8s %s" % (name, drt / 1e6 / wall, drc / wall,
          drt / drc if drc else 0, typ, where))
    print("RESULT part=bpf prog=%s ms_per_s=%.3f runs_per_s=%.0f ns_per_run=%.1f"
          % (name, drt / 1e6 / wall, drc / wall, drt / drc if drc else 0))
print("%-22s %8.3f  (programs run in other tasks' context)" % ("BPF total", btot / 1e6 / wall))
for comm, (ns, n, sl) in sorted(by.items()):
    print("RESULT part=thread comm=%s n=%d ms_per_s=%.3f runs_per_s=%.1f"
          % (comm, n, ns / 1e6 / wall, sl / wall))
print("RESULT part=ctxt per_s=%.0f" % ctxt)
PY
}
