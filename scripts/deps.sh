#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install the Debian 12 packages vitalsd needs, only those missing.
#   deps.sh build   -- what building and running the daemon needs
#   deps.sh test    -- plus what the test suites and sanitizer builds need
#   deps.sh bench   -- plus the peers bench/peers.sh runs beside vitalsd
set -euo pipefail

build_pkgs=(meson ninja-build pkg-config gcc libc6-dev
	libevent-dev libbpf-dev libprotobuf-c-dev protobuf-c-compiler
	libsqlite3-dev clang llvm bpftool libtracefs-dev libtraceevent-dev)
# the store's blobs: zstd-compressed frames (daemon/store/store_codec.c)
build_pkgs+=(libzstd-dev)
# the daemon's link orders its hot functions (daemon/meson.build,
# hot_order): GNU ld 2.40 cannot, lld can
build_pkgs+=(lld)
test_pkgs=(check sqlite3 procps util-linux python3 libclang-rt-14-dev protobuf-compiler trace-cmd)
# tests/bpfldr.c, the stand-in for Android's BPF loader, reads ELF with libelf
test_pkgs+=(libelf-dev)
# systemd-analyze verify of init/vitalsd.service (tests/check_units.sh)
test_pkgs+=(systemd)
# man: the unit's Documentation= pages are checked by that verify
test_pkgs+=(man-db)
# bench/ftrace_flood.sh: the peer (trace-cmd) and /usr/bin/time
test_pkgs+=(time)
# scripts/bionic/check.sh: nm over the build's objects
test_pkgs+=(binutils)
# tests/check_sepolicy.sh: the policy compiled as AOSP builds it
# (m4, checkpolicy; setfiles -c checks file_contexts)
test_pkgs+=(m4 checkpolicy policycoreutils)
# scripts/format.sh --check: the tree is formatted with clang-format 14
test_pkgs+=(clang-format)
# tests/check_export_prom.py: a real Prometheus scrapes the metrics endpoint
test_pkgs+=(prometheus)

# bench/peers.sh: the peers measured beside vitalsd, and a scraper
bench_pkgs=(sysstat atop prometheus-process-exporter curl)
# bench/syscalls.sh: the bpftrace peer of the syscall latency programs
bench_pkgs+=(bpftrace)

want=("${build_pkgs[@]}")
case "${1:-build}" in
test) want+=("${test_pkgs[@]}") ;;
bench) want+=("${test_pkgs[@]}" "${bench_pkgs[@]}") ;;
esac

missing=()
for p in "${want[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if [ "${#missing[@]}" -eq 0 ]; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages: ${missing[*]} (run as root to install)" >&2
	exit 1
fi
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
