#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The files a platform needs (init/, sepolicy/), checked:
#  1. the daemon accepts the exact command lines systemd and Android init
#     give it (vitalsd -n: options, config check, user and group lookup);
#  2. the systemd unit keeps the sandbox and bounding set doc/privileges.md
#     promises, the rc file its service options;
#  3. systemd-analyze verify parses the units without one warning (ExecStart
#     pointed at the built binary, the built man pages on MANPATH);
#  4. every type the SELinux context files name is declared in vitalsd.te;
#  5. `meson install` of this build into a scratch root gives a unit whose
#     ExecStart exists, a sysusers entry systemd-sysusers reads, the man
#     pages the units name, and no Android rc in an init directory;
#  6. vitalsd --version names this project's version.
set -euo pipefail
src=${VITALS_SRCDIR:?}
bld=${VITALS_BUILDDIR:?}
daemon=$bld/daemon/vitalsd
tmp=$(mktemp -d /tmp/vitals-units-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unit=$src/init/vitalsd.service.in
sock=$src/init/vitalsd.socket
rc=$src/init/vitalsd.rc

# 1. command lines
args=$(sed -n 's|^ExecStart=@SBINDIR@/vitalsd ||p' "$unit")
[ -n "$args" ] || fail "no ExecStart=@SBINDIR@/vitalsd in $unit"
case " $args " in *" --user vitalsd "*) ;; *) fail "unit does not drop to vitalsd";; esac
# heapprofd sessions under seccomp on: the helper's spawner runs perfetto
for want in "--seccomp on" "--privhelper on" "--perfetto /"; do
	case " $args " in *" $want"*) ;;
		*) fail "unit: no '$want': seccomp on without the helper's spawner runs no heapprofd session";; esac
done
# the vitalsd user comes from sysusers on a host; here nobody stands in
"$daemon" -n ${args/--user vitalsd/--user nobody} ||
	fail "vitalsd rejects the unit's command line: $args"
"$daemon" -n ${args} 2>"$tmp/err" && fail "a missing user was accepted"
grep -q "user vitalsd" "$tmp/err" || fail "missing user not named: $(cat "$tmp/err")"
rargs=$(sed -n 's|^service vitalsd /system_ext/bin/vitalsd ||p' "$rc")
[ -n "$rargs" ] || fail "no service line in $rc"
# Android's group names are AIDs on a device: readproc 3009, readtracefs 1093
"$daemon" -n ${rargs/readproc,readtracefs/3009,1093} ||
	fail "vitalsd rejects the rc's command line: $rargs"
case " $rargs " in *" --group readproc"*) ;; *) fail "rc: no readproc group";; esac

# 2. what the unit and the rc promise
for kv in NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes \
	PrivateTmp=yes PrivateDevices=yes ProtectKernelModules=yes \
	ProtectControlGroups=yes RestrictAddressFamilies=AF_UNIX \
	StateDirectory=vitalsd AmbientCapabilities= ProcSubset=all \
	SystemCallArchitectures=native; do
	grep -qx "$kv" "$unit" || fail "$unit: $kv missing"
done
bset=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit")
for c in CAP_SETUID CAP_SETGID CAP_SETPCAP CAP_CHOWN; do
	case " $bset " in *" $c "*) ;; *) fail "bounding set lacks $c (the drop needs it)";; esac
done
for c in CAP_SYS_PTRACE CAP_NET_ADMIN CAP_SYS_MODULE CAP_SYS_RAWIO CAP_KILL CAP_FOWNER; do
	case " $bset " in *" $c "*) fail "bounding set has $c";; esac
done
grep -qx 'ListenStream=/var/lib/vitalsd/vitalsd.sock' "$sock" || fail "socket path"
grep -qx 'SocketMode=0660' "$sock" || fail "socket mode"
for want in '    socket vitalsd stream 0660 system readproc' '    user root' \
	'    class late_start' '    task_profiles ServiceCapacityLow'; do
	grep -qxF "$want" "$rc" || fail "rc: '$want' missing"
done
rcaps=$(sed -n 's/^    capabilities //p' "$rc")
[ "$rcaps" = "SETUID SETGID SETPCAP CHOWN" ] || fail "rc capabilities: $rcaps"
# every option line of the service is one Android init knows
known=" class user group capabilities socket task_profiles restart_period
	onrestart oneshot disabled critical priority ioprio rlimit seclabel
	writepid file interface namespace setenv stdio_to_kmsg shutdown
	timeout_period updatable enter_namespace gentle_kill reboot_on_failure "
awk '/^service /{s=1; next} /^[^ ]/{s=0} s && NF && $1 !~ /^#/ {print $1}' "$rc" |
while read -r opt; do
	case "$known" in *" $opt "*|*"	$opt "*|*" $opt
"*) ;; *) fail "rc: unknown service option '$opt'";; esac
done

# 3. systemd-analyze verify
if command -v systemd-analyze >/dev/null; then
	sed "s|@SBINDIR@/vitalsd|$daemon|" "$unit" >"$tmp/vitalsd.service"
	cp "$sock" "$tmp/vitalsd.socket"
	mkdir -p "$tmp/man/man8" "$tmp/man/man5"
	cp "$bld/doc/vitalsd.8" "$tmp/man/man8/"
	cp "$bld/doc/vitalsd.conf.5" "$tmp/man/man5/"
	man=--man=no
	if command -v man >/dev/null; then
		man=--man=yes # the Documentation= pages must resolve
	fi
	out=$(cd "$tmp" && MANPATH=$tmp/man systemd-analyze verify "$man" \
		vitalsd.service vitalsd.socket 2>&1) || fail "verify: $out"
	[ -z "$out" ] || fail "verify warned: $out"
	echo "systemd-analyze verify: clean ($man)"
else
	# scripts/deps.sh test installs systemd: missing is a broken setup
	# when it could have been installed (root), a reduced run otherwise.
	if [ "$(id -u)" -eq 0 ]; then
		fail "systemd-analyze not installed (scripts/deps.sh test installs systemd)"
	fi
	echo "systemd-analyze not installed: static checks only"
fi

# 4. sepolicy: the contexts name declared types
te=$src/sepolicy/vitalsd.te
for f in file_contexts genfs_contexts; do
	for t in $(grep -o 'u:object_r:[a-z_0-9]*' "$src/sepolicy/$f" | cut -d: -f3); do
		grep -Eq "^type $t," "$te" || fail "sepolicy/$f: type $t not declared in vitalsd.te"
	done
done
grep -q '^init_daemon_domain(vitalsd)' "$te" || fail "no init transition"
# the BPF rules are in their own file (Android 15 and later only)
grep -q '^typeattribute vitalsd bpfdomain;' "$src/sepolicy/vitalsd_bpf.te" ||
	fail "no bpfdomain"

# 5. what `meson install` puts down, into a scratch root
root=$tmp/root
DESTDIR=$root meson install -C "$bld" --no-rebuild --quiet >"$tmp/install.log" 2>&1 ||
	fail "meson install: $(cat "$tmp/install.log")"
prefix=$(meson introspect --buildoptions "$bld" |
	python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
iunit=$(find "$root" -name vitalsd.service -path '*systemd/system/*')
[ -n "$iunit" ] || fail "no vitalsd.service installed"
udir=${iunit%/vitalsd.service}
udir=${udir#"$root"}
exe=$(sed -n 's|^ExecStart=\([^ ]*\).*|\1|p' "$iunit")
[ -x "$root$exe" ] || fail "installed unit's ExecStart $exe is not what was installed (prefix $prefix)"
[ -e "$root$udir/vitalsd.socket" ] || fail "vitalsd.socket not beside the service"
if command -v systemd-analyze >/dev/null; then
	# a directory systemd loads units from
	systemd-analyze unit-paths | grep -qx "$udir" ||
		fail "units installed to $udir, where systemd does not look"
	# the ExecStart resolved inside the scratch root
	out=$(systemd-analyze verify --man=no --root="$root" "$iunit" 2>&1 || true)
	case "$out" in *"$exe"*) fail "verify --root: $out";; esac
fi
if command -v systemd-sysusers >/dev/null; then
	# systemd-sysusers, reading its own directories under the root, finds
	# the entry and would make the user
	out=$(systemd-sysusers --root="$root" --dry-run 2>&1) ||
		fail "systemd-sysusers: $out"
	case "$out" in *"user 'vitalsd'"*) ;;
		*) fail "systemd-sysusers does not read the installed entry: $out";; esac
fi
# the man pages the units name are installed
for page in $(sed -n 's/^Documentation=//p' "$iunit" "$root$udir/vitalsd.socket" |
	tr ' ' '\n' | sed -n 's/^man:\(.*\)(\([0-9]\))$/\1.\2/p'); do
	find "$root" -path "*/man/man*/$page" | grep -q . ||
		fail "Documentation names $page, which is not installed"
done
# Android's rc is data on a host, never in an init directory
if find "$root" -name '*.rc' -path '*/init/*' | grep -q .; then
	fail "an Android rc installed into an init directory: $(find "$root" -name '*.rc')"
fi
find "$root" -name vitalsd.rc -path '*/share/vitalsd/android/*' | grep -q . ||
	fail "the rc is not installed as data"
echo "installed tree: ExecStart $exe, units in $udir, sysusers read"

# 6. --version
want=$(meson introspect --projectinfo "$bld" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
got=$("$daemon" --version)
case "$got" in "vitalsd $want ("*) ;; *) fail "--version: $got (want $want)";; esac
echo "$got"
echo "ok"
