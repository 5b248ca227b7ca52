#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Does the build call anything bionic lacks? Every libc/libm/libdl symbol
# the project's own objects import (nm -u) must be one bionic exports to an
# arm64 module at API level 34 (api34.txt, made from bionic's version
# scripts by symbols.py). Symbols are resolved against this host's glibc:
# one glibc defines and bionic does not is a call Android cannot link.
# Names glibc's headers substitute for the source's own (LFS *64, fortify
# __*_chk, __isoc99_/__isoc23_ scanf and strtol, ctype tables, errno and
# assert) are mapped back to what the source called first.
#
#   check.sh BUILD_DIR          the objects under daemon/, client/, proto/
#   check.sh --objects F.o...   those objects
#   check.sh --self-test DIR    a scratch object calling glibc-only
#                               functions must be caught (uses cc)
# Exit 0: clean; 1: forbidden calls, listed; 2: usage or tool error.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
allow="$here/api34.txt"
# calls made only under #ifndef __BIONIC__, with a bionic branch beside them
hostonly="$here/host-only.txt"

die() { echo "check.sh: $*" >&2; exit 2; }

glibc_libs() {
	local d
	for n in libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1; do
		for d in /lib/$(gcc -print-multiarch 2>/dev/null || echo .) \
		    /lib64 /usr/lib64 /lib /usr/lib; do
			if [ -e "$d/$n" ]; then
				echo "$d/$n"
				break
			fi
		done
	done
}

# one name a line: what glibc defines (version suffixes cut)
glibc_defined() {
	local libs
	libs=$(glibc_libs)
	[ -n "$libs" ] || die "no glibc found"
	# shellcheck disable=SC2086
	nm -D --defined-only $libs 2>/dev/null | awk 'NF >= 3 { print $3 }' |
	    sed 's/@.*//' | sort -u
}

# what the objects import, one name a line
imported() {
	nm -u "$@" 2>/dev/null | awk 'NF >= 2 && $1 == "U" { print $2 }' |
	    sed 's/@.*//' | sort -u
}

# glibc header substitutions back to the source's name
normalise() {
	sed -E \
	    -e 's/^__isoc(99|23)_//' \
	    -e 's/^__(.*)_chk$/\1/' \
	    -e 's/^__errno_location$/__errno/' \
	    -e 's/^__assert_fail$/__assert2/' \
	    -e 's/^__ctype_(b|tolower|toupper)_loc$/isalpha/' \
	    -e 's/^__fdelt$/__FD_SET_chk/' \
	    -e 's/^__stack_chk_fail$/__stack_chk_fail/'
}

check_objects() {
	local bad=0 sym name
	local defined
	defined=$(mktemp)
	glibc_defined > "$defined"
	while read -r sym; do
		grep -qxF "$sym" "$defined" || continue # not libc's
		name=$(echo "$sym" | normalise)
		if grep -v '^#' "$hostonly" | grep -qxF "$name"; then
			continue
		fi
		if ! grep -qxF "$name" "$allow"; then
			# LFS: open64 and friends are open on LP64 bionic
			if [[ "$name" == *64 ]] &&
			    grep -qxF "${name%64}" "$allow"; then
				continue
			fi
			echo "not in bionic (API 34, arm64): $sym" \
			    "(called by: $(nm -A -u "$@" 2>/dev/null |
			    grep -w "U $sym" | sed 's/:.*//' |
			    xargs -r -n1 basename | sort -u | tr '\n' ' '))"
			bad=1
		fi
	done < <(imported "$@")
	rm -f "$defined"
	return $bad
}

self_test() {
	local dir=$1 src obj out
	mkdir -p "$dir"
	src="$dir/glibc_only.c"
	obj="$dir/glibc_only.o"
	cat > "$src" <<'C'
#define _GNU_SOURCE
#include <errno.h>
#include <error.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b, void *c) { (void)c; return *(const int *)a - *(const int *)b; }
int glibc_only(int *v, size_t n, pthread_t t)
{
	qsort_r(v, n, sizeof(*v), cmp, NULL);
	/* error() is bionic's since API 23: it must pass */
	if (secure_getenv("X") == NULL)
		error(0, 0, "%s", program_invocation_short_name);
	explicit_bzero(v, n);
	return pthread_cancel(t) + (int)strlen(strerror(0));
}
C
	cc -c -O2 -o "$obj" "$src" || die "self-test: cc failed"
	if out=$(check_objects "$obj"); then
		die "self-test: glibc-only calls were not caught"
	fi
	for want in qsort_r secure_getenv program_invocation_short_name \
	    explicit_bzero pthread_cancel; do
		grep -q ": $want " <<<"$out" ||
		    die "self-test: $want not reported"
	done
	# and what bionic has passes: strlen, strerror, error
	if grep -q ": strlen \|: strerror \|: error " <<<"$out"; then
		die "self-test: a bionic function was reported"
	fi
	echo "self-test: glibc-only calls caught"
}

[ -r "$allow" ] || die "missing $allow"
case "${1:-}" in
--self-test)
	[ $# -eq 2 ] || die "usage: check.sh --self-test DIR"
	self_test "$2"
	;;
--objects)
	shift
	[ $# -gt 0 ] || die "no objects"
	check_objects "$@"
	;;
"")
	die "usage: check.sh BUILD_DIR | --objects F.o... | --self-test DIR"
	;;
*)
	mapfile -t objs < <(find "$1/daemon" "$1/client" "$1/proto" \
	    -name '*.o' 2>/dev/null | sort)
	[ ${#objs[@]} -gt 0 ] || die "no objects under $1"
	check_objects "${objs[@]}"
	echo "${#objs[@]} objects: every libc call is in bionic at API 34"
	;;
esac
