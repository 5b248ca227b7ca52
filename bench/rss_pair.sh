#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# rss_pair.sh: the peak RSS (VmHWM) of two vitalsd binaries, run one after
# the other and alternated, for N rounds (issue 20). One build's VmHWM
# spreads over 250-470 KiB from run to run beside the peers (what of each
# library is in the page cache moves what a window's close maps back),
# wider than most single cuts: one run of each says nothing, the means
# over rounds and the spread do. A run is bench/peers.sh (every peer
# beside the daemon: the issue's benchmark), or bench/mem.sh with --alone;
# which build runs first alternates by round.
#
#   bench/rss_pair.sh --vitalsd A --other B [--rounds N] [--seconds N]
#       [--alone] [-- more options for peers.sh or mem.sh]
#
# One RUN line per run (build, round, VmHWM KiB, the daemon's CPU: ms/s
# beside the peers, ms over the run alone), one RESULT line per build (n,
# mean, min, max of each) and B's mean over A's. bench/README.md ("Three
# cuts at the peak, none kept") has runs made by hand the same way.
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")

a=${VITALSD:-$repo/build/daemon/vitalsd}
b=
rounds=3
secs=60
alone=0
more=()

die() {
	echo "rss_pair: $*" >&2
	exit 1
}

while (($#)); do
	case $1 in
	--vitalsd) a=${2:?--vitalsd needs a path}; shift 2 ;;
	--other) b=${2:?--other needs a path}; shift 2 ;;
	--rounds) rounds=${2:?--rounds needs N}; shift 2 ;;
	--seconds) secs=${2:?--seconds needs N}; shift 2 ;;
	--alone) alone=1; shift ;;
	--) shift; more=("$@"); break ;;
	*) die "unknown option $1" ;;
	esac
done
[[ -x $a && -x $b ]] || die "need --vitalsd A --other B (executables)"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds needs a positive integer"
[[ $secs =~ ^[1-9][0-9]*$ ]] || die "--seconds needs a positive integer"
[[ $(id -u) == 0 ]] || die "needs root"

runs=$(mktemp "${TMPDIR:-/tmp}/rss_pair.XXXXXX")
trap 'rm -f "$runs"' EXIT

# run NAME PATH ROUND: one run of that build; a RUN line into $runs
run() {
	local name=$1 bin=$2 round=$3 out hwm cpu
	if ((alone)); then
		out=$(bash "$here/mem.sh" --seconds "$secs" --vitalsd "$bin" \
			"${more[@]}" 2>&1) || die "mem.sh failed: $(tail -n 3 <<<"$out")"
		hwm=$(sed -n 's/^RESULT tasks=.* hwm_kib=\([0-9]*\).*/\1/p' <<<"$out")
		cpu=$(sed -n 's/^RESULT tasks=.* cpu_ms=\([0-9.]*\).*/\1/p' <<<"$out")
	else
		out=$(bash "$here/peers.sh" --seconds "$secs" --vitalsd "$bin" \
			"${more[@]}" 2>&1) || die "peers.sh failed: $(tail -n 3 <<<"$out")"
		hwm=$(sed -n 's/^RESULT tool=vitalsd .* rss_kib=\([0-9]*\).*/\1/p' <<<"$out")
		cpu=$(sed -n 's/^RESULT tool=vitalsd cpu_ms_per_s=\([0-9.]*\).*/\1/p' <<<"$out")
	fi
	[[ -n $hwm && -n $cpu ]] || die "no RESULT from the $name run: $(tail -n 3 <<<"$out")"
	echo "RUN build=$name round=$round hwm_kib=$hwm cpu=$cpu" | tee -a "$runs"
}

echo "rss_pair: A=$a B=$b, $rounds rounds of ${secs} s, $( ((alone)) && echo "alone (mem.sh)" || echo "beside the peers (peers.sh)")"
for ((r = 1; r <= rounds; r++)); do
	if ((r % 2)); then
		run A "$a" "$r"
		run B "$b" "$r"
	else
		run B "$b" "$r"
		run A "$a" "$r"
	fi
done

awk '
{
	for (i = 2; i <= NF; i++) {
		split($i, kv, "=")
		v[kv[1]] = kv[2]
	}
	k = v["build"]; h = v["hwm_kib"] + 0; c = v["cpu"] + 0
	n[k]++; hs[k] += h; cs[k] += c
	if (!(k in hmin) || h < hmin[k]) hmin[k] = h
	if (!(k in hmax) || h > hmax[k]) hmax[k] = h
	if (!(k in cmin) || c < cmin[k]) cmin[k] = c
	if (!(k in cmax) || c > cmax[k]) cmax[k] = c
}
END {
	for (k = 0; k < 2; k++) {
		b = k ? "B" : "A"
		printf "RESULT build=%s n=%d hwm_mean_kib=%.0f hwm_min_kib=%d hwm_max_kib=%d cpu_mean=%.3f cpu_min=%.3f cpu_max=%.3f\n", b, n[b], hs[b] / n[b], hmin[b], hmax[b], cs[b] / n[b], cmin[b], cmax[b]
	}
	printf "RESULT b_over_a hwm=%.3f cpu=%.3f\n", (hs["B"] / n["B"]) / (hs["A"] / n["A"]), (cs["A"] > 0 ? (cs["B"] / n["B"]) / (cs["A"] / n["A"]) : 0)
}' "$runs"
