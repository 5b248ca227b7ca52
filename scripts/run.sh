#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build vitalsd (installing its packages when missing) and run it in the
# foreground with its state under ./var in the checkout. Extra arguments go
# to the daemon, e.g. scripts/run.sh --interval-ms 500 -v
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/deps.sh build
if [ ! -f build/build.ninja ]; then
	meson setup build >/dev/null
fi
ninja -C build >/dev/null
mkdir -p var
exec ./build/daemon/vitalsd --foreground --state-dir "$top/var" "$@"
