#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sepolicy/ compiled offline, as the platform build compiles it
# (scripts/sepolicy_check.sh: m4, then checkpolicy -M -c 30 with every
# neverallow checked, then file_contexts against the binary policy), for
# user and userdebug, against tests/sepolicy/stub: a stand-in for
# system/sepolicy with the types, macros and restated neverallows the
# policy depends on. Also:
#  - each rule of scripts/sepolicy_forbidden.txt is refused on the build
#    types listed there (inside the script);
#  - the check fails for a syntax error, an undeclared type and a rule
#    that breaks a neverallow (so a pass means something);
#  - the rc and the context files agree on the socket and the state
#    directory, the genfs label covers the default tracefs instance.
# The real check against an AOSP tree is the script run by hand.
set -euo pipefail
src=${VITALS_SRCDIR:?}
tmp=$(mktemp -d /tmp/vitals-sepolicy-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
check=$src/scripts/sepolicy_check.sh
stub=$src/tests/sepolicy/stub
pol=$src/sepolicy

# 1. the policy as shipped
if ! OUT=$tmp/ok bash "$check" "$stub" >"$tmp/ok.txt" 2>&1; then
	cat "$tmp/ok.txt"
	fail "sepolicy/ does not compile against the stand-in"
fi
for v in user userdebug; do
	grep -qx "$v: compiled, 0 neverallow violations" "$tmp/ok.txt" ||
		fail "$v: no clean compile reported"
	grep -qx "$v: file_contexts valid" "$tmp/ok.txt" ||
		fail "$v: file_contexts not checked"
done
nf=$(grep -vc '^#' "$src/scripts/sepolicy_forbidden.txt")
nr=$(grep -c '^  refused ' "$tmp/ok.txt")
na=$(grep -c '^  allowed ' "$tmp/ok.txt")
# every forbidden rule judged on both build types
[ $((nr + na)) -eq $((2 * nf)) ] ||
	fail "forbidden rules: $nr refused + $na allowed for $nf rules x 2"
echo "ok: user and userdebug compile; $nr refusals, $na allowed as listed"

# 2. a pass means something: three broken copies must fail
broken() {
	local name=$1 line=$2 want=$3
	mkdir -p "$tmp/$name"
	cp "$pol"/* "$tmp/$name/"
	printf '%s\n' "$line" >>"$tmp/$name/vitalsd.te"
	if OUT=$tmp/$name.out bash "$check" "$stub" "$tmp/$name" \
		>"$tmp/$name.txt" 2>&1; then
		fail "$name: accepted: $line"
	fi
	grep -q -- "$want" "$tmp/$name.txt" || {
		cat "$tmp/$name.txt"
		fail "$name: failed without saying '$want'"
	}
	echo "ok: $name refused"
}
broken syntax 'allow vitalsd proc_stat:file { read ' 'syntax error'
broken undeclared 'allow vitalsd proc_no_such_type:file read;' 'proc_no_such_type'
broken neverallow 'allow vitalsd fs_bpf:file read;' 'user: FAILED (1 neverallow violations)'

# 3. the rc and the context files name the same things
rc=$src/init/vitalsd.rc
fc=$pol/file_contexts
sock=$(sed -n 's/^ *socket \([a-z_0-9]*\) .*/\1/p' "$rc" | head -1)
[ -n "$sock" ] || fail "rc: no socket line"
grep -Eq "^/dev/socket/$sock[[:space:]]+u:object_r:vitalsd_socket:s0" "$fc" ||
	fail "file_contexts does not label /dev/socket/$sock vitalsd_socket"
state=$(sed -n 's/.*--state-dir \([^ ]*\).*/\1/p' "$rc" | head -1)
[ -n "$state" ] || fail "rc: no --state-dir"
grep -Fq "$state(/.*)?" "$fc" ||
	fail "file_contexts does not label the state directory $state"
grep -Eq '^[[:space:]]*mkdir /dev/vitalsd 0700 ' "$rc" ||
	fail "rc: the spool directory /dev/vitalsd is not made"
grep -Fq "/dev/vitalsd(/.*)?" "$fc" ||
	fail "file_contexts does not label the spool directory /dev/vitalsd"
grep -Eq '^genfscon tracefs /instances/vitals[[:space:]]+u:object_r:vitalsd_tracefs:s0' \
	"$pol/genfs_contexts" || fail "genfs: the default instance is not labelled"
echo "ok: rc socket $sock, state directory $state and spool /dev/vitalsd labelled"
