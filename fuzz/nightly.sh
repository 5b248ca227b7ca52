#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The long fuzz run (not CI): every target under ASan + UBSan for
# FUZZ_RUNS executions (default 10 M), FUZZ_JOBS targets at a time
# (default: the number of CPUs). Each starts from the committed corpus
# (fuzz/corpus/<target>/) plus what earlier nightly runs left in the build
# directory; at the end the inputs that add coverage are merged back into
# fuzz/corpus/<target>/ (libFuzzer -merge=1), so the next CI run starts
# from them. Prints one line per target: executions, exec/s, wall time,
# coverage (edges) and features, corpus size after the merge, result
# (also kept in build-fuzz/fuzz/nightly/summary). Any crash, leak or
# timeout fails the run and leaves its reproducer as build-fuzz/crash-*
# (leak-*, timeout-*).
# FUZZ_MAX_SECONDS, when set, stops each target there even short of
# FUZZ_RUNS (a run that must end by a deadline); the table then shows
# the executions reached, and the corpus is merged all the same.
#   bash fuzz/nightly.sh
#   FUZZ_RUNS=1000000 FUZZ_JOBS=1 bash fuzz/nightly.sh procfs config
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
runs=${FUZZ_RUNS:-10000000}
jobs=${FUZZ_JOBS:-$(nproc)}
builddir=${FUZZ_BUILDDIR:-build-fuzz}
limit=()
if [ -n "${FUZZ_MAX_SECONDS:-}" ]; then
	limit=(-max_total_time="$FUZZ_MAX_SECONDS")
fi
# shellcheck source=fuzz/targets.sh
. fuzz/targets.sh
if [ $# -gt 0 ]; then
	FUZZ_TARGETS=("$@")
fi

fuzz_build "$builddir"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
logs="$builddir/fuzz/nightly"
mkdir -p "$logs"

one() {
	local t=$1
	local work="$builddir/fuzz/nightly-corpus-$t" rc=0 start
	mkdir -p "$work"
	start=$(date +%s)
	fuzz_run "$builddir" "$t" -runs="$runs" "${limit[@]}" "$work" \
	    fuzz/corpus/"$t" \
	    >"$logs/$t.log" 2>&1 || rc=$?
	echo $(($(date +%s) - start)) >"$logs/$t.secs"
	echo "$rc" >"$logs/$t.rc"
}

running=0
for t in "${FUZZ_TARGETS[@]}"; do
	echo "fuzz nightly: fuzz_$t, $runs runs" >&2
	one "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n || true
		running=$((running - 1))
	fi
done
wait

row() {
	printf '%-8s %12s %8s %8s %6s %7s %7s %s\n' "$@" | tee -a "$logs/summary"
}
status=0
: >"$logs/summary"
row target execs exec/s wall_s cov ft corpus result
for t in "${FUZZ_TARGETS[@]}"; do
	rc=$(cat "$logs/$t.rc")
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$t.log" | tail -1)
	speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$logs/$t.log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$logs/$t.log" | tail -1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$logs/$t.log" | tail -1 | cut -d' ' -f2)
	result=ok
	if [ "$rc" != 0 ]; then
		result="FAILED (exit $rc, see $logs/$t.log)"
		status=1
	else
		# keep only the inputs that add coverage
		mkdir -p "$builddir/fuzz/merge-$t"
		fuzz_run "$builddir" "$t" -merge=1 fuzz/corpus/"$t" \
		    "$builddir/fuzz/nightly-corpus-$t" >"$logs/$t.merge.log" 2>&1 ||
		    result="merge failed"
	fi
	row "$t" "${execs:-?}" "${speed:-?}" "$(cat "$logs/$t.secs")" \
	    "${cov:-?}" "${ft:-?}" "$(ls fuzz/corpus/"$t" | wc -l)" "$result"
done
exit "$status"
