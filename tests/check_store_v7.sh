#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The schema-v7 fixture (tests/fixtures/store-v7/vitals.db.gz, made by the v7
# code from a real daemon run) read through the store's API on a copy must
# print the digest the v7 code printed (expected.txt.gz): every window, every
# task figure and the top-20 answers. A later schema's migration keeps
# this test unchanged.
# The same for another old schema's fixture made by its own code (FIXTURE:
# store-v15, ..., store-v24).
#   check_store_v7.sh STORE_DIGEST [FIXTURE]
set -euo pipefail
digest=$1
name=${2:-store-v7}
fix=${VITALS_SRCDIR:?}/tests/fixtures/$name
t=$(mktemp -d /tmp/vitals-$name.XXXXXX)
trap 'rm -rf "$t"' EXIT
chmod 0750 "$t"
gzip -dc "$fix/vitals.db.gz" >"$t/vitals.db"
gzip -dc "$fix/expected.txt.gz" >"$t/expected.txt"
"$digest" "$t/vitals.db" >"$t/digest.txt"
if ! diff -u "$t/expected.txt" "$t/digest.txt" >"$t/diff.txt"; then
	head -40 "$t/diff.txt"
	echo "FAIL: the $name fixture no longer reads as its own code read it" >&2
	exit 1
fi
# Where the fixture lists its boots (store-v23): the migrated copy names
# the same ones (v24 keeps them in the boot table, windows by id).
if [[ -f $fix/boots.txt ]]; then
	sqlite3 "$t/vitals.db" "SELECT boot_id FROM boot ORDER BY 1" >"$t/boots.txt"
	if ! diff -u "$fix/boots.txt" "$t/boots.txt"; then
		echo "FAIL: the $name fixture's boots changed in the migration" >&2
		exit 1
	fi
	orphans=$(sqlite3 "$t/vitals.db" "SELECT count(*) FROM windows w WHERE NOT EXISTS (SELECT 1 FROM boot b WHERE b.id = w.boot)")
	if [[ $orphans != 0 ]]; then
		echo "FAIL: a window of the $name fixture names no boot" >&2
		exit 1
	fi
fi
# A copy missing its newest window must not read the same (the comparison
# can fail).
gzip -dc "$fix/vitals.db.gz" >"$t/bad.db"
sqlite3 "$t/bad.db" "DELETE FROM windows WHERE rowid = (SELECT max(rowid) FROM windows)"
if "$digest" "$t/bad.db" | cmp -s - "$t/expected.txt"; then
	echo "FAIL: a fixture missing a window printed the same digest" >&2
	exit 1
fi
echo "$name fixture: $(grep -c '^window ' "$t/expected.txt") windows read as its own code read them"
