/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Signals and reload: SIGTERM/SIGINT stop the loop, SIGHUP rereads the
 * configuration (vitalsd_on_reload, vitalsd_apply), SIGUSR1 starts a
 * burst, SIGUSR2 logs the last window; systemd's notify socket.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include <event2/event.h>

#include "burst/burst.h"
#include "config/config.h"
#include "syscalls/sc_collect.h"
#include "control/control.h"
#include "core/log.h"
#include "core/sdnotify.h"
#include "core/util.h"
#include "daemon.h"
#include "export/export.h"
#include "export/otlp.h"
#include "gpumem/gpumem.h"
#include "hp/hp.h"
#include "rpc/rpc.h"
#include "store/store.h"
#include "trace/trace.h"
#include "window/collector.h"
#include "window/window.h"
#include "wss/wss.h"
#include "daemon_int.h"

void
vitalsd_on_reload(struct vitalsd *d, void (*fn)(struct vitalsd *, void *),
    void *arg)
{
	d->reload_fn = fn;
	d->reload_arg = arg;
}

struct vitalsd_reload *
vitalsd_reload_state(struct vitalsd *d)
{
	return &d->reload;
}

void
vitalsd_set_notify(struct vitalsd *d, int fd)
{
	d->notify_fd = fd;
}

int
vitalsd_apply(struct vitalsd *d, const struct config *cfg, const char *key)
{
	if (strcmp(key, "bpf_procs") == 0) {
		d->bpf_procs = cfg->bpf_procs;
		return 0;
	}
	if (strcmp(key, "bpf_threads") == 0) {
		d->bpf_threads = cfg->bpf_threads;
		return 0;
	}
	if (strncmp(key, "syscall", 7) == 0) {
		/* a changed set or threshold into the maps, no re-attach;
		 * on -> off detaches (off -> on needs the privileges of a
		 * start: refused, -ENOTSUP) */
		/* a drain running on the worker ends first */
		sc_async_stop(d);
		if (!cfg->syscalls.on) {
			sc_free(d->sc);
			d->sc = NULL;
			d->sc_state = SC_OFF;
			d->sc_err = 0;
			return 0;
		}
		if (d->sc == NULL)
			return -ENOTSUP;
		if (strcmp(key, "syscall_rb_kib") == 0)
			return -ENOTSUP;
		return sc_reconfig(d->sc, &cfg->syscalls);
	}
	if (strcmp(key, "trusted_uids") == 0 ||
	    strcmp(key, "trusted_gids") == 0 ||
	    strcmp(key, "reader_uids") == 0 ||
	    strcmp(key, "reader_gids") == 0 || strcmp(key, "shell_uid") == 0 ||
	    strcmp(key, "system_uid") == 0) {
		if (d->ctl)
			control_set_roles(d->ctl, cfg);
		return 0;
	}
	return -ENOTSUP;
}

void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct vitalsd *d = arg;
	const struct window *w;
	struct vbuf b = { 0 };

	(void)what;
	switch (sig) {
	case SIGTERM:
	case SIGINT:
		log_info("signal %d: stopping", (int)sig);
		(void)sdnotify_send(d->notify_fd, "STOPPING=1");
		event_base_loopbreak(d->base);
		break;
	case SIGHUP:
		/* a lost terminal never stops an init-started daemon */
		if (d->reload_fn == NULL) {
			log_info("SIGHUP: no configuration to reread");
			break;
		}
		(void)sdnotify_send(d->notify_fd, "RELOADING=1");
		d->reload_fn(d, d->reload_arg);
		(void)sdnotify_send(d->notify_fd, "READY=1");
		break;
	case SIGUSR1:
		vitalsd_burst(d, VITALS_BURST_MAX_MS);
		break;
	case SIGUSR2:
		if ((w = collector_window(d->col, 0)) == NULL) {
			log_info("no closed window yet");
			break;
		}
		if (dump_window(w, 20, &b) == 0 && b.p) {
			char *line, *save = NULL;

			/* One record per line: a log record is cut at 1 KiB
			 * (and syslog, logd cut theirs), a dump is longer. */
			log_info("dump:");
			for (line = strtok_r(b.p, "\n", &save); line != NULL;
			     line = strtok_r(NULL, "\n", &save))
				log_info("  %s", line);
		}
		vbuf_release(&b);
		break;
	default:
		break;
	}
}
