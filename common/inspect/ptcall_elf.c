/* SPDX-License-Identifier: Apache-2.0 */
/* ptcall: /proc/<pid>/maps lines and the dynamic symbols of ELF files. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/elf_hash.h"
#include "base/parse.h"
#include "base/util.h"
#include "ptcall_internal.h"

#define PTELF_MAX_SECTIONS 4096u
#define PTELF_MAX_TABLE (64u << 20)
/* A hash chain longer than this is taken as malformed: the longest in
 * glibc 2.36's libc.so.6 (3,044 symbols, 1,009 GNU buckets) has 11
 * entries, 9 in its System V table. */
#define PTELF_MAX_CHAIN 4096u
/* Symbols read at a time by a scan of .dynsym (1.5 KiB of stack). */
#define PTELF_CHUNK 64u
/* The longest name looked up, without its NUL. */
#define PTELF_MAX_NAME 63u

static int parse_maps_line(char *line, struct ptvma *v)
{
	const char *p = line;
	uint64_t dev;
	int r;

	r = scan_hex_u64(&p, &v->start);
	if (r < 0 || *p++ != '-')
		return -EBADMSG;
	r = scan_hex_u64(&p, &v->end);
	if (r < 0 || *p++ != ' ' || v->end < v->start)
		return -EBADMSG;
	if (strnlen(p, 5) < 5 || p[4] != ' ')
		return -EBADMSG;
	memcpy(v->perms, p, 4);
	v->perms[4] = '\0';
	p += 5;
	if (scan_hex_u64(&p, &v->offset) < 0 || *p++ != ' ')
		return -EBADMSG;
	/* dev is "maj:min" in hex */
	if (scan_hex_u64(&p, &dev) < 0 || *p++ != ':' ||
	    scan_hex_u64(&p, &dev) < 0 || *p++ != ' ')
		return -EBADMSG;
	if (scan_u64(&p, &v->inode) < 0)
		return -EBADMSG;
	while (*p == ' ')
		p++;
	v->path = p;
	return 0;
}

int ptmaps_parse(char *buf, size_t len, struct ptmaps *ret)
{
	struct ptvma *v = NULL;
	size_t n = 0, alloc = 0;
	char *p = buf, *end = buf + len;

	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl) /* the last line may lack its newline */
			nl = end;
		if (nl == p) {
			p++;
			continue;
		}
		if (n == alloc) {
			size_t na = alloc ? alloc * 2 : 64;
			struct ptvma *nv = reallocarray(v, na, sizeof(*v));

			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
			alloc = na;
		}
		*nl = '\0'; /* buf[len] is already NUL */
		/* The kernel lists mappings sorted and disjoint, and
		 * ptmaps_find's binary search relies on it: anything else is
		 * not a maps file. */
		if (parse_maps_line(p, &v[n]) < 0 ||
		    (n > 0 && v[n].start < v[n - 1].end)) {
			free(v);
			return -EBADMSG;
		}
		n++;
		p = nl + 1;
	}
	ret->v = v;
	ret->n = n;
	return 0;
}

void ptmaps_release(struct ptmaps *m)
{
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

const struct ptvma *ptmaps_find(const struct ptmaps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	/* maps is sorted by address */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < m->v[mid].start)
			hi = mid;
		else if (addr >= m->v[mid].end)
			lo = mid + 1;
		else
			return &m->v[mid];
	}
	return NULL;
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	if (off > (uint64_t)INT64_MAX - len)
		return -ENOEXEC;
	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done,
				  (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENOEXEC; /* truncated file */
		done += (size_t)n;
	}
	return 0;
}

static bool in_file(const struct ptelf *e, uint64_t off, uint64_t len)
{
	return off <= e->file_size && len <= e->file_size - off;
}

static int read_table(int fd, uint64_t off, size_t size, void **ret)
{
	void *buf = malloc(size + 1);
	int r;

	if (!buf)
		return -ENOMEM;
	r = pread_all(fd, buf, size, off);
	if (r < 0) {
		free(buf);
		return r;
	}
	((char *)buf)[size] = '\0';
	*ret = buf;
	return 0;
}

static int load_first_load(int fd, const Elf64_Ehdr *eh, struct ptelf *e)
{
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		int r = pread_all(fd, &ph, sizeof(ph),
				  eh->e_phoff + (uint64_t)i * eh->e_phentsize);
		if (r < 0)
			return r;
		if (ph.p_type == PT_LOAD) {
			uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);

			e->load_vaddr = ph.p_vaddr & ~(pg - 1);
			e->load_offset = ph.p_offset & ~(pg - 1);
			return 0;
		}
	}
	return -ENOEXEC;
}

static int check_ehdr(const Elf64_Ehdr *eh)
{
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return -ENOTSUP;
	if (eh->e_machine != PTARCH_EM)
		return -ENOTSUP;
	if (eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shnum > PTELF_MAX_SECTIONS ||
	    eh->e_phentsize != sizeof(Elf64_Phdr))
		return -ENOEXEC;
	return 0;
}

/* The first len bytes of hash table sh, which must lie in the file. */
static int read_hash_header(int fd, const Elf64_Shdr *sh, const struct ptelf *e,
			    uint32_t *h, size_t len)
{
	if (!in_file(e, sh->sh_offset, sh->sh_size) || sh->sh_size < len)
		return -ENOEXEC;
	return pread_all(fd, h, len, sh->sh_offset);
}

/* The GNU hash table of sh: its header checked against the section and
 * the file; the buckets and chains stay in the file. */
static int setup_gnu_hash(int fd, const Elf64_Shdr *sh, struct ptelf *e)
{
	uint32_t h[4]; /* nbuckets, symoffset, bloom words, bloom shift */
	uint64_t end = sh->sh_offset + sh->sh_size, buckets, chains;
	int r = read_hash_header(fd, sh, e, h, sizeof(h));

	if (r < 0)
		return r;
	buckets = sh->sh_offset + sizeof(h) + (uint64_t)h[2] * 8;
	chains = buckets + (uint64_t)h[0] * 4;
	if (h[0] == 0 || h[1] == 0 || h[1] > e->n_syms || chains > end)
		return -ENOEXEC;
	e->hash = PTELF_HASH_GNU;
	e->n_buckets = h[0];
	e->first_hashed = h[1];
	e->buckets_off = buckets;
	e->chains_off = chains;
	e->n_chains = (end - chains) / 4;
	return 0;
}

/* The System V hash table (DT_HASH), likewise. */
static int setup_sysv_hash(int fd, const Elf64_Shdr *sh, struct ptelf *e)
{
	uint32_t h[2]; /* nbucket, nchain */
	int r = read_hash_header(fd, sh, e, h, sizeof(h));

	if (r < 0)
		return r;
	if (h[0] == 0 || sh->sh_size < sizeof(h) + 4 * ((uint64_t)h[0] + h[1]))
		return -ENOEXEC;
	e->hash = PTELF_HASH_SYSV;
	e->n_buckets = h[0];
	e->n_chains = h[1];
	e->first_hashed = 0;
	e->buckets_off = sh->sh_offset + sizeof(h);
	e->chains_off = e->buckets_off + 4 * (uint64_t)h[0];
	return 0;
}

/* Without a hash table: .dynsym, .dynstr and .gnu.version read whole. */
static int read_whole(int fd, struct ptelf *e)
{
	int r = read_table(fd, e->sym_off, e->n_syms * sizeof(Elf64_Sym),
			   (void **)&e->syms);

	if (r >= 0)
		r = read_table(fd, e->str_off, e->strs_len, (void **)&e->strs);
	if (r >= 0 && e->versym_off &&
	    read_table(fd, e->versym_off, e->n_syms * 2, (void **)&e->versym) <
		    0)
		e->versym_off = 0; /* unreadable: ignore versions */
	e->hash = PTELF_HASH_NONE;
	e->first_hashed = e->n_syms;
	return r;
}

struct ptelf_sections {
	const Elf64_Shdr *dynsym, *strtab, *versym, *gnu_hash, *sysv_hash;
};

static void find_sections(const Elf64_Shdr *sh, unsigned n,
			  struct ptelf_sections *ret)
{
	unsigned d = n;

	memset(ret, 0, sizeof(*ret));
	for (unsigned i = 0; i < n; i++)
		if (sh[i].sh_type == SHT_DYNSYM) {
			ret->dynsym = &sh[i];
			d = i;
		}
	if (!ret->dynsym || ret->dynsym->sh_link >= n)
		return;
	ret->strtab = &sh[ret->dynsym->sh_link];
	/* the versions and the hash tables of that .dynsym */
	for (unsigned i = 0; i < n; i++) {
		if (sh[i].sh_link != d)
			continue;
		if (sh[i].sh_type == SHT_GNU_versym)
			ret->versym = &sh[i];
		else if (sh[i].sh_type == SHT_GNU_HASH)
			ret->gnu_hash = &sh[i];
		else if (sh[i].sh_type == SHT_HASH)
			ret->sysv_hash = &sh[i];
	}
}

static int load_sections(int fd, const Elf64_Ehdr *eh, bool whole,
			 struct ptelf *e)
{
	_cleanup_free_ Elf64_Shdr *sh = NULL;
	struct ptelf_sections t;
	int r;

	sh = calloc(eh->e_shnum ? eh->e_shnum : 1, sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	r = pread_all(fd, sh, eh->e_shnum * sizeof(*sh), eh->e_shoff);
	if (r < 0)
		return r;
	find_sections(sh, eh->e_shnum, &t);
	if (!t.strtab)
		return -ENOENT;
	if (t.dynsym->sh_size > PTELF_MAX_TABLE ||
	    t.dynsym->sh_size % sizeof(Elf64_Sym) ||
	    !in_file(e, t.dynsym->sh_offset, t.dynsym->sh_size) ||
	    t.strtab->sh_size > PTELF_MAX_TABLE ||
	    !in_file(e, t.strtab->sh_offset, t.strtab->sh_size))
		return -ENOEXEC;
	e->sym_off = t.dynsym->sh_offset;
	e->n_syms = t.dynsym->sh_size / sizeof(Elf64_Sym);
	e->str_off = t.strtab->sh_offset;
	e->strs_len = t.strtab->sh_size;
	/* inconsistent versions are ignored, as if absent */
	if (t.versym && t.versym->sh_size == e->n_syms * 2 &&
	    in_file(e, t.versym->sh_offset, t.versym->sh_size))
		e->versym_off = t.versym->sh_offset;
	if (!whole && t.gnu_hash)
		return setup_gnu_hash(fd, t.gnu_hash, e);
	if (!whole && t.sysv_hash)
		return setup_sysv_hash(fd, t.sysv_hash, e);
	return read_whole(fd, e);
}

static int load(int fd, bool whole, struct ptelf *ret)
{
	struct ptelf e = {0};
	Elf64_Ehdr eh;
	struct stat st;
	int r;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	e.file_size = (uint64_t)st.st_size;
	r = pread_all(fd, &eh, sizeof(eh), 0);
	if (r < 0)
		return r;
	r = check_ehdr(&eh);
	if (r < 0)
		return r;
	r = load_first_load(fd, &eh, &e);
	if (r >= 0)
		r = load_sections(fd, &eh, whole, &e);
	if (r >= 0 && e.hash != PTELF_HASH_NONE) {
		e.fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		e.own_fd = e.fd >= 0;
		r = e.own_fd ? 0 : -errno;
	}
	if (r < 0) {
		ptelf_release(&e);
		return r;
	}
	*ret = e;
	return 0;
}

int ptelf_load(int fd, struct ptelf *ret)
{
	return load(fd, false, ret);
}

int ptelf_load_whole(int fd, struct ptelf *ret)
{
	return load(fd, true, ret);
}

void ptelf_release(struct ptelf *e)
{
	if (e->own_fd)
		close(e->fd);
	free(e->syms);
	free(e->strs);
	free(e->versym);
	memset(e, 0, sizeof(*e));
}

/* ---- reading symbols: from the tables read whole, else from the file ---- */

static int read_syms(const struct ptelf *e, size_t first, size_t n,
		     Elf64_Sym *out)
{
	if (first > e->n_syms || n > e->n_syms - first)
		return -ENOEXEC;
	if (e->syms) {
		memcpy(out, e->syms + first, n * sizeof(*out));
		return 0;
	}
	return pread_all(e->fd, out, n * sizeof(*out),
			 e->sym_off + first * sizeof(*out));
}

/* The name at off in .dynstr, at most cap - 1 bytes of it, NUL-terminated
 * in buf: "" when off is outside the table; a longer name is cut. */
static int read_name(const struct ptelf *e, uint32_t off, char *buf, size_t cap)
{
	size_t n;
	int r = 0;

	if (off >= e->strs_len) {
		buf[0] = '\0';
		return 0;
	}
	n = e->strs_len - off < cap - 1 ? e->strs_len - off : cap - 1;
	if (e->strs)
		memcpy(buf, e->strs + off, n);
	else
		r = pread_all(e->fd, buf, n, e->str_off + off);
	buf[r < 0 ? 0 : n] = '\0';
	return r;
}

/* Is symbol i a hidden (non-default) version, e.g. memcpy@GLIBC_2.2.5? */
static int is_hidden(const struct ptelf *e, size_t i)
{
	uint16_t v;
	int r;

	if (!e->versym_off)
		return 0;
	if (e->versym) {
		v = e->versym[i];
	} else {
		r = pread_all(e->fd, &v, sizeof(v), e->versym_off + 2 * i);
		if (r < 0)
			return r;
	}
	return (v & 0x8000) != 0;
}

static int read_u32(const struct ptelf *e, uint64_t off, uint32_t *ret)
{
	return pread_all(e->fd, ret, sizeof(*ret), off);
}

typedef int (*ptelf_visit_fn)(void *ctx, size_t i, const Elf64_Sym *s);

/* Symbol i, when it is named name: visit(ctx, i, sym). */
static int visit_if_named(const struct ptelf *e, size_t i, const char *name,
			  ptelf_visit_fn visit, void *ctx)
{
	char buf[PTELF_MAX_NAME + 2]; /* a longer name reads as one */
	Elf64_Sym s;
	int r = read_syms(e, i, 1, &s);

	if (r >= 0)
		r = read_name(e, s.st_name, buf, sizeof(buf));
	if (r < 0 || !streq(buf, name))
		return r;
	return visit(ctx, i, &s);
}

/* GNU hash: the chain of name's bucket is a run of symbols whose chain
 * words hold their hashes, the last one's low bit set. */
static int walk_gnu(const struct ptelf *e, const char *name,
		    ptelf_visit_fn visit, void *ctx)
{
	uint32_t h = elf_gnu_hash(name), i, c[16];
	int r = read_u32(e, e->buckets_off + 4 * (uint64_t)(h % e->n_buckets),
			 &i);

	if (r < 0 || i == 0)
		return r;
	if (i < e->first_hashed)
		return -ENOEXEC;
	for (uint32_t steps = 0;; steps++, i++) {
		uint32_t k = (i - e->first_hashed) % ARRAY_SIZE(c);

		if (i >= e->n_syms || i - e->first_hashed >= e->n_chains ||
		    steps >= PTELF_MAX_CHAIN)
			return -ENOEXEC; /* a chain without its end */
		if (steps == 0 || k == 0) {
			uint64_t j = i - e->first_hashed, n = ARRAY_SIZE(c) - k;

			n = n < e->n_chains - j ? n : e->n_chains - j;
			r = pread_all(e->fd, c + k, n * 4,
				      e->chains_off + 4 * j);
			if (r < 0)
				return r;
		}
		if ((c[k] | 1) == (h | 1)) {
			r = visit_if_named(e, i, name, visit, ctx);
			if (r != 0)
				return r;
		}
		if (c[k] & 1)
			return 0;
	}
}

/* System V hash: a bucket holds a symbol index, each chain word the next. */
static int walk_sysv(const struct ptelf *e, const char *name,
		     ptelf_visit_fn visit, void *ctx)
{
	uint32_t i;
	int r = read_u32(e,
			 e->buckets_off + 4 * (uint64_t)(elf_sysv_hash(name) %
							 e->n_buckets),
			 &i);

	for (uint32_t steps = 0; r >= 0 && i != 0; steps++) {
		if (i >= e->n_syms || i >= e->n_chains ||
		    steps >= PTELF_MAX_CHAIN)
			return -ENOEXEC; /* out of range, or a cycle */
		r = visit_if_named(e, i, name, visit, ctx);
		if (r != 0)
			return r;
		r = read_u32(e, e->chains_off + 4 * (uint64_t)i, &i);
	}
	return r;
}

/* Calls visit for each symbol named name until it returns non-zero (its
 * value is then returned); 0 when all were visited, or -errno. */
static int walk_name(const struct ptelf *e, const char *name,
		     ptelf_visit_fn visit, void *ctx)
{
	int r = 0;

	if (strlen(name) > PTELF_MAX_NAME)
		return -EINVAL; /* a longer name could match a cut one */
	if (e->hash == PTELF_HASH_GNU)
		return walk_gnu(e, name, visit, ctx);
	if (e->hash == PTELF_HASH_SYSV)
		return walk_sysv(e, name, visit, ctx);
	for (size_t i = 1; i < e->n_syms && r == 0; i++)
		r = visit_if_named(e, i, name, visit, ctx);
	return r;
}

static bool sym_defined(const Elf64_Sym *s)
{
	return s->st_shndx != SHN_UNDEF && s->st_value != 0;
}

struct lookup {
	const struct ptelf *e;
	Elf64_Sym best;
	size_t best_i;
	int best_hidden; /* -1: none yet */
};

/* The default version wins over a hidden one, then the lower index (the
 * order in which a scan of the table meets them). */
static int lookup_visit(void *ctx, size_t i, const Elf64_Sym *s)
{
	struct lookup *l = ctx;
	int hidden;

	if (!sym_defined(s))
		return 0;
	hidden = is_hidden(l->e, i);
	if (hidden < 0)
		return hidden;
	if (l->best_hidden < 0 || hidden < l->best_hidden ||
	    (hidden == l->best_hidden && i < l->best_i)) {
		l->best = *s;
		l->best_i = i;
		l->best_hidden = hidden;
	}
	return 0;
}

int ptelf_lookup(const struct ptelf *e, const char *name, Elf64_Sym *ret)
{
	struct lookup l = {.e = e, .best_hidden = -1};
	int r = walk_name(e, name, lookup_visit, &l);

	if (r < 0)
		return r;
	if (l.best_hidden < 0)
		return -ENOENT;
	*ret = l.best;
	return 0;
}

static const char *const malloc_family[] = {
	"malloc",
	"free",
	"calloc",
	"realloc",
	"memalign",
	"posix_memalign",
	"aligned_alloc",
	"valloc",
	"pvalloc",
	"malloc_trim",
	"malloc_usable_size",
	"mallopt",
	"mallinfo",
	"mallinfo2",
	"malloc_stats",
	"malloc_info",
	"cfree",
	"__libc_malloc",
	"__libc_free",
	"__libc_calloc",
	"__libc_realloc",
	"__libc_memalign",
	"__libc_valloc",
	"__libc_pvalloc",
	"__libc_mallopt",
	"__libc_mallinfo",
	"__default_morecore",
	"mcheck",
	"mcheck_pedantic",
	"mcheck_check_all",
	"mprobe",
	"mtrace",
	"muntrace",
	"tr_break",
};
#define N_FAMILY ARRAY_SIZE(malloc_family)

bool ptcall_is_malloc_symbol(const char *name)
{
	for (size_t i = 0; i < N_FAMILY; i++)
		if (streq(name, malloc_family[i]))
			return true;
	return false;
}

static bool is_func(const Elf64_Sym *s)
{
	unsigned t = ELF64_ST_TYPE(s->st_info);

	return sym_defined(s) && (t == STT_FUNC || t == STT_GNU_IFUNC);
}

/* 1 when s is named as one of the malloc family, 0 when not, or -errno. */
static int is_malloc_named(const struct ptelf *e, const Elf64_Sym *s)
{
	char buf[32]; /* longer than any name of the family */
	int r = read_name(e, s->st_name, buf, sizeof(buf));

	return r < 0 ? r : ptcall_is_malloc_symbol(buf);
}

struct zone {
	uint64_t lo, hi, below, above;
};

static int zone_extend(void *ctx, size_t i, const Elf64_Sym *s)
{
	struct zone *z = ctx;

	(void)i;
	if (is_func(s)) {
		z->lo = s->st_value < z->lo ? s->st_value : z->lo;
		if (s->st_value + s->st_size > z->hi)
			z->hi = s->st_value + s->st_size;
	}
	return 0;
}

/* Calls fn for each symbol of [first, end), read PTELF_CHUNK at a time. */
static int scan_syms(const struct ptelf *e, size_t first, size_t end,
		     int (*fn)(const struct ptelf *e, struct zone *z,
			       const Elf64_Sym *s),
		     struct zone *z)
{
	Elf64_Sym c[PTELF_CHUNK];

	for (size_t i = first; i < end; i += PTELF_CHUNK) {
		size_t n = end - i < PTELF_CHUNK ? end - i : PTELF_CHUNK;
		int r = read_syms(e, i, n, c);

		for (size_t k = 0; r >= 0 && k < n; k++)
			r = fn(e, z, &c[k]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A symbol no hash table lists: part of the family by its name. */
static int zone_unhashed(const struct ptelf *e, struct zone *z,
			 const Elf64_Sym *s)
{
	int r = is_func(s) ? is_malloc_named(e, s) : 0;

	return r > 0 ? zone_extend(z, 0, s) : r;
}

/* The nearest other functions below and above the zone. Only a symbol that
 * would move a bound has its name read. */
static int zone_neighbour(const struct ptelf *e, struct zone *z,
			  const Elf64_Sym *s)
{
	uint64_t end = s->st_value + s->st_size;
	bool lower = end <= z->lo && end > z->below;
	bool upper = s->st_value >= z->hi && s->st_value < z->above;
	int r;

	if (!is_func(s) || (!lower && !upper))
		return 0;
	r = is_malloc_named(e, s);
	if (r != 0)
		return r < 0 ? r : 0;
	if (lower)
		z->below = end;
	if (upper)
		z->above = s->st_value;
	return 0;
}

int ptelf_malloc_zone(const struct ptelf *e, uint64_t *ret_lo, uint64_t *ret_hi)
{
	struct zone z = {UINT64_MAX, 0, 0, UINT64_MAX};
	int r = 0;

	/* the family's symbols through the hash table, by name: what
	 * precedes the hashed ones (all of them without a table) by reading
	 * each function's name */
	for (size_t i = 0; e->hash != PTELF_HASH_NONE && i < N_FAMILY; i++) {
		r = walk_name(e, malloc_family[i], zone_extend, &z);
		if (r < 0)
			return r;
	}
	r = scan_syms(e, 1, e->first_hashed, zone_unhashed, &z);
	if (r < 0)
		return r;
	if (z.lo == UINT64_MAX)
		return -ENOENT;
	r = scan_syms(e, 1, e->n_syms, zone_neighbour, &z);
	if (r < 0)
		return r;
	*ret_lo = z.below ? z.below : z.lo;
	*ret_hi = z.above != UINT64_MAX ? z.above : z.hi;
	return 0;
}
