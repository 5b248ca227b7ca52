/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Method A's I/O on open files: /proc/<pid>/pagemap entries (one 64-bit
 * word per virtual page, at offset vaddr / page_size * 8) and the
 * page_idle bitmap (one bit per PFN, read and written in 64-bit words at
 * offset pfn / 64 * 8). Bitmap I/O is batched: the PFNs of a pass become
 * the set of words they fall in, and each run of consecutive words is one
 * pread or pwrite.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wss/wss.h"

#define WSS_RUN_WORDS 512 /* words per bitmap syscall: 4 KiB */
#define WSS_PM_CHUNK 512  /* pagemap entries per pread */

void
wss_pm_decode(uint64_t raw, struct wss_pm *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->present = (raw & WSS_PM_PRESENT) != 0;
	ret->swapped = (raw & WSS_PM_SWAPPED) != 0;
	ret->file = (raw & WSS_PM_FILE) != 0;
	ret->exclusive = (raw & WSS_PM_EXCLUSIVE) != 0;
	ret->soft_dirty = (raw & WSS_PM_SOFT_DIRTY) != 0;
	/* A swapped entry holds swap type and offset there, not a PFN. */
	ret->pfn = ret->present ? raw & WSS_PM_PFN_MASK : 0;
}

/* Bytes read before the end of the file (all of n, or fewer), or -errno. */
static ssize_t
pread_full(int fd, void *buf, size_t n, off_t off)
{
	size_t got = 0;
	ssize_t k;

	while (got < n) {
		k = pread(fd, (char *)buf + got, n - got, off + (off_t)got);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/* npages raw entries from vaddr on. A read past the file's end (fixture)
 * reads as not present, as the kernel's holes do. */
int
wss_pm_read(int fd, uint64_t vaddr, size_t npages, unsigned page_size,
    uint64_t *ret, struct wss_io *io)
{
	off_t off = (off_t)(vaddr / page_size * 8);
	size_t done = 0, k;
	ssize_t r;

	if (page_size == 0 || vaddr % page_size)
		return -EINVAL;
	while (done < npages) {
		k = npages - done;
		if (k > WSS_PM_CHUNK)
			k = WSS_PM_CHUNK;
		r = pread_full(fd, ret + done, k * 8, off + (off_t)(done * 8));
		io->pm_reads++;
		if (r < 0)
			return (int)r;
		io->bytes += (size_t)r;
		if ((size_t)r < k * 8) {
			memset((char *)(ret + done) + r, 0,
			    (npages - done) * 8 - (size_t)r);
			return 0;
		}
		done += k;
	}
	return 0;
}

void
wss_idle_release(struct wss_idle *b)
{
	free(b->word);
	free(b->mask);
	free(b->bits);
	memset(b, 0, sizeof(*b));
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The words of pfn[0..n) (PFN 0 is "none": skipped), sorted, with masks. */
int
wss_idle_build(struct wss_idle *b, const uint64_t *pfn, size_t n)
{
	uint64_t *tmp;
	size_t i, k = 0;

	b->n = 0;
	if (n == 0)
		return 0;
	if ((tmp = malloc(n * sizeof(*tmp))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (pfn[i] != 0)
			tmp[k++] = pfn[i];
	qsort(tmp, k, sizeof(*tmp), cmp_u64);
	if (k > b->cap) {
		uint64_t *w = realloc(b->word, k * sizeof(*w));
		uint64_t *m = w ? realloc(b->mask, k * sizeof(*m)) : NULL;
		uint64_t *x = m ? realloc(b->bits, k * sizeof(*x)) : NULL;

		if (w)
			b->word = w;
		if (m)
			b->mask = m;
		if (x == NULL) {
			free(tmp);
			return -ENOMEM;
		}
		b->bits = x;
		b->cap = k;
	}
	for (i = 0; i < k; i++) {
		uint64_t w = tmp[i] / 64, bit = 1ULL << (tmp[i] % 64);

		if (b->n && b->word[b->n - 1] == w) {
			b->mask[b->n - 1] |= bit;
			continue;
		}
		b->word[b->n] = w;
		b->mask[b->n] = bit;
		b->bits[b->n] = 0;
		b->n++;
	}
	free(tmp);
	return 0;
}

/* The length of the run of consecutive words from i, cut at a batch. */
static size_t
run_len(const struct wss_idle *b, size_t i)
{
	size_t k = 1;

	while (i + k < b->n && k < WSS_RUN_WORDS &&
	    b->word[i + k] == b->word[i] + k)
		k++;
	return k;
}

/*
 * Writing a word sets "idle" on the PFNs whose bits are set and leaves the
 * others as they are: so only our bits are written, one pwrite per run.
 */
int
wss_idle_mark(int fd, const struct wss_idle *b, struct wss_io *io)
{
	size_t i = 0, k, j;
	ssize_t w;

	while (i < b->n) {
		k = run_len(b, i);
		/* mask[] is contiguous over the run: written as it is */
		for (j = 0; j < k * 8;) {
			w = pwrite(fd, (const char *)(b->mask + i) + j,
			    k * 8 - j, (off_t)(b->word[i] * 8 + j));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
			j += (size_t)w;
		}
		io->bm_writes++;
		io->bytes += k * 8;
		i += k;
	}
	return 0;
}

/* Read every word back into bits[]: a set bit is a page still idle. */
int
wss_idle_read(int fd, struct wss_idle *b, struct wss_io *io)
{
	size_t i = 0, k;
	ssize_t r;

	while (i < b->n) {
		k = run_len(b, i);
		r = pread_full(fd, b->bits + i, k * 8, (off_t)(b->word[i] * 8));
		io->bm_reads++;
		if (r < 0)
			return (int)r;
		if ((size_t)r != k * 8)
			return -EIO; /* a PFN beyond the bitmap */
		io->bytes += k * 8;
		i += k;
	}
	return 0;
}

/* 1 accessed, 0 idle, −1 unknown: PFN 0 or not one of this batch. */
int
wss_idle_state(const struct wss_idle *b, uint64_t pfn)
{
	uint64_t w = pfn / 64, bit = 1ULL << (pfn % 64);
	size_t lo = 0, hi = b->n, mid;

	if (pfn == 0)
		return -1;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (b->word[mid] < w)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == b->n || b->word[lo] != w || !(b->mask[lo] & bit))
		return -1;
	return (b->bits[lo] & bit) ? 0 : 1;
}
