#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build the libFuzzer targets with clang (ASan + UBSan) in a build directory
# of their own and run each for a bounded time from the committed seed
# corpus (fuzz/corpus/<target>/). CI runs this short form; fuzz/nightly.sh
# is the long run (10 M executions per target) that grows the corpus.
#   fuzz/run.sh                 60 s for fuzz_frame, a quarter for the rest
#   FUZZ_SECONDS=600 fuzz/run.sh
# A crash leaves crash-* / leak-* / timeout-* reproducers in the build
# directory and makes the script fail; replay one with
#   build-fuzz/fuzz/fuzz_frame build-fuzz/crash-...
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
secs=${FUZZ_SECONDS:-60}
builddir=${FUZZ_BUILDDIR:-build-fuzz}
# shellcheck source=fuzz/targets.sh
. fuzz/targets.sh

fuzz_build "$builddir"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

for t in "${FUZZ_TARGETS[@]}"; do
	if [ "$t" = frame ]; then
		s=$secs
	else
		# the parsers are small: a quarter of the budget, 5 s at least
		s=$(( secs / 4 > 5 ? secs / 4 : 5 ))
	fi
	work="$builddir/fuzz/corpus-$t"
	mkdir -p "$work"
	cp -n fuzz/corpus/"$t"/* "$work"/ 2>/dev/null || true
	echo "fuzz: fuzz_$t for ${s} s" >&2
	fuzz_run "$builddir" "$t" -max_total_time="$s" "$work"
done
