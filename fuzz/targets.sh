# SPDX-License-Identifier: Apache-2.0
# Shared by fuzz/run.sh (CI, short) and fuzz/nightly.sh (long): the target
# list, how they are built, and how each is run. Sourced, not executed.

# Every libFuzzer target (fuzz/fuzz_<name>.c) and what it reads:
#   frame   control-socket input (the only input an unprivileged peer sends)
#   config  the configuration file, line by line through config_set
#   procfs  /proc/stat, loadavg, PSI, vmstat, meminfo, per-task stat,
#           status, cmdline, and the task iterator's records
#   atrace  ATrace markers and raw ftrace ring-buffer pages
#   hp      packages.list, heapprofd rules, cmdlines
#   hptrace a heapprofd session's trace file (the verdict's decoder)
#   wss     maps, smaps, pagemap words
#   store_blob  the store's blobs: frames (raw, zstd) and part payloads
FUZZ_TARGETS=(frame config procfs atrace hp hptrace wss store_blob)

fuzz_build() {
	local builddir=$1 t targets=()
	command -v clang >/dev/null || { echo "fuzz: clang is missing" >&2; exit 1; }
	if [ ! -f "$builddir/build.ninja" ]; then
		CC=clang meson setup "$builddir" -Dfuzz=enabled -Dtests=disabled \
		    -Db_sanitize=address,undefined -Db_lundef=false \
		    -Dbuildtype=debugoptimized >/dev/null
	fi
	for t in "${FUZZ_TARGETS[@]}"; do
		targets+=("fuzz/fuzz_$t")
	done
	ninja -C "$builddir" "${targets[@]}"
}

# fuzz_run BUILDDIR TARGET [libFuzzer options and corpus dirs...]
fuzz_run() {
	local builddir=$1 t=$2 top
	shift 2
	top=$(pwd)
	local maxlen=4096
	case $t in
	frame) maxlen=8192 ;;
	atrace) maxlen=4200 ;;
	procfs) maxlen=8192 ;;
	store_blob) maxlen=8192 ;;
	hptrace) maxlen=8192 ;;
	esac
	FUZZ_EVENTS="$top/tests/fixtures/ftrace/events" \
	    "$builddir/fuzz/fuzz_$t" -max_len="$maxlen" \
	    -timeout="${FUZZ_TIMEOUT:-10}" \
	    -rss_limit_mb=2048 -print_final_stats=1 \
	    -artifact_prefix="$builddir/" "$@"
}
