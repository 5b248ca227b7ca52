/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sched_switch accounting (bpf/sched/sched.bpf.c) from userspace, setup
 * half: find, check and reuse its pins, or load, attach and pin it
 * (sched_drain.c drains it per window). doc/bpf.md explains the maps,
 * the drain protocol and the pin layout.
 *
 * Setup (bpf_sched_open) is the privileged part; once it returns, the
 * daemon holds plain map and program fds and needs no privilege. Library
 * code: nothing here logs; a failure comes back as a state, an -errno and
 * a sentence for the caller's one log line.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/bpf_child.h"
#include "core/bpf_common.h"
#include "core/util.h"
#include "sched/sched.h"

#ifdef HAVE_BPF
#include <linux/capability.h>

#include "sched_int.h"
/* The CO-RE object; without it (an Android build) only pinned-only on the
 * platform loader's pins (sched_ldr.c) is possible. */
#ifdef HAVE_BPF_CORE
#include "sched.skel.h"
#endif

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static const char *const map_names[SM__MAX] = {
	"sched_ctl",
	"sched_meta",
	"sched_barrier",
	"sched_task",
	"sched_tot",
	"sched_tid0",
	"sched_tid1",
	"sched_proc0",
	"sched_proc1",
	"sched_uid0",
	"sched_uid1",
	"sched_scale",
	"sched_slot0",
	"sched_slot1",
	"sched_nslot",
};

/* Programs in the order of window_bpf.prog_* (vbpf_prog_name). */
static const struct {
	const char *fn, *sec;
} progs[VITALS_BPF_PROGS] = {
	{ "vitals_switch", "tp_btf/sched_switch" },
	{ "vitals_wakeup", "tp_btf/sched_wakeup" },
	{ "vitals_wakeup_new", "tp_btf/sched_wakeup_new" },
	{ "vitals_free", "tp_btf/sched_process_free" },
};

/* What the pins under bpffs are, next to this build. */
enum pins {
	PINS_NONE,     /* nothing of ours */
	PINS_MATCH,    /* same layout, same programs: reuse all */
	PINS_STALE,    /* same layout, other programs: keep maps, reload */
	PINS_MISMATCH, /* another layout or a partial set: replace */
};

static int
pin_path(const struct bpf_sched *bs, const char *kind, const char *name,
    char *buf, size_t sz)
{
	return bpf_pin_path(bs->bpffs, kind, name, buf, sz);
}

static int
open_pin(const struct bpf_sched *bs, const char *kind, const char *name)
{
	char path[PATH_MAX];
	int fd, r;

	if ((r = pin_path(bs, kind, name, path, sizeof(path))) < 0)
		return r;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

#ifdef HAVE_BPF_CORE
static bool
pin_exists(const struct bpf_sched *bs, const char *kind, const char *name)
{
	char path[PATH_MAX];
	struct stat sb;

	if (pin_path(bs, kind, name, path, sizeof(path)) < 0)
		return false;
	return lstat(path, &sb) == 0;
}

#endif /* HAVE_BPF_CORE */

static int
unpin(const char *bpffs, const char *kind, const char *name)
{
	char path[PATH_MAX];
	int r;

	if ((r = bpf_pin_path(bpffs, kind, name, path, sizeof(path))) < 0)
		return r;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* Remove every pin of ours (and only ours: the directory is shared). */
int
bpf_sched_unpin(const char *bpffs)
{
	unsigned i;
	int r, first = 0;

	/* links first: that detaches the programs before their maps go */
	for (i = 0; i < VITALS_BPF_PROGS; i++)
		if ((r = unpin(bpffs, "link", progs[i].sec)) < 0 && !first)
			first = r;
	for (i = 0; i < VITALS_BPF_PROGS; i++)
		if ((r = unpin(bpffs, "prog", progs[i].sec)) < 0 && !first)
			first = r;
	for (i = 0; i < SM__MAX; i++)
		if ((r = unpin(bpffs, "map", map_names[i])) < 0 && !first)
			first = r;
	return first;
}

static void
close_fds(struct bpf_sched *bs)
{
	unsigned i;

	for (i = 0; i < SM__MAX; i++) {
		if (bs->map_fd[i] >= 0)
			close(bs->map_fd[i]);
		bs->map_fd[i] = -1;
	}
	for (i = 0; i < VITALS_BPF_PROGS; i++) {
		if (bs->prog_fd[i] >= 0)
			close(bs->prog_fd[i]);
		bs->prog_fd[i] = -1;
	}
}

#ifdef HAVE_BPF_CORE
/* ---------------------------------------------------------- privilege */

static bool
have_cap(unsigned cap)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return true; /* cannot tell: let the kernel decide */
	return (d[cap / 32].effective & (1u << (cap % 32))) != 0;
}

/* Loading tracing programs: CAP_BPF with CAP_PERFMON, or CAP_SYS_ADMIN. */
static bool
may_load(void)
{
	return have_cap(CAP_SYS_ADMIN) ||
	    (have_cap(CAP_BPF) && have_cap(CAP_PERFMON));
}

/* ------------------------------------------------------------ the skel */

static struct bpf_map *
skel_map(struct vitals_sched *skel, unsigned i)
{
	return bpf_object__find_map_by_name(skel->obj, map_names[i]);
}

static struct bpf_program *
skel_prog(struct vitals_sched *skel, unsigned i)
{
	return bpf_object__find_program_by_name(skel->obj, progs[i].fn);
}

static uint64_t
fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	while (n--) {
		h ^= *s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The object's bytes and its settings: equal builds load equal programs. */
static uint64_t
build_hash(struct vitals_sched *skel)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const void *elf;
	unsigned i;
	size_t sz;

	elf = vitals_sched__elf_bytes(&sz);
	h = fnv1a(h, elf, sz);
	h = fnv1a(h, (const void *)skel->rodata, sizeof(*skel->rodata));
	for (i = 0; i < SM__MAX; i++) {
		uint32_t n = bpf_map__max_entries(skel_map(skel, i));

		h = fnv1a(h, &n, sizeof(n));
	}
	return h;
}

/* ---------------------------------------------------------- the pins */

static enum pins
examine(struct bpf_sched *bs, struct vitals_sched *skel, uint64_t build,
    char *why, size_t whysz)
{
	unsigned i, found = 0, missing = 0;
	struct sched_meta meta;
	uint32_t zero = 0;
	int fd;

	for (i = 0; i < SM__MAX; i++) {
		fd = open_pin(bs, "map", map_names[i]);
		if (fd >= 0) {
			bs->map_fd[i] = fd;
			found++;
		} else if (fd == -ENOENT) {
			missing++;
		} else {
			snprintf(why, whysz, "map %s: %s", map_names[i],
			    strerror(-fd));
			return PINS_MISMATCH;
		}
	}
	if (found == 0) {
		for (i = 0; i < VITALS_BPF_PROGS; i++)
			if (pin_exists(bs, "prog", progs[i].sec) ||
			    pin_exists(bs, "link", progs[i].sec)) {
				snprintf(why, whysz,
				    "programs pinned "
				    "without their maps");
				return PINS_MISMATCH;
			}
		return PINS_NONE;
	}
	if (missing) {
		snprintf(why, whysz, "%u of %u map pins missing", missing,
		    (unsigned)SM__MAX);
		return PINS_MISMATCH;
	}
	for (i = 0; i < SM__MAX; i++) {
		struct bpf_map *m = skel_map(skel, i);
		struct bpf_map_info info;
		uint32_t len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(bs->map_fd[i], &info, &len) < 0) {
			snprintf(why, whysz, "map %s: %s", map_names[i],
			    strerror(errno));
			return PINS_MISMATCH;
		}
		if (info.type != bpf_map__type(m) ||
		    info.key_size != bpf_map__key_size(m) ||
		    info.value_size != bpf_map__value_size(m) ||
		    info.max_entries != bpf_map__max_entries(m) ||
		    info.map_flags != bpf_map__map_flags(m)) {
			snprintf(why, whysz,
			    "map %s is type %u, key %u, "
			    "value %u, entries %u, flags %#x; this build "
			    "wants %u, %u, %u, %u, %#x",
			    map_names[i], info.type, info.key_size,
			    info.value_size, info.max_entries, info.map_flags,
			    bpf_map__type(m), bpf_map__key_size(m),
			    bpf_map__value_size(m), bpf_map__max_entries(m),
			    bpf_map__map_flags(m));
			return PINS_MISMATCH;
		}
	}
	if (bpf_map_lookup_elem(bs->map_fd[SM_META], &zero, &meta) < 0) {
		snprintf(why, whysz, "map sched_meta: %s", strerror(errno));
		return PINS_MISMATCH;
	}
	bs->pinned_flags = meta.flags;
	if (meta.magic != VITALS_SCHED_MAGIC ||
	    meta.layout != VITALS_SCHED_LAYOUT) {
		snprintf(why, whysz,
		    "layout %u (magic %#x), this build "
		    "reads layout %u",
		    meta.layout, meta.magic, VITALS_SCHED_LAYOUT);
		return PINS_MISMATCH;
	}
	for (i = 0; i < VITALS_BPF_PROGS; i++)
		if (!pin_exists(bs, "link", progs[i].sec)) {
			snprintf(why, whysz, "link %s not pinned",
			    progs[i].sec);
			return PINS_STALE;
		}
	if (meta.build != build) {
		snprintf(why, whysz,
		    "programs of another build (%016llx, "
		    "this one %016llx)",
		    (unsigned long long)meta.build, (unsigned long long)build);
		return PINS_STALE;
	}
	return PINS_MATCH;
}

/* ------------------------------------------------------------ loading */

/* libbpf's messages during a load: the verifier's verdict is kept. */
static libbpf_print_fn_t prev_print;
static char verdict[256];
static bool prog_failed;

static int
capture_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char msg[4096];
	const char *end, *line;
	va_list cp;

	va_copy(cp, ap);
	vsnprintf(msg, sizeof(msg), fmt, cp);
	va_end(cp);
	if (strstr(msg, "program load failed") != NULL)
		prog_failed = true;
	/* the verifier's last word, before its statistics, says why */
	if ((end = strstr(msg, "-- END PROG LOAD LOG --")) != NULL) {
		for (;;) {
			while (end > msg && (end[-1] == '\n' || end[-1] == ' '))
				end--;
			line = end;
			while (line > msg && line[-1] != '\n')
				line--;
			if (line == msg ||
			    (strncmp(line, "processed ", 10) &&
				strncmp(line, "verification time", 17) &&
				strncmp(line, "stack depth", 11)))
				break;
			end = line;
		}
		snprintf(verdict, sizeof(verdict), "%.*s", (int)(end - line),
		    line);
	}
	return prev_print ? prev_print(level, fmt, ap) : 0;
}

static unsigned
load_state(int err)
{
	if (err == -EPERM)
		return VBPF_OFF_NO_PRIV;
	if (prog_failed && err != -ENOMEM)
		return VBPF_OFF_VERIFIER;
	return VBPF_OFF_ERROR;
}

static int
write_meta(struct bpf_sched *bs, uint64_t build)
{
	struct sched_meta meta = {
		.magic = VITALS_SCHED_MAGIC,
		.layout = VITALS_SCHED_LAYOUT,
		.build = build,
		.loaded_ns = (uint64_t)clock_ns(CLOCK_REALTIME),
		.flags = bs->meta_flags,
	};
	uint32_t zero = 0;

	if (bpf_map_update_elem(bs->map_fd[SM_META], &zero, &meta, BPF_ANY) < 0)
		return -errno;
	return 0;
}

static int
dup_fd(int fd)
{
	int n = fcntl(fd, F_DUPFD_CLOEXEC, 3);

	return n < 0 ? -errno : n;
}

/*
 * Load and attach the object; with reuse, into the maps already open in
 * bs (the old programs are detached first: a switch in between is not
 * counted, none is counted twice). Pins everything new, meta last, so an
 * interrupted load is seen as a mismatch at the next start.
 */
static int
load(struct bpf_sched *bs, struct vitals_sched *skel, bool reuse,
    uint64_t build, unsigned *ret_state, char *why, size_t whysz)
{
	char path[PATH_MAX];
	unsigned i;
	int r;

	for (i = 0; reuse && i < SM__MAX; i++)
		if ((r = bpf_map__reuse_fd(skel_map(skel, i), bs->map_fd[i])) <
		    0) {
			snprintf(why, whysz, "reuse map %s: %s", map_names[i],
			    strerror(-r));
			goto fail;
		}
	verdict[0] = '\0';
	prog_failed = false;
	prev_print = libbpf_set_print(capture_print);
	r = vitals_sched__load(skel);
	libbpf_set_print(prev_print);
	if (r < 0) {
		r = r == -1 ? -errno : r;
		*ret_state = load_state(r);
		snprintf(why, whysz, "load: %s%s%s", strerror(-r),
		    verdict[0] ? ": " : "", verdict);
		return r;
	}
	for (i = 0; i < VITALS_BPF_PROGS; i++) {
		(void)unpin(bs->bpffs, "link", progs[i].sec);
		(void)unpin(bs->bpffs, "prog", progs[i].sec);
	}
	if ((r = vitals_sched__attach(skel)) < 0) {
		r = r == -1 ? -errno : r;
		*ret_state = r == -EPERM ? VBPF_OFF_NO_PRIV : VBPF_OFF_ERROR;
		snprintf(why, whysz, "attach: %s", strerror(-r));
		return r;
	}
	for (i = 0; !reuse && i < SM__MAX; i++) {
		if ((r = pin_path(bs, "map", map_names[i], path,
			 sizeof(path))) < 0 ||
		    (r = bpf_map__pin(skel_map(skel, i), path)) < 0) {
			snprintf(why, whysz, "pin map %s: %s", map_names[i],
			    strerror(-r));
			goto fail;
		}
	}
	for (i = 0; i < VITALS_BPF_PROGS; i++) {
		struct bpf_link *l[VITALS_BPF_PROGS] = {
			skel->links.vitals_switch,
			skel->links.vitals_wakeup,
			skel->links.vitals_wakeup_new,
			skel->links.vitals_free,
		};

		if ((r = pin_path(bs, "prog", progs[i].sec, path,
			 sizeof(path))) < 0 ||
		    (r = bpf_program__pin(skel_prog(skel, i), path)) < 0 ||
		    (r = pin_path(bs, "link", progs[i].sec, path,
			 sizeof(path))) < 0 ||
		    (r = bpf_link__pin(l[i], path)) < 0) {
			snprintf(why, whysz, "pin %s: %s", progs[i].sec,
			    strerror(-r));
			goto fail;
		}
	}
	for (i = 0; !reuse && i < SM__MAX; i++)
		if ((bs->map_fd[i] = dup_fd(bpf_map__fd(skel_map(skel, i)))) <
		    0) {
			r = bs->map_fd[i];
			snprintf(why, whysz, "dup: %s", strerror(-r));
			goto fail;
		}
	for (i = 0; i < VITALS_BPF_PROGS; i++)
		if ((bs->prog_fd[i] = dup_fd(
			 bpf_program__fd(skel_prog(skel, i)))) < 0) {
			r = bs->prog_fd[i];
			snprintf(why, whysz, "dup: %s", strerror(-r));
			goto fail;
		}
	if ((r = write_meta(bs, build)) < 0) {
		snprintf(why, whysz, "meta: %s", strerror(-r));
		goto fail;
	}
	return 0;
fail:
	*ret_state = VBPF_OFF_ERROR;
	/* a half-pinned set must not look like ours at the next start */
	if (!reuse)
		(void)bpf_sched_unpin(bs->bpffs);
	return r;
}

#endif /* HAVE_BPF_CORE */

/* The pin directory: made when missing, but only directly on a bpffs. */
static int
prepare_dir(const char *dir, bool create, char *why, size_t whysz)
{
	char parent[PATH_MAX], *slash;
	int r;

	if ((r = bpf_check_bpffs(dir)) == 0)
		return 0;
	if (r != -ENOENT || !create) {
		snprintf(why, whysz, "%s: %s", dir,
		    r == -EMEDIUMTYPE ? "not on a bpf filesystem" :
					strerror(-r));
		return r;
	}
	if (snprintf(parent, sizeof(parent), "%s", dir) >= (int)sizeof(parent))
		return -ENAMETOOLONG;
	if ((slash = strrchr(parent, '/')) != NULL && slash != parent)
		*slash = '\0';
	if ((r = bpf_check_bpffs(parent)) < 0) {
		snprintf(why, whysz, "%s: %s", parent,
		    r == -EMEDIUMTYPE ? "not on a bpf filesystem" :
					strerror(-r));
		return r;
	}
	if (mkdir(dir, 0750) < 0 && errno != EEXIST) {
		r = -errno;
		snprintf(why, whysz, "mkdir %s: %s", dir, strerror(errno));
		return r;
	}
	return 0;
}

#ifdef HAVE_BPF_CORE
static void
open_prog_pins(struct bpf_sched *bs)
{
	unsigned i;

	for (i = 0; i < VITALS_BPF_PROGS; i++)
		if (bs->prog_fd[i] < 0)
			bs->prog_fd[i] = open_pin(bs, "prog", progs[i].sec);
	for (i = 0; i < VITALS_BPF_PROGS; i++)
		if (bs->prog_fd[i] < 0)
			bs->prog_fd[i] = -1;
}

/* load() in a child (core/bpf_child.c): what it needs and what it says */
struct load_job {
	struct bpf_sched *bs;
	struct vitals_sched *skel;
	bool reuse;
	uint64_t build;
};

struct load_said {
	unsigned state;
	char why[480];
};

static int
load_child(void *arg, int *fds, size_t nfds, void *out, size_t outsz)
{
	struct load_job *j = arg;
	struct load_said *o = out;

	(void)fds;
	(void)nfds;
	(void)outsz;
	return load(j->bs, j->skel, j->reuse, j->build, &o->state, o->why,
	    sizeof(o->why));
}

/*
 * load() in a child, so that libbpf's parse of the kernel's BTF (some
 * 8 MiB of heap) never sets our high-water mark; everything it makes is
 * pinned, and we open the pins it left, which must now match this build
 * as at a restart.
 */
static int
load_via_child(struct bpf_sched *bs, struct vitals_sched *skel, bool reuse,
    uint64_t build, unsigned *ret_state, char *why, size_t whysz)
{
	struct load_job j = { bs, skel, reuse, build };
	struct load_said o = { .state = VBPF_OFF_ERROR };
	char reason[192] = "";
	int r;

	r = bpf_child_run(load_child, &j, NULL, 0, &o, sizeof(o));
	if (r < 0 && o.why[0]) {
		/* load() failed over there and cleaned up as it does here */
		*ret_state = o.state;
		snprintf(why, whysz, "%s", o.why);
		return r;
	}
	if (r < 0) {
		snprintf(why, whysz, "the loading child: %s", strerror(-r));
		goto unpin;
	}
	close_fds(bs);
	if (examine(bs, skel, build, reason, sizeof(reason)) != PINS_MATCH) {
		snprintf(why, whysz, "the loaded pins do not match: %s",
		    reason);
		r = -EPROTO;
		goto unpin;
	}
	open_prog_pins(bs);
	return 0;
unpin:
	/* whatever the child attached and pinned must not run on unread */
	*ret_state = VBPF_OFF_ERROR;
	close_fds(bs);
	(void)bpf_sched_unpin(bs->bpffs);
	return r;
}

#endif /* HAVE_BPF_CORE */

static int
read_gen(struct bpf_sched *bs)
{
	struct sched_ctl ctl;
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(bs->map_fd[SM_CTL], &zero, &ctl) < 0)
		return -errno;
	bs->gen = ctl.gen;
	return 0;
}

#ifdef HAVE_BPF_CORE
static int
open_pinned(struct bpf_sched *bs, struct vitals_sched *skel,
    const struct bpf_sched_opts *o, unsigned *ret_state, char *why,
    size_t whysz)
{
	bool pinned_only = o->load == VBPF_LOAD_PINNED_ONLY;
	char reason[192] = "";
	uint64_t build;
	enum pins p;
	int r;

	if ((r = prepare_dir(o->bpffs, !pinned_only, why, whysz)) < 0) {
		*ret_state = VBPF_OFF_NO_BPFFS;
		return r;
	}
	/*
	 * Two drainers of one map set would each see half of every window
	 * (and flip each other's generation): the second one stays off.
	 */
	if ((bs->dirfd = open(o->bpffs, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) <
		0 ||
	    flock(bs->dirfd, LOCK_EX | LOCK_NB) < 0) {
		r = -errno;
		/*
		 * The platform's pin directory (/sys/fs/bpf on Android) may
		 * be searchable but not readable by us: pins are still
		 * opened by name, only the one-drainer lock is missing.
		 */
		if (pinned_only && bs->dirfd < 0 &&
		    (r == -EACCES || r == -EPERM))
			goto unlocked;

		*ret_state = r == -EWOULDBLOCK ? VBPF_OFF_BUSY : VBPF_OFF_ERROR;
		snprintf(why, whysz, "%s: %s", o->bpffs,
		    r == -EWOULDBLOCK ? "in use by another vitalsd" :
					strerror(-r));
		return r;
	}
unlocked:
	build = build_hash(skel);
	p = examine(bs, skel, build, reason, sizeof(reason));
	/*
	 * No pins of our own loader: those of the platform's (bpfloader,
	 * bpf/aosp/vitalsd.c), opened and attached here.
	 */
	if (pinned_only && p == PINS_NONE) {
		if ((r = bpf_ldr_open(bs, reason, sizeof(reason))) == 0) {
			bs->meta_flags = 0; /* its object stamps wakeups */
			*ret_state = VBPF_ON_PINNED;
			snprintf(why, whysz,
			    "bpfloader pins of %s.o under %s "
			    "opened, %u tracepoints attached",
			    VITALS_LDR_OBJ, o->bpffs,
			    (unsigned)VITALS_BPF_PROGS);
			return 0;
		}
		if (r != -ENOENT) {
			*ret_state = r == -EPERM || r == -EACCES ?
			    VBPF_OFF_NO_PRIV :
			    r == -EPROTOTYPE ? VBPF_OFF_NO_PINS :
					       VBPF_OFF_ERROR;
			snprintf(why, whysz, "pinned-only: %s", reason);
			return r;
		}
	}
	if (p == PINS_MATCH || (pinned_only && p == PINS_STALE)) {
		/* what the running programs do, not what this build would */
		bs->meta_flags = bs->pinned_flags;
		open_prog_pins(bs);
		*ret_state = pinned_only ? VBPF_ON_PINNED : VBPF_ON_REUSED;
		snprintf(why, whysz, "%s pins under %s (layout %u)",
		    pinned_only ? "opened" : "reused", o->bpffs,
		    VITALS_SCHED_LAYOUT);
		return 0;
	}
	if (pinned_only) {
		*ret_state = VBPF_OFF_NO_PINS;
		snprintf(why, whysz, "pinned-only: %s",
		    p == PINS_NONE ?
			"no pins of vitalsd's loader (map_vitals_*) nor of the "
			"platform's (map_" VITALS_LDR_OBJ "_*)" :
			reason);
		return -ENOENT;
	}
	/* From here on the programs are loaded: that needs privilege. */
	if (!may_load()) {
		*ret_state = VBPF_OFF_NO_PRIV;
		snprintf(why, whysz,
		    "loading needs CAP_BPF and CAP_PERFMON "
		    "(or CAP_SYS_ADMIN)");
		return -EPERM;
	}
	if (p == PINS_MISMATCH) {
		close_fds(bs);
		if ((r = bpf_sched_unpin(o->bpffs)) < 0) {
			*ret_state = VBPF_OFF_ERROR;
			snprintf(why, whysz, "unpin: %s", strerror(-r));
			return r;
		}
	}
	if ((r = load_via_child(bs, skel, p == PINS_STALE, build, ret_state,
		 why, whysz)) < 0)
		return r;
	*ret_state = VBPF_ON_LOADED;
	if (p == PINS_NONE)
		snprintf(why, whysz, "loaded and pinned under %s", o->bpffs);
	else if (p == PINS_STALE)
		snprintf(why, whysz,
		    "programs replaced under %s, maps kept "
		    "(%s)",
		    o->bpffs, reason);
	else
		snprintf(why, whysz, "replaced the pins under %s: %s", o->bpffs,
		    reason);
	return 0;
}

#else  /* !HAVE_BPF_CORE */
/*
 * Built without the CO-RE object (an Android build): nothing can be
 * loaded, only the platform loader's pins opened and attached.
 */
static int
open_pinned(struct bpf_sched *bs, const struct bpf_sched_opts *o,
    unsigned *ret_state, char *why, size_t whysz)
{
	char reason[192] = "";
	int r;

	if (o->load != VBPF_LOAD_PINNED_ONLY) {
		*ret_state = VBPF_OFF_UNSUPPORTED;
		snprintf(why, whysz,
		    "built without the CO-RE objects: only "
		    "bpf_load = pinned-only (bpfloader pins) works");
		return -EOPNOTSUPP;
	}
	if ((r = prepare_dir(o->bpffs, false, why, whysz)) < 0) {
		*ret_state = VBPF_OFF_NO_BPFFS;
		return r;
	}
	if ((bs->dirfd = open(o->bpffs, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >=
		0 &&
	    flock(bs->dirfd, LOCK_EX | LOCK_NB) < 0) {
		r = -errno;
		*ret_state = r == -EWOULDBLOCK ? VBPF_OFF_BUSY : VBPF_OFF_ERROR;
		snprintf(why, whysz, "%s: %s", o->bpffs,
		    r == -EWOULDBLOCK ? "in use by another vitalsd" :
					strerror(-r));
		return r;
	}
	/* a directory we may not open (Android's /sys/fs/bpf): unlocked */
	if ((r = bpf_ldr_open(bs, reason, sizeof(reason))) < 0) {
		*ret_state = r == -EPERM || r == -EACCES ? VBPF_OFF_NO_PRIV :
		    r == -ENOENT || r == -EPROTOTYPE	 ? VBPF_OFF_NO_PINS :
							   VBPF_OFF_ERROR;
		snprintf(why, whysz, "pinned-only: %s", reason);
		return r;
	}
	*ret_state = VBPF_ON_PINNED;
	snprintf(why, whysz,
	    "bpfloader pins of %s.o under %s opened, %u "
	    "tracepoints attached",
	    VITALS_LDR_OBJ, o->bpffs, (unsigned)VITALS_BPF_PROGS);
	return 0;
}
#endif /* HAVE_BPF_CORE */

int
bpf_sched_open(const struct bpf_sched_opts *o, struct bpf_sched **ret,
    unsigned *ret_state, char *why, size_t whysz)
{
#ifdef HAVE_BPF_CORE
	struct vitals_sched *skel = NULL;
	char btf[PATH_MAX];
#endif
	struct bpf_sched *bs;
	unsigned i, state = VBPF_OFF_ERROR;
	int r, ncpu;

	why[0] = '\0';
	if (o->load == VBPF_LOAD_OFF) {
		*ret_state = VBPF_OFF_DISABLED;
		snprintf(why, whysz, "bpf_load = off");
		return -ECANCELED;
	}
	if ((bs = calloc(1, sizeof(*bs))) == NULL ||
	    (bs->bpffs = strdup(o->bpffs)) == NULL) {
		free(bs);
		*ret_state = VBPF_OFF_ERROR;
		snprintf(why, whysz, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < SM__MAX; i++)
		bs->map_fd[i] = -1;
	for (i = 0; i < VITALS_BPF_PROGS; i++)
		bs->prog_fd[i] = bs->perf_fd[i] = bs->link_fd[i] = -1;
	bs->dirfd = -1;
	bs->slot_cap = o->slot_cap && o->slot_cap < VITALS_SCHED_SLOTS ?
	    o->slot_cap :
	    VITALS_SCHED_SLOTS;
	if ((o->proc_root && (bs->proc_root = strdup(o->proc_root)) == NULL) ||
	    (o->tracefs && (bs->tracefs = strdup(o->tracefs)) == NULL) ||
	    (o->instance && (bs->instance = strdup(o->instance)) == NULL)) {
		r = -ENOMEM;
		snprintf(why, whysz, "out of memory");
		goto fail;
	}
	if ((ncpu = libbpf_num_possible_cpus()) <= 0) {
		r = ncpu < 0 ? ncpu : -EINVAL;
		snprintf(why, whysz, "possible CPUs: %s", strerror(-r));
		goto fail;
	}
	bs->ncpu = (unsigned)ncpu;

#ifdef HAVE_BPF_CORE
	/* Without BTF nothing loads; pins of another loader need none. */
	snprintf(btf, sizeof(btf), "%s/kernel/btf/vmlinux", o->sys_root);
	if (o->load != VBPF_LOAD_PINNED_ONLY && access(btf, R_OK) < 0) {
		r = -errno;
		state = VBPF_OFF_NO_BTF;
		snprintf(why, whysz, "%s: %s", btf, strerror(errno));
		goto fail;
	}
	if ((skel = vitals_sched__open()) == NULL) {
		r = -errno;
		snprintf(why, whysz, "open object: %s", strerror(errno));
		goto fail;
	}
	skel->rodata->rq_enabled = o->rq;
	/*
	 * bpf_rq_source = sched_info: the kernel's own wait counters where it
	 * keeps them (CONFIG_SCHED_INFO: /proc/<pid>/schedstat exists only
	 * then); no stamp at wakeups, nothing at switch-ins (doc/bpf.md
	 * "Run-queue waits from sched_info"). Elsewhere the stamps, and
	 * the windows say so (rq_source).
	 */
	skel->rodata->rq_sched_info = o->rq &&
	    o->rq_source == VBPF_RQ_SCHED_INFO && bpf_sched_info_kept();
	bs->meta_flags = skel->rodata->rq_sched_info ? SCHED_META_RQ_SI : 0;
	skel->rodata->test_reject = o->test_reject;
	if (o->slot_cap)
		skel->rodata->slot_cap = o->slot_cap;
	if ((r = open_pinned(bs, skel, o, &state, why, whysz)) < 0)
		goto fail;
	vitals_sched__destroy(skel); /* the pins keep the links attached */
	skel = NULL;
#else
	if ((r = open_pinned(bs, o, &state, why, whysz)) < 0)
		goto fail;
#endif
	if (!bs->ldr && (r = read_gen(bs)) < 0) {
		snprintf(why, whysz, "read sched_ctl: %s", strerror(-r));
		state = VBPF_OFF_ERROR;
		goto fail;
	}
	bs->state = state;

	/*
	 * The platform loader's pins are read only: the first drain is the
	 * baseline every later one is a difference from. The programs ran
	 * only while a daemon held them attached, so nothing was counted
	 * in a restart's gap (pre_ns stays 0).
	 */
	if (bs->ldr) {
		if ((r = bpf_sched_drain(bs, &bs->batch)) < 0) {
			snprintf(why, whysz, "baseline: %s", strerror(-r));
			state = VBPF_OFF_ERROR;
			goto fail;
		}
		goto done;
	}

	/*
	 * What the kernel holds from before this start (a restart's gap)
	 * belongs to no window of ours: drain both sides now and report
	 * the sum with the first window. The counters start from here.
	 */
	for (i = 0; i < 2; i++) {
		if ((r = bpf_sched_drain(bs, &bs->batch)) < 0) {
			snprintf(why, whysz, "first drain: %s", strerror(-r));
			state = VBPF_OFF_ERROR;
			goto fail;
		}
		for (size_t k = 0; k < bs->batch.ntids; k++)
			bs->pre_ns += bs->batch.tids[k].oncpu_ns;
		for (size_t k = 0; k < bs->batch.nuids; k++)
			bs->pre_ns += bs->batch.uids[k].exited_ns +
			    bs->batch.uids[k].overflow_ns;
	}
done:
	memcpy(bs->tot, bs->batch.tot, sizeof(bs->tot));
	(void)bpf_sched_prog_stats(bs, bs->prog);
	*ret_state = state;
	*ret = bs;
	return 0;
fail:
#ifdef HAVE_BPF_CORE
	vitals_sched__destroy(skel);
#endif
	*ret_state = state;
	bpf_sched_free(bs);
	return r;
}

struct bpf_sched *
bpf_sched_free(struct bpf_sched *bs)
{
	if (bs == NULL)
		return NULL;
	bpf_ldr_close(bs); /* detaches what we attached */
	bpf_ldr_release(bs);
	close_fds(bs);
	if (bs->dirfd >= 0)
		close(bs->dirfd); /* and with it the lock */
	free(bs->proc_root);
	free(bs->tracefs);
	free(bs->instance);
	bpf_sched_batch_release(&bs->batch);
	free(bs->kbuf);
	free(bs->vbuf);
	free(bs->slots);
	free(bs->bpffs);
	free(bs);
	return NULL;
}

void
bpf_sched_set_stats(struct bpf_sched *bs, bool on)
{
	if (bs) {
		bs->stats = on;
		(void)bpf_sched_prog_stats(bs, bs->prog);
	}
}

#else /* !HAVE_BPF */

int
bpf_sched_open(const struct bpf_sched_opts *o, struct bpf_sched **ret,
    unsigned *ret_state, char *why, size_t whysz)
{
	(void)ret;
	if (o->load == VBPF_LOAD_OFF) {
		*ret_state = VBPF_OFF_DISABLED;
		snprintf(why, whysz, "bpf_load = off");
		return -ECANCELED;
	}
	*ret_state = VBPF_OFF_UNSUPPORTED;
	snprintf(why, whysz, "built without BPF support");
	return -EOPNOTSUPP;
}

struct bpf_sched *
bpf_sched_free(struct bpf_sched *bs)
{
	(void)bs;
	return NULL;
}

void
bpf_sched_set_stats(struct bpf_sched *bs, bool on)
{
	(void)bs;
	(void)on;
}

int
bpf_sched_unpin(const char *bpffs)
{
	(void)bpffs;
	return -EOPNOTSUPP;
}

#endif /* HAVE_BPF */
