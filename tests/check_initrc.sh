#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Android init, reproduced from init/vitalsd.rc itself (doc/privileges.md,
# "Android init"). Root only (kernel suite).
#
#   check_initrc.sh start   the daemon starts with exactly what the rc grants,
#                           stores windows, answers, drops, stops cleanly;
#                           the platform's callers get their roles
#   check_initrc.sh fail    a start failing at any step leaves no tracefs
#                           instance tracing and no socket of its own
#
# What is read from the rc: the service line (binary, arguments), `user`,
# `group`, `capabilities`, the `socket` line and the `mkdir` of
# `on post-fs-data`. What init does with them, done here the same way:
#   - the directory: mkdir, chmod, chown as the rc says (init's `mkdir`);
#   - the socket: bound by "init" (python), chmod/chown to the rc's
#     mode/user/group, its fd left open across exec and named in
#     ANDROID_SOCKET_vitalsd (init does not listen: the daemon does);
#   - the process: uid/gid/groups of `user`/`group`; the capabilities line
#     becomes the bounding, inheritable and ambient sets (init's
#     SetCapsForExec), here with setpriv (util-linux).
# Substitutions, all of paths or names this host lacks:
#   - a temporary root T: /data/... becomes T/data/..., /dev/socket
#     becomes T/dev/socket, /system_ext/bin/vitalsd the built binary; T/data is
#     0771 system system and T/data/misc 01771 system misc as on a device;
#   - AID names become numbers (root 0, system 1000, shell 2000, readproc
#     3009, readtracefs 1093, misc 9998): this host has no such groups;
#   - added to the service line: --window-s 1 --interval-ms 200, so windows
#     close within the test's time. Nothing else: --bpf-load pinned-only
#     finds no bpfloader pins here and runs on procfs (said in every
#     window), as a device whose loader failed would.
# Init removes a service's socket file when it reaps the service; the test
# does the same after checking that nothing listens on it any more.
set -euo pipefail
mode=${1:-start}
src=${VITALS_SRCDIR:?}
bld=${VITALS_BUILDDIR:?}
rc=$src/init/vitalsd.rc
daemon=$bld/daemon/vitalsd
client=$bld/client/vitals
fail() { echo "FAIL: $*" >&2; [ -n "${log:-}" ] && [ -f "$log" ] && sed 's/^/  log: /' "$log" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 77; }
command -v setpriv >/dev/null || fail "setpriv (util-linux) missing"
tracing=$(awk '$3=="tracefs"{print $2; exit}' /proc/self/mounts)
[ -n "$tracing" ] || fail "tracefs not mounted (scripts/test.sh mounts it)"

T=$(mktemp -d /tmp/vitals-initrc-XXXXXX)
chmod 0755 "$T"
pid=
other=
# The rc's line keeps the default spool directory (vitalsd.8: /run/vitalsd
# on a tmpfs /run, else /dev/shm/vitalsd); one the test made goes with it
# (rmdir: only when empty, as a clean stop leaves it).
case $(stat -f -c %T /run 2>/dev/null) in
tmpfs|ramfs) spooldef=/run/vitalsd;; *) spooldef=/dev/shm/vitalsd;; esac
[ -e "$spooldef" ] && spooldef=
cleanup() {
	[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	[ -n "$other" ] && kill "$other" 2>/dev/null && wait "$other" 2>/dev/null
	rm -rf "$T"
	[ -n "$spooldef" ] && rmdir "$spooldef" 2>/dev/null
	return 0
}
trap cleanup EXIT

aid() {
	case $1 in
	root) echo 0;; system) echo 1000;; shell) echo 2000;; misc) echo 9998;;
	readproc) echo 3009;; readtracefs) echo 1093;;
	*[!0-9]*) fail "unknown AID name $1";; *) echo "$1";;
	esac
}
remap() { # an Android path into T
	case $1 in
	/data/*|/dev/socket/*|/dev/socket) echo "$T$1";;
	*) echo "$1";;
	esac
}

# ---- parse the rc
svc=$(grep -E '^service vitalsd ' "$rc") || fail "no service vitalsd in $rc"
read -r -a words <<<"$svc"
bin=${words[2]}
[ "$bin" = /system_ext/bin/vitalsd ] || fail "service binary $bin"
args=("${words[@]:3}")
# the service's options: indented lines up to the next section
opts=$(awk '/^service vitalsd /{on=1; next} /^[^ \t#]/{on=0} on' "$rc" |
	sed 's/#.*//; s/^[ \t]*//' | grep -v '^$')
user=$(awk '$1=="user"{print $2}' <<<"$opts")
read -r -a grp <<<"$(awk '$1=="group"{$1=""; print}' <<<"$opts")"
read -r -a caps <<<"$(awk '$1=="capabilities"{$1=""; print}' <<<"$opts")"
sockline=$(awk '$1=="socket"' <<<"$opts")
[ -n "$user" ] && [ ${#grp[@]} -ge 1 ] && [ ${#caps[@]} -ge 1 ] &&
	[ -n "$sockline" ] || fail "rc: user/group/capabilities/socket missing"
read -r _ sname stype sperm suser sgroup <<<"$sockline"
[ "$sname" = vitalsd ] && [ "$stype" = stream ] || fail "socket line: $sockline"
mkline=$(awk '/^on post-fs-data/{on=1; next} /^[^ \t]/{on=0} on && $1=="mkdir"' "$rc")
read -r _ mdir mmode muser mgroup <<<"$mkline"
[ -n "$mgroup" ] || fail "no mkdir with mode and owner in on post-fs-data"
uid=$(aid "$user")
gid=$(aid "${grp[0]}")
sgids=()
for g in "${grp[@]:1}"; do sgids+=("$(aid "$g")"); done
capl=$(IFS=,; echo "${caps[*]}" | tr 'A-Z' 'a-z')
pcaps=$(sed 's/\(^\|,\)/\1+/g' <<<"$capl")
# the drop the daemon is told to do
svcuser=; svcgroups=
for ((i = 0; i < ${#args[@]}; i++)); do
	case ${args[$i]} in
	--state-dir) args[$((i + 1))]=$(remap "${args[$((i + 1))]}");;
	--user) svcuser=${args[$((i + 1))]};;
	--group)
		svcgroups=${args[$((i + 1))]}
		ids=()
		IFS=, read -r -a gl <<<"$svcgroups"
		for g in "${gl[@]}"; do ids+=("$(aid "$g")"); done
		args[$((i + 1))]=$(IFS=,; echo "${ids[*]}");;
	esac
done
[ -n "$svcuser" ] || fail "the service line drops to no user"
svcuid=$(aid "$svcuser")
state=$(remap "$mdir")
case " ${args[*]} " in *" --state-dir $state "*) ;;
	*) fail "the service's --state-dir is not the post-fs-data mkdir $mdir";; esac
sockpath=$(remap "/dev/socket/$sname")

# ---- what init sets up before any service starts
fs_setup() {
	rm -rf "$T/data" "$T/dev"
	install -d -m 0771 -o 1000 -g 1000 "$T/data"
	install -d -m 01771 -o 1000 -g 9998 "$T/data/misc"
	install -d -m 0755 "$T/dev" "$T/dev/socket"
	# on post-fs-data: mkdir <dir> <mode> <user> <group>
	install -d -m "$mmode" -o "$(aid "$muser")" -g "$(aid "$mgroup")" "$state"
}

# start_service [extra daemon args...]: as init would; $pid, $log.
# SOCKET=none: no socket handed over; SOCKET=bad: the variable names fd 0.
log=$T/daemon.log
start_service() {
	local sgarg=--clear-groups
	[ ${#sgids[@]} -gt 0 ] && sgarg="--groups $(IFS=,; echo "${sgids[*]}")"
	: >"$log"
	python3 - "$sockpath" "$sperm" "$(aid "$suser")" "$(aid "$sgroup")" \
	    "${SOCKET:-init}" \
	    setpriv --reuid "$uid" --regid "$gid" $sgarg \
	    --bounding-set "-all,$pcaps" --inh-caps "-all,$pcaps" \
	    --ambient-caps "$pcaps" \
	    "$daemon" "${args[@]}" --window-s 1 --interval-ms 200 "$@" \
	    2>>"$log" <<'PY' &
import os, socket, sys
path, mode, uid, gid, how = sys.argv[1], int(sys.argv[2], 8), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
if how == "init":
    if os.path.lexists(path):
        os.unlink(path)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    os.chown(path, uid, gid)
    os.chmod(path, mode)
    fd = s.detach()
    os.set_inheritable(fd, True)
    os.environ["ANDROID_SOCKET_vitalsd"] = str(fd)
elif how == "bad":
    os.environ["ANDROID_SOCKET_vitalsd"] = "0"
os.execvp(sys.argv[6], sys.argv[6:])
PY
	pid=$!
}

# nothing of ours tracing: every instances/vitals* is off (or gone); the
# vitals_test_<pid>_<n> instances are other suites' harnesses, which meson
# may run beside this one
assert_not_tracing() {
	local d on
	for d in "$tracing"/instances/vitals*; do
		[ -d "$d" ] || continue
		case ${d##*/} in vitals_test_*) continue ;; esac
		on=$(cat "$d/tracing_on")
		[ "$on" = 0 ] || fail "$1: $d left tracing (tracing_on $on)"
	done
}

# as init's reaper: nothing listens; then the file goes
assert_socket_dead() {
	[ -S "$sockpath" ] || return 0
	python3 - "$sockpath" <<'PY' || fail "$1: something still listens on $sockpath"
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except ConnectionRefusedError:
    sys.exit(0)
sys.exit(1)
PY
	rm -f "$sockpath"
}

ask() { # ask UID GIDS COMMAND...: the client as that caller
	local u=$1 g=$2
	shift 2
	setpriv --reuid "$u" --regid "${g%%,*}" --groups "$g" \
	    --bounding-set -all --inh-caps -all \
	    "$client" --socket "$sockpath" --timeout 5000 "$@"
}

wait_up() {
	local i
	for i in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || return 1
		"$client" --socket "$sockpath" --timeout 1000 health >/dev/null 2>&1 &&
			return 0
		sleep 0.1
	done
	return 1
}

status_of() { awk -v k="$2:" '$1==k{$1=""; sub(/^ /,""); print}' "/proc/$1/status"; }

run_start() {
	fs_setup
	start_service
	wait_up || fail "the daemon did not come up as the rc starts it"
	grep -q "control socket from Android init" "$log" ||
		fail "the socket was not taken from ANDROID_SOCKET_vitalsd"
	grep -q "privileges: dropped to .*; verified" "$log" || fail "no verified drop"
	# dropped: every id the service user's, nothing kept, in every thread
	local t c grp_have grp_want
	for t in /proc/$pid/task/*; do
		[ "$(awk '$1=="Uid:"{print $2,$3,$4,$5}' "$t/status")" = "$svcuid $svcuid $svcuid $svcuid" ] ||
			fail "thread $t: uids $(grep Uid: "$t/status")"
		for c in CapInh CapPrm CapEff CapBnd CapAmb; do
			[ "$(awk -v k="$c:" '$1==k{print $2}' "$t/status")" = 0000000000000000 ] ||
				fail "thread $t: $c not empty"
		done
		[ "$(awk '$1=="NoNewPrivs:"{print $2}' "$t/status")" = 1 ] ||
			fail "thread $t: no_new_privs off"
	done
	grp_have=$(status_of "$pid" Groups | tr ' ' '\n' | grep . | sort -n | tr '\n' ' ')
	grp_want=$(for g in $(sed -n 's/.* --group \([^ ]*\).*/\1/p' <<<" ${args[*]} " | tr , ' '); do echo "$g"; done | sort -n | tr '\n' ' ')
	[ "$grp_have" = "$grp_want" ] || fail "groups $grp_have, asked $grp_want"
	case " ${args[*]} " in *" --seccomp on "*)
		[ "$(status_of "$pid" Seccomp)" = 2 ] || fail "seccomp not on";; esac
	# windows stored: closed windows reach the database
	local n=0 i
	for i in $(seq 1 50); do
		n=$("$client" --socket "$sockpath" health 2>/dev/null |
			sed -n 's/.*windows written \([0-9]*\).*/\1/p')
		[ "${n:-0}" -ge 3 ] && break
		sleep 0.2
	done
	[ "${n:-0}" -ge 3 ] || fail "no windows stored (written: $n)"
	# the files are the service user's, made as that user
	[ "$(stat -c '%u %a' "$state/vitals.db")" = "$svcuid 640" ] ||
		fail "vitals.db: $(stat -c '%u %a' "$state/vitals.db")"
	[ "$(stat -c '%u %g %a' "$state")" = "$(aid "$muser") $(aid "$mgroup") ${mmode#0}" ] ||
		fail "state directory changed: $(stat -c '%u %g %a' "$state")"
	# the platform's callers, with their real credentials: system
	# (AID_SYSTEM, the socket's owner) is trusted, shell (readproc
	# member through which the socket mode admits it) reads, others
	# are refused by the socket mode itself
	ask 1000 1000 health >/dev/null || fail "system cannot read"
	ask 1000 1000 burst 1 >/dev/null || fail "system is not trusted"
	ask 2000 2000,3009 health >/dev/null || fail "shell cannot read"
	if ask 2000 2000,3009 burst 1 >"$T/out" 2>&1; then
		fail "shell may burst"
	fi
	grep -qi "permission\|denied\|trusted" "$T/out" || fail "shell's burst: $(cat "$T/out")"
	if ask 10123 10123 health >/dev/null 2>&1; then
		fail "an app uid connected"
	fi
	# stop as init does (SIGTERM)
	kill -TERM "$pid"
	local st=0
	wait "$pid" || st=$?
	pid=
	[ "$st" = 0 ] || fail "exit status $st after SIGTERM"
	grep -q "stopped" "$log" || fail "no clean stop"
	assert_not_tracing "after SIGTERM"
	# the only socket was init's; nothing of the daemon's is left
	[ -z "$(find "$state" -type s)" ] || fail "a socket left in $state"
	assert_socket_dead "after SIGTERM"
	n=$(sqlite3 "file:$state/vitals.db?mode=ro" 'SELECT count(*) FROM windows')
	[ "$n" -ge 3 ] || fail "$n windows in the database after the stop"
	echo "ok: rc start ($n windows stored, dropped to $svcuid, stopped cleanly)"
}

# expect_fail NAME [daemon args]: the start fails; nothing tracing, no
# socket of its own; init's socket nobody listens on
expect_fail() {
	local name=$1 st=0
	shift
	start_service "$@"
	wait "$pid" || st=$?
	pid=
	[ "$st" != 0 ] || fail "$name: the daemon started"
	assert_not_tracing "$name"
	[ -z "$(find "$state" -type s 2>/dev/null)" ] || fail "$name: socket left in $state"
	assert_socket_dead "$name"
	echo "ok: $name: exit $st, nothing tracing, no socket left"
}

run_fail() {
	local d
	# an instance another test left tracing is not this daemon's doing
	for d in "$tracing"/instances/vitals*; do
		[ -d "$d" ] && [ "$(cat "$d/tracing_on")" = 1 ] || continue
		echo "note: $d was left tracing before this test; removed"
		rmdir "$d"
	done
	# 1. state directory of another user: refused, nothing made
	fs_setup
	chown 2902:2902 "$state"
	expect_fail "state directory not the service user's"
	[ -z "$(ls -A "$state")" ] || fail "files made in a refused directory"
	# 2. state directory a symlink: refused before anything is made in
	#    its target
	fs_setup
	mkdir -p "$T/elsewhere"
	chown "$svcuid:$svcuid" "$T/elsewhere"
	rmdir "$state"
	ln -s "$T/elsewhere" "$state"
	expect_fail "state directory a symlink"
	[ -z "$(ls -A "$T/elsewhere")" ] || fail "a database made in the link's target: $(ls "$T/elsewhere")"
	rm -f "$state"
	# 3. the handed-over socket is not a socket (fd 0): after ftrace set up
	fs_setup
	SOCKET=bad expect_fail "ANDROID_SOCKET_vitalsd not a socket"
	grep -q "ftrace: instance" "$log" || fail "case 3 failed before ftrace"
	# 4. no socket handed over and the daemon's own place occupied by a
	#    live listener: fails at the socket, the listener's file stays
	fs_setup
	python3 -c '
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)
os.chmod(sys.argv[1], 0o666)
open(sys.argv[2], "w").close(); time.sleep(30)' "$state/vitalsd.sock" "$T/ready" &
	other=$!
	for _ in $(seq 1 50); do [ -e "$T/ready" ] && break; sleep 0.1; done
	SOCKET=none start_service
	local st=0
	wait "$pid" || st=$?
	pid=
	[ "$st" != 0 ] || fail "occupied socket: the daemon started"
	grep -q "another daemon is listening" "$log" || fail "occupied socket: not said"
	assert_not_tracing "occupied socket"
	[ -S "$state/vitalsd.sock" ] || fail "occupied socket: the other's file removed"
	kill "$other"; wait "$other" 2>/dev/null || true
	other=
	rm -f "$state/vitalsd.sock" "$T/ready"
	echo "ok: occupied socket: exit $st, nothing tracing, the other's socket kept"
	# 5. the drop fails (a capability to keep that the bounding set lacks):
	#    everything setup made is undone, its own socket included
	fs_setup
	SOCKET=none expect_fail "drop refused" --capabilities sys_admin
	grep -q "ftrace: instance" "$log" || fail "case 5 failed before ftrace"
	grep -q "control socket $state/vitalsd.sock" "$log" || fail "case 5: no socket made"
	grep -q "not dropped, not running" "$log" || fail "case 5: not the drop"
	# 6. a planted vitals.db symlink: refused by name, the daemon runs on
	#    memory, its target untouched; stops cleanly
	fs_setup
	install -m 0600 /dev/null "$T/rootfile"
	ln -s "$T/rootfile" "$state/vitals.db"
	chown -h "$svcuid:$svcuid" "$state/vitals.db"
	start_service
	wait_up || fail "planted vitals.db link: did not come up"
	grep -q "vitals.db: a symbolic link.*refused" "$log" || fail "link not named"
	kill -TERM "$pid"; wait "$pid"; pid=
	[ ! -s "$T/rootfile" ] || fail "SQLite data written through the link"
	assert_not_tracing "planted link"
	assert_socket_dead "planted link"
	echo "ok: planted vitals.db link refused, target untouched"
	# 7. a hard link to a root file planted in the state directory (any
	#    name, or as the WAL): never chowned, never written
	fs_setup
	printf 'root secret\n' >"$T/rootfile"
	chmod 0600 "$T/rootfile"
	ln "$T/rootfile" "$state/notes"
	start_service
	wait_up || fail "hard link: did not come up"
	kill -TERM "$pid"; wait "$pid"; pid=
	[ "$(stat -c '%u %s' "$T/rootfile")" = "0 12" ] ||
		fail "hard-linked root file changed: $(stat -c '%u %s' "$T/rootfile")"
	assert_socket_dead "hard link"
	rm -f "$state/notes" "$state"/vitals.db*
	ln "$T/rootfile" "$state/vitals.db-wal"
	start_service
	wait_up || fail "hard link as WAL: did not come up"
	# root's file: refused for its owner before its link count
	grep -q "vitals.db: not a regular file of the directory's owner.*refused" "$log" ||
		fail "WAL hard link not refused"
	kill -TERM "$pid"; wait "$pid"; pid=
	[ "$(stat -c '%u %s' "$T/rootfile")" = "0 12" ] ||
		fail "hard-linked root file written as a WAL"
	assert_socket_dead "hard link as WAL"
	echo "ok: hard links to a root file neither chowned nor written"
	# 8. a read-only file system: said so (it was "No such file or
	#    directory"), the daemon samples on, in memory
	fs_setup
	mount -t tmpfs -o "ro,mode=$mmode,uid=$(aid "$muser"),gid=$(aid "$mgroup")" \
	    vitals-ro "$state"
	start_service
	wait_up || { umount "$state"; fail "read-only: did not come up"; }
	kill -TERM "$pid"; wait "$pid" || true; pid=
	umount "$state"
	# (the store is opened again with a backoff: it may be remounted)
	grep -q "vitals.db: Read-only file system; retrying, windows queue in memory" "$log" ||
		fail "read-only file system not said"
	assert_socket_dead "read-only"
	echo "ok: read-only file system reported as such"
}

case $mode in
start) run_start;;
fail) run_fail;;
*) fail "mode $mode";;
esac
