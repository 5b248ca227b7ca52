#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build the libFuzzer targets with clang (ASan + UBSan) in a build directory
# of their own and run each for a bounded time from a small seed corpus.
#   fuzz/run.sh                 60 s per target
#   FUZZ_SECONDS=600 fuzz/run.sh
# A crash leaves crash-* / leak-* / timeout-* reproducers in the build
# directory and makes the script fail; replay one with
#   build-fuzz/fuzz/fuzz_frame build-fuzz/crash-...
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
secs=${FUZZ_SECONDS:-60}
builddir=${FUZZ_BUILDDIR:-build-fuzz}

command -v clang >/dev/null || { echo "fuzz: clang is missing" >&2; exit 1; }
if [ ! -f "$builddir/build.ninja" ]; then
	CC=clang meson setup "$builddir" -Dfuzz=enabled -Dtests=disabled \
	    -Db_sanitize=address,undefined -Db_lundef=false \
	    -Dbuildtype=debugoptimized >/dev/null
fi
ninja -C "$builddir" fuzz/fuzz_frame fuzz/fuzz_wss fuzz/fuzz_atrace

# Seeds: one request of each operation (role byte 1, reader), then all of
# them pipelined on one stream (role byte 2, trusted). Byte 0 is the role.
corpus="$builddir/fuzz/corpus-frame"
mkdir -p "$corpus"
seed() { printf "$2" >"$corpus/seed-$1"; }
seed health '\x01\x00\x00\x00\x06\x08\x01\x10\x01\x72\x00'
seed snapshot '\x01\x00\x00\x00\x08\x08\x01\x10\x02\x52\x02\x08\x05'
seed windows '\x01\x00\x00\x00\x17\x08\x01\x10\x03\x5a\x11\x0a\x07\x18\x80\xb0\x9d\xc2\xdf\x01\x10\x0a\x18\x01\x20\x05\x28\x03'
seed top '\x01\x00\x00\x00\x15\x08\x01\x10\x04\x62\x0f\x0a\x07\x18\x80\xc0\xe2\x85\xe3\x68\x10\x02\x18\x01\x20\x14'
seed process '\x01\x00\x00\x00\x23\x08\x01\x10\x05\x6a\x1d\x08\xd2\x09\x10\x05\x18\x01\x22\x14\x08\x80\x80\x90\xbb\xba\xd6\xad\xf0\x0d\x10\x80\x80\xa0\xf6\xf4\xac\xdb\xe0\x1b'
seed burst '\x01\x00\x00\x00\x09\x08\x01\x10\x06\x7a\x03\x08\xe8\x07'
seed dump '\x01\x00\x00\x00\x09\x08\x01\x10\x07\x82\x01\x02\x08\x0a'
seed trace '\x01\x00\x00\x00\x0c\x08\x01\x10\x08\x92\x01\x05\x10\x07\x1a\x01\x61'
seed all '\x02\x00\x00\x00\x06\x08\x01\x10\x01\x72\x00\x00\x00\x00\x08\x08\x01\x10\x02\x52\x02\x08\x05\x00\x00\x00\x17\x08\x01\x10\x03\x5a\x11\x0a\x07\x18\x80\xb0\x9d\xc2\xdf\x01\x10\x0a\x18\x01\x20\x05\x28\x03\x00\x00\x00\x15\x08\x01\x10\x04\x62\x0f\x0a\x07\x18\x80\xc0\xe2\x85\xe3\x68\x10\x02\x18\x01\x20\x14\x00\x00\x00\x23\x08\x01\x10\x05\x6a\x1d\x08\xd2\x09\x10\x05\x18\x01\x22\x14\x08\x80\x80\x90\xbb\xba\xd6\xad\xf0\x0d\x10\x80\x80\xa0\xf6\xf4\xac\xdb\xe0\x1b\x00\x00\x00\x09\x08\x01\x10\x06\x7a\x03\x08\xe8\x07\x00\x00\x00\x09\x08\x01\x10\x07\x82\x01\x02\x08\x0a'

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
cd "$builddir"
echo "fuzz: fuzz_frame for ${secs} s" >&2
./fuzz/fuzz_frame -max_total_time="$secs" -max_len=8192 -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 fuzz/corpus-frame

# issue 8: the heapprofd parsers (packages.list, rules, cmdlines), a quarter
# of the time: they are small.
hp_secs=$(( secs / 4 > 5 ? secs / 4 : 5 ))
cd "$top"
ninja -C "$builddir" fuzz/fuzz_hp
hcorpus="$builddir/fuzz/corpus-hp"
mkdir -p "$hcorpus"
printf '\x00com.a 10100 0 /d default none 1 1 1 @system\ncom.b 90001 1\n' >"$hcorpus/seed-pkgs"
printf '\x01grow when=rss_growth:100M:10m match=name:com.a target=uid:10100 duration=30s' >"$hcorpus/seed-rule"
printf '\x02/system/bin/surfaceflinger@1.0\x00arg' >"$hcorpus/seed-cmdline"
cd "$builddir"
echo "fuzz: fuzz_hp for ${hp_secs} s" >&2
./fuzz/fuzz_hp -max_total_time="$hp_secs" -max_len=4096 -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 fuzz/corpus-hp
# The working-set monitor's parsers: a quarter of the budget (they are
# small), from a maps and an smaps seed.
wss_secs=${FUZZ_WSS_SECONDS:-$((secs / 4))}
mkdir -p fuzz/corpus-wss
printf '55d0c000-55d2d000 rw-p 00000000 00:00 0 [heap]\n7f0bd0e17000-7f0bd0e1a000 r-xp 00002000 fd:01 131090 /data/app/x/base.apk\n' >fuzz/corpus-wss/seed-maps
printf '00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/x\nRss: 236 kB\nReferenced: 120 kB\nSwap: 0 kB\n' >fuzz/corpus-wss/seed-smaps
echo "fuzz: fuzz_wss for ${wss_secs} s" >&2
./fuzz/fuzz_wss -max_total_time="$wss_secs" -max_len=4096 -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 fuzz/corpus-wss

# ftrace input (fuzz_atrace.c): byte 0 even = markers, one per line;
# odd = a raw page decoded with tests/fixtures/ftrace/events.
corpus="fuzz/corpus-atrace"
mkdir -p "$corpus"
printf '\x04B|1|outer\nB|1|inner \xc3\xa9\nE|1\nS|1|a|7\nC|1|c|-3\nG|1|t|n|2\nH|1|t|2\nE\nF|1|a|7\nI|1|i\nN|1|t|i' \
    >"$corpus/seed-markers"
printf '\x01\xe8\x03\x00\x00\x00\x00\x00\x00\x0c\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\xde\x05\x00\x00\x01\x00\x00\x00\x4d\x00\x00\x00' \
    >"$corpus/seed-page"
atrace_secs=${FUZZ_ATRACE_SECONDS:-$((secs / 4))}
echo "fuzz: fuzz_atrace for ${atrace_secs} s" >&2
FUZZ_EVENTS="$top/tests/fixtures/ftrace/events" ./fuzz/fuzz_atrace \
    -max_total_time="$atrace_secs" -max_len=4200 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 fuzz/corpus-atrace
