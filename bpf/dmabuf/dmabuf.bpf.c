// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * iter/dmabuf (6.16+): one record per DMA-BUF on the kernel's list
 * (bpf/dmabuf/dmabuf.bpf.h), whoever holds it (an fd, a mapping, a
 * driver). The DMA-BUF pass reads it first: an empty list means no process
 * can hold a buffer, and the walk of every process's fds is not needed.
 * The kernel holds a reference on the buffer while the program runs; the
 * file and inode behind it are read through BTF pointers (fault-safe).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "dmabuf.bpf.h"

SEC("iter/dmabuf")
int
dmabuf_list(struct bpf_iter__dmabuf *ctx)
{
	struct dma_buf *d = ctx->dmabuf;
	struct dmabuf_rec r;

	if (d == NULL)
		return 0;
	r.size = d->size;
	r.ino = d->file->f_inode->i_ino;
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
