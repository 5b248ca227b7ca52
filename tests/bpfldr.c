/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stand-in for Android's platform BPF loader, for tests: it loads
 * objects of the format bpf/aosp/bpfloader.h describes by the loader's
 * rules (doc/bpf.md, "Android: bpfloader objects", cites them), so the
 * daemon's pinned-only mode can be tested against the pins such a loader
 * leaves. Written from those rules; it is not the loader's code.
 *
 *   bpfldr [-r ROOT] [-l system|vendor] OBJ.o...
 *
 * ROOT stands for /sys/fs/bpf (pins go to ROOT/<prefix>map_<obj>_<map>
 * and ROOT/<prefix>prog_<obj>_<section, '/' made '_'>). The location
 * decides the prefix and the program types allowed: system
 * (/system/etc/bpf: "", kprobe, perf_event, socket filter, tracepoint)
 * or vendor (/vendor/etc/bpf: "vendor/", socket filter only).
 *
 * Exit 0: every object loaded (or skipped by its version range); 1: an
 * object was refused, with the reason on stderr.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "../bpf/aosp/bpfloader.h"

/* The loader version this one answers to: v0.41 (Android 14's). */
#define LDR_VERSION VLDR_VERSION(0, 41)

struct prefix_type {
	const char *prefix;
	enum bpf_prog_type type;
};

/* Section name prefixes the platform loader knows; others are skipped. */
static const struct prefix_type known[] = {
	{ "kprobe/", BPF_PROG_TYPE_KPROBE },
	{ "kretprobe/", BPF_PROG_TYPE_KPROBE },
	{ "perf_event/", BPF_PROG_TYPE_PERF_EVENT },
	{ "skfilter/", BPF_PROG_TYPE_SOCKET_FILTER },
	{ "tracepoint/", BPF_PROG_TYPE_TRACEPOINT },
	{ "uprobe/", BPF_PROG_TYPE_KPROBE },
	{ "uretprobe/", BPF_PROG_TYPE_KPROBE },
};

struct location {
	const char *name, *prefix;
	enum bpf_prog_type allowed[4];
	unsigned nallowed;
};

static const struct location locations[] = {
	{ "system", "",
	    { BPF_PROG_TYPE_KPROBE, BPF_PROG_TYPE_PERF_EVENT,
		BPF_PROG_TYPE_SOCKET_FILTER, BPF_PROG_TYPE_TRACEPOINT },
	    4 },
	{ "vendor", "vendor/", { BPF_PROG_TYPE_SOCKET_FILTER }, 1 },
};

struct obj {
	const char *path;
	char name[NAME_MAX];
	const struct location *loc;
	const char *root;
	Elf *elf;
	size_t shstrndx;
	Elf_Scn *symscn;
	Elf_Data *syms;
	size_t nsyms;
	int map_fd[64];
	char map_name[64][64];
	unsigned nmaps;
};

static int fail(const struct obj *o, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
fail(const struct obj *o, int err, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bpfldr: %s: ", o->path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return err;
}

static const char *
scn_name(const struct obj *o, Elf_Scn *scn)
{
	GElf_Shdr sh;

	if (gelf_getshdr(scn, &sh) == NULL)
		return "";
	return elf_strptr(o->elf, o->shstrndx, sh.sh_name);
}

static Elf_Scn *
find_scn(const struct obj *o, const char *name)
{
	Elf_Scn *scn = NULL;
	const char *n;

	while ((scn = elf_nextscn(o->elf, scn)) != NULL)
		if ((n = scn_name(o, scn)) != NULL && strcmp(n, name) == 0)
			return scn;
	return NULL;
}

static Elf_Data *
scn_data(const struct obj *o, const char *name)
{
	Elf_Scn *scn = find_scn(o, name);

	return scn ? elf_getdata(scn, NULL) : NULL;
}

/* A u32 section, little endian as the loader reads it; def when absent. */
static uint32_t
scn_u32(const struct obj *o, const char *name, uint32_t def)
{
	Elf_Data *d = scn_data(o, name);
	const unsigned char *b;

	if (d == NULL || d->d_size < 4)
		return def;
	b = d->d_buf;
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	    (uint32_t)b[3] << 24;
}

static const char *
sym_name(const struct obj *o, const GElf_Sym *s)
{
	GElf_Shdr sh;

	gelf_getshdr(o->symscn, &sh);
	return elf_strptr(o->elf, sh.sh_link, s->st_name);
}

/* The symbols of section idx (of type type, or any when < 0) in the order
 * of their value: the order of their entries in that section. */
static size_t
scn_syms(const struct obj *o, size_t idx, int type, GElf_Sym *ret, size_t max)
{
	size_t i, n = 0, j;
	GElf_Sym s;

	for (i = 0; i < o->nsyms; i++) {
		if (gelf_getsym(o->syms, (int)i, &s) == NULL ||
		    s.st_shndx != idx)
			continue;
		if (type >= 0 && GELF_ST_TYPE(s.st_info) != type)
			continue;
		if (GELF_ST_TYPE(s.st_info) == STT_SECTION)
			continue;
		if (n == max)
			break;
		for (j = n; j > 0 && ret[j - 1].st_value > s.st_value; j--)
			ret[j] = ret[j - 1];
		ret[j] = s;
		n++;
	}
	return n;
}

static unsigned
kernel_version(void)
{
	struct utsname u;
	unsigned a = 0, b = 0, c = 0;

	if (uname(&u) == 0)
		sscanf(u.release, "%u.%u.%u", &a, &b, &c);
	return VLDR_KVER(a, b, c > 255 ? 255 : c);
}

/* map_<obj>_<map> or prog_<obj>_<section>, '/' made '_' */
static void
pin_path(const struct obj *o, const char *kind, const char *name, char *buf,
    size_t sz)
{
	size_t n;

	snprintf(buf, sz, "%s/%s%s_%s_", o->root, o->loc->prefix, kind,
	    o->name);
	n = strlen(buf);
	for (; *name && n + 1 < sz; name++)
		buf[n++] = *name == '/' ? '_' : *name;
	buf[n] = '\0';
}

static int
pin_own(const char *path, int fd, unsigned mode, unsigned uid, unsigned gid)
{
	if (bpf_obj_pin(fd, path) < 0 || chmod(path, mode) < 0 ||
	    chown(path, uid, gid) < 0)
		return -errno;
	return 0;
}

/* ------------------------------------------------------------- maps */

static int
create_maps(struct obj *o, size_t map_def_size)
{
	Elf_Scn *scn = find_scn(o, "maps");
	GElf_Sym syms[64];
	Elf_Data *d;
	size_t n, i;
	unsigned kv = kernel_version();

	if (scn == NULL)
		return 0; /* no maps */
	d = elf_getdata(scn, NULL);
	if (d->d_size % map_def_size)
		return fail(o, -EINVAL,
		    "maps section of %zu bytes is not a "
		    "whole number of %zu-byte map definitions",
		    d->d_size, map_def_size);
	n = scn_syms(o, elf_ndxscn(scn), -1, syms, 64);
	for (i = 0; i < n; i++) {
		struct vldr_map_def md;
		char path[PATH_MAX];
		struct bpf_map_info info;
		uint32_t len = sizeof(info);
		const char *name = sym_name(o, &syms[i]);
		size_t off = i * map_def_size;
		int fd;

		/* a longer entry (newer writer) is cut, a shorter one
		 * (older writer) is completed with the defaults */
		memset(&md, 0, sizeof(md));
		md.bpfloader_max_ver = VLDR_MAX_VER;
		md.max_kver = VLDR_KVER_INF;
		if (off + map_def_size > d->d_size)
			return fail(o, -EINVAL, "map %s: past the section",
			    name);
		memcpy(&md, (char *)d->d_buf + off,
		    map_def_size < sizeof(md) ? map_def_size : sizeof(md));
		snprintf(o->map_name[i], sizeof(o->map_name[i]), "%s", name);
		o->map_fd[i] = -1;
		o->nmaps = (unsigned)i + 1;
		if (md.zero != 0)
			return fail(o, -EINVAL,
			    "map %s: the v0.0 uid field "
			    "is %u, not 0 (the loader aborts)",
			    name, md.zero);
		if (LDR_VERSION < md.bpfloader_min_ver ||
		    LDR_VERSION >= md.bpfloader_max_ver || kv < md.min_kver ||
		    kv >= md.max_kver)
			continue; /* not for this loader or kernel */
		pin_path(o, "map", name, path, sizeof(path));
		if (access(path, F_OK) == 0) {
			fd = bpf_obj_get(path);
		} else {
			LIBBPF_OPTS(bpf_map_create_opts, mo,
			    .map_flags = md.map_flags);
			char kname[16];

			snprintf(kname, sizeof(kname), "%s", name);
			fd = bpf_map_create(md.type, kname, md.key_size,
			    md.value_size, md.max_entries, &mo);
			if (fd >= 0 &&
			    pin_own(path, fd, md.mode, md.uid, md.gid) < 0)
				return fail(o, -errno, "pin %s: %s", path,
				    strerror(errno));
		}
		if (fd < 0)
			return fail(o, -errno, "map %s: %s", name,
			    strerror(errno));
		o->map_fd[i] = fd;
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0 ||
		    info.type != md.type || info.key_size != md.key_size ||
		    info.value_size != md.value_size ||
		    info.max_entries != md.max_entries ||
		    info.map_flags != md.map_flags)
			return fail(o, -ENOTUNIQ,
			    "map %s: the pinned map "
			    "differs from its definition",
			    name);
	}
	return 0;
}

/* ---------------------------------------------------------- programs */

static int
prog_type(const struct obj *o, const char *sec, enum bpf_prog_type *ret)
{
	unsigned i, j;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if (strncmp(sec, known[i].prefix, strlen(known[i].prefix)))
			continue;
		for (j = 0; j < o->loc->nallowed; j++)
			if (o->loc->allowed[j] == known[i].type) {
				*ret = known[i].type;
				return 1;
			}
		return fail(o, -EPERM,
		    "section %s: program type %u not "
		    "permitted in %s",
		    sec, known[i].type, o->loc->name);
	}
	return 0; /* unknown: not a program for this loader */
}

/*
 * What the loader checks before it makes any map: the size of the progs
 * section, and that every program section's type is allowed where the
 * object lies.
 */
static int
prog_check(struct obj *o, size_t prog_def_size)
{
	Elf_Data *pd = scn_data(o, "progs");
	Elf_Scn *scn = NULL;
	enum bpf_prog_type type;
	int r;

	if (pd && pd->d_size % prog_def_size)
		return fail(o, -EINVAL,
		    "progs section of %zu bytes is not a "
		    "whole number of %zu-byte program definitions",
		    pd->d_size, prog_def_size);
	while ((scn = elf_nextscn(o->elf, scn)) != NULL)
		if ((r = prog_type(o, scn_name(o, scn), &type)) < 0)
			return r;
	return 0;
}

/* Map loads: the relocations against map symbols become map fds. */
static void
relocate(const struct obj *o, Elf_Scn *rel, struct bpf_insn *insns,
    size_t ninsns)
{
	Elf_Data *d = elf_getdata(rel, NULL);
	GElf_Shdr sh;
	size_t i, n;
	unsigned m;

	gelf_getshdr(rel, &sh);
	n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
	for (i = 0; i < n; i++) {
		GElf_Rel r;
		GElf_Sym s;
		size_t k;

		if (gelf_getrel(d, (int)i, &r) == NULL ||
		    gelf_getsym(o->syms, (int)GELF_R_SYM(r.r_info), &s) == NULL)
			continue;
		k = r.r_offset / sizeof(struct bpf_insn);
		for (m = 0; m < o->nmaps; m++) {
			if (strcmp(o->map_name[m], sym_name(o, &s)))
				continue;
			if (k < ninsns &&
			    insns[k].code == (BPF_LD | BPF_IMM | BPF_DW)) {
				insns[k].imm = o->map_fd[m];
				insns[k].src_reg = BPF_PSEUDO_MAP_FD;
			}
			break;
		}
	}
}

static int
load_progs(struct obj *o, size_t prog_def_size, const char *license)
{
	Elf_Data *pd = scn_data(o, "progs");
	Elf_Scn *progs = find_scn(o, "progs"), *scn = NULL;
	GElf_Sym defs[64];
	size_t ndefs = 0;
	unsigned kv = kernel_version();
	int r;

	if (pd && pd->d_size % prog_def_size)
		return fail(o, -EINVAL,
		    "progs section of %zu bytes is not a "
		    "whole number of %zu-byte program definitions",
		    pd->d_size, prog_def_size);
	if (progs)
		ndefs = scn_syms(o, elf_ndxscn(progs), -1, defs, 64);
	while ((scn = elf_nextscn(o->elf, scn)) != NULL) {
		const char *sec = scn_name(o, scn);
		struct vldr_prog_def def;
		enum bpf_prog_type type;
		char path[PATH_MAX], want[128], kname[16], relname[256];
		GElf_Sym fn;
		Elf_Data *code;
		Elf_Scn *rel;
		struct bpf_insn *insns;
		size_t i, k, ninsns;
		bool have_def = false;
		int fd;

		if ((r = prog_type(o, sec, &type)) < 0)
			return r;
		if (r == 0)
			continue;
		code = elf_getdata(scn, NULL);
		if (code == NULL || code->d_size == 0)
			continue;
		if (scn_syms(o, elf_ndxscn(scn), STT_FUNC, &fn, 1) != 1)
			continue;
		snprintf(want, sizeof(want), "%s_def", sym_name(o, &fn));
		for (i = 0; i < ndefs; i++) {
			size_t off = (size_t)defs[i].st_value;

			if (strcmp(sym_name(o, &defs[i]), want) ||
			    off + prog_def_size > pd->d_size)
				continue;
			memset(&def, 0, sizeof(def));
			def.bpfloader_max_ver = VLDR_MAX_VER;
			memcpy(&def, (char *)pd->d_buf + off,
			    prog_def_size < sizeof(def) ? prog_def_size :
							  sizeof(def));
			have_def = true;
		}
		if (!have_def)
			return fail(o, -EINVAL,
			    "section %s: no program "
			    "definition %s",
			    sec, want);
		if (kv < def.min_kver || kv >= def.max_kver ||
		    LDR_VERSION < def.bpfloader_min_ver ||
		    LDR_VERSION >= def.bpfloader_max_ver)
			continue;
		/* a '$suffix' of the section is not part of the pin */
		snprintf(relname, sizeof(relname), "%s", sec);
		if (strchr(relname, '$'))
			*strrchr(relname, '$') = '\0';
		pin_path(o, "prog", relname, path, sizeof(path));
		if (access(path, F_OK) == 0)
			continue; /* loaded by an earlier run */
		ninsns = code->d_size / sizeof(struct bpf_insn);
		if ((insns = malloc(code->d_size)) == NULL)
			return -ENOMEM;
		memcpy(insns, code->d_buf, code->d_size);
		/* its relocations are the next section, if any */
		snprintf(relname, sizeof(relname), ".rel%s", sec);
		rel = elf_getscn(o->elf, elf_ndxscn(scn) + 1);
		if (rel && strcmp(scn_name(o, rel), relname) == 0)
			relocate(o, rel, insns, ninsns);
		for (k = 0; sec[k] && k < sizeof(kname) - 1; k++)
			kname[k] = sec[k] == '/' ? '_' : sec[k];
		kname[k] = '\0';
		{
			static char log[1 << 20];
			LIBBPF_OPTS(bpf_prog_load_opts, po, .kern_version = kv,
			    .log_buf = log, .log_size = sizeof(log),
			    .log_level = 1);

			log[0] = '\0';
			fd = bpf_prog_load(type, kname, license, insns, ninsns,
			    &po);
			free(insns);
			if (fd < 0 && def.optional)
				continue;
			if (fd < 0) {
				r = -errno;
				fprintf(stderr, "%s", log);
				return fail(o, r, "section %s: load: %s", sec,
				    strerror(-r));
			}
		}
		if ((r = pin_own(path, fd, 0440, def.uid, def.gid)) < 0) {
			close(fd);
			return fail(o, r, "pin %s: %s", path, strerror(-r));
		}
		close(fd);
	}
	return 0;
}

/* ------------------------------------------------------------ object */

static int
load_obj(struct obj *o)
{
	Elf_Data *lic;
	uint32_t minv, maxv, map_sz, prog_sz;
	char license[128];
	const char *base, *dot;
	int fd, r;
	unsigned i;

	base = strrchr(o->path, '/') ? strrchr(o->path, '/') + 1 : o->path;
	snprintf(o->name, sizeof(o->name), "%s", base);
	if ((dot = strrchr(o->name, '.')) != NULL)
		o->name[dot - o->name] = '\0';
	if (strrchr(o->name, '@'))
		*strrchr(o->name, '@') = '\0';
	if ((fd = open(o->path, O_RDONLY)) < 0)
		return fail(o, -errno, "%s", strerror(errno));
	o->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (o->elf == NULL || elf_getshdrstrndx(o->elf, &o->shstrndx) < 0) {
		close(fd);
		return fail(o, -EINVAL, "not an ELF object");
	}
	r = -EINVAL;
	while ((o->symscn = elf_nextscn(o->elf, o->symscn)) != NULL) {
		GElf_Shdr sh;

		if (gelf_getshdr(o->symscn, &sh) && sh.sh_type == SHT_SYMTAB) {
			o->syms = elf_getdata(o->symscn, NULL);
			o->nsyms = sh.sh_entsize ? sh.sh_size / sh.sh_entsize :
						   0;
			break;
		}
	}
	if ((lic = scn_data(o, "license")) == NULL || lic->d_size == 0) {
		r = fail(o, -ENOENT, "no license section");
		goto out;
	}
	snprintf(license, sizeof(license), "%.*s", (int)lic->d_size,
	    (const char *)lic->d_buf);
	if (o->syms == NULL) {
		r = fail(o, -EINVAL, "no symbol table");
		goto out;
	}
	minv = scn_u32(o, "bpfloader_min_ver", 0);
	maxv = scn_u32(o, "bpfloader_max_ver", VLDR_MAX_VER);
	if (LDR_VERSION < minv || LDR_VERSION >= maxv) {
		fprintf(stderr,
		    "bpfldr: %s: for loaders [%#x, %#x): "
		    "skipped\n",
		    o->path, minv, maxv);
		r = 0;
		goto out;
	}
	map_sz = scn_u32(o, "size_of_bpf_map_def", VLDR_MAP_DEF_MIN);
	prog_sz = scn_u32(o, "size_of_bpf_prog_def", VLDR_PROG_DEF_MIN);
	if (map_sz < VLDR_MAP_DEF_MIN || prog_sz < VLDR_PROG_DEF_MIN) {
		r = fail(o, -EINVAL,
		    "definition sizes %u/%u below the "
		    "oldest format's %u/%u",
		    map_sz, prog_sz, VLDR_MAP_DEF_MIN, VLDR_PROG_DEF_MIN);
		goto out;
	}
	/* the program sections are read (and checked) before any map */
	if ((r = prog_check(o, prog_sz)) < 0)
		goto out;
	if ((r = create_maps(o, map_sz)) < 0)
		goto out;
	r = load_progs(o, prog_sz, license);
out:
	for (i = 0; i < o->nmaps; i++)
		if (o->map_fd[i] >= 0)
			close(o->map_fd[i]);
	elf_end(o->elf);
	close(fd);
	return r;
}

int
main(int argc, char **argv)
{
	const struct location *loc = &locations[0];
	const char *root = "/sys/fs/bpf";
	int c, i, status = 0;

	while ((c = getopt(argc, argv, "r:l:")) != -1) {
		switch (c) {
		case 'r':
			root = optarg;
			break;
		case 'l':
			if (strcmp(optarg, "vendor") == 0)
				loc = &locations[1];
			else if (strcmp(optarg, "system") != 0)
				goto usage;
			break;
		default:
			goto usage;
		}
	}
	if (optind == argc)
		goto usage;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return 1;
	if (*loc->prefix) {
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%s/%s", root, loc->prefix);
		(void)mkdir(dir, 01777);
	}
	for (i = optind; i < argc; i++) {
		struct obj o;

		memset(&o, 0, sizeof(o));
		o.path = argv[i];
		o.loc = loc;
		o.root = root;
		if (load_obj(&o) < 0)
			status = 1;
	}
	return status;
usage:
	fprintf(stderr,
	    "usage: bpfldr [-r root] [-l system|vendor] "
	    "obj.o...\n");
	return 2;
}
