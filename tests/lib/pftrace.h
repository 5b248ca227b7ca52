/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A Perfetto trace as the tests read it: decoded by protoc against
 * proto/perfetto_trace.proto (`protoc --decode perfetto.protos.Trace`),
 * its text parsed into the tracks and counter events, and the rules a
 * reader relies on checked (pf_check).
 */
#ifndef VITALS_TEST_PFTRACE_H
#define VITALS_TEST_PFTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pf_track {
	size_t at; /* packet index */
	uint64_t uuid, parent;
	char name[200];
	bool process, thread, counter;
	int32_t pid, tid;
	char pname[80]; /* process_name or thread_name */
	char unit[32];	/* "UNIT_TIME_NS", ...; "" none */
	int64_t mult;	/* unit_multiplier; 0 none */
};

struct pf_event {
	size_t at;
	uint64_t ts, track;
	uint32_t clock, seq, flags;
	char type[32]; /* "TYPE_COUNTER", ... */
	bool has_value;
	int64_t value;
	char name[64]; /* a slice's name; "" none */
	bool has_ret;  /* a debug annotation "ret" */
	int64_t ret;
};

struct pf_trace {
	struct pf_track *t;
	size_t nt;
	struct pf_event *e;
	size_t ne;
	size_t npackets;
	size_t nseq;	  /* packets with trusted_packet_sequence_id 1 */
	uint32_t flags0;  /* the first packet's sequence_flags */
	char primary[48]; /* the clock snapshot's primary_trace_clock */
	size_t clocks;	  /* clocks in it */
};

/* Decode file with protoc (its text kept in text_out when not NULL,
 * then freed by the caller); 0 or -1 with why. */
int pf_decode(const char *file, struct pf_trace *ret, char **text_out,
    char *why, size_t whylen);
void pf_free(struct pf_trace *t);
const struct pf_track *pf_track(const struct pf_trace *t, uint64_t uuid);
/* the counter track named name whose parent is parent (0: a root one) */
const struct pf_track *pf_child(const struct pf_trace *t, uint64_t parent,
    const char *name);
/* the process track of (pid, name) */
const struct pf_track *pf_process(const struct pf_trace *t, int32_t pid,
    const char *name);
/* the value of track at ts: 1 found, 0 none */
int pf_value(const struct pf_trace *t, uint64_t track, uint64_t ts,
    int64_t *ret);
size_t pf_count(const struct pf_trace *t, uint64_t track);
/* Every uuid once, every packet on sequence 1, the first one clearing
 * its state and naming REALTIME the trace's clock, every event after its
 * track's descriptor, a counter on a counter track, on REALTIME, stamps
 * non-decreasing per track: 0, or -1 with why. */
int pf_check(const struct pf_trace *t, char *why, size_t whylen);

#endif
