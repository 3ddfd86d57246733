/* SPDX-License-Identifier: Apache-2.0 */
/* rtelf (forensics/runtimes/rtelf.c): a dynamic symbol looked up through
 * an ELF file's .gnu.hash or .hash, on the small shared objects of
 * tests/fixtures/rtelf/ (README.md says how they are built), on lying
 * headers, on every prefix of a file, and on the interpreters installed
 * here when they are. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "forensics/runtimes/rtelf.h"
#include "runtime_fixture.h"

#define FIX "tests/fixtures/rtelf/"

Test(rtelf, symbol_table)
{
	static const struct {
		const char *file, *name;
		int r;
	} rows[] = {
		/* .gnu.hash, 300 fillers beside: chains of several */
		{FIX "gnu-node.so", "napi_create_object", 1},
		{FIX "gnu-node.so", "filler_0", 1},
		{FIX "gnu-node.so", "filler_299", 1},
		{FIX "gnu-node.so", "filler_300", 0},
		{FIX "gnu-node.so", "_PyRuntime", 0},
		{FIX "gnu-node.so", "napi_create_objec", 0},
		{FIX "gnu-node.so", "", 0},
		/* the older .hash */
		{FIX "sysv-python.so", "_PyRuntime", 1},
		{FIX "sysv-python.so", "filler_150", 1},
		{FIX "sysv-python.so", "napi_create_object", 0},
		{FIX "sysv-python.so", "_PyRuntimeX", 0},
		/* imported (undefined) is not defined */
		{FIX "imports.so", "napi_create_object", 0},
		{FIX "imports.so", "_PyRuntime", 0},
		{FIX "imports.so", "call", 1},
		/* not ELF */
		{FIX "README.md", "napi_create_object", -ENOEXEC},
		{FIX "mk.sh", "x", -ENOEXEC},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct strbuf sb;

		fixture_load(rows[i].file, &sb);
		cr_expect_eq(rtelf_has_symbol_mem(sb.buf, sb.len, rows[i].name),
			     rows[i].r, "%s %s", rows[i].file, rows[i].name);
		strbuf_release(&sb);
	}
}

/* Every prefix of a file is refused: its section headers are at its end. */
Test(rtelf, truncated)
{
	static const char *const files[] = {FIX "gnu-node.so",
					    FIX "sysv-python.so"};

	for (size_t f = 0; f < ARRAY_SIZE(files); f++) {
		struct strbuf sb;

		fixture_load(files[f], &sb);
		for (size_t n = 0; n < sb.len; n += 1 + n / 64)
			cr_expect_lt(
				rtelf_has_symbol_mem(sb.buf, n, "_PyRuntime"),
				0, "%s: %zu", files[f], n);
		strbuf_release(&sb);
	}
}

static uint64_t rd64(const char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Headers that lie: too many sections, a wrong entry size, a hash table
 * linked to something that is not .dynsym, a table with no buckets, a
 * symbol table past the file. */
Test(rtelf, hostile_headers)
{
	struct strbuf sb;
	char *c;
	uint64_t shoff, hash_off;

	fixture_load(FIX "gnu-node.so", &sb);
	c = malloc(sb.len);
	shoff = rd64(sb.buf + 0x28);
	/* mk.sh's layout: section 1 is .gnu.hash, 2 .dynsym, 3 .dynstr */
	hash_off = rd64(sb.buf + shoff + 64 + 0x18);
#define RESET memcpy(c, sb.buf, sb.len)
	RESET;
	c[0x3c] = (char)0xff, c[0x3d] = (char)0xff; /* e_shnum 65535 */
	cr_expect_eq(rtelf_has_symbol_mem(c, sb.len, "call"), -EBADMSG);
	RESET;
	c[0x3a] = 32; /* e_shentsize */
	cr_expect_eq(rtelf_has_symbol_mem(c, sb.len, "call"), -EBADMSG);
	RESET;
	c[shoff + 64 + 0x28] = 3; /* .gnu.hash's sh_link: .dynstr */
	cr_expect_eq(rtelf_has_symbol_mem(c, sb.len, "filler_1"), -EBADMSG);
	RESET;
	memset(c + hash_off, 0, 4); /* nbuckets 0 */
	cr_expect_eq(rtelf_has_symbol_mem(c, sb.len, "filler_1"), -EBADMSG);
	RESET;
	c[shoff + 2 * 64 + 0x1f] = 0x7f; /* .dynsym's offset past the file */
	cr_expect_eq(rtelf_has_symbol_mem(c, sb.len, "filler_1"), -EBADMSG);
	RESET;
	c[4] = 1; /* ELFCLASS32 */
	cr_expect_eq(rtelf_has_symbol_mem(c, sb.len, "filler_1"), -ENOEXEC);
#undef RESET
	free(c);
	strbuf_release(&sb);
}

/* The real thing: the interpreters the runtimes' detection asks, when
 * this machine has them (Debian's python3.11 defines _PyRuntime in the
 * binary; node exports napi_create_object), and a shell, which is
 * neither. */
Test(rtelf, real_binaries)
{
	static const struct {
		const char *path, *name;
		int r;
	} rows[] = {
		{"/usr/bin/python3.11", "_PyRuntime", 1},
		{"/usr/bin/python3.11", "napi_create_object", 0},
		{"/usr/bin/node", "napi_create_object", 1},
		{"/usr/bin/node", "_PyRuntime", 0},
		{"/bin/sh", "napi_create_object", 0},
		{"/bin/sh", "_PyRuntime", 0},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct strbuf sb;

		if (access(rows[i].path, R_OK) != 0)
			continue; /* not installed: the fixtures stand */
		strbuf_init(&sb, 256u << 20);
		cr_assert_eq(
			read_file_at(AT_FDCWD, rows[i].path, 256u << 20, &sb),
			0);
		cr_expect_eq(rtelf_has_symbol_mem(sb.buf, sb.len, rows[i].name),
			     rows[i].r, "%s %s", rows[i].path, rows[i].name);
		strbuf_release(&sb);
	}
}
