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
# fixture, static: CPU-bound, as many at once as CPUs), then the kernel
# suites, which run one at a time (is_parallel false: they share the
# kernel's state) and mostly wait on windows closing. Their logs are
# testlog.* and testlog-kernel.*. PHASES=parallel or PHASES=kernel runs
# one of them; SUITES naming a suite (--suite X) runs just that choice, in
# one run. PHASE_FILE, when set, gets each run's name as it starts: CI
# starts CPU-bound work beside the kernel run (.ci/run).
phases=${PHASES:-parallel kernel}
case " ${SUITES:-} " in
*" --suite "*) phases=chosen ;;
esac
status=0
logs=()
for phase in $phases; do
	case $phase in
	parallel) sel=(--no-suite kernel) log=testlog ;;
	kernel) sel=(--suite kernel) log=testlog-kernel ;;
	chosen) sel=() log=testlog ;;
	*)
		echo "test.sh: unknown phase $phase" >&2
		exit 2
		;;
	esac
	rm -f "$builddir/meson-logs/$log.json"
	logs+=("$builddir/meson-logs/$log.json")
	if [ -n "${PHASE_FILE:-}" ]; then
		echo "$phase" >"$PHASE_FILE"
	fi
	# shellcheck disable=SC2086 # SUITES is a list of options
	meson test -C "$builddir" "${rebuild[@]}" --print-errorlogs \
		--logbase "$log" "${sel[@]}" ${SUITES:-} || status=$?
done
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
