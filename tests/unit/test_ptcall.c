/* SPDX-License-Identifier: Apache-2.0 */
/* ptcall's pure parts: malloc_info XML, maps lines, ELF dynamic symbols,
 * allocator.json. Fixtures: tests/fixtures/ptcall/ (README there). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sys/mman.h>
#include <unistd.h>

#include "inspect/ptcall_internal.h"
#include "base/elf_hash.h"
#include "base/fileio.h"
#include "inspect/ptcall.h"
#include "base/strbuf.h"

#define FIX "tests/fixtures/ptcall/"

static void load(const char *name, struct strbuf *sb)
{
	strbuf_init(sb, 1u << 20);
	cr_assert_eq(read_file_at(AT_FDCWD, name, 1u << 20, sb), 0, "%s", name);
}

static void parse_fixture(const char *name, struct ptcall_malloc_info *mi)
{
	struct strbuf sb;

	load(name, &sb);
	cr_assert_eq(ptcall_parse_malloc_info(sb.buf, sb.len, mi), 0);
	strbuf_release(&sb);
}

Test(ptcall_xml, four_thread_arenas)
{
	struct ptcall_malloc_info mi;
	uint64_t sum = 0, rest = 0;

	parse_fixture(FIX "malloc_info-4threads.xml", &mi);
	cr_assert_eq(mi.n_arenas, 5);
	cr_expect_eq(mi.arenas[0].nr, 0);
	cr_expect_eq(mi.arenas[0].system_current, 147456);
	cr_expect_eq(mi.arenas[0].rest_bytes, 132784);
	cr_expect_eq(mi.arenas[0].subheaps, 0, "the main arena has none");
	for (size_t i = 1; i < 5; i++) {
		cr_expect_eq(mi.arenas[i].nr, (int)i);
		cr_expect_eq(mi.arenas[i].rest_count, 1024);
		cr_expect_eq(mi.arenas[i].rest_bytes, 31996687);
		cr_expect_eq(mi.arenas[i].system_current, 32509952);
		cr_expect_eq(mi.arenas[i].subheaps, 1);
	}
	for (size_t i = 0; i < 5; i++) {
		sum += mi.arenas[i].system_current;
		rest += mi.arenas[i].rest_bytes;
	}
	cr_expect_eq(mi.total.nr, -1);
	cr_expect_eq(mi.total.system_current, 130187264);
	cr_expect_eq(sum, mi.total.system_current);
	cr_expect_eq(rest, mi.total.rest_bytes);
	cr_expect_eq(mi.total.rest_count, 4097);
	cr_expect_eq(mi.mmap_count, 4);
	cr_expect_eq(mi.mmap_bytes, 2113536);
	ptcall_malloc_info_release(&mi);
}

Test(ptcall_xml, busy_process_with_size_buckets)
{
	struct ptcall_malloc_info mi;
	uint64_t sum = 0;

	parse_fixture(FIX "malloc_info-stress.xml", &mi);
	cr_assert_eq(mi.n_arenas, 4);
	for (size_t i = 0; i < mi.n_arenas; i++)
		sum += mi.arenas[i].system_current;
	cr_expect_eq(sum, mi.total.system_current);
	cr_expect_eq(mi.total.system_current, 3461120);
	cr_expect_eq(mi.total.system_max, 7254016);
	cr_expect_eq(mi.total.rest_bytes, 3106009);
	ptcall_malloc_info_release(&mi);
}

Test(ptcall_xml, main_arena_only)
{
	struct ptcall_malloc_info mi;

	parse_fixture(FIX "malloc_info-sleep.xml", &mi);
	cr_assert_eq(mi.n_arenas, 1);
	cr_expect_eq(mi.arenas[0].system_current, 135168);
	cr_expect_eq(mi.arenas[0].rest_bytes, 111232);
	cr_expect_eq(mi.total.system_current, 135168);
	cr_expect_eq(mi.mmap_count, 0);
	ptcall_malloc_info_release(&mi);
}

Test(ptcall_xml, rejects_what_is_not_malloc_info)
{
	static const char *bad[] = {
		"",
		"hello",
		"<heap nr=\"0\">",
		"<malloc version=\"1\">\n<heap nr=\"x\">\n</heap></malloc>",
		"<malloc version=\"1\">\n<heap nr=\"0\">\n<system type="
		"\"current\" size=\"-5\"/>",
		"<malloc version=\"1\"><total type=\"mmap\" count=\"1\" "
		"size=\"99999999999999999999999\"/>",
		"<malloc version=\"1\"><heap nr=\"0\"",
	};
	struct ptcall_malloc_info mi = {0};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		cr_expect_eq(
			ptcall_parse_malloc_info(bad[i], strlen(bad[i]), &mi),
			-EBADMSG, "case %zu", i);
	cr_expect_null(mi.arenas, "untouched on failure");
}

Test(ptcall_xml, every_truncation_is_safe)
{
	struct strbuf sb;
	struct ptcall_malloc_info mi;

	load(FIX "malloc_info-4threads.xml", &sb);
	for (size_t n = 0; n < sb.len; n += 7) {
		char *copy = strndup(sb.buf, n);
		int r = ptcall_parse_malloc_info(copy, n, &mi);

		cr_assert(r == 0 || r == -EBADMSG, "at %zu: %d", n, r);
		if (r == 0) {
			cr_expect_leq(mi.n_arenas, 5);
			ptcall_malloc_info_release(&mi);
		}
		free(copy);
	}
	strbuf_release(&sb);
}

Test(ptcall_maps, real_process)
{
	struct strbuf sb;
	struct ptmaps m;
	const struct ptvma *v;

	load(FIX "maps-reader.txt", &sb);
	cr_assert_eq(ptmaps_parse(sb.buf, sb.len, &m), 0);
	cr_assert_eq(m.n, 41);
	cr_expect_eq(m.v[0].start, 0x55c007144000ull);
	cr_expect_eq(m.v[0].end, 0x55c007145000ull);
	cr_expect_str_eq(m.v[0].perms, "r--p");
	cr_expect_eq(m.v[0].inode, 5334809);
	cr_expect_str_eq(m.v[0].path, "/opt/oomlens/victims/ptcall_reader");
	v = ptmaps_find(&m, 0x7f89303d7000ull + 0x1234);
	cr_assert_not_null(v);
	cr_expect_str_eq(v->perms, "r-xp");
	cr_expect_eq(v->offset, 0x26000);
	cr_expect_str_eq(v->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	cr_expect_null(ptmaps_find(&m, 0x1000));
	ptmaps_release(&m);
	strbuf_release(&sb);
}

Test(ptcall_maps, hostile_paths_and_no_final_newline)
{
	struct strbuf sb;
	struct ptmaps m;

	load(FIX "maps-hostile.txt", &sb);
	cr_assert_eq(ptmaps_parse(sb.buf, sb.len, &m), 0);
	cr_assert_eq(m.n, 4);
	cr_expect_str_eq(m.v[0].path, "/usr/bin/my app (v2)");
	cr_expect_str_eq(m.v[1].path, "/usr/lib/libc.so.6 (deleted)");
	cr_expect_eq(m.v[1].offset, 0x51000);
	cr_expect_str_eq(m.v[2].path, "");
	cr_expect_str_eq(m.v[3].path, "[stack]");
	ptmaps_release(&m);
	strbuf_release(&sb);
}

Test(ptcall_maps, malformed_lines)
{
	static const char *bad[] = {
		"zz-1000 r--p 00000000 00:00 0\n",
		"1000 r--p 00000000 00:00 0\n",
		"2000-1000 r--p 00000000 00:00 0\n",
		"1000-2000 r--p\n",
		"1000-2000 r--p 0 00 0\n",
		"1000-2000 rw 00000000 00:00 0\n",
		/* unsorted and overlapping: not what the kernel prints, and
		 * ptmaps_find's binary search would miss mappings */
		"3000-4000 r--p 00000000 00:00 0\n1000-2000 r--p 00000000 "
		"00:00 0\n",
		"1000-3000 r--p 00000000 00:00 0\n2000-4000 r--p 00000000 "
		"00:00 0\n",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *copy = strdup(bad[i]);
		struct ptmaps m = {0};

		cr_expect_eq(ptmaps_parse(copy, strlen(copy), &m), -EBADMSG,
			     "case %zu: %s", i, bad[i]);
		cr_expect_null(m.v);
		free(copy);
	}
}

Test(ptcall_elf, glibc_symbols_and_malloc_zone)
{
	static const char libc[] = "/lib/x86_64-linux-gnu/libc.so.6";
	Elf64_Sym mallocs, fr, fc, mi2, none;
	struct ptelf e;
	uint64_t lo, hi;
	int fd = open(libc, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || PTARCH_EM != EM_X86_64)
		cr_skip_test("%s absent or not x86_64", libc);
	cr_assert_eq(ptelf_load(fd, &e), 0);
	close(fd);
	cr_expect_gt(e.n_syms, 1000);
	cr_assert_eq(ptelf_lookup(&e, "malloc", &mallocs), 0);
	cr_assert_eq(ptelf_lookup(&e, "free", &fr), 0);
	cr_assert_eq(ptelf_lookup(&e, "fclose", &fc), 0);
	cr_expect_eq(ptelf_lookup(&e, "mallinfo2", &mi2), 0,
		     "glibc 2.33+ on this host");
	cr_expect_eq(ptelf_lookup(&e, "no_such_symbol_at_all", &none), -ENOENT);
	cr_assert_eq(ptelf_malloc_zone(&e, &lo, &hi), 0);
	cr_expect(mallocs.st_value >= lo && mallocs.st_value < hi);
	cr_expect(fr.st_value >= lo && fr.st_value < hi);
	cr_expect(fc.st_value < lo || fc.st_value >= hi, "fclose outside");
	cr_expect_lt(hi - lo, 1u << 20, "a zone, not all of libc");
	ptelf_release(&e);
}

Test(ptcall_elf, rejects_non_elf)
{
	struct ptelf e;
	int fd = open(FIX "maps-reader.txt", O_RDONLY | O_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_expect_eq(ptelf_load(fd, &e), -ENOEXEC);
	close(fd);
}

Test(ptcall_json, allocator_json_from_figures)
{
	struct ptcall_mallinfo2 mi = {.arena = 130187264,
				      .hblks = 4,
				      .hblkhd = 2113536,
				      .uordblks = 2067732,
				      .fordblks = 128119532,
				      .keepcost = 132784};
	struct ptcall_report rep = {.tid = 42, .stopped_us = 300};
	struct ptcall_malloc_info info;
	struct json_object *o, *f, *a;

	parse_fixture(FIX "malloc_info-4threads.xml", &info);
	cr_assert_eq(ptcall_allocator_json_from(&mi, &info, &rep, &o), 0);
	cr_assert(json_object_object_get_ex(o, "retained_bytes", &f));
	cr_expect_eq(json_object_get_uint64(f), 128119532);
	cr_assert(json_object_object_get_ex(o, "in_use_bytes", &f));
	cr_expect_eq(json_object_get_uint64(f), 2067732 + 2113536);
	cr_assert(json_object_object_get_ex(o, "arena_count", &f));
	cr_expect_eq(json_object_get_uint64(f), 5);
	cr_assert(json_object_object_get_ex(o, "arenas", &a));
	cr_assert_eq(json_object_array_length(a), 5);
	cr_assert(json_object_object_get_ex(json_object_array_get_idx(a, 1),
					    "free_bytes", &f));
	cr_expect_eq(json_object_get_uint64(f), 31996687);
	cr_assert(json_object_object_get_ex(o, "source", &f));
	cr_expect_str_eq(json_object_get_string(f), "ptrace");
	json_object_put(o);
	ptcall_malloc_info_release(&info);
}

Test(ptcall_elf, missing_mallinfo2_is_explained)
{
	struct ptcall_session s = {.pid = 42};
	struct ptcall_report rep = {0};
	uint64_t addr = 7;
	int fd = open("/bin/true", O_RDONLY | O_CLOEXEC);

	/* an ELF whose dynsym imports but does not define mallinfo2 stands
	 * in for a glibc older than 2.33 */
	if (fd < 0 || PTARCH_EM != EM_X86_64)
		cr_skip_test("/bin/true absent or not x86_64");
	s.rep = &rep;
	cr_assert_eq(ptelf_load(fd, &s.libc), 0);
	close(fd);
	cr_expect_eq(ptcall_resolve(&s, "mallinfo2", &addr), -ENOSYS);
	cr_expect_eq(addr, 7, "untouched on failure");
	cr_expect(strstr(rep.reason, "glibc < 2.33"), "%s", rep.reason);
	ptelf_release(&s.libc);
}

/* ---- lookups through the hash tables, and hostile ELF files ----
 * The host's libc.so.6 (glibc 2.36 here: .gnu.hash and .hash both) is
 * copied into a memfd, and patched there for the malformed cases. */

static const char host_libc[] = "/lib/x86_64-linux-gnu/libc.so.6";

struct elf_copy {
	struct strbuf sb;
	Elf64_Shdr *sh;
	unsigned n;
};

static void copy_libc(struct elf_copy *c)
{
	const Elf64_Ehdr *eh;

	if (access(host_libc, R_OK) != 0 || PTARCH_EM != EM_X86_64)
		cr_skip_test("%s absent or not x86_64", host_libc);
	strbuf_init(&c->sb, 64u << 20);
	cr_assert_eq(read_file_at(AT_FDCWD, host_libc, 64u << 20, &c->sb), 0);
	eh = (const Elf64_Ehdr *)c->sb.buf;
	cr_assert_leq(eh->e_shoff + eh->e_shnum * sizeof(Elf64_Shdr),
		      c->sb.len);
	c->sh = (Elf64_Shdr *)(c->sb.buf + eh->e_shoff);
	c->n = eh->e_shnum;
}

static Elf64_Shdr *section(struct elf_copy *c, uint32_t type)
{
	for (unsigned i = 0; i < c->n; i++)
		if (c->sh[i].sh_type == type)
			return &c->sh[i];
	cr_assert_fail("no section of type %#x in %s", type, host_libc);
	return NULL;
}

static uint32_t *words(struct elf_copy *c, const Elf64_Shdr *sh)
{
	return (uint32_t *)(c->sb.buf + sh->sh_offset);
}

/* The copy as it is now, in a memfd of len bytes. */
static int memfd_of(const struct elf_copy *c, size_t len)
{
	int fd = memfd_create("elf", MFD_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, c->sb.buf, len), (ssize_t)len);
	return fd;
}

/* Every defined name of the table read whole is found the same way in e;
 * returns how many were compared. */
static size_t compare_lookups(const struct ptelf *whole, const struct ptelf *e)
{
	size_t n = 0;

	for (size_t i = 1; i < whole->n_syms; i++) {
		const char *name = whole->strs + whole->syms[i].st_name;
		Elf64_Sym a, b;

		/* defined as ptelf_lookup() takes it: a section, an address */
		if (whole->syms[i].st_shndx == SHN_UNDEF ||
		    whole->syms[i].st_value == 0 || strlen(name) > 63)
			continue;
		cr_assert_eq(ptelf_lookup(whole, name, &a), 0, "%s", name);
		cr_assert_eq(ptelf_lookup(e, name, &b), 0, "%s", name);
		cr_assert_eq(a.st_value, b.st_value, "%s", name);
		cr_assert_eq(a.st_size, b.st_size, "%s", name);
		cr_assert_eq(a.st_info, b.st_info, "%s", name);
		n++;
	}
	return n;
}

static void expect_same_zone(const struct ptelf *whole, const struct ptelf *e)
{
	uint64_t lo, hi, lo2, hi2;

	cr_assert_eq(ptelf_malloc_zone(whole, &lo, &hi), 0);
	cr_assert_eq(ptelf_malloc_zone(e, &lo2, &hi2), 0);
	cr_expect_eq(lo, lo2, "%#lx vs %#lx", lo, lo2);
	cr_expect_eq(hi, hi2, "%#lx vs %#lx", hi, hi2);
}

Test(ptcall_elf, gnu_hash_lookups_match_the_whole_tables)
{
	struct elf_copy c;
	struct ptelf whole, e;
	Elf64_Sym s;
	int fd;

	copy_libc(&c);
	fd = memfd_of(&c, c.sb.len);
	cr_assert_eq(ptelf_load_whole(fd, &whole), 0);
	cr_assert_eq(ptelf_load(fd, &e), 0);
	close(fd);
	cr_expect_eq(e.hash, PTELF_HASH_GNU);
	cr_expect_null(e.syms, "nothing read whole");
	cr_expect_null(e.strs);
	cr_expect_eq(e.n_syms, whole.n_syms);
	cr_expect_gt(compare_lookups(&whole, &e), 2000);
	expect_same_zone(&whole, &e);
	/* memcpy has a hidden GLIBC_2.2.5 version and a default one */
	cr_assert_eq(ptelf_lookup(&e, "memcpy", &s), 0);
	cr_expect_eq(ptelf_lookup(&e, "no_such_symbol_at_all", &s), -ENOENT);
	cr_expect_eq(ptelf_lookup(&e, "malloc_trim", &s), 0);
	ptelf_release(&e);
	ptelf_release(&whole);
	strbuf_release(&c.sb);
}

/* The copy, loaded, takes its hash table as kind and answers as whole. */
static void expect_same_answers(const struct elf_copy *c,
				const struct ptelf *whole, enum ptelf_hash kind)
{
	struct ptelf e;
	int fd = memfd_of(c, c->sb.len);

	cr_assert_eq(ptelf_load(fd, &e), 0);
	close(fd);
	cr_expect_eq(e.hash, kind);
	cr_expect_eq(e.syms == NULL, kind != PTELF_HASH_NONE,
		     "read whole only without a table");
	cr_expect_gt(compare_lookups(whole, &e), 2000);
	expect_same_zone(whole, &e);
	ptelf_release(&e);
}

Test(ptcall_elf, sysv_hash_and_no_hash)
{
	struct elf_copy c;
	struct ptelf whole;
	int fd;

	copy_libc(&c);
	section(&c, SHT_GNU_HASH)->sh_type = SHT_PROGBITS;
	fd = memfd_of(&c, c.sb.len);
	cr_assert_eq(ptelf_load_whole(fd, &whole), 0);
	close(fd);
	expect_same_answers(&c, &whole, PTELF_HASH_SYSV);
	/* no table at all: read whole, as before */
	section(&c, SHT_HASH)->sh_type = SHT_PROGBITS;
	expect_same_answers(&c, &whole, PTELF_HASH_NONE);
	ptelf_release(&whole);
	strbuf_release(&c.sb);
}

/* Loads the patched copy (GNU hash) and looks malloc up. */
static int lookup_in_copy(struct elf_copy *c, size_t len, int *ret_load)
{
	struct ptelf e;
	Elf64_Sym s;
	int fd = memfd_of(c, len), r;

	*ret_load = ptelf_load(fd, &e);
	close(fd);
	if (*ret_load < 0)
		return *ret_load;
	r = ptelf_lookup(&e, "malloc", &s);
	ptelf_release(&e);
	return r;
}

Test(ptcall_elf, malformed_gnu_hash)
{
	struct elf_copy c;
	Elf64_Shdr *gh;
	uint32_t *w, nb, symoff, bloom, nsyms, *bucket, saved;
	size_t nchains;
	int lr;

	copy_libc(&c);
	gh = section(&c, SHT_GNU_HASH);
	w = words(&c, gh);
	nb = w[0], symoff = w[1], bloom = w[2];
	nsyms = section(&c, SHT_DYNSYM)->sh_size / sizeof(Elf64_Sym);
	bucket = w + 4 + 2 * bloom + elf_gnu_hash("malloc") % nb;
	cr_assert_eq(lookup_in_copy(&c, c.sb.len, &lr), 0, "unpatched");

	saved = *bucket;
	*bucket = nsyms + 5; /* past .dynsym */
	cr_expect_eq(lookup_in_copy(&c, c.sb.len, &lr), -ENOEXEC);
	cr_expect_eq(lr, 0, "the header is sound");
	*bucket = symoff - 1; /* an index the table does not hash */
	cr_expect_eq(lookup_in_copy(&c, c.sb.len, &lr), -ENOEXEC);
	*bucket = saved;

	/* no chain ends: the walk stops at the cap or the table's end */
	nchains = (gh->sh_size - 16 - 8 * bloom - 4 * nb) / 4;
	for (size_t i = 0; i < nchains; i++)
		w[4 + 2 * bloom + nb + i] &= ~1u;
	cr_expect_eq(lookup_in_copy(&c, c.sb.len, &lr), -ENOEXEC);
	for (size_t i = 0; i < nchains; i++)
		w[4 + 2 * bloom + nb + i] |= 1u; /* each its own chain */

	w[0] = 0; /* no buckets */
	cr_expect_eq(lookup_in_copy(&c, c.sb.len, &lr), -ENOEXEC);
	cr_expect_eq(lr, -ENOEXEC);
	w[0] = nb;
	w[1] = nsyms + 1; /* symoffset past the symbols */
	lookup_in_copy(&c, c.sb.len, &lr);
	cr_expect_eq(lr, -ENOEXEC);
	w[1] = symoff;
	w[2] = 0x7fffffff; /* a bloom filter larger than the section */
	lookup_in_copy(&c, c.sb.len, &lr);
	cr_expect_eq(lr, -ENOEXEC);
	w[2] = bloom;
	gh->sh_offset = c.sb.len - 8; /* the section past the file's end */
	lookup_in_copy(&c, c.sb.len, &lr);
	cr_expect_eq(lr, -ENOEXEC);
	strbuf_release(&c.sb);
}

Test(ptcall_elf, sysv_hash_cycle)
{
	struct elf_copy c;
	uint32_t *w, nb;
	int lr;

	copy_libc(&c);
	section(&c, SHT_GNU_HASH)->sh_type = SHT_PROGBITS;
	w = words(&c, section(&c, SHT_HASH));
	nb = w[0];
	for (uint32_t i = 0; i < w[1]; i++)
		w[2 + nb + i] = i; /* every chain loops on itself */
	cr_expect_eq(lookup_in_copy(&c, c.sb.len, &lr), -ENOEXEC);
	cr_expect_eq(lr, 0);
	w[2 + nb + 1] = 0;
	for (uint32_t i = 0; i < nb; i++)
		w[2 + i] = w[1] + 7; /* every bucket out of range */
	cr_expect_eq(lookup_in_copy(&c, c.sb.len, &lr), -ENOEXEC);
	strbuf_release(&c.sb);
}

Test(ptcall_elf, truncated_file)
{
	struct elf_copy c;
	const Elf64_Shdr *ds;
	struct ptelf e;
	Elf64_Sym s;
	int lr, fd;

	copy_libc(&c);
	ds = section(&c, SHT_DYNSYM);
	/* cut inside .dynsym: the section headers (at the end) are gone */
	cr_expect_eq(lookup_in_copy(&c, ds->sh_offset + 100, &lr), -ENOEXEC);
	cr_expect_eq(lr, -ENOEXEC);
	cr_expect_eq(lookup_in_copy(&c, 40, &lr), -ENOEXEC);
	/* cut after the load, as a pod rewriting its libc could */
	fd = memfd_of(&c, c.sb.len);
	cr_assert_eq(ptelf_load(fd, &e), 0);
	cr_assert_eq(ftruncate(fd, (off_t)ds->sh_offset), 0);
	cr_expect_eq(ptelf_lookup(&e, "malloc", &s), -ENOEXEC);
	cr_expect_eq(ptelf_malloc_zone(&e, &(uint64_t){0}, &(uint64_t){0}),
		     -ENOEXEC);
	close(fd);
	ptelf_release(&e);
	strbuf_release(&c.sb);
}

Test(ptcall_elf, rejects_what_is_not_a_regular_file)
{
	struct ptelf e;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_expect_eq(ptelf_load(fd, &e), -ENOEXEC);
	close(fd);
}
