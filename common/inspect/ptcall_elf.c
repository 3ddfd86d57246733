/* SPDX-License-Identifier: Apache-2.0 */
/* ptcall: /proc/<pid>/maps lines and the dynamic symbols of ELF files. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/parse.h"
#include "base/util.h"
#include "ptcall_internal.h"

#define PTELF_MAX_SECTIONS 4096u
#define PTELF_MAX_TABLE (64u << 20)

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

static int read_table(int fd, const Elf64_Shdr *sh, void **ret, size_t *ret_n,
		      size_t entsize)
{
	void *buf;
	int r;

	if (sh->sh_size > PTELF_MAX_TABLE || (entsize && sh->sh_size % entsize))
		return -ENOEXEC;
	buf = malloc(sh->sh_size + 1);
	if (!buf)
		return -ENOMEM;
	r = pread_all(fd, buf, sh->sh_size, sh->sh_offset);
	if (r < 0) {
		free(buf);
		return r;
	}
	((char *)buf)[sh->sh_size] = '\0';
	*ret = buf;
	*ret_n = entsize ? sh->sh_size / entsize : sh->sh_size;
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

static int load_sections(int fd, const Elf64_Ehdr *eh, struct ptelf *e)
{
	_cleanup_free_ Elf64_Shdr *sh = NULL;
	const Elf64_Shdr *dynsym = NULL, *versym = NULL;
	size_t n;
	int r;

	sh = calloc(eh->e_shnum ? eh->e_shnum : 1, sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	r = pread_all(fd, sh, eh->e_shnum * sizeof(*sh), eh->e_shoff);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type == SHT_DYNSYM)
			dynsym = &sh[i];
		else if (sh[i].sh_type == SHT_GNU_versym)
			versym = &sh[i];
	}
	if (!dynsym || dynsym->sh_link >= eh->e_shnum)
		return -ENOENT;
	r = read_table(fd, dynsym, (void **)&e->syms, &e->n_syms,
		       sizeof(Elf64_Sym));
	if (r < 0)
		return r;
	r = read_table(fd, &sh[dynsym->sh_link], (void **)&e->strs,
		       &e->strs_len, 0);
	if (r < 0)
		return r;
	if (versym && read_table(fd, versym, (void **)&e->versym, &n, 2) == 0 &&
	    n != e->n_syms) {
		free(e->versym); /* inconsistent: ignore versions */
		e->versym = NULL;
	}
	return 0;
}

int ptelf_load(int fd, struct ptelf *ret)
{
	struct ptelf e = {0};
	Elf64_Ehdr eh;
	int r;

	r = pread_all(fd, &eh, sizeof(eh), 0);
	if (r < 0)
		return r;
	r = check_ehdr(&eh);
	if (r < 0)
		return r;
	r = load_first_load(fd, &eh, &e);
	if (r >= 0)
		r = load_sections(fd, &eh, &e);
	if (r < 0) {
		ptelf_release(&e);
		return r;
	}
	*ret = e;
	return 0;
}

void ptelf_release(struct ptelf *e)
{
	free(e->syms);
	free(e->strs);
	free(e->versym);
	memset(e, 0, sizeof(*e));
}

const char *ptelf_name(const struct ptelf *e, size_t i)
{
	uint32_t off = e->syms[i].st_name;

	return off < e->strs_len ? e->strs + off : "";
}

static bool sym_defined(const Elf64_Sym *s)
{
	return s->st_shndx != SHN_UNDEF && s->st_value != 0;
}

const Elf64_Sym *ptelf_lookup(const struct ptelf *e, const char *name)
{
	const Elf64_Sym *found = NULL;

	for (size_t i = 1; i < e->n_syms; i++) {
		if (!sym_defined(&e->syms[i]) || !streq(ptelf_name(e, i), name))
			continue;
		/* 0x8000: hidden (non-default) version, e.g. memcpy@GLIBC_2.2.5
		 */
		if (!e->versym || !(e->versym[i] & 0x8000))
			return &e->syms[i];
		if (!found)
			found = &e->syms[i];
	}
	return found;
}

bool ptcall_is_malloc_symbol(const char *name)
{
	static const char *const family[] = {
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

	for (size_t i = 0; i < ARRAY_SIZE(family); i++)
		if (streq(name, family[i]))
			return true;
	return false;
}

static bool is_func(const Elf64_Sym *s)
{
	unsigned t = ELF64_ST_TYPE(s->st_info);

	return sym_defined(s) && (t == STT_FUNC || t == STT_GNU_IFUNC);
}

int ptelf_malloc_zone(const struct ptelf *e, uint64_t *ret_lo, uint64_t *ret_hi)
{
	uint64_t lo = UINT64_MAX, hi = 0, below = 0, above = UINT64_MAX;

	for (size_t i = 1; i < e->n_syms; i++) {
		const Elf64_Sym *s = &e->syms[i];

		if (is_func(s) && ptcall_is_malloc_symbol(ptelf_name(e, i))) {
			lo = s->st_value < lo ? s->st_value : lo;
			if (s->st_value + s->st_size > hi)
				hi = s->st_value + s->st_size;
		}
	}
	if (lo == UINT64_MAX)
		return -ENOENT;
	for (size_t i = 1; i < e->n_syms; i++) {
		const Elf64_Sym *s = &e->syms[i];
		uint64_t end = s->st_value + s->st_size;

		if (!is_func(s) || ptcall_is_malloc_symbol(ptelf_name(e, i)))
			continue;
		if (end <= lo && end > below)
			below = end;
		if (s->st_value >= hi && s->st_value < above)
			above = s->st_value;
	}
	*ret_lo = below ? below : lo;
	*ret_hi = above != UINT64_MAX ? above : hi;
	return 0;
}
