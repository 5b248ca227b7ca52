/* SPDX-License-Identifier: Apache-2.0 */
/* vitalsd: parse options and config, set up, drop privileges, loop. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "config/config_reload.h"
#include "core/compat.h"
#include "core/log.h"
#include "core/sdnotify.h"
#include "core/util.h"
#include "daemon.h"
#include "hp/hp.h"
#include "privs/privs.h"
#include "trace/trace.h"

/* clang-format off */
static void __attribute__((noreturn))
usage(int status)
/* clang-format on */
{
	fprintf(status ? stderr : stdout,
	    "usage: vitalsd [-fnv] [-c FILE] [--version] [--state-dir DIR]\n"
	    "               [--socket PATH]\n"
	    "               [--interval-ms N] [--window-s N] [--threads MODE]\n"
	    "               [--proc-root DIR] [--sys-root DIR]\n"
	    "               [--scanner auto|bpf|procfs] [--full-walk-s N]\n"
	    "               [--bpffs DIR] [--bpf-load auto|pinned-only|off]\n"
	    "               [--gpumem-map PATH] [--gpumem-load auto|map-only|off]\n"
	    "               [--perfetto PATH]\n"
	    "               [--user NAME] [--group NAME,...]\n"
	    "               [--capabilities CAP,...] [--seccomp on|off|log]\n"
	    "               [--privhelper on|off] [--prop-root DIR]\n"
	    "               [--store-spool-dir DIR|off] [--store-commit-s N]\n"
	    "               [--metrics-listen ADDR|off]\n"
	    "               [--otlp-endpoint URL|off]\n");
	exit(status);
}

/* What this binary is: its version and the parts built in. */
static void __attribute__((noreturn)) version(void)
{
	printf("vitalsd %s (bpf: %s, ftrace: %s)\n", VITALS_VERSION,
#if defined(HAVE_BPF_CORE)
	    "co-re"
#elif defined(HAVE_BPF)
	    "pinned-only"
#else
	    "off"
#endif
	    ,
	    ftrace_built() ? "on" : "off");
	exit(0);
}

/*
 * SIGHUP: the file read anew, the command line over it again, checked as
 * a start checks it; each changed key the running daemon takes is
 * applied, every other one is refused with a log line and stays as it
 * was until a restart (doc/vitalsd.8.md, "Reload").
 */
struct reload_ctx {
	const struct config *start; /* what main parsed (its command line) */
	struct config_src *run;	    /* the settings the daemon runs with */
};

static void
reload(struct vitalsd *d, void *arg)
{
	struct reload_ctx *rc = arg;
	struct vitalsd_reload *st = vitalsd_reload_state(d);
	struct config_change ch[CONFIG_CHANGES_MAX];
	unsigned applied = 0, refused = 0;
	struct config cfg;
	char err[512];
	size_t i, n;

	st->reloads++;
	st->last_wall_ns = clock_ns(CLOCK_REALTIME);
	if (config_reread(rc->start, &cfg, err, sizeof(err)) < 0) {
		st->failed++;
		log_warnx("reload: %s; configuration unchanged", err);
		snprintf(st->last, sizeof(st->last), "refused: %.400s", err);
		config_release(&cfg);
		return;
	}
	n = config_changes(rc->run, &cfg, ch, CONFIG_CHANGES_MAX);
	for (i = 0; i < n && i < CONFIG_CHANGES_MAX; i++) {
		const char *now = ch[i].now ? ch[i].now : "(default)";
		const char *was = ch[i].was ? ch[i].was : "(default)";

		/* was points into rc->run: said before run takes the key */
		if (ch[i].reloadable &&
		    vitalsd_apply(d, &cfg, ch[i].key) == 0) {
			log_info("reload: %s = %s (was %s)", ch[i].key, now,
			    was);
			if (config_src_take(rc->run, &cfg, ch[i].key) < 0)
				log_warnx("reload: %s: %s", ch[i].key,
				    strerror(ENOMEM));
			applied++;
		} else {
			log_warnx("reload: %s = %s needs a restart; still %s",
			    ch[i].key, now, was);
			refused++;
		}
	}
	if (n > CONFIG_CHANGES_MAX) {
		log_warnx("reload: %zu more changed keys not applied",
		    n - CONFIG_CHANGES_MAX);
		refused += (unsigned)(n - CONFIG_CHANGES_MAX);
	}
	st->applied += applied;
	st->refused += refused;
	snprintf(st->last, sizeof(st->last),
	    "%u changed keys applied, %u need a restart", applied, refused);
	log_info("reload: %s", st->last);
	config_release(&cfg);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "state-dir", required_argument, NULL, 1 },
		{ "socket", required_argument, NULL, 2 },
		{ "interval-ms", required_argument, NULL, 3 },
		{ "window-s", required_argument, NULL, 4 },
		{ "proc-root", required_argument, NULL, 5 },
		{ "sys-root", required_argument, NULL, 6 },
		{ "threads", required_argument, NULL, 7 },
		{ "scanner", required_argument, NULL, 8 },
		{ "bpffs", required_argument, NULL, 9 },
		{ "bpf-load", required_argument, NULL, 10 },
		{ "gpumem-map", required_argument, NULL, 11 },
		{ "gpumem-load", required_argument, NULL, 12 },
		{ "perfetto", required_argument, NULL, 13 },
		/* privileges (privs.c) */
		{ "user", required_argument, NULL, 14 },
		{ "group", required_argument, NULL, 15 },
		{ "capabilities", required_argument, NULL, 16 },
		{ "seccomp", required_argument, NULL, 17 },
		{ "privhelper", required_argument, NULL, 18 },
		/* system properties (sysprop.c): the host double */
		{ "prop-root", required_argument, NULL, 19 },
		/* batched commits (store_spool.c) */
		{ "store-spool-dir", required_argument, NULL, 20 },
		{ "store-commit-s", required_argument, NULL, 21 },
		/* the OpenMetrics endpoint (export/) */
		{ "metrics-listen", required_argument, NULL, 22 },
		/* OTLP push (export/otlp_push.c) */
		{ "otlp-endpoint", required_argument, NULL, 23 },
		/* event-driven process samples (proc_scan_iter.c) */
		{ "full-walk-s", required_argument, NULL, 24 },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const keys[] = { NULL, "state_dir", "socket",
		"interval_ms", "window_s", "proc_root", "sys_root", "threads",
		"scanner", "bpffs", "bpf_load", "gpumem_map", "gpumem_load",
		"heapprofd_perfetto", "user", "group", "capabilities",
		"seccomp", "privhelper", "prop_root", "store_spool_dir",
		"store_commit_s", "metrics_listen", "otlp_endpoint",
		"full_walk_s" };
	const char *conffile = NULL, *set_key[32], *set_val[32];
	bool foreground = false, checkonly = false;
	int ch, nset = 0, verbose = 0, i, r;
	struct privhelper *helper = NULL;
	struct ph_spawner *spawner = NULL;
	struct privs_helpers helpers = { 0 }; /* handed to setup */
	struct privs_state pst;
	struct privs_req privs;
	struct vitalsd *d;
	struct reload_ctx rc = { 0 };
	struct config cfg;
	char err[512], *conffile_abs = NULL;
	int notify_fd = -1;

	compat_heap_setup(); /* before any thread: one arena (compat.h) */
	while ((ch = getopt_long(argc, argv, "fc:nvh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			foreground = true;
			break;
		case 'c':
			conffile = optarg;
			break;
		case 'n':
			checkonly = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(0);
		case 'V':
			version();
		case 1:
		case 2:
		case 3:
		case 4:
		case 5:
		case 6:
		case 7:
		case 8:
		case 9:
		case 10:
		case 11:
		case 12:
		case 13:
		case 14:
		case 15:
		case 16:
		case 17:
		case 18:
		case 19:
		case 20:
		case 21:
		case 22:
		case 23:
		case 24:
			if (nset == (int)(sizeof(set_key) / sizeof(set_key[0])))
				usage(1);
			set_key[nset] = keys[ch];
			set_val[nset++] = optarg;
			break;
		default:
			usage(1);
		}
	}
	if (optind != argc)
		usage(1);

	log_init(true, verbose, "vitalsd");
	config_init(&cfg);
	/* The file first, then flags: the command line wins. Its absolute
	 * path is what a reload reads (a daemon's working directory is /). */
	if (conffile && (conffile_abs = realpath(conffile, NULL)) != NULL)
		conffile = conffile_abs;
	if (conffile && config_parse_file(&cfg, conffile, err, sizeof(err)) < 0)
		fatalx("%s", err);
	for (i = 0; i < nset; i++) {
		if ((r = config_set_cli(&cfg, set_key[i], set_val[i])) < 0)
			fatalx("--%s %s: %s", set_key[i], set_val[i],
			    r == -ERANGE ? "out of range" : "invalid value");
	}
	cfg.verbose = verbose;
	if (config_check(&cfg, err, sizeof(err)) < 0)
		fatalx("configuration: %s", err);
	if (privs_resolve(cfg.user, cfg.groups, cfg.keep_caps, cfg.seccomp,
		&privs, err, sizeof(err)) < 0)
		fatalx("configuration: %s", err);
	if (cfg.seccomp == PRIVS_SECCOMP_ON && cfg.hp->perfetto &&
	    !cfg.privhelper)
		log_warnx(
		    "heapprofd: seccomp on refuses fork and execve and "
		    "privhelper is off: sessions will be refused (spawn state "
		    "'%s'); --privhelper on runs perfetto through its spawner",
		    hp_spawn_state_name(HP_SPAWN_BLOCKED));
	if (checkonly) {
		fprintf(stderr, "configuration OK\n");
		config_release(&cfg);
		free(conffile_abs);
		return 0;
	}
	/* systemd's notify socket, while its path is reachable (root) */
	if ((notify_fd = sdnotify_open()) < -1)
		log_warnx("NOTIFY_SOCKET: %s; no readiness notification",
		    strerror(-notify_fd));

	if (!foreground) {
		/* systemd's LISTEN_PID names this process; after the fork the
		 * inherited socket belongs to the child, so say so. */
		const char *lp = getenv("LISTEN_PID");
		bool ours = lp && strtol(lp, NULL, 10) == (long)getpid();
		char pid[24];

		if (daemon(0, 0) < 0)
			fatal("daemon");
		if (ours) {
			snprintf(pid, sizeof(pid), "%ld", (long)getpid());
			setenv("LISTEN_PID", pid, 1);
		}
		log_init(false, verbose, "vitalsd");
	}
	/* The helper is forked while this process has one thread and all
	 * its privileges (privhelper.c). */
	if (cfg.privhelper) {
		char tracefs[4096];

		/* the tracefs ftrace.c will use (libtracefs finds the
		 * mount when none is configured) */
		if ((r = ftrace_tracing_dir(cfg.tracefs, cfg.sys_root, tracefs,
			 sizeof(tracefs))) < 0)
			fatalx("privileged helper: tracefs: %s", strerror(-r));
		if ((r = privhelper_start(cfg.proc_root, cfg.sys_root, tracefs,
			 &helper)) < 0)
			fatalx("privileged helper: %s", strerror(-r));
		helpers.ph = helper;
		log_info("privileged helper: pid %d",
		    (int)privhelper_pid(helper));
		/* its spawner runs perfetto for heapprofd sessions outside
		 * the daemon's filter; without it sessions are refused,
		 * the daemon runs on (Health.heapprofd.spawn) */
		if (cfg.hp->perfetto) {
			r = privhelper_spawn_start(cfg.hp->perfetto, &privs,
			    &spawner);
			if (r < 0)
				log_warnx("privileged helper: spawner for %s: "
					  "%s",
				    cfg.hp->perfetto, strerror(-r));
			else
				log_info("privileged helper: spawner pid %d",
				    (int)privhelper_spawn_pid(spawner));
			helpers.sp = spawner;
			helpers.sp_err = r;
		}
	}
	/* State-directory work runs as the service user (statedir.c). */
	statedir_set_owner(&privs);
	/* A failed setup undoes itself: instance, socket, threads. */
	if ((r = vitalsd_setup(&cfg, foreground, &helpers, &d)) < 0) {
		privhelper_stop(helper);
		fatalx("setup failed: %s", strerror(-r));
	}
	/* Setup needs no privilege after this; the files it made in the
	 * state directory are already the service user's (doc/privileges.md). */
	privs.need_bpf = vitalsd_uses_bpf(d);
	privs.need_inet = cfg.otlp_endpoint != NULL;
	/* still the files' owner: after the drop it gives back nothing */
	vitalsd_pageout(d);
	if (privs_drop(&privs, &pst) < 0) {
		/* what setup made goes, as far as what is left of the
		 * privileges allows (the instance is made inert if not) */
		vitalsd_free(d);
		privhelper_stop(helper);
		fatalx("privileges: not dropped, not running");
	}
	privs_log(&pst);
	rc.start = &cfg;
	if ((rc.run = config_src_dup(&cfg)) != NULL)
		vitalsd_on_reload(d, reload, &rc);
	else
		log_warnx("reload: %s: SIGHUP will be ignored",
		    strerror(ENOMEM));
	vitalsd_set_notify(d, notify_fd);
	r = vitalsd_run(d);
	vitalsd_free(d);
	config_src_free(rc.run);
	if (notify_fd >= 0)
		close(notify_fd);
	free(conffile_abs);
	privhelper_spawn_stop(spawner);
	privhelper_stop(helper);
	config_release(&cfg);
	log_info("stopped");
	return r < 0 ? 1 : 0;
}
