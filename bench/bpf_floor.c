/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bpf_floor OBJ: loads and attaches every program of a BPF object as is
 * (bpf/sched/sched_floor.bpf.c: the sched hooks with empty bodies), prints
 * "<section> <program id>" per program on stdout, then waits for SIGTERM or
 * SIGINT and detaches. bench/bpf_sched.sh reads the programs' run_cnt and
 * run_time_ns by id over the same ping-pong as the daemon's: the floor the
 * kernel's BPF statistics put under every run.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define FLOOR_LINKS 8

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int
main(int argc, char **argv)
{
	struct bpf_link *links[FLOOR_LINKS] = { 0 };
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_prog_info info;
	__u32 len;
	int n = 0, i, r = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: bpf_floor OBJ\n");
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	obj = bpf_object__open_file(argv[1], NULL);
	if (obj == NULL) {
		fprintf(stderr, "bpf_floor: %s: cannot open\n", argv[1]);
		return 1;
	}
	if (bpf_object__load(obj) != 0) {
		fprintf(stderr, "bpf_floor: %s: cannot load\n", argv[1]);
		goto out;
	}
	bpf_object__for_each_program(prog, obj)
	{
		if (n == FLOOR_LINKS)
			break;
		links[n] = bpf_program__attach(prog);
		if (links[n] == NULL) {
			fprintf(stderr, "bpf_floor: %s: cannot attach\n",
			    bpf_program__section_name(prog));
			goto out;
		}
		n++;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info,
			&len) != 0)
			goto out;
		printf("%s %u\n", bpf_program__section_name(prog), info.id);
	}
	fflush(stdout);
	while (!stop)
		pause();
	r = 0;
out:
	for (i = 0; i < n; i++)
		bpf_link__destroy(links[i]);
	bpf_object__close(obj);
	return r;
}
