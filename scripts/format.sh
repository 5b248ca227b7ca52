#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Format the project's C sources with its .clang-format.
#   format.sh          rewrite, in place, every file that differs
#   format.sh --check  change nothing; list the files that differ, exit 1
# The files are the tracked .c/.h under the project's own folders; build
# output and generated code are never tracked, so never touched. The
# formatter is clang-format 14 (Debian 12, what CI installs): other major
# versions break lines differently, so they are refused; CLANG_FORMAT
# names another binary.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

check=0
case "${1:-}" in
--check) check=1 ;;
"") ;;
*) echo "usage: format.sh [--check]" >&2; exit 2 ;;
esac

cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
	for c in clang-format-14 clang-format; do
		if command -v "$c" >/dev/null; then
			cf=$c
			break
		fi
	done
fi
if [ -z "$cf" ]; then
	echo "format.sh: clang-format 14 not found (scripts/deps.sh test" \
	    "installs it)" >&2
	exit 2
fi
ver=$("$cf" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [ "$ver" != 14 ]; then
	echo "format.sh: $cf is version ${ver:-unknown}, the tree is" \
	    "formatted with 14" >&2
	exit 2
fi

mapfile -t files < <(git ls-files -- 'bench/*.[ch]' 'bpf/*.[ch]' \
    'client/*.[ch]' 'daemon/*.[ch]' 'fuzz/*.[ch]' 'proto/*.[ch]' \
    'tests/*.[ch]')

# one clang-format per file, as many at once as CPUs (CI's first stage:
# one at a time it left a CPU idle); each line is written whole
# shellcheck disable=SC2016 # $0 and $f are the inner shell's
mapfile -t bad < <(printf '%s\0' "${files[@]}" |
	xargs -0 -n 16 -P "$(nproc)" sh -c 'for f; do
		"$0" --style=file "$f" | cmp -s - "$f" || printf "%s\n" "$f"
	done' "$cf" | sort)
if [ "${#bad[@]}" -eq 0 ]; then
	exit 0
fi
if [ "$check" -eq 1 ]; then
	printf '%s\n' "${bad[@]}"
	echo "format.sh: ${#bad[@]} file(s) not formatted; run scripts/format.sh" >&2
	exit 1
fi
"$cf" --style=file -i "${bad[@]}"
printf 'formatted %s\n' "${bad[@]}"
