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
if [ -f "$builddir/build.ninja" ]; then
	meson setup --reconfigure "$builddir" "$@" >/dev/null
else
	meson setup "$builddir" "$@" >/dev/null
fi
# BUILD=tests: only what the selected suites need (meson test builds their
# executables and depends), for a build whose other targets another stage
# already builds with the same sources (CI's sanitizer build).
if [ "${BUILD:-all}" != tests ]; then
	ninja -C "$builddir"
fi
status=0
meson test -C "$builddir" --print-errorlogs ${SUITES:-} || status=$?
# As root nothing may skip: a skip there is a missing package or mount.
python3 - "$builddir/meson-logs/testlog.json" "$(id -u)" <<'PY' || status=1
import json, sys
ok = bad = skip = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["result"] == "OK": ok += 1
    elif r["result"] == "SKIP":
        skip += 1
        print(f"skipped: {r['name']}")
    else: bad += 1
print(f"{ok} passed, {bad} failed, {skip} skipped")
sys.exit(1 if skip and sys.argv[2] == "0" else 0)
PY
exit "$status"
