/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kernel's list of every DMA-BUF through the BPF iterator iter/dmabuf
 * (bpf/dmabuf/dmabuf.bpf.c, kernel 6.16+): loaded and attached once, in a
 * child (bpf_child.c: the kernel BTF's parse stays out of our memory), at
 * setup; each pass makes an iterator instance from the link and reads its
 * records (dmabuf_iter_parse, dmabuf_parse.c). When the list is empty no
 * process holds a buffer and the pass need not read any fd directory.
 *
 * Without BPF in the build every call is -EOPNOTSUPP and the pass walks
 * /proc as before; so do kernels without the iterator (the load fails:
 * DMABUF_ITER_WHY_KERNEL) and Android, whose bpfloader cannot load
 * iterators (the daemon does not load CO-RE programs itself there).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/bpf_common.h"
#include "core/util.h"
#include "dmabuf/dmabuf.h"

#ifdef HAVE_BPF_CORE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/bpf_child.h"
#include "dmabuf.skel.h"
#endif

const char *
dmabuf_iter_why_name(enum dmabuf_iter_why why)
{
	switch (why) {
	case DMABUF_ITER_WHY_UNKNOWN:
		return "unknown";
	case DMABUF_ITER_WHY_NONE:
		return "none";
	case DMABUF_ITER_WHY_CONFIG:
		return "config";
	case DMABUF_ITER_WHY_BUILD:
		return "no_bpf_build";
	case DMABUF_ITER_WHY_ROOT:
		return "proc_root";
	case DMABUF_ITER_WHY_NO_BTF:
		return "no_btf";
	case DMABUF_ITER_WHY_PRIVILEGE:
		return "privilege";
	case DMABUF_ITER_WHY_KERNEL:
		return "no_kernel_iter";
	case DMABUF_ITER_WHY_VERIFIER:
		return "verifier";
	case DMABUF_ITER_WHY_ATTACH:
		return "attach";
	case DMABUF_ITER_WHY_READ:
		return "read_failed";
	case DMABUF_ITER_WHY_BPF_LOAD:
		return "bpf_load";
	case DMABUF_ITER_WHY__MAX:
		break;
	}
	return "?";
}

#ifdef HAVE_BPF_CORE

#define DMABUF_ITER_READ (64 * 1024)

struct dmabuf_iter {
	int link_fd;
};

struct dmabuf_iter *
dmabuf_iter_free(struct dmabuf_iter *it)
{
	if (it == NULL)
		return NULL;
	if (it->link_fd >= 0)
		close(it->link_fd);
	free(it);
	return NULL;
}

int
dmabuf_iter_count(struct dmabuf_iter *it, uint32_t *ret_n, uint64_t *ret_bytes)
{
	struct vbuf buf = { 0 }; /* one read's stream, nothing kept between
				    passes a minute apart */
	int fd, r;

	if (it == NULL)
		return -EOPNOTSUPP;
	if ((fd = bpf_iter_create(it->link_fd)) < 0)
		return -errno;
	/* each read(2) asks for more than bpf_seq_read() hands out (8
	 * pages): a kernel that cannot resume the walk ends it at the first
	 * read that stopped short of the list's end */
	r = read_fd_stream(fd, &buf, DMABUF_ITER_READ, DMABUF_ITER_READ + 1);
	close(fd);
	if (r == 0)
		r = dmabuf_iter_parse(buf.p, buf.len, ret_n, ret_bytes);
	vbuf_release(&buf);
	return r;
}

/* In the loading child: open, load, attach; the link's fd to the parent,
 * in *out the stage that failed. */
static int
load_child(void *arg, int *fds, size_t nfds, void *out, size_t outsz)
{
	enum dmabuf_iter_why *why = out;
	struct vitals_dmabuf *skel;
	struct bpf_link *link;
	int r;

	(void)arg;
	if (nfds != 1 || outsz != sizeof(*why))
		return -EINVAL;
	bpf_common_init();
	*why = DMABUF_ITER_WHY_VERIFIER;
	if ((skel = vitals_dmabuf__open()) == NULL)
		return -errno;
	if ((r = vitals_dmabuf__load(skel)) < 0) {
		/* no bpf_iter_dmabuf in the kernel's BTF: before 6.16 */
		*why = r == -EPERM ? DMABUF_ITER_WHY_PRIVILEGE :
		    r == -ESRCH	   ? DMABUF_ITER_WHY_KERNEL :
				     DMABUF_ITER_WHY_VERIFIER;
		return r;
	}
	if ((link = bpf_program__attach_iter(skel->progs.dmabuf_list, NULL)) ==
	    NULL) {
		r = -errno;
		*why = r == -EPERM ? DMABUF_ITER_WHY_PRIVILEGE :
				     DMABUF_ITER_WHY_ATTACH;
		return r;
	}
	/* the child exits next; the parent's fd keeps the link */
	fds[0] = bpf_link__fd(link);
	return 0;
}

int
dmabuf_iter_open(const char *sys_root, struct dmabuf_iter **ret,
    enum dmabuf_iter_why *ret_why)
{
	enum dmabuf_iter_why why = DMABUF_ITER_WHY_VERIFIER;
	struct dmabuf_iter *it;
	char btf[4096];
	uint32_t n;
	uint64_t bytes;
	int fd, r;

	if (snprintf(btf, sizeof(btf), "%s/kernel/btf/vmlinux", sys_root) >=
	    (int)sizeof(btf)) {
		*ret_why = DMABUF_ITER_WHY_NO_BTF;
		return -ENAMETOOLONG;
	}
	if (access(btf, R_OK) < 0) {
		r = -errno;
		*ret_why = DMABUF_ITER_WHY_NO_BTF;
		return r;
	}
	if ((r = bpf_child_run(load_child, NULL, &fd, 1, &why, sizeof(why))) <
	    0) {
		*ret_why = why;
		return r;
	}
	if ((it = calloc(1, sizeof(*it))) == NULL) {
		close(fd);
		*ret_why = DMABUF_ITER_WHY_READ;
		return -ENOMEM;
	}
	it->link_fd = fd;
	/* one read now: a failure belongs to setup, not to the first pass */
	if ((r = dmabuf_iter_count(it, &n, &bytes)) < 0) {
		*ret_why = r == -EPERM ? DMABUF_ITER_WHY_PRIVILEGE :
					 DMABUF_ITER_WHY_READ;
		dmabuf_iter_free(it);
		return r;
	}
	*ret = it;
	return 0;
}

#else /* !HAVE_BPF_CORE */

struct dmabuf_iter *
dmabuf_iter_free(struct dmabuf_iter *it)
{
	(void)it;
	return NULL;
}

int
dmabuf_iter_count(struct dmabuf_iter *it, uint32_t *ret_n, uint64_t *ret_bytes)
{
	(void)it;
	(void)ret_n;
	(void)ret_bytes;
	return -EOPNOTSUPP;
}

int
dmabuf_iter_open(const char *sys_root, struct dmabuf_iter **ret,
    enum dmabuf_iter_why *ret_why)
{
	(void)sys_root;
	(void)ret;
	*ret_why = DMABUF_ITER_WHY_BUILD;
	return -EOPNOTSUPP;
}

#endif /* HAVE_BPF_CORE */
