#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# store_bench.sh: build bench/store_bench if needed, then run it.
#
#   bench/store_bench.sh [--build DIR] [store_bench options ...]
#
# The build directory is $STORE_BENCH_BUILD or <repo>/build-bench (its own,
# so a run never races another build); only the store_bench target is
# built. Build output goes to stderr, the report to stdout.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
build=${STORE_BENCH_BUILD:-$repo/build-bench}

case ${1:-} in
--build)
	[ $# -ge 2 ] || { echo "store_bench.sh: --build needs a directory" >&2; exit 2; }
	build=$2
	shift 2
	;;
--build=*)
	build=${1#--build=}
	shift
	;;
esac

missing=
for tool in meson ninja; do
	command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
	echo "store_bench.sh: missing:$missing" >&2
	exit 1
fi

if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$repo" >&2
fi
ninja -C "$build" bench/store_bench >&2

model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "machine: $(nproc) CPUs${model:+, $model}, kernel $(uname -r)"
exec "$build/bench/store_bench" "$@"
