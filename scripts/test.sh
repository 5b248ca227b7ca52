#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install what the tests need, build, and run every test suite. Kernel
# suites need root (CI runs as root); they skip (exit 77) only when not root.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/deps.sh test

# BPF and ftrace suites need these mounted; mount them when missing.
if [ "$(id -u)" -eq 0 ]; then
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || true
	mountpoint -q /sys/kernel/tracing ||
		mount -t tracefs nodev /sys/kernel/tracing || true
fi

# Daemons started without a pin directory of their own (the suites whose
# harness gives none) pin into the default /sys/fs/bpf/vitals and, as
# vitalsd does by design (a restart reuses them), leave their programs
# attached when they stop; a default spool directory (/run/vitalsd,
# /dev/shm/vitalsd) the same. What this run made goes at its end, so a
# machine the suites ran on is not left with sched_switch programs
# attached (cleanup_defaults below).
made_by_run=()
if [ "$(id -u)" -eq 0 ]; then
	for d in /sys/fs/bpf/vitals /run/vitalsd /dev/shm/vitalsd; do
		[ -e "$d" ] || made_by_run+=("$d")
	done
fi
cleanup_defaults() {
	local d
	# another run's daemon or suite may still use them (as .ci/run's
	# sweep at its start)
	if pgrep -x vitalsd >/dev/null || pgrep '^check_' >/dev/null; then
		echo "test.sh: a vitalsd or suite runs: ${made_by_run[*]} kept" >&2
		return 0
	fi
	for d in "${made_by_run[@]}"; do
		[ -e "$d" ] || continue
		case $d in
		/sys/fs/bpf/*) rm -rf "$d" ||
			echo "test.sh: $d made by this run not removed" >&2 ;;
		*) rmdir "$d" 2>/dev/null ||
			echo "test.sh: $d made by this run is not empty: kept" >&2 ;;
		esac
	done
}

builddir=${BUILDDIR:-build}
# BUILD=tests: only what the selected suites need (meson test builds their
# executables and depends), for a build whose other targets another stage
# already builds with the same sources (CI's sanitizer build). BUILD=none:
# neither set up nor built, meson test does not rebuild either: another
# run of this script on the same directory did both and is running its
# own suites (CI's no-BPF build, its two runs side by side).
rebuild=()
if [ "${BUILD:-all}" = none ]; then
	rebuild=(--no-rebuild)
elif [ -f "$builddir/build.ninja" ]; then
	meson setup --reconfigure "$builddir" "$@" >/dev/null
else
	meson setup "$builddir" "$@" >/dev/null
fi
if [ "${BUILD:-all}" = all ]; then
	ninja -C "$builddir"
fi
# Two runs of meson test: first the suites that run side by side (unit,
# fixture: CPU-bound, as many at once as CPUs), then the kernel suites,
# which run one at a time (is_parallel false: they share the kernel's
# state) and mostly wait on windows closing. Their logs are testlog.* and
# testlog-kernel.*. Two more when both run:
# - with DEFER_STATIC=1 only: the checks that read sources and objects and
#   run none of the project's code (suite static: nm, m4, python over the
#   build, 110 s of the parallel run's 2 x 305 s in CI) and the CPU-bound
#   loops that assert no timing (suite beside: power cuts, summaries'
#   random ranges, dictionaries, ~270 s there; tests/meson.build) go
#   beside the kernel run at nice 19, in the CPU time its waits leave
#   (testlog-static.*); their timeouts (hangs: meson's and Check's) count
#   three times as long there. Off by default: in CI (129e38d's run) three
#   kernel suites that measure CPU shares and timing failed beside it
#   (check_kernel "0.46 of a core", check_bpf_iter, check_bpf_ldr
#   test_ldr_restart_gap), nice 19 or not;
# - suite quiet (check_loop_offload and check_ftrace, which measure the
#   loop's lateness and fail on a busy machine) runs last, alone, once that static run has
#   ended and every file in QUIET_AFTER exists (CI's nice-19 builds and
#   fuzz runs say there that they ended: .ci/run) (testlog-quiet.*).
# PHASES=parallel or PHASES=kernel runs one of them (suites static and
# beside in the parallel one, suite quiet in the kernel one); SUITES naming a suite
# (--suite X) runs just that choice, in one run. PHASE_FILE, when set, gets
# "parallel" and "kernel" as those runs start: CI starts CPU-bound work
# beside the kernel run (.ci/run).
phases=${PHASES:-parallel kernel}
case " ${SUITES:-} " in
*" --suite "*) phases=chosen ;;
esac
defer_static=false
[ "$phases" = "parallel kernel" ] && [ "${DEFER_STATIC:-0}" = 1 ] &&
	defer_static=true
status=0
logs=()
# run_tests LOG ARGS...: one meson test run, its log kept for the summary
run_tests() {
	local log=$1
	shift
	rm -f "$builddir/meson-logs/$log.json"
	logs+=("$builddir/meson-logs/$log.json")
	# shellcheck disable=SC2086 # SUITES is a list of options
	meson test -C "$builddir" --print-errorlogs --logbase "$log" "$@" \
		${SUITES:-}
}
for phase in $phases; do
	if [ -n "${PHASE_FILE:-}" ]; then
		echo "$phase" >"$PHASE_FILE"
	fi
	case $phase in
	parallel)
		sel=(--no-suite kernel)
		$defer_static && sel+=(--no-suite static --no-suite beside)
		run_tests testlog "${rebuild[@]}" "${sel[@]}" || status=$?
		;;
	kernel)
		static_pid=
		if $defer_static; then
			rm -f "$builddir/meson-logs/testlog-static.json"
			# shellcheck disable=SC2086 # SUITES is a list of options
			CK_TIMEOUT_MULTIPLIER=3 nice -n 19 \
				meson test -C "$builddir" --no-rebuild \
				--print-errorlogs --logbase testlog-static \
				--timeout-multiplier 3 --suite static \
				--suite beside ${SUITES:-} \
				>"$builddir/meson-logs/static-run.out" 2>&1 &
			static_pid=$!
			logs+=("$builddir/meson-logs/testlog-static.json")
		fi
		# one at a time (is_parallel false) but for the test cases of
		# an isolated suite, which run side by side with each other
		# only, all at once (tests/meson.build split_cases): they wait
		# on the daemon's windows, not on a CPU
		run_tests testlog-kernel "${rebuild[@]}" --suite kernel \
			--no-suite quiet --num-processes 8 || status=$?
		if [ -n "$static_pid" ]; then
			wait "$static_pid" || status=$?
			echo "== suites static and beside, beside the kernel suites (nice 19) =="
			cat "$builddir/meson-logs/static-run.out"
		fi
		# (bounded: a file that never comes is said, the run goes on)
		for f in ${QUIET_AFTER:-}; do
			w=0
			until [ -e "$f" ] || [ "$w" -ge 1800 ]; do
				sleep 1
				w=$((w + 1))
			done
			[ -e "$f" ] || echo "test.sh: $f did not appear in 30 min" >&2
		done
		run_tests testlog-quiet --no-rebuild --suite quiet || status=$?
		;;
	chosen) run_tests testlog "${rebuild[@]}" || status=$? ;;
	*)
		echo "test.sh: unknown phase $phase" >&2
		exit 2
		;;
	esac
done
cleanup_defaults
# As root nothing may skip: a skip there is a missing package or mount.
# (a run that selected no suite writes no log)
python3 - "$(id -u)" "${logs[@]}" <<'PY' || status=1
import json, os, sys
ok = bad = skip = 0
for path in filter(os.path.exists, sys.argv[2:]):
    for line in open(path):
        r = json.loads(line)
        if r["result"] == "OK": ok += 1
        elif r["result"] == "SKIP":
            skip += 1
            print(f"skipped: {r['name']}")
        else: bad += 1
print(f"{ok} passed, {bad} failed, {skip} skipped")
sys.exit(1 if skip and sys.argv[1] == "0" else 0)
PY
exit "$status"
