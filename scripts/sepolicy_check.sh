#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Compile sepolicy/ against an AOSP system/sepolicy tree the way the
# platform build's neverallow test does (system/sepolicy Android.bp
# "sepolicy_neverallows": se_policy_conf -> m4, then checkpolicy -M -c 30),
# once for a user and once for a userdebug build. Our files stand in as a
# device's SYSTEM_EXT_PRIVATE_SEPOLICY_DIRS.
#
#   scripts/sepolicy_check.sh AOSP_SEPOLICY_DIR [POLICY_DIR]
#
# Environment: OUT (work directory, default a new /tmp one), SKIP (file
# names of POLICY_DIR to leave out), FLAGS_ON (release flags to turn on),
# AOSP_DESC (a label for the tree, printed).
#
# AOSP_SEPOLICY_DIR is a checkout of system/sepolicy (for example a public
# mirror such as LineageOS/android_system_sepolicy, kept outside this
# repository). Needs m4 and checkpolicy (Debian: m4, checkpolicy). Not run
# in CI (no network there); tests/check_sepolicy.sh is the offline check.
# Exits 0 when both build types compile with every neverallow checked.
set -euo pipefail

if [ $# -lt 1 ] || [ ! -f "$1/public/te_macros" ]; then
	echo "usage: $0 AOSP_SEPOLICY_DIR [POLICY_DIR]" >&2
	exit 2
fi
aosp=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
ours=$(cd "${2:-$top/sepolicy}" && pwd)
out=${OUT:-$(mktemp -d /tmp/vitalsd-sepolicy.XXXXXX)}
mkdir -p "$out"
# SKIP="vitalsd_bpf.te": leave files of POLICY_DIR out (Android 14 and
# older trees: vitalsd_bpf.te needs Android 15's bpf neverallows).
if [ -n "${SKIP:-}" ]; then
	rm -rf "$out/ours"
	mkdir -p "$out/ours"
	cp "$ours"/* "$out/ours/"
	for f in $SKIP; do
		rm -f "$out/ours/$f"
	done
	ours=$out/ours
fi
echo "AOSP tree: $aosp${AOSP_DESC:+ ($AOSP_DESC)}"
echo "policy: $ours${SKIP:+ (without $SKIP)}"

# se_build_files (Android.bp): the file name patterns, in this order.
patterns=(security_classes initial_sids access_vectors global_macros
	neverallow_macros mls_macros mls_decl mls policy_capabilities
	te_macros attributes ioctl_defines ioctl_macros '*.te' roles_decl
	roles users initial_sid_contexts fs_use genfs_contexts port_contexts)
# policy.go policyConfOrder: the order m4 reads them in, stable-sorted.
order=(security_classes initial_sids access_vectors global_macros
	neverallow_macros mls_macros mls_decl mls policy_capabilities
	te_macros ioctl_defines ioctl_macros 'attributes|*.te' roles_decl
	roles users initial_sid_contexts fs_use genfs_contexts port_contexts)

# findSrcsInDirs: for each pattern, each directory, its glob (sorted).
collect() {
	local d p f
	for p in "${patterns[@]}"; do
		for d in "$@"; do
			for f in "$d"/$p; do
				[ -f "$f" ] && printf '%s\n' "$f"
			done
		done
	done
	return 0
}

rank() {
	local b=${1##*/} i
	for i in "${!order[@]}"; do
		if [ "${order[$i]}" = 'attributes|*.te' ]; then
			if [ "$b" = attributes ] || [ "${b%.te}" != "$b" ]; then
				echo "$i"
				return
			fi
		elif [ "${order[$i]}" = "$b" ]; then
			echo "$i"
			return
		fi
	done
	echo "${#order[@]}"
}

# sepolicy_neverallows' srcs: the flagging defaults (flagging/te_macros),
# plat public, plat private, system_ext public and private (ours),
# product, then system/sepolicy/vendor (plat_vendor); no device vendor dir.
# srclist OUR_DIR: the files m4 reads, in the build's order.
srclist() {
	local f n=0
	{
		printf '%s\n' "$aosp/flagging/te_macros"
		collect "$aosp/public"
		collect "$aosp/private"
		collect "$1"
		collect "$aosp/vendor"
	} | while read -r f; do
		printf '%s\t%s\t%s\n' "$(rank "$f")" "$n" "$f"
		n=$((n + 1))
	done | sort -n -k1,1 -k2,2 | cut -f3
}
srclist "$ours" >"$out/srcs"

# The release flags system/sepolicy guards rules with (flagging/Android.bp
# aosp_selinux_flags); a release configuration sets each one. Off here
# unless FLAGS_ON names it.
flags=()
for f in $(sed -n 's/^ *"\(RELEASE_[A-Z0-9_]*\)",.*/\1/p' "$aosp/flagging/Android.bp"); do
	v=false
	case " ${FLAGS_ON:-} " in *" $f "*) v=true ;; esac
	flags+=("-D" "target_flag_$f=$v")
done

# policy.go transformPolicyToConf for a full-Treble arm64 device (not
# recovery, no ASan or coverage, debugfs restrictions on as for every
# device launching with Android 12 or later), then sepolicy_neverallow.go
# step 1: a binary policy, every neverallow checked.
# build VARIANT SRCLIST NAME: prints the commands, leaves NAME.log.
build() {
	local variant=$1 list=$2 name=$3
	local -a m4 cp srcs
	m4=(m4 --fatal-warnings
		-D mls_num_sens=1 -D mls_num_cats=1024
		-D target_arch=arm64
		-D target_with_asan=false
		-D target_with_dexpreopt=true
		-D target_with_native_coverage=false
		-D target_build_variant="$variant"
		-D target_full_treble=true
		-D target_compatible_property=true
		-D target_treble_sysprop_neverallow=true
		-D target_enforce_sysprop_owner=true
		-D target_exclude_build_test=false
		-D target_requires_insecure_execmem_for_swiftshader=false
		-D target_enforce_debugfs_restriction=true
		-D target_recovery=false
		-D target_board_api_level=1000000
		"${flags[@]}" -s)
	cp=(checkpolicy -M -c 30 -o "$out/$name.policy" "$out/$name.conf")
	echo "\$ ${m4[*]} \$(cat $list) > $out/$name.conf"
	echo "\$ ${cp[*]}"
	mapfile -t srcs <"$list"
	if ! "${m4[@]}" "${srcs[@]}" >"$out/$name.conf" 2>"$out/$name.log"; then
		sed 's/^/  /' "$out/$name.log"
		return 2
	fi
	"${cp[@]}" >"$out/$name.log" 2>&1
}

status=0
for variant in user userdebug; do
	echo "== $variant"
	if build "$variant" "$out/srcs" "$variant"; then
		sed 's/^/  /' "$out/$variant.log"
		echo "$variant: compiled, 0 neverallow violations"
		# checkfc's job in the build: every context of file_contexts
		# names a type of the compiled policy.
		fc=(setfiles -c "$out/$variant.policy" "$ours/file_contexts")
		echo "\$ ${fc[*]}"
		if "${fc[@]}" >"$out/$variant.fc.log" 2>&1; then
			echo "$variant: file_contexts valid"
		else
			sed 's/^/  /' "$out/$variant.fc.log"
			echo "$variant: file_contexts INVALID"
			status=1
		fi
	else
		sed 's/^/  /' "$out/$variant.log"
		nv=$(grep -c 'report_failure: neverallow on line' "$out/$variant.log" || true)
		echo "$variant: FAILED ($nv neverallow violations)"
		status=1
	fi
done

# What the policy leaves out, and why (scripts/sepolicy_forbidden.txt):
# the same build with every such rule added must refuse exactly the ones
# listed for that build type, each by an AOSP neverallow.
forbidden=$top/scripts/sepolicy_forbidden.txt
if [ -f "$forbidden" ]; then
	mkdir -p "$out/forbidden"
	cp "$ours"/* "$out/forbidden/"
	grep -v '^#' "$forbidden" | cut -f2 >"$out/forbidden/zz_forbidden.te"
	srclist "$out/forbidden" >"$out/srcs.f"
	for variant in user userdebug; do
		echo "== $variant, with the rules of $forbidden"
		if ! build "$variant" "$out/srcs.f" "forbidden-$variant" &&
			! grep -q 'neverallow failures occurred' "$out/forbidden-$variant.log"; then
			sed 's/^/  /' "$out/forbidden-$variant.log"
			echo "$variant: the policy with these rules did not compile"
			status=1
			continue
		fi
		while IFS=$'\t' read -r types rule why; do
			case $types in '#'* | '') continue ;; esac
			# "allow S T:C P;" is reported as "allow S T:C { P }"
			r=${rule#allow }
			r=${r%;}
			want="violated by allow ${r% *} { ${r##* } }"
			hit=$(grep -F "$want" "$out/forbidden-$variant.log" |
				sed -n 's/.*neverallow on line \([0-9]*\) of \([^ ]*\).*/\2:\1/p' |
				sed "s|^$aosp/||" | head -1 || true)
			case ",$types," in
			*",$variant,"*)
				if [ -n "$hit" ]; then
					echo "  refused  $rule  by $hit  ($why)"
				else
					echo "  ALLOWED  $rule  (expected a neverallow: $why)"
					status=1
				fi ;;
			*)
				if [ -z "$hit" ]; then
					echo "  allowed  $rule  ($why)"
				else
					echo "  REFUSED  $rule  by $hit  (expected allowed on $variant)"
					status=1
				fi ;;
			esac
		done <"$forbidden"
	done
fi
exit "$status"
