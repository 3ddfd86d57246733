/* SPDX-License-Identifier: Apache-2.0 */
/* rtelf: one dynamic symbol looked up in an ELF file's hash table
 * (.gnu.hash, else .hash) with bounded reads. Pure. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/elf_hash.h"
#include "base/util.h"
#include "forensics/runtimes/rtelf.h"

#define MAX_SHNUM 4096u
#define MAX_CHAIN 4096u
#define MAX_NAME 255u
#define SHT_STRTAB_ 3u
#define SHT_HASH_ 5u
#define SHT_DYNSYM_ 11u
#define SHT_GNU_HASH_ 0x6ffffff6u
#define SYM_SIZE 24u

struct sect {
	uint32_t type, link;
	uint64_t off, size, entsize;
};

struct elf {
	rtelf_pread_fn rd;
	void *ctx;
	uint64_t size;
	struct sect hash, sym, str;
};

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* len bytes at off of section s (off relative to it), all or -EBADMSG. */
static int read_in(const struct elf *e, const struct sect *s, uint64_t off,
		   void *buf, size_t len)
{
	ssize_t r;

	if (off > s->size || len > s->size - off)
		return -EBADMSG;
	r = e->rd(e->ctx, buf, len, s->off + off);
	if (r < 0)
		return (int)r;
	return r == (ssize_t)len ? 0 : -EBADMSG;
}

static int read_u32(const struct elf *e, const struct sect *s, uint64_t off,
		    uint32_t *ret)
{
	uint8_t b[4];
	int r = read_in(e, s, off, b, sizeof(b));

	if (r == 0)
		*ret = le32(b);
	return r;
}

static void sect_of(const uint8_t *sh, struct sect *ret)
{
	ret->type = le32(sh + 4);
	ret->off = le64(sh + 0x18);
	ret->size = le64(sh + 0x20);
	ret->link = le32(sh + 0x28);
	ret->entsize = le64(sh + 0x38);
}

static bool in_file(const struct elf *e, const struct sect *s)
{
	return s->off <= e->size && s->size <= e->size - s->off;
}

/* The hash table, the symbols it indexes and their names. */
static int find_sections(struct elf *e, const uint8_t *sh, unsigned shnum)
{
	int hash = -1;

	/* .gnu.hash first: a binary linked with --hash-style=both has both */
	for (unsigned i = 0; i < shnum && hash < 0; i++)
		if (le32(sh + i * 64u + 4) == SHT_GNU_HASH_)
			hash = (int)i;
	for (unsigned i = 0; i < shnum && hash < 0; i++)
		if (le32(sh + i * 64u + 4) == SHT_HASH_)
			hash = (int)i;
	if (hash < 0)
		return -ENOENT;
	sect_of(sh + hash * 64u, &e->hash);
	if (e->hash.link >= shnum)
		return -EBADMSG;
	sect_of(sh + e->hash.link * 64u, &e->sym);
	if (e->sym.type != SHT_DYNSYM_ || e->sym.entsize != SYM_SIZE ||
	    e->sym.link >= shnum)
		return -EBADMSG;
	sect_of(sh + e->sym.link * 64u, &e->str);
	if (e->str.type != SHT_STRTAB_ || !in_file(e, &e->hash) ||
	    !in_file(e, &e->sym) || !in_file(e, &e->str))
		return -EBADMSG;
	return 0;
}

/* Whether symbol i is name and defined: 1, 0, or -errno. */
static int sym_is(const struct elf *e, uint64_t i, const char *name)
{
	uint8_t s[SYM_SIZE];
	char got[MAX_NAME + 1];
	size_t n = strlen(name);
	uint32_t off;
	int r;

	if (i >= e->sym.size / SYM_SIZE)
		return -EBADMSG;
	r = read_in(e, &e->sym, i * SYM_SIZE, s, sizeof(s));
	if (r < 0)
		return r;
	off = le32(s);
	/* st_shndx 0: SHN_UNDEF, an import */
	if (le16(s + 6) == 0 || off >= e->str.size || n + 1 > e->str.size - off)
		return 0;
	r = read_in(e, &e->str, off, got, n + 1);
	if (r < 0)
		return r;
	return !memcmp(got, name, n) && got[n] == '\0';
}

/* .gnu.hash: nbuckets, symoffset, bloom words (8 bytes each), shift;
 * the buckets; the chain from symoffset on, whose low bit ends it. */
static int lookup_gnu(const struct elf *e, const char *name)
{
	uint8_t hd[16];
	uint32_t h = elf_gnu_hash(name), nb, symoff, bloom, sym, v = 0;
	uint64_t buckets, chain;
	int r = read_in(e, &e->hash, 0, hd, sizeof(hd));

	if (r < 0)
		return r;
	nb = le32(hd);
	symoff = le32(hd + 4);
	bloom = le32(hd + 8);
	if (!nb)
		return -EBADMSG;
	buckets = 16 + (uint64_t)bloom * 8;
	chain = buckets + (uint64_t)nb * 4;
	r = read_u32(e, &e->hash, buckets + (uint64_t)(h % nb) * 4, &sym);
	if (r < 0 || sym < symoff)
		return r < 0 ? r : 0;
	for (unsigned k = 0; k < MAX_CHAIN; k++, sym++) {
		r = read_u32(e, &e->hash, chain + (uint64_t)(sym - symoff) * 4,
			     &v);
		if (r < 0)
			return r;
		if ((v | 1) == (h | 1)) {
			r = sym_is(e, sym, name);
			if (r != 0)
				return r;
		}
		if (v & 1)
			return 0;
	}
	return -EBADMSG;
}

/* .hash: nbucket, nchain, the buckets, the chains; 0 ends a chain. */
static int lookup_sysv(const struct elf *e, const char *name)
{
	uint32_t nb, nc, y;
	int r = read_u32(e, &e->hash, 0, &nb);

	if (r == 0)
		r = read_u32(e, &e->hash, 4, &nc);
	if (r < 0)
		return r;
	if (!nb)
		return -EBADMSG;
	r = read_u32(e, &e->hash, 8 + (uint64_t)(elf_sysv_hash(name) % nb) * 4,
		     &y);
	for (unsigned k = 0; r == 0 && y && k < MAX_CHAIN; k++) {
		if (y >= nc)
			return -EBADMSG;
		r = sym_is(e, y, name);
		if (r != 0)
			return r;
		r = read_u32(e, &e->hash, 8 + ((uint64_t)nb + y) * 4, &y);
	}
	return r < 0 ? r : y ? -EBADMSG : 0;
}

int rtelf_has_symbol(rtelf_pread_fn rd, void *ctx, uint64_t size,
		     const char *name)
{
	struct elf e = {.rd = rd, .ctx = ctx, .size = size};
	uint8_t eh[64];
	uint64_t shoff;
	unsigned shnum;
	_cleanup_free_ uint8_t *sh = NULL;
	ssize_t got;
	int r;

	if (!name || !name[0] || strlen(name) > MAX_NAME)
		return 0;
	if (size < sizeof(eh))
		return -ENOEXEC;
	got = rd(ctx, eh, sizeof(eh), 0);
	if (got < 0)
		return (int)got;
	if (got != (ssize_t)sizeof(eh) ||
	    memcmp(eh,
		   "\x7f"
		   "ELF",
		   4) ||
	    eh[4] != 2 || eh[5] != 1)
		return -ENOEXEC;
	shoff = le64(eh + 0x28);
	shnum = le16(eh + 0x3c);
	if (!shoff || !shnum)
		return -ENOENT;
	if (le16(eh + 0x3a) != 64 || shnum > MAX_SHNUM || shoff > size ||
	    shnum * 64ull > size - shoff)
		return -EBADMSG;
	sh = malloc(shnum * 64u);
	if (!sh)
		return -ENOMEM;
	got = rd(ctx, sh, shnum * 64u, shoff);
	if (got < 0)
		return (int)got;
	if (got != (ssize_t)(shnum * 64u))
		return -EBADMSG;
	r = find_sections(&e, sh, shnum);
	if (r < 0)
		return r;
	return e.hash.type == SHT_GNU_HASH_ ? lookup_gnu(&e, name)
					    : lookup_sysv(&e, name);
}

struct mem_file {
	const uint8_t *buf;
	size_t len;
};

static ssize_t mem_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
	const struct mem_file *f = ctx;

	if (off > f->len)
		return 0;
	len = len < f->len - off ? len : f->len - off;
	memcpy(buf, f->buf + off, len);
	return (ssize_t)len;
}

int rtelf_has_symbol_mem(const void *buf, size_t len, const char *name)
{
	struct mem_file f = {buf, len};

	return rtelf_has_symbol(mem_pread, &f, len, name);
}
