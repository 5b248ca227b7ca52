/* SPDX-License-Identifier: Apache-2.0 */
/* vitalsd: parse options and config, set up, drop privileges, loop. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "core/log.h"
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
	    "usage: vitalsd [-fnv] [-c FILE] [--state-dir DIR] [--socket PATH]\n"
	    "               [--interval-ms N] [--window-s N] [--threads MODE]\n"
	    "               [--proc-root DIR] [--sys-root DIR]\n"
	    "               [--scanner auto|bpf|procfs]\n"
	    "               [--bpffs DIR] [--bpf-load auto|pinned-only|off]\n"
	    "               [--gpumem-map PATH] [--gpumem-load auto|map-only|off]\n"
	    "               [--perfetto PATH]\n"
	    "               [--user NAME] [--group NAME,...]\n"
	    "               [--capabilities CAP,...] [--seccomp on|off|log]\n"
	    "               [--privhelper on|off] [--prop-root DIR]\n"
	    "               [--store-spool-dir DIR|off] [--store-commit-s N]\n");
	exit(status);
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
		{ NULL, 0, NULL, 0 },
	};
	static const char *const keys[] = { NULL, "state_dir", "socket",
		"interval_ms", "window_s", "proc_root", "sys_root", "threads",
		"scanner", "bpffs", "bpf_load", "gpumem_map", "gpumem_load",
		"heapprofd_perfetto", "user", "group", "capabilities",
		"seccomp", "privhelper", "prop_root", "store_spool_dir",
		"store_commit_s" };
	const char *conffile = NULL, *set_key[32], *set_val[32];
	bool foreground = false, checkonly = false;
	int ch, nset = 0, verbose = 0, i, r;
	struct privhelper *helper = NULL;
	struct ph_spawner *spawner = NULL;
	struct privs_helpers helpers = { 0 }; /* handed to setup */
	struct privs_state pst;
	struct privs_req privs;
	struct vitalsd *d;
	struct config cfg;
	char err[512];

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
	/* The file first, then flags: the command line wins. */
	if (conffile && config_parse_file(&cfg, conffile, err, sizeof(err)) < 0)
		fatalx("%s", err);
	for (i = 0; i < nset; i++) {
		if ((r = config_set(&cfg, set_key[i], set_val[i])) < 0)
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
		return 0;
	}

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
	if (privs_drop(&privs, &pst) < 0) {
		/* what setup made goes, as far as what is left of the
		 * privileges allows (the instance is made inert if not) */
		vitalsd_free(d);
		privhelper_stop(helper);
		fatalx("privileges: not dropped, not running");
	}
	privs_log(&pst);
	r = vitalsd_run(d);
	vitalsd_free(d);
	privhelper_spawn_stop(spawner);
	privhelper_stop(helper);
	config_release(&cfg);
	log_info("stopped");
	return r < 0 ? 1 : 0;
}
