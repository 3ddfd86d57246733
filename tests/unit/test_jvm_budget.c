/* SPDX-License-Identifier: Apache-2.0 */
/* VM.flags and the heap's address ranges on real jcmd outputs (JDK 17 and
 * 25, tests/fixtures/jvm/), and the configuration check. */
#include <criterion/criterion.h>
#include <fcntl.h>

#include "base/fileio.h"
#include "inspect/jvm.h"
#include "jvm_fixture.h"

#define MiB (1024ull * 1024)

Test(jvm_flags, jdk17_g1)
{
	struct strbuf sb = fixture("17-VM.flags.txt");
	struct jvm_flags f;

	cr_assert_eq(jvm_parse_flags(sb.buf, sb.len, &f), 0);
	cr_assert_eq(f.max_heap, 268435456);
	cr_assert_eq(f.code_cache, 251658240);
	cr_assert(f.has_code_cache);
	cr_assert_not(f.has_max_direct, "not printed: the default");
	cr_assert_not(f.has_thread_stack);
	strbuf_release(&sb);
}

Test(jvm_flags, jdk25_serial)
{
	struct strbuf sb = fixture("25-serial-VM.flags.txt");
	struct jvm_flags f;

	cr_assert_eq(jvm_parse_flags(sb.buf, sb.len, &f), 0);
	cr_assert_eq(f.max_heap, 268435456);
	cr_assert_eq(f.code_cache, 251662336);
	strbuf_release(&sb);
}

Test(jvm_flags, explicit_limits_and_units)
{
	static const char s[] =
		"-XX:MaxHeapSize=1073741824 -XX:MaxDirectMemorySize=67108864 "
		"-XX:MaxMetaspaceSize=134217728 -XX:ThreadStackSize=512 "
		"-XX:MaxRAMPercentage=75.000000 -XX:+UseG1GC\n";
	struct jvm_flags f;
	struct strbuf sb = STRBUF_INIT;

	cr_assert_eq(jvm_parse_flags(s, sizeof(s) - 1, &f), 0);
	cr_assert_eq(f.max_heap, 1024 * MiB);
	cr_assert_eq(f.max_direct, 64 * MiB);
	cr_assert_eq(f.max_metaspace, 128 * MiB);
	cr_assert_eq(f.thread_stack, 512 * 1024, "KiB in VM.flags");
	cr_assert_eq(f.max_ram_pct, 75);
	strbuf_init(&sb, 4096);
	cr_assert_eq(jvm_flags_to_json(&f, &sb), 0);
	cr_assert(strstr(sb.buf, "\"MaxDirectMemorySize\":67108864"), "%s",
		  sb.buf);
	strbuf_release(&sb);
}

Test(jvm_flags, malformed)
{
	struct jvm_flags f = {.max_heap = 7};

	cr_assert_eq(jvm_parse_flags("", 0, &f), -EBADMSG);
	cr_assert_eq(jvm_parse_flags("-XX:MaxHeapSize=", 16, &f), -EBADMSG);
	cr_assert_eq(jvm_parse_flags("-XX:MaxHeapSize=12", 17, &f), 0,
		     "not NUL-terminated: the length bounds it");
	cr_assert_eq(f.max_heap, 1);
}

Test(jvm_heap_ranges, g1_and_serial)
{
	struct strbuf g1 = fixture("17-GC.heap_info.txt");
	struct strbuf se = fixture("17-serial-GC.heap_info.txt");
	struct jvm_heap_info hi;

	cr_assert_eq(jvm_parse_heap_info(g1.buf, g1.len, &hi), 0);
	cr_assert_eq(hi.spaces[0].start, 0xf0000000ull);
	cr_assert_eq(hi.spaces[0].end, 0x100000000ull);
	cr_assert_eq(jvm_parse_heap_info(se.buf, se.len, &hi), 0);
	cr_assert_eq(hi.n_spaces, 2);
	cr_assert_eq(hi.spaces[0].start, 0xf0000000ull);
	cr_assert_eq(hi.spaces[0].end, 0xf5550000ull);
	cr_assert_eq(hi.spaces[1].start, 0xf5550000ull, "tenured after new");
	cr_assert_eq(hi.spaces[1].end, 0x100000000ull);
	strbuf_release(&g1);
	strbuf_release(&se);
}

Test(jvm_budget, heap_above_the_limit_outgrows)
{
	struct jvm_flags f = {.max_heap = 1024 * MiB, .has_max_heap = true};
	struct jvm_budget b;

	/* the JVM: -Xmx1g in 300 MiB, 20 threads, 60 MiB native */
	jvm_budget_compute(&f, 20, 8 * MiB, 60 * MiB, 300 * MiB, &b);
	cr_assert(b.outgrows);
	cr_assert(b.heap_outgrows);
	cr_assert_eq(b.stacks, 20 * MiB, "1 MiB default stacks");
	cr_assert_eq(b.code_cache, 240 * MiB, "the default code cache");
	cr_assert_eq(b.direct, 0, "unbounded direct memory is not counted");
	cr_assert_eq(b.total, (1024 + 20 + 240 + 8 + 60) * MiB);
}

Test(jvm_budget, a_fitting_jvm_does_not)
{
	struct jvm_flags f = {.max_heap = 128 * MiB,
			      .has_max_heap = true,
			      .max_direct = 32 * MiB,
			      .has_max_direct = true,
			      .code_cache = 48 * MiB,
			      .has_code_cache = true,
			      .thread_stack = 512 * 1024,
			      .has_thread_stack = true};
	struct jvm_budget b;

	jvm_budget_compute(&f, 40, 30 * MiB, 50 * MiB, 512 * MiB, &b);
	cr_assert_eq(b.total, (128 + 32 + 48 + 20 + 30 + 50) * MiB);
	cr_assert_not(b.outgrows);
	cr_assert_not(b.heap_outgrows);
	jvm_budget_compute(&f, 40, 30 * MiB, 50 * MiB, 0, &b);
	cr_assert_not(b.outgrows, "limit unknown: nothing outgrows");
}
