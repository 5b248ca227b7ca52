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
