/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Memory lines of `vitals health`: the daemon's RSS as the kernel
 * splits it, then where its heap goes (Health.memory, doc/metrics.md).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "client.h"

/* The start-up pageout: what it gave back of the mapped files. */
static void
fmt_pageout(struct sbuf *o, const Vitals__MemoryHealth *m)
{
	static const char *const mode[] = { "off", "on", "random" };
	const double mib = 1024.0 * 1024.0;
	const char *md = m->pageout_mode < 3 ? mode[m->pageout_mode] : "?";
	uint64_t given;
	uint32_t passes;

	if (m->pageout_state == 0) {
		sbuf_printf(o, "  start-up pageout %s: not run\n", md);
		return;
	}
	if (m->pageout_state == 2) {
		sbuf_printf(o, "  start-up pageout %s: failed, errno %u\n", md,
		    m->pageout_errno);
		return;
	}
	/* a daemon from before the passes ran one and did not say so */
	if (m->pageout_passes == 0) {
		passes = 1;
		given = m->pageout_file_before_bytes >
			m->pageout_file_after_bytes ?
		    m->pageout_file_before_bytes - m->pageout_file_after_bytes :
		    0;
	} else {
		passes = m->pageout_passes;
		given = m->pageout_given_bytes;
	}
	sbuf_printf(o,
	    "  start-up pageout %s: %u pass%s gave back %.2f MiB in %.2f ms; "
	    "the last: file pages %.2f -> %.2f MiB, %u ranges of %.2f MiB "
	    "(%.2f unmapped, %u with pages of their own)",
	    md, passes, passes == 1 ? "" : "es", (double)given / mib,
	    (double)m->pageout_ns / 1e6,
	    (double)m->pageout_file_before_bytes / mib,
	    (double)m->pageout_file_after_bytes / mib, m->pageout_ranges,
	    (double)m->pageout_advised_bytes / mib,
	    (double)m->pageout_unmapped_bytes / mib, m->pageout_kept_ranges);
	if (m->pageout_failed)
		sbuf_printf(o, "; %u refused (errno %u)", m->pageout_failed,
		    m->pageout_errno);
	sbuf_puts(o, "\n");
	if (m->settle_passes || m->settle_failed) {
		sbuf_printf(o,
		    "  settling pageout: %u pass%s since the start gave back "
		    "%.2f MiB in %.2f ms",
		    m->settle_passes, m->settle_passes == 1 ? "" : "es",
		    (double)m->settle_given_bytes / mib,
		    (double)m->settle_ns / 1e6);
		if (m->settle_failed)
			sbuf_printf(o, "; %u refused", m->settle_failed);
		sbuf_puts(o, "\n");
	}
}

/* The daemon's own memory: the kernel's view, then its parts'. */
void
fmt_memory_health(struct sbuf *o, const Vitals__MemoryHealth *m)
{
	const double mib = 1024.0 * 1024.0;

	if (m == NULL)
		return;
	if (m->have_status & 1)
		sbuf_printf(o, "Memory: RSS %.1f MiB",
		    (double)m->rss_bytes / mib);
	else
		sbuf_puts(o, "Memory: RSS n/a");
	if (m->have_status & 2)
		sbuf_printf(o, " (peak %.1f)", (double)m->peak_rss_bytes / mib);
	if ((m->have_status & 28) == 28)
		sbuf_printf(o, ": anon %.1f, file %.1f, shmem %.1f",
		    (double)m->anon_bytes / mib, (double)m->file_bytes / mib,
		    (double)m->shmem_bytes / mib);
	if (m->have_status & 32)
		sbuf_printf(o, "; %u threads", m->threads);
	sbuf_printf(o,
	    "\n  SQLite %.1f MiB (peak %.1f); %u windows in memory %.1f MiB\n",
	    (double)m->sqlite_bytes / mib, (double)m->sqlite_peak_bytes / mib,
	    m->windows, (double)m->windows_bytes / mib);
	if (m->have_heap) {
		uint64_t parts = m->sqlite_bytes + m->windows_bytes +
		    m->tasks_bytes + m->ftrace_bytes + m->bpf_bytes +
		    m->names_bytes + m->read_cache_bytes + m->zstd_bytes;

		sbuf_printf(o,
		    "  heap %.2f MiB in use (%.2f mmapped), %.2f free kept:"
		    " SQLite %.2f (page cache %.2f), windows %.2f,"
		    " task table %.2f (%u tasks), ftrace %.2f, BPF %.2f,"
		    " names %.2f (%u), read caches %.2f, zstd %.2f,"
		    " other %.2f\n",
		    (double)m->heap_in_use_bytes / mib,
		    (double)m->heap_mmap_bytes / mib,
		    (double)m->heap_free_bytes / mib,
		    (double)m->sqlite_bytes / mib,
		    (double)m->sqlite_cache_bytes / mib,
		    (double)m->windows_bytes / mib,
		    (double)m->tasks_bytes / mib, m->tasks,
		    (double)m->ftrace_bytes / mib, (double)m->bpf_bytes / mib,
		    (double)m->names_bytes / mib, m->names,
		    (double)m->read_cache_bytes / mib,
		    (double)m->zstd_bytes / mib,
		    m->heap_in_use_bytes > parts ?
			(double)(m->heap_in_use_bytes - parts) / mib :
			0.0);
	}
	/* mappings of the daemon's own, outside the heap */
	sbuf_printf(o,
	    "  mapped: task iterator output %.2f MiB (file), ftrace drain"
	    " buffer %.2f MiB (anon)\n",
	    (double)m->taskiter_out_bytes / mib,
	    (double)m->ftrace_buffer_bytes / mib);
	if (m->have_status & 64)
		sbuf_printf(o,
		    "  program %.2f MiB resident (%.2f written: relocations,"
		    " data)",
		    (double)m->program_bytes / mib,
		    (double)m->program_dirty_bytes / mib);
	if (m->have_status & 128)
		sbuf_printf(o, "%slibraries %.2f MiB",
		    m->have_status & 64 ? ", " : "  ",
		    (double)m->libraries_bytes / mib);
	if (m->have_status & (64 | 128))
		sbuf_puts(o, "\n");
	/* a page n processes map counts 1/n: libc's, shared by all */
	if (m->have_status & 256)
		sbuf_printf(o,
		    "  PSS %.2f MiB, of it libraries %.2f (a page mapped by n"
		    " processes counts 1/n)\n",
		    (double)m->pss_bytes / mib,
		    (double)m->libraries_pss_bytes / mib);
	if (m->names_full)
		sbuf_printf(o,
		    "  names: %" PRIu64 " refused at the table's bound"
		    " (shown as their comm)\n",
		    m->names_full);
	if (m->trims)
		sbuf_printf(o, "  heap trims %u, %.2f MiB given back\n",
		    m->trims, (double)m->trimmed_bytes / mib);
	fmt_pageout(o, m);
}
