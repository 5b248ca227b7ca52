/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The DMA-BUF iterator's record (dmabuf.bpf.c, read by
 * daemon/dmabuf/dmabuf_iter.c): one per buffer on the kernel's list of
 * every DMA-BUF (iter/dmabuf, 6.16+). Fixed width, naturally aligned, a
 * multiple of 8 bytes: the same layout on both sides of read(2).
 *
 * No end record: the iterator's stop never runs the program (unlike
 * iter/task's), so an empty list is an empty stream. Kernels whose
 * dmabuf_iter_seq_start() returns NULL for a non-zero position (6.16 to
 * the fix "bpf: dmabuf_iter: resume", posted December 2025) end the
 * stream at the first read(2) that bpf_seq_read() cuts: at most one
 * 8-page buffer, 2,048 records with 4 KiB pages. The first record always
 * comes, so "no buffer" is exact; a count of 2,048 or more may be short
 * there (Dmabuf.kernel_buffers is then a lower bound).
 */
#ifndef VITALS_DMABUF_H
#define VITALS_DMABUF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

struct dmabuf_rec {
	__u64 ino;  /* the buffer's inode: fdinfo's ino, sysfs's directory */
	__u64 size; /* dma_buf.size, bytes */
};

#endif /* VITALS_DMABUF_H */
