/* SPDX-License-Identifier: Apache-2.0 */
/* GC.class_histogram's parser on real replies of JDK 17 and 25
 * (tests/fixtures/jvm/, its README says how they were captured), on every
 * malformed line a JVM a pod controls could send, the class names'
 * cleaning and Java spelling, the walk's estimate, and hsperfdata's long
 * counters. No live JVM. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>

#include "inspect/jvm.h"
#include "jvm_fixture.h"

/* Criterion's parameters are copied into the test's process: strings,
 * not pointers. */
struct fixture_case {
	char file[48];
	uint64_t n_classes, total_instances, total_bytes;
	/* the top three, as the JVM printed them */
	char name[3][48], module[32];
	uint64_t bytes[3];
	/* one class further down, and its place in the top 20 (-1: not) */
	char other[48];
	int other_rank;
};

ParameterizedTestParameters(jvm_histo, real_replies)
{
	static struct fixture_case cases[] = {
		{"17-GC.class_histogram.txt",
		 243,
		 25013,
		 68240640,
		 {"[B", "java.lang.Class", "java.lang.String"},
		 "java.base@17.0.15",
		 {67444984, 176384, 172440},
		 "java.lang.Module",
		 -1},
		{"25-GC.class_histogram.txt",
		 296,
		 29528,
		 68443064,
		 {"[B", "java.lang.Class", "java.lang.String"},
		 "java.base@25.0.3",
		 {67499512, 224328, 208368},
		 "[I",
		 4},
		{"17-zoo-GC.class_histogram.txt",
		 252,
		 675337,
		 25680696,
		 {"[J", "java.util.HashMap$Node", "Zoo$Order"},
		 "java.base@17.0.15",
		 {8001336, 3231840, 3200000},
		 "Zoo$B\xc3\xa4r",
		 9},
		{"25-zoo-GC.class_histogram.txt",
		 303,
		 0,
		 0,
		 {"[J", "java.util.HashMap$Node", "Zoo$Order"},
		 "java.base@25.0.3",
		 {0, 0, 3200000},
		 "Zoo$B\xc3\xa4r",
		 9},
	};

	return cr_make_param_array(struct fixture_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct fixture_case *c, jvm_histo, real_replies)
{
	struct strbuf sb = fixture(c->file);
	struct jvm_histo h;
	uint64_t sum = 0;
	int other = -1;

	cr_assert_eq(jvm_parse_class_histogram(sb.buf, sb.len, false, &h), 0,
		     "%s", c->file);
	cr_assert_eq(h.n_classes, c->n_classes, "%s", c->file);
	cr_assert(h.total_known);
	if (c->total_bytes) {
		cr_assert_eq(h.total_instances, c->total_instances);
		cr_assert_eq(h.total_bytes, c->total_bytes);
	}
	cr_assert_eq(h.n, JVM_HISTO_TOP);
	for (size_t i = 0; i < 3; i++) {
		cr_assert_str_eq(h.top[i].name, c->name[i], "%s #%zu", c->file,
				 i);
		if (c->bytes[i])
			cr_assert_eq(h.top[i].bytes, c->bytes[i]);
	}
	cr_assert_str_eq(h.top[0].module, c->module);
	for (size_t i = 0; i < h.n; i++) {
		if (i)
			cr_assert_geq(h.top[i - 1].bytes, h.top[i].bytes);
		if (streq(h.top[i].name, c->other))
			other = (int)i;
		sum += h.top[i].bytes;
	}
	cr_assert_eq(other, c->other_rank, "%s: %s", c->file, c->other);
	cr_assert_leq(sum, h.total_bytes);
	strbuf_release(&sb);
}

Test(jvm_histo, classes_of_the_unnamed_module_have_no_module)
{
	struct strbuf sb = fixture("17-zoo-GC.class_histogram.txt");
	struct jvm_histo h;

	cr_assert_eq(jvm_parse_class_histogram(sb.buf, sb.len, false, &h), 0);
	cr_assert_str_eq(h.top[2].name, "Zoo$Order");
	cr_assert_str_eq(h.top[2].module, "");
	cr_assert_eq(h.top[2].instances, 100000);
	strbuf_release(&sb);
}

/* A reply cut at its cap: the partial last line goes, the Total line is
 * not required, the totals are the sums of what was read. */
Test(jvm_histo, truncated_reply_keeps_whole_lines)
{
	struct strbuf sb = fixture("17-GC.class_histogram.txt");
	const char *cut = strstr(sb.buf, "  41:");
	size_t len = (size_t)(cut - sb.buf) + 9; /* into line 41 */
	struct jvm_histo h;

	cr_assert_eq(jvm_parse_class_histogram(sb.buf, len, false, &h),
		     -EBADMSG, "a cut reply is not whole");
	cr_assert_eq(jvm_parse_class_histogram(sb.buf, len, true, &h), 0);
	cr_assert_eq(h.n_classes, 40);
	cr_assert_not(h.total_known);
	cr_assert_str_eq(h.top[0].name, "[B");
	cr_assert_lt(h.total_bytes, 68240640);
	cr_assert_gt(h.total_bytes, 67444984);
	strbuf_release(&sb);
}

#define HEAD                                                        \
	" num     #instances         #bytes  class name (module)\n" \
	"-------------------------------------------------------\n"
#define E1 "   1:            10           1000  [B (java.base@17.0.15)\n"
#define E2 "   2:             5            500  Foo\n"
#define TOT "Total            15           1500\n"

struct bad_case {
	char what[48], text[400];
};

ParameterizedTestParameters(jvm_histo, malformed)
{
	static struct bad_case cases[] = {
		{"empty", ""},
		{"no header", E1 E2 TOT},
		{"no dashes", " num     #instances         #bytes  class "
			      "name (module)\n" E1 E2 TOT},
		{"no total", HEAD E1 E2},
		{"total does not add up",
		 HEAD E1 E2 "Total            15           1501\n"},
		{"instances do not add up",
		 HEAD E1 E2 "Total            16           1500\n"},
		{"text after total", HEAD E1 E2 TOT "   3:  1 1  Bar\n"},
		{"junk after total", HEAD E1 E2 TOT "hello\n"},
		{"rank out of order",
		 HEAD E1 "   3:             5            500  Foo\n" TOT},
		{"rank repeated",
		 HEAD E1 "   1:             5            500  Foo\n" TOT},
		{"no class name", HEAD E1 "   2:             5            500  "
					  "\n" TOT},
		{"a sign",
		 HEAD E1 "   2:            -5            500  Foo\n" TOT},
		{"a letter in a number",
		 HEAD E1 "   2:             5            5x0  Foo\n" TOT},
		{"no colon",
		 HEAD E1 "   2              5            500  Foo\n" TOT},
		{"three numbers missing one",
		 HEAD E1 "   2:             5  Foo\n" TOT},
		{"bytes overflow",
		 HEAD "   1:             1  18446744073709551616  Foo\n"
		      "Total             1  18446744073709551616\n"},
		{"sum overflows",
		 HEAD "   1:             1  18446744073709551615  Foo\n"
		      "   2:             1                     1  Bar\n"
		      "Total             2                     0\n"},
		{"a blank line inside", HEAD E1 "\n" E2 TOT},
		{"a second pid line", "123:\n123:\n" HEAD E1 E2 TOT},
		{"an error instead", "java.lang.IllegalArgumentException: "
				     "Unknown argument\n"},
		{"total with a word",
		 HEAD E1 E2 "Total            15           1500 bytes\n"},
	};

	return cr_make_param_array(struct bad_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_case *c, jvm_histo, malformed)
{
	struct jvm_histo h;
	size_t len = strlen(c->text);

	memset(&h, 0x5a, sizeof(h));
	cr_assert_eq(jvm_parse_class_histogram(c->text, len, false, &h),
		     -EBADMSG, "%s", c->what);
	cr_assert_eq(h.n, 0x5a5a5a5a5a5a5a5aull, "%s: ret untouched", c->what);
}

Test(jvm_histo, a_nul_inside_a_line_is_malformed)
{
	static const char text[] = HEAD "   1:            10           1000  "
					"[B\0x\n"
					"Total            10           1000\n";
	struct jvm_histo h;

	cr_assert_eq(
		jvm_parse_class_histogram(text, sizeof(text) - 1, false, &h),
		-EBADMSG);
}

Test(jvm_histo, good_forms)
{
	struct jvm_histo h;
	static const char pid_line[] = "4242:\n" HEAD E1 E2 TOT "\n\n";
	static const char no_nl[] = HEAD E1 E2 "Total 15 1500";
	static const char empty[] = HEAD "Total 0 0\n";

	cr_assert_eq(jvm_parse_class_histogram(pid_line, strlen(pid_line),
					       false, &h),
		     0);
	cr_assert_eq(h.n, 2);
	cr_assert_str_eq(h.top[1].name, "Foo");
	cr_assert_eq(jvm_parse_class_histogram(no_nl, strlen(no_nl), false, &h),
		     0);
	cr_assert_eq(h.total_bytes, 1500);
	cr_assert_eq(jvm_parse_class_histogram(empty, strlen(empty), false, &h),
		     0);
	cr_assert_eq(h.n, 0);
	cr_assert_eq(h.n_classes, 0);
}

/* A JVM that prints its classes in any order still gets its largest
 * kept: the top is ours, not the JVM's ranking. */
Test(jvm_histo, top_is_by_bytes_whatever_the_order)
{
	struct strbuf sb = STRBUF_INIT;
	struct jvm_histo h;
	uint64_t sum = 0;

	strbuf_init(&sb, 1u << 20);
	cr_assert_eq(strbuf_adds(&sb, HEAD), 0);
	for (unsigned i = 1; i <= 100; i++) {
		uint64_t b = (uint64_t)((i * 37) % 100 + 1) * 16;

		cr_assert_eq(strbuf_addf(&sb, "%4u: %13u %14llu  C%u\n", i, 1u,
					 (unsigned long long)b, i),
			     0);
		sum += b;
	}
	cr_assert_eq(strbuf_addf(&sb, "Total %13u %14llu\n", 100u,
				 (unsigned long long)sum),
		     0);
	cr_assert_eq(jvm_parse_class_histogram(sb.buf, sb.len, false, &h), 0);
	cr_assert_eq(h.n, JVM_HISTO_TOP);
	for (size_t i = 0; i < h.n; i++)
		cr_assert_eq(h.top[i].bytes, (100 - i) * 16, "#%zu %s", i,
			     h.top[i].name);
	cr_assert_str_eq(h.top[0].name, "C27"); /* 27 * 37 % 100 = 99 */
	strbuf_release(&sb);
}

struct name_case {
	char in[48], out[48];
	size_t size;
};

ParameterizedTestParameters(jvm_histo, clean_name)
{
	static struct name_case cases[] = {
		{"java.lang.String", "java.lang.String", 64},
		{"Zoo$B\xc3\xa4r", "Zoo$B\xc3\xa4r", 64},
		{"Zoo$$Lambda/0x0000000073041000",
		 "Zoo$$Lambda/0x0000000073041000", 64},
		{"evil\x1b]0;pwned\x07", "evil?]0;pwned?", 64},
		{"c1\xc2\x9b"
		 "31m",
		 "c1??31m", 64}, /* C1 CSI, as two bytes */
		{"bidi\xe2\x80\xae"
		 "cba",
		 "bidi???cba", 64},			     /* U+202E */
		{"isolate\xe2\x81\xa6x", "isolate???x", 64}, /* U+2066 */
		{"ls\xe2\x80\xa8x", "ls???x", 64},	     /* U+2028 */
		{"bad\xff\xfe", "bad??", 64},
		{"overlong\xc0\xaf", "overlong??", 64},
		{"surrogate\xed\xa0\x80", "surrogate???", 64},
		{"cut\xc3", "cut?", 64},
		{"del\x7f", "del?", 64},
		{"abcdefghij", "abcdefghij", 11},
		{"abcdefghijk", "abcdefg...", 11},
		{"abcdef\xc3\xa4zzz", "abcdef...", 11}, /* never half of ä */
		{"", "", 8},
	};

	return cr_make_param_array(struct name_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct name_case *c, jvm_histo, clean_name)
{
	char out[64];

	memset(out, 'X', sizeof(out));
	jvm_histo_clean_name(c->in, strlen(c->in), out, c->size);
	cr_assert_str_eq(out, c->out, "%s", c->in);
	cr_assert_lt(strlen(out), c->size);
}

Test(jvm_histo, a_hostile_name_is_cleaned_in_the_parse)
{
	static const char text[] =
		HEAD "   1:             1            160  "
		     "Evil\x1b[2J\xe2\x80\xae (java.base@17)\n"
		     "Total             1            160\n";
	struct jvm_histo h;

	cr_assert_eq(jvm_parse_class_histogram(text, strlen(text), false, &h),
		     0);
	cr_assert_str_eq(h.top[0].name, "Evil?[2J???");
	cr_assert_str_eq(h.top[0].module, "java.base@17");
}

Test(jvm_histo, a_long_name_is_cut)
{
	struct strbuf sb = STRBUF_INIT;
	struct jvm_histo h;

	strbuf_init(&sb, 1u << 20);
	cr_assert_eq(strbuf_adds(&sb, HEAD "   1:  1  16  "), 0);
	for (int i = 0; i < 10000; i++)
		cr_assert_eq(strbuf_addch(&sb, 'a'), 0);
	cr_assert_eq(strbuf_adds(&sb, "\nTotal 1 16\n"), 0);
	cr_assert_eq(jvm_parse_class_histogram(sb.buf, sb.len, false, &h), 0);
	cr_assert_eq(strlen(h.top[0].name), JVM_HISTO_NAME_MAX - 1);
	cr_assert_str_eq(h.top[0].name + JVM_HISTO_NAME_MAX - 7, "aaa...");
	strbuf_release(&sb);
}

struct display_case {
	char in[48], out[48];
};

ParameterizedTestParameters(jvm_histo, display_name)
{
	static struct display_case cases[] = {
		{"[B", "byte[]"},
		{"[C", "char[]"},
		{"[J", "long[]"},
		{"[Z", "boolean[]"},
		{"[[D", "double[][]"},
		{"[Ljava.lang.Object;", "java.lang.Object[]"},
		{"[[Ljava.lang.String;", "java.lang.String[][]"},
		{"java.lang.String", "java.lang.String"},
		{"[X", "[X"},
		{"[L;", "[L;"},
		{"[", "["},
		{"Zoo$Order", "Zoo$Order"},
	};

	return cr_make_param_array(struct display_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct display_case *c, jvm_histo, display_name)
{
	char out[64];

	jvm_class_display_name(c->in, out, sizeof(out));
	cr_assert_str_eq(out, c->out, "%s", c->in);
}

Test(jvm_histo, display_name_is_bounded)
{
	char out[8];

	jvm_class_display_name("[[[[[[[[B", out, sizeof(out));
	cr_assert_str_eq(out, "byte[]");
	jvm_class_display_name("[Ljava.lang.Object;", out, sizeof(out));
	cr_assert_eq(strlen(out), 7);
}

Test(jvm_histo, estimate_grows_with_the_heap)
{
	cr_assert_eq(jvm_histo_estimate_ms(0, 0), 20);
	cr_assert_eq(jvm_histo_estimate_ms(256ull << 20, 0), 20 + 1024);
	cr_assert_eq(jvm_histo_estimate_ms(100 << 20, 1 << 20), 20 + 100);
}

/* A real perfdata file of JDK 17: the counters the pause is read from. */
Test(jvm_histo, perfdata_long_counters)
{
	struct strbuf sb = fixture("17-hsperfdata");
	int64_t v = -1;

	cr_assert_eq(
		jvm_perfdata_long(sb.buf, sb.len, "sun.os.hrt.frequency", &v),
		0);
	cr_assert_eq(v, 1000000000);
	cr_assert_eq(jvm_perfdata_long(sb.buf, sb.len, "sun.rt.safepoints", &v),
		     0);
	cr_assert_geq(v, 0);
	cr_assert_eq(
		jvm_perfdata_long(sb.buf, sb.len, "sun.rt.safepointTime", &v),
		0);
	cr_assert_geq(v, 0);
	cr_assert_eq(jvm_perfdata_long(sb.buf, sb.len, "no.such.counter", &v),
		     -ENOENT);
	/* a string counter is not a long */
	cr_assert_eq(
		jvm_perfdata_long(sb.buf, sb.len, "sun.rt.jvmCapabilities", &v),
		-EBADMSG);
	cr_assert_eq(jvm_perfdata_long(sb.buf, 31, "sun.rt.safepoints", &v),
		     -EBADMSG);
	cr_assert_eq(
		jvm_perfdata_long(sb.buf, 4096, "sun.os.hrt.frequency", &v),
		-EBADMSG, "an entry past the buffer's end");
	strbuf_release(&sb);
}
