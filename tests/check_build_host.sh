#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The build does not depend on the build host's kernel: no command of the
# build reads /sys or /proc (the CO-RE programs compile against the
# committed bpf/vmlinux.h, never a header dumped from the host's BTF), so
# -Dbpf=auto builds the same on a host without /sys/kernel/btf/vmlinux.
set -euo pipefail
b=${VITALS_BUILDDIR:?}
cmds=$(ninja -C "$b" -t commands)
if bad=$(grep -E '(^|[ =:])/(sys|proc)/' <<<"$cmds"); then
	echo "FAIL: a build command reads the host's kernel:" >&2
	echo "$bad" >&2
	exit 1
fi
if grep -q 'btf dump' <<<"$cmds"; then
	echo "FAIL: a build command dumps BTF" >&2
	exit 1
fi
# with BPF built, the programs compile (the check has something to prove)
if [ "${1:-}" = bpf ] && ! grep -q 'target bpf' <<<"$cmds"; then
	echo "FAIL: BPF on but no program compiled" >&2
	exit 1
fi
echo "ok: $(wc -l <<<"$cmds") build commands, none reads /sys or /proc"
