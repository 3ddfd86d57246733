/* SPDX-License-Identifier: Apache-2.0 */
/* ptcall's pure parts: malloc_info XML, maps lines, ELF dynamic symbols,
 * allocator.json. Fixtures: tests/fixtures/ptcall/ (README there). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <unistd.h>

#include "inspect/ptcall_internal.h"
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
	const Elf64_Sym *mallocs, *fr, *fc, *mi2;
	struct ptelf e;
	uint64_t lo, hi;
	int fd = open(libc, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || PTARCH_EM != EM_X86_64)
		cr_skip_test("%s absent or not x86_64", libc);
	cr_assert_eq(ptelf_load(fd, &e), 0);
	close(fd);
	cr_expect_gt(e.n_syms, 1000);
	mallocs = ptelf_lookup(&e, "malloc");
	fr = ptelf_lookup(&e, "free");
	fc = ptelf_lookup(&e, "fclose");
	mi2 = ptelf_lookup(&e, "mallinfo2");
	cr_assert(mallocs && fr && fc);
	cr_expect_not_null(mi2, "glibc 2.33+ on this host");
	cr_expect_null(ptelf_lookup(&e, "no_such_symbol_at_all"));
	cr_assert_eq(ptelf_malloc_zone(&e, &lo, &hi), 0);
	cr_expect(mallocs->st_value >= lo && mallocs->st_value < hi);
	cr_expect(fr->st_value >= lo && fr->st_value < hi);
	cr_expect(fc->st_value < lo || fc->st_value >= hi, "fclose outside");
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
