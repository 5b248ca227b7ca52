#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The schema-v7 fixture (tests/fixtures/store-v7/vitals.db.gz, made by the v7
# code from a real daemon run) read through the store's API on a copy must
# print the digest the v7 code printed (expected.txt.gz): every window, every
# task figure and the top-20 answers. A later schema's migration keeps
# this test unchanged.
#   check_store_v7.sh STORE_DIGEST
set -euo pipefail
digest=$1
fix=${VITALS_SRCDIR:?}/tests/fixtures/store-v7
t=$(mktemp -d /tmp/vitals-v7.XXXXXX)
trap 'rm -rf "$t"' EXIT
chmod 0750 "$t"
gzip -dc "$fix/vitals.db.gz" >"$t/vitals.db"
gzip -dc "$fix/expected.txt.gz" >"$t/expected.txt"
"$digest" "$t/vitals.db" >"$t/digest.txt"
if ! diff -u "$t/expected.txt" "$t/digest.txt" >"$t/diff.txt"; then
	head -40 "$t/diff.txt"
	echo "FAIL: the v7 fixture no longer reads as the v7 code read it" >&2
	exit 1
fi
# A copy missing its newest window must not read the same (the comparison
# can fail).
gzip -dc "$fix/vitals.db.gz" >"$t/bad.db"
sqlite3 "$t/bad.db" "DELETE FROM windows WHERE rowid = (SELECT max(rowid) FROM windows)"
if "$digest" "$t/bad.db" | cmp -s - "$t/expected.txt"; then
	echo "FAIL: a fixture missing a window printed the same digest" >&2
	exit 1
fi
echo "v7 fixture: $(grep -c '^window ' "$t/expected.txt") windows read as the v7 code read them"
