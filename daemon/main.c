/* SPDX-License-Identifier: Apache-2.0 */
/* vitalsd: parse options and config, set up, (later: drop privileges), loop. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vitalsd.h"

static void __attribute__((noreturn))
usage(int status)
{
	fprintf(status ? stderr : stdout,
	    "usage: vitalsd [-fnv] [-c FILE] [--state-dir DIR] [--socket PATH]\n"
	    "               [--interval-ms N] [--window-s N] [--threads MODE]\n"
	    "               [--proc-root DIR] [--sys-root DIR]\n"
	    "               [--scanner auto|bpf|procfs]\n"
	    "               [--bpffs DIR] [--bpf-load auto|pinned-only|off]\n"
	    "               [--gpumem-map PATH] [--gpumem-load auto|map-only|off]\n");
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
		{ NULL, 0, NULL, 0 },
	};
	static const char *const keys[] = { NULL, "state_dir", "socket",
		"interval_ms", "window_s", "proc_root", "sys_root", "threads",
		"scanner", "bpffs", "bpf_load", "gpumem_map", "gpumem_load" };
	const char *conffile = NULL, *set_key[16], *set_val[16];
	bool foreground = false, checkonly = false;
	int ch, nset = 0, verbose = 0, i, r;
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
		case 1: case 2: case 3: case 4: case 5: case 6: case 7:
		case 8: case 9: case 10: case 11: case 12:
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
	if ((r = vitalsd_setup(&cfg, foreground, &d)) < 0)
		fatalx("setup failed: %s", strerror(-r));
	/* Privileges are dropped here once setup needs none after it. */
	r = vitalsd_run(d);
	vitalsd_free(d);
	config_release(&cfg);
	log_info("stopped");
	return r < 0 ? 1 : 0;
}
