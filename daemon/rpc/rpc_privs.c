/* SPDX-License-Identifier: Apache-2.0 */
/* Health.privileges: the verified privilege state (privs.c) and the hidden
 * process count of the last window (proc_hidden.c). */
#include <errno.h>
#include <string.h>

#include "privs/privs.h"
#include "proc/proc.h"
#include "window/window.h"
#include "rpc_int.h"

/* Capability names of mask, in the arena; *ret_n set. */
static char **
pb_caps(struct rpc_arena *a, uint64_t mask, size_t *ret_n)
{
	char **v;
	size_t n = 0;
	unsigned cap;

	*ret_n = 0;
	for (cap = 0; cap < CAPS_MAX; cap++)
		n += (mask >> cap) & 1;
	ARRAY(a, v, n);
	n = 0;
	for (cap = 0; cap < CAPS_MAX; cap++) {
		const char *name = caps_name(cap);

		if (!((mask >> cap) & 1))
			continue;
		TRY(v[n++] = rpc_pb_str(a, name ? name : "?", 32));
	}
	*ret_n = n;
	return v;
}

Vitals__Privileges *
rpc_pb_privileges(struct rpc_arena *a, const struct window *last)
{
	struct privs_state st;
	Vitals__Privileges *m;
	uint32_t i;

	privs_get(&st);
	NEW(a, m, vitals__privileges__init);
	m->dropped = st.dropped;
	m->verified = st.verified;
	TRY(m->user = rpc_pb_str(a, st.user, sizeof(st.user)));
	m->uid = st.uid;
	m->gid = st.gid;
	ARRAY(a, m->groups, st.ngroups);
	for (i = 0; i < st.ngroups; i++)
		m->groups[i] = st.groups[i];
	m->n_groups = st.ngroups;
	if (st.cap_eff)
		TRY(m->capabilities = pb_caps(a, st.cap_eff,
			&m->n_capabilities));
	if (st.cap_bnd)
		TRY(m->bounding = pb_caps(a, st.cap_bnd, &m->n_bounding));
	if (st.cap_auto)
		TRY(m->auto_kept = pb_caps(a, st.cap_auto, &m->n_auto_kept));
	m->no_new_privs = st.no_new_privs;
	m->seccomp = (char *)privs_seccomp_name(st.seccomp);
	m->seccomp_syscalls = st.seccomp_rules;
	m->unseen_state = (char *)unseen_state_name(
	    last ? last->health.unseen_state : UNSEEN_NOT_REPORTED);
	m->procs_unseen = last ? last->health.procs_unseen : 0;
	return m;
}
