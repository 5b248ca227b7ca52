/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A test VFS over the default unix VFS that simulates a power cut and
 * injects I/O errors (vfs_powercut.c). Registered as the default VFS, so
 * the store's own code runs on it unchanged.
 *
 * Power cut: every write since the file's last xSync is remembered (the
 * content each 4 KiB page had at that sync). At the cut point all further
 * calls fail; pc_apply_cut() then turns each file into one a machine that
 * lost power could hold: every page dirtied since the sync is kept, reverted
 * or torn (512-byte sectors of each), the size is the synced one or the
 * current one, and the -shm is gone.
 */
#ifndef VITALS_VFS_POWERCUT_H
#define VITALS_VFS_POWERCUT_H

#include <stdbool.h>
#include <stdint.h>

int pc_register(void);
/* Forget every file, disarm; seed drives the cut's random choices. */
void pc_reset(uint64_t seed);
/* Cut at write-path call k (xWrite, xTruncate, xSync, xDelete; from 1);
 * 0: never. The call at k and every later one fails. */
void pc_arm_cut(uint64_t k);
bool pc_cut_done(void);
/* Calls k .. k + n - 1 fail with rc (SQLITE_IOERR_WRITE, SQLITE_FULL...)
 * and do nothing; later ones work again. */
void pc_arm_errors(uint64_t k, unsigned n, int rc);
uint64_t pc_calls(void);
uint64_t pc_errors(void);
/* After every connection is closed: write the crash state to disk. */
int pc_apply_cut(void);

#endif
