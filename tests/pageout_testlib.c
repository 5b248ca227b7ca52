/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A shared object check_memstat loads with dlopen: 256 KiB of read-only
 * data in a segment the ELF says is never written, which the start-up
 * pageout's pass may drop from the page tables whole (core/pageout.h).
 */
const unsigned char pageout_testlib_rodata[256 * 1024] = {
	[0] = 1,
	[256 * 1024 - 1] = 2,
};
