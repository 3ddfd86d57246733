/* SPDX-License-Identifier: Apache-2.0 */
/* jvm parsers on real jcmd outputs of JDK 17 and 25 (tests/fixtures/jvm/)
 * and on malformed input. No live JVM, no /proc. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/host.h"
#include "inspect/jvm.h"
#include "jvm_fixture.h"

#define KB 1024ull

static const struct jvm_nmt_category *cat(const struct jvm_nmt *n,
					  const char *name)
{
	for (size_t i = 0; i < n->n_categories; i++)
		if (streq(n->categories[i].name, name))
			return &n->categories[i];
	cr_assert_fail("no category '%s'", name);
	return NULL;
}

/* |total committed - sum of the categories|: KB rounding only. */
static uint64_t sum_diff(const struct jvm_nmt *n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n->n_categories; i++)
		s += n->categories[i].committed;
	return s > n->committed ? s - n->committed : n->committed - s;
}

Test(jvm, nmt_jdk17_summary)
{
	struct strbuf sb = fixture("17-VM.native_memory.summary.txt");
	static struct jvm_nmt n;
	const struct jvm_nmt_category *c;

	cr_assert_eq(jvm_parse_nmt(sb.buf, sb.len, &n), 0);
	cr_assert(n.enabled);
	cr_assert_eq(n.reserved, 1712292 * KB);
	cr_assert_eq(n.committed, 334596 * KB);
	cr_assert_eq(n.malloc, 8908 * KB);
	cr_assert_eq(n.malloc_count, 6791);
	cr_assert_eq(n.mmap_reserved, 1703384 * KB);
	cr_assert_eq(n.mmap_committed, 325688 * KB);
	cr_assert_eq(n.threads, 20);
	cr_assert_eq(n.n_categories, 18);
	cr_assert_str_eq(n.categories[0].name, "Java Heap");
	c = cat(&n, "Class");
	cr_assert_eq(c->reserved, 1048673 * KB);
	cr_assert_eq(c->malloc, 97 * KB);
	cr_assert_eq(c->malloc_count, 969);
	cr_assert_eq(c->mmap_committed, 128 * KB);
	c = cat(&n, "Thread");
	cr_assert_eq(c->threads, 20);
	cr_assert_eq(c->stack_reserved, 20480 * KB);
	cr_assert_eq(c->stack_committed, 848 * KB);
	cr_assert_eq(c->arena, 22 * KB);
	cr_assert_eq(c->arena_count, 38);
	c = cat(&n, "Native Memory Tracking");
	cr_assert_eq(c->committed, 133 * KB);
	cr_assert_eq(cat(&n, "Object Monitors")->malloc_count, 3);
	/* Categories add up to the total, up to 1 KB rounding each. */
	cr_assert_leq(sum_diff(&n), n.n_categories * KB);
	strbuf_release(&sb);
}

Test(jvm, nmt_jdk25_summary)
{
	struct strbuf sb = fixture("25-VM.native_memory.summary.txt");
	static struct jvm_nmt n;
	const struct jvm_nmt_category *c;

	cr_assert_eq(jvm_parse_nmt(sb.buf, sb.len, &n), 0);
	cr_assert(n.enabled);
	cr_assert_eq(n.reserved, 1705764 * KB);
	cr_assert_eq(n.committed, 331036 * KB);
	cr_assert_eq(n.malloc, 8008 * KB, "peak must not win");
	cr_assert_eq(n.malloc_count, 8432);
	cr_assert_eq(n.threads, 19, "(threads #19) on 25");
	cr_assert_eq(n.n_categories, 20);
	c = cat(&n, "Class");
	cr_assert_eq(c->malloc, 77 * KB, "malloc=77KB tag=Class #1006");
	cr_assert_eq(c->malloc_count, 1006);
	c = cat(&n, "Shared class space");
	cr_assert_eq(c->reserved, 16384 * KB);
	cr_assert_eq(c->committed, 13908 * KB, "readonly= follows");
	cr_assert_eq(c->mmap_committed, 13908 * KB);
	c = cat(&n, "Thread");
	cr_assert_eq(c->stack_committed, 884 * KB);
	cr_assert_eq(cat(&n, "GCCardSet")->malloc, 29 * KB);
	cr_assert_eq(cat(&n, "Code")->arena_count, 1);
	cr_assert_eq(cat(&n, "Java Heap")->mmap_reserved, 262144 * KB);
	cr_assert_leq(sum_diff(&n), n.n_categories * KB);
	strbuf_release(&sb);
}

Test(jvm, nmt_disabled_both_jdks)
{
	const char *files[] = {"17-nmt-off-VM.native_memory.summary.txt",
			       "25-nmt-off-VM.native_memory.summary.txt"};

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		struct strbuf sb = fixture(files[i]);
		static struct jvm_nmt n;
		struct strbuf js;

		n.enabled = true;
		cr_assert_eq(jvm_parse_nmt(sb.buf, sb.len, &n), 0);
		cr_assert_not(n.enabled, "%s", files[i]);
		strbuf_init(&js, 4096);
		cr_assert_eq(jvm_nmt_to_json(&n, &js), 0);
		cr_assert(strstr(js.buf, "\"enabled\":false"));
		cr_assert(strstr(js.buf, "NMT is not enabled"));
		strbuf_release(&js);
		strbuf_release(&sb);
	}
}

Test(jvm, nmt_malformed_leaves_ret_untouched)
{
	const char *bad[] = {
		"",
		"12345:\n",
		"Total: reserved=abcKB, committed=1KB\n",
		"Total: reserved=1KB\n",
		"Total: reserved=99999999999999999999KB, committed=1KB\n",
		"Total: reserved=1KB, committed=1KB\n-  Heap (reserved=x)\n",
		"java.lang.IllegalArgumentException: Unknown diagnostic "
		"command",
	};
	static struct jvm_nmt n;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&n, 0x5a, sizeof(n));
		cr_assert_eq(jvm_parse_nmt(bad[i], strlen(bad[i]), &n),
			     -EBADMSG, "input %zu", i);
		cr_assert_eq(n.reserved, 0x5a5a5a5a5a5a5a5aull);
	}
}

Test(jvm, nmt_not_nul_terminated_and_long_lines)
{
	char buf[2000];
	static struct jvm_nmt n;
	const char *head = "Total: reserved=10KB, committed=5KB\n-  ";

	memcpy(buf, head, strlen(head));
	memset(buf + strlen(head), 'x', sizeof(buf) - strlen(head));
	/* One 1960-byte category name and no NUL: no crash, no category. */
	cr_assert_eq(jvm_parse_nmt(buf, sizeof(buf), &n), -EBADMSG);
	cr_assert_eq(jvm_parse_nmt(buf, strlen(head) - 4, &n), 0);
	cr_assert_eq(n.committed, 5 * KB);
	cr_assert_eq(n.n_categories, 0);
}

/* Found by fuzz_jvm_nmt: the blanks before a category name ran into
 * " (reserved=", so the name length (open - s) wrapped and copy_name read
 * the stack before and after the line. The corpus keeps the input. */
Test(jvm, nmt_category_without_name_is_malformed)
{
	struct strbuf sb;
	static struct jvm_nmt n;

	strbuf_init(&sb, 1u << 20);
	cr_assert_eq(read_file_at(AT_FDCWD,
				  "tests/fuzz/corpus/jvm_nmt/"
				  "crash-nmt-category-blank-name.txt",
				  1u << 20, &sb),
		     0);
	cr_assert(strstr(sb.buf, "      - (reserved=1KB"));
	memset(&n, 0x5a, sizeof(n));
	cr_assert_eq(jvm_parse_nmt(sb.buf, sb.len, &n), -EBADMSG);
	cr_assert_eq(n.reserved, 0x5a5a5a5a5a5a5a5aull);
	/* Blanks then a real name still parse. */
	cr_assert_eq(
		jvm_parse_nmt("Total: reserved=10KB, committed=5KB\n"
			      "-   \t  Heap (reserved=2KB, committed=1KB)\n",
			      78, &n),
		0);
	cr_assert_eq(n.n_categories, 1);
	cr_assert_str_eq(n.categories[0].name, "Heap");
	strbuf_release(&sb);
}

Test(jvm, nmt_json_has_every_category)
{
	struct strbuf sb = fixture("25-VM.native_memory.summary.txt"), js;
	static struct jvm_nmt n;

	cr_assert_eq(jvm_parse_nmt(sb.buf, sb.len, &n), 0);
	strbuf_init(&js, 1u << 20);
	cr_assert_eq(jvm_nmt_to_json(&n, &js), 0);
	cr_assert(strstr(js.buf, "\"committed\":338980864,"), "%s", js.buf);
	cr_assert(strstr(js.buf, "{\"name\":\"Native Memory Tracking\","));
	cr_assert(strstr(js.buf, "\"threads\":19"));
	strbuf_release(&js);
	strbuf_release(&sb);
}

Test(jvm, heap_info_g1_jdk17)
{
	struct strbuf sb = fixture("17-GC.heap_info.txt");
	struct jvm_heap_info hi;

	cr_assert_eq(jvm_parse_heap_info(sb.buf, sb.len, &hi), 0);
	cr_assert_str_eq(hi.collector, "G1");
	cr_assert_eq(hi.committed, 262144 * KB);
	cr_assert_eq(hi.used, 132799 * KB);
	cr_assert_eq(hi.reserved, 256ull << 20, "from the address range");
	cr_assert_eq(hi.region_size, 1024 * KB);
	cr_assert(hi.has_metaspace);
	cr_assert_eq(hi.metaspace_used, 358 * KB);
	cr_assert_eq(hi.metaspace_committed, 512 * KB);
	cr_assert_eq(hi.metaspace_reserved, 1114112 * KB);
	cr_assert_eq(hi.class_used, 24 * KB);
	cr_assert_eq(hi.class_reserved, 1048576 * KB);
	strbuf_release(&sb);
}

Test(jvm, heap_info_g1_jdk25)
{
	struct strbuf sb = fixture("25-GC.heap_info.txt");
	struct jvm_heap_info hi;

	cr_assert_eq(jvm_parse_heap_info(sb.buf, sb.len, &hi), 0);
	cr_assert_str_eq(hi.collector, "G1");
	cr_assert_eq(hi.committed, 262144 * KB);
	cr_assert_eq(hi.used, 133358 * KB);
	cr_assert_eq(hi.reserved, 262144 * KB, "total reserved");
	cr_assert_not(hi.has_metaspace);
	strbuf_release(&sb);
}

Test(jvm, heap_info_serial_both_jdks)
{
	struct strbuf s17 = fixture("17-serial-GC.heap_info.txt");
	struct strbuf s25 = fixture("25-serial-GC.heap_info.txt");
	struct jvm_heap_info a, b;

	cr_assert_eq(jvm_parse_heap_info(s17.buf, s17.len, &a), 0);
	cr_assert_str_eq(a.collector, "Serial");
	cr_assert_eq(a.n_spaces, 2);
	cr_assert_str_eq(a.spaces[0].name, "def new generation");
	cr_assert_eq(a.spaces[0].committed, 78656 * KB);
	cr_assert_eq(a.spaces[0].used, 69734 * KB);
	cr_assert_eq(a.spaces[0].reserved, 89456640, "= MaxNewSize");
	cr_assert_eq(a.spaces[1].reserved, 178978816, "= OldSize");
	cr_assert_eq(a.committed, (78656 + 174784) * KB);
	cr_assert_eq(a.reserved, 256ull << 20);
	cr_assert_eq(jvm_parse_heap_info(s25.buf, s25.len, &b), 0);
	cr_assert_str_eq(b.collector, "Serial");
	cr_assert_str_eq(b.spaces[1].name, "Tenured");
	cr_assert_eq(b.used, (9752 + 58511) * KB);
	cr_assert_eq(b.reserved, 256ull << 20);
	strbuf_release(&s17);
	strbuf_release(&s25);
}

Test(jvm, heap_info_malformed)
{
	const char *bad[] = {
		"",
		"1:\n",
		" garbage-first heap   total xK, used 1K\n",
		" garbage-first heap   total 1K\n",
		"total 5K, used 1K\n",
	};
	struct jvm_heap_info hi = {.used = 77};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		cr_assert_eq(jvm_parse_heap_info(bad[i], strlen(bad[i]), &hi),
			     -EBADMSG, "input %zu", i);
	cr_assert_eq(hi.used, 77);
	/* A broken range still gives used/committed, max stays 0. */
	cr_assert_eq(jvm_parse_heap_info("X   total 4K, used 2K [0x10, zz)\n",
					 33, &hi),
		     0);
	cr_assert_eq(hi.used, 2 * KB);
	cr_assert_eq(hi.reserved, 0);
}

Test(jvm, malloc_info_jdk25)
{
	struct strbuf sb = fixture("25-System.native_heap_info.txt"), js;
	static struct jvm_malloc_info m;

	cr_assert_eq(jvm_parse_malloc_info(sb.buf, sb.len, &m), 0);
	cr_assert_eq(m.n_arenas, 16);
	cr_assert_eq(m.arenas[0].nr, 0);
	cr_assert_eq(m.arenas[0].free_rest, 131840);
	cr_assert_eq(m.arenas[0].system_current, 299008);
	cr_assert_eq(m.arenas[8].free_count, 7);
	cr_assert_eq(m.arenas[15].system_current, 1404928);
	cr_assert_eq(m.free_rest, 1571368);
	cr_assert_eq(m.free_count, 24);
	cr_assert_eq(m.mmap_count, 7);
	cr_assert_eq(m.mmap_bytes, 5378048);
	cr_assert_eq(m.system_current, 4939776);
	strbuf_init(&js, 1u << 20);
	cr_assert_eq(jvm_malloc_info_to_json(&m, &js), 0);
	cr_assert(strstr(js.buf, "\"in_use\":3368408,"), "%s", js.buf);
	strbuf_release(&js);
	strbuf_release(&sb);
}

Test(jvm, malloc_info_malformed)
{
	struct strbuf sb = fixture("17-System.native_heap_info.txt");
	static struct jvm_malloc_info m;
	const char *cut = "<malloc version=\"1\">\n<heap nr=\"0\">\n";

	cr_assert_eq(jvm_parse_malloc_info(sb.buf, sb.len, &m), -EBADMSG,
		     "JDK 17 has no such command: an exception text");
	cr_assert_eq(jvm_parse_malloc_info(cut, strlen(cut), &m), -EBADMSG,
		     "truncated XML");
	strbuf_release(&sb);
}

Test(jvm, perfdata_capabilities)
{
	struct strbuf a = fixture("17-hsperfdata");
	struct strbuf d = fixture("17-disabled-hsperfdata");
	struct strbuf c = fixture("25-hsperfdata");
	char caps[80] = "untouched";

	cr_assert_eq(jvm_perfdata_string(a.buf, a.len, "sun.rt.jvmCapabilities",
					 caps, sizeof(caps)),
		     0);
	cr_assert_eq(caps[0], '1');
	cr_assert_eq(strlen(caps), 64);
	cr_assert_eq(jvm_perfdata_string(d.buf, d.len, "sun.rt.jvmCapabilities",
					 caps, sizeof(caps)),
		     0);
	cr_assert_eq(caps[0], '0', "-XX:+DisableAttachMechanism");
	cr_assert_eq(jvm_perfdata_string(c.buf, c.len,
					 "java.property.java.vm.version", caps,
					 sizeof(caps)),
		     0);
	cr_assert(startswith(caps, "25."), "%s", caps);
	cr_assert_eq(jvm_perfdata_string(c.buf, c.len, "no.such.counter", caps,
					 sizeof(caps)),
		     -ENOENT);
	strbuf_release(&a);
	strbuf_release(&d);
	strbuf_release(&c);
}

Test(jvm, java_feature_of_version_strings)
{
	static const struct {
		const char *v;
		int feature;
	} cases[] = {
		{"17.0.15", 17},   {"25", 25},	     {"24-ea", 24},
		{"21.0.2+13", 21}, {"1.8.0_392", 8}, {"1.7.0", 7},
		{"9", 9},	   {"", 0},	     {"x17", 0},
		{"1", 1},	   {"1.", 0},	     {"1000.1", 0},
		{"-17", 0},
	};

	for (size_t k = 0; k < ARRAY_SIZE(cases); k++)
		cr_assert_eq(jvm_java_feature(cases[k].v), cases[k].feature,
			     "%s", cases[k].v);
}

/* The real JVMs' own java.property.java.version (the fixtures). */
Test(jvm, java_feature_from_hsperfdata)
{
	static const struct {
		const char *fixture, *version;
		int feature;
	} jdks[] = {{"17-hsperfdata", "17.0.15", 17},
		    {"25-hsperfdata", "25.0.3", 25}};

	for (size_t k = 0; k < ARRAY_SIZE(jdks); k++) {
		struct strbuf a = fixture(jdks[k].fixture);
		char v[32];

		cr_assert_eq(jvm_perfdata_string(a.buf, a.len,
						 "java.property.java.version",
						 v, sizeof(v)),
			     0);
		cr_assert_str_eq(v, jdks[k].version);
		cr_assert_eq(jvm_java_feature(v), jdks[k].feature);
		strbuf_release(&a);
	}
}

Test(jvm, perfdata_malformed)
{
	struct strbuf a = fixture("17-hsperfdata");
	char caps[8] = "x";

	cr_assert_eq(jvm_perfdata_string(a.buf, 16, "sun.rt.jvmCapabilities",
					 caps, sizeof(caps)),
		     -EBADMSG, "shorter than the prologue");
	cr_assert_eq(jvm_perfdata_string(a.buf, 200, "sun.rt.jvmCapabilities",
					 caps, sizeof(caps)),
		     -EBADMSG, "entries cut off");
	cr_assert_str_eq(caps, "x");
	a.buf[0] = 0;
	cr_assert_eq(jvm_perfdata_string(a.buf, a.len, "sun.rt.jvmCapabilities",
					 caps, sizeof(caps)),
		     -EBADMSG, "bad magic");
	strbuf_release(&a);
}

Test(jvm, perfdata_cuts_to_size)
{
	struct strbuf a = fixture("17-hsperfdata");
	char caps[4];

	cr_assert_eq(jvm_perfdata_string(a.buf, a.len, "sun.rt.jvmCapabilities",
					 caps, sizeof(caps)),
		     0);
	cr_assert_str_eq(caps, "110");
	strbuf_release(&a);
}

Test(jvm, strerror_names_the_flags)
{
	cr_assert(strstr(jvm_strerror(-JVM_E_DISABLED),
			 "DisableAttachMechanism"));
	cr_assert(
		strstr(jvm_strerror(-JVM_E_NO_SIGQUIT), "StartAttachListener"));
	cr_assert(strstr(jvm_strerror(-JVM_E_SYMLINK), "symlink"));
	cr_assert(strstr(jvm_strerror(-JVM_E_NOT_JVM), "not a JVM"));
	cr_assert_str_eq(jvm_strerror(-ENOMEM), strerror(ENOMEM));
}

Test(jvm, trim_json)
{
	struct jvm_trim_result t = {.rss_before = 300ull << 20,
				    .rss_after = 40ull << 20,
				    .duration_us = 22000,
				    .command = "System.trim_native_heap",
				    .output = "Trim native heap: \"x\""};
	struct strbuf js;

	strbuf_init(&js, 4096);
	cr_assert_eq(jvm_trim_to_json(&t, &js), 0);
	cr_assert(strstr(js.buf, "\"rss_diff\":-272629760,"), "%s", js.buf);
	cr_assert(strstr(js.buf, "\"output\":\"Trim native heap: \\\"x\\\"\""),
		  "%s", js.buf);
	strbuf_release(&js);
}

/* ---- jvm_detect on a fake host tree: <root>/proc/4242/{status,maps,root} */

static char host_root[64];

static void fake_pid(const char *perf_kind)
{
	const char *maps = "7f00-7f01 r-xp 0 08:01 1 "
			   "/usr/lib/jvm/lib/server/libjvm.so\n";
	char path[256], status[256];
	int dfd, fd;
	struct strbuf hs = fixture("17-hsperfdata");

	snprintf(host_root, sizeof(host_root), "/tmp/oomlens-jvmdet-XXXXXX");
	cr_assert_not_null(mkdtemp(host_root));
	dfd = open(host_root, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(mkdir_p_at(dfd, "proc/4242/root/tmp/hsperfdata_app", 0755),
		     0);
	snprintf(status, sizeof(status),
		 "Name:\tjava\nPid:\t4242\nNSpid:\t4242\t7\nUid:\t%d\t%d\t%d\t%"
		 "d\n"
		 "Gid:\t%d\t%d\t%d\t%d\nSigIgn:\t0\nSigCgt:\t4\n",
		 (int)geteuid(), (int)geteuid(), (int)geteuid(), (int)geteuid(),
		 (int)getegid(), (int)getegid(), (int)getegid(),
		 (int)getegid());
	cr_assert_eq(write_file_atomic_at(dfd, "proc/4242/status", status,
					  strlen(status), 0644),
		     0);
	cr_assert_eq(write_file_atomic_at(dfd, "proc/4242/maps", maps,
					  strlen(maps), 0644),
		     0);
	snprintf(path, sizeof(path), "proc/4242/root/tmp/hsperfdata_app/7");
	if (streq(perf_kind, "fifo")) {
		cr_assert_eq(mkfifoat(dfd, path, 0600), 0);
	} else if (streq(perf_kind, "symlink")) {
		cr_assert_eq(write_file_atomic_at(dfd,
						  "proc/4242/root/elsewhere",
						  hs.buf, hs.len, 0600),
			     0);
		cr_assert_eq(symlinkat("../../elsewhere", dfd, path), 0);
	} else {
		fd = openat(dfd, path, O_WRONLY | O_CREAT, 0600);
		cr_assert_eq(write_all(fd, hs.buf, hs.len), 0);
		close(fd);
	}
	close(dfd);
	strbuf_release(&hs);
}

static struct jvm_info detect_fake(void)
{
	struct host h;
	struct jvm_info i;

	cr_assert_eq(host_open(host_root, &h), 0);
	cr_assert_eq(jvm_detect(&h, 4242, &i), 0);
	host_close(&h);
	rm_rf_at(AT_FDCWD, host_root);
	cr_assert_eq(i.nspid, 7);
	cr_assert(i.libjvm);
	return i;
}

Test(jvm, detect_reads_hsperfdata_of_fake_tree)
{
	struct jvm_info i;

	fake_pid("file");
	i = detect_fake();
	cr_assert(i.hsperfdata);
	cr_assert_eq(i.attach_capable, 1);
	/* 17.0.15: an attach makes no protocol probe */
	cr_assert_eq(i.java_feature, 17);
}

/* The HIGH finding: a FIFO planted at /tmp/hsperfdata_<user>/<nspid> by
 * anyone in the pod held jvm_detect in open(2) for good. Criterion's
 * timeout turns the old hang into a failure. */
Test(jvm, detect_ignores_planted_fifo, .timeout = 10)
{
	uint64_t t0 = now_monotonic_us();
	struct jvm_info i;

	fake_pid("fifo");
	i = detect_fake();
	cr_assert_not(i.hsperfdata);
	cr_assert_eq(i.attach_capable, -1);
	cr_assert_lt(now_monotonic_us() - t0, 3000000);
}

Test(jvm, detect_ignores_symlinked_hsperfdata)
{
	struct jvm_info i;

	fake_pid("symlink");
	i = detect_fake();
	cr_assert_not(i.hsperfdata);
}
