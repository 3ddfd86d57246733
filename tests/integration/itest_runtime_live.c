/* SPDX-License-Identifier: Apache-2.0 */
/* LIVE: the Node.js and CPython parsers (forensics/runtimes/) on the
 * victims running here: tests/victims/node/sessions.js and
 * tests/victims/python/rows.py are started, grown to a stop and read
 * through /proc/PID/{maps,smaps,cmdline,environ} and the exe's dynamic
 * symbols (`nm -D --defined-only`, as tests/fixtures/node/README.md
 * records them), then detected, classified and judged. Needs node,
 * /usr/bin/python3 and nm (skips with the reason otherwise); no cgroup, no
 * kill. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fileio.h"
#include "itest_spawn.h"
#include "forensics/runtimes/node.h"
#include "forensics/runtimes/python.h"
#include "kernel/smaps.h"

#define MIB (1ull << 20)
/* Debian's interpreter, the one CI has (not a pyenv shim on PATH) */
#define PYTHON "/usr/bin/python3"

struct live {
	pid_t pid;
	char exe[512];
	struct strbuf maps, smaps, cmdline, env, syms;
};

static bool have(const char *prog)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return system(cmd) == 0;
}

static void read_proc(pid_t pid, const char *name, struct strbuf *sb)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	strbuf_init(sb, 64u << 20);
	cr_assert_eq(read_file_at(AT_FDCWD, path, 64u << 20, sb), 0,
		     "cannot read %s", path);
}

/* The exe's defined dynamic symbols, as nm prints them. */
static void read_symbols(const char *exe, struct strbuf *sb)
{
	char cmd[700], line[512];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s' 2>/dev/null",
		 exe);
	f = popen(cmd, "r");
	cr_assert(f);
	strbuf_init(sb, 256u << 20);
	while (fgets(line, sizeof(line), f))
		cr_assert_eq(strbuf_adds(sb, line), 0);
	pclose(f);
}

static bool has_symbol(const void *ctx, const char *name)
{
	const char *p = ctx;
	size_t n = strlen(name);

	while ((p = strstr(p, name)) != NULL) {
		if (p > (const char *)ctx + 2 && p[-1] == ' ' &&
		    (p[n] == '\n' || p[n] == '\0') && p[-2] != 'U')
			return true;
		p += n;
	}
	return false;
}

static void capture(struct live *l)
{
	char link[64];
	ssize_t n;

	kill(l->pid, SIGSTOP);
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)l->pid);
	n = readlink(link, l->exe, sizeof(l->exe) - 1);
	cr_assert_gt(n, 0);
	l->exe[n] = '\0';
	read_proc(l->pid, "maps", &l->maps);
	read_proc(l->pid, "smaps", &l->smaps);
	read_proc(l->pid, "cmdline", &l->cmdline);
	read_proc(l->pid, "environ", &l->env);
	kill(l->pid, SIGCONT);
	read_symbols(l->exe, &l->syms);
}

static void finish(struct live *l)
{
	kill(l->pid, SIGKILL);
	waitpid(l->pid, NULL, 0);
	strbuf_release(&l->maps);
	strbuf_release(&l->smaps);
	strbuf_release(&l->cmdline);
	strbuf_release(&l->env);
	strbuf_release(&l->syms);
}

Test(runtime_live, node_victim)
{
	char *argv[] = {"node",
			"--max-old-space-size=4096",
			"tests/victims/node/sessions.js",
			"64",
			"0",
			"120",
			NULL};
	struct live l = {0};
	struct node_detect d;
	struct node_facts f;
	struct node_rss r;
	struct smaps s;
	struct node_figures fig;
	struct rtproc_verdict v;

	if (!have("node") || !have("nm"))
		cr_skip_test("node or nm (binutils) is not installed");
	l.pid = itest_spawn_until(argv, NULL, "stopped");
	capture(&l);
	cr_assert_eq(
		node_detect(l.maps.buf, l.maps.len, has_symbol, l.syms.buf, &d),
		1, "%s not detected as Node.js", l.exe);
	cr_assert_gt(d.v8_pages, 100, "%zu", d.v8_pages);
	cr_assert_eq(node_parse_facts(l.cmdline.buf, l.cmdline.len, l.env.buf,
				      l.env.len, &f),
		     0);
	cr_assert(f.has_max_old && f.max_old_mib == 4096);
	cr_assert_str_eq(f.max_old_from, "command line");
	smaps_init(&s);
	cr_assert_eq(smaps_parse(l.smaps.buf, l.smaps.len, &s), 0);
	cr_assert_eq(node_classify(&s, &r), 0);
	/* 120 "MiB" of sessions: most of the RSS is V8's pages */
	cr_assert_gt(r.v8_heap_kb, 60 << 10, "%lu",
		     (unsigned long)r.v8_heap_kb);
	cr_assert_gt(r.v8_heap_kb * 2, r.total_kb, "V8 %lu of %lu kB",
		     (unsigned long)r.v8_heap_kb, (unsigned long)r.total_kb);
	fig = (struct node_figures){
		.limit = 200 * MIB,
		.heap_rss = r.v8_heap_kb << 10,
		.nonheap_rss = (r.total_kb - r.v8_heap_kb) << 10,
		.facts = &f,
	};
	fig.have_limit_rule = node_heap_limit(&f, fig.limit, 0, 0, &fig.heap);
	cr_assert(node_verdict(&fig, &v));
	cr_assert_eq(v.confidence, 85);
	cr_assert(strstr(v.remedies[0], "--max-old-space-size="), "%s",
		  v.remedies[0]);
	smaps_release(&s);
	finish(&l);
}

/* struct python_peek over an open /proc/PID/mem */
static int mem_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	return pread(*(int *)ctx, buf, n, (off_t)addr) == (ssize_t)n ? 0 : -EIO;
}

static void python_live(const char *envkv, bool pymalloc)
{
	char *argv[] = {PYTHON, "tests/victims/python/rows.py", "64", "0", "64",
			NULL};
	struct live l = {0};
	struct python_detect d;
	struct python_facts f;
	struct python_rss r;
	struct python_figures fig = {
		.limit = 200 * MIB, .rss = &r, .facts = &f};
	struct rtproc_verdict v;
	struct smaps s;

	if (access(PYTHON, X_OK) != 0 || !have("nm"))
		cr_skip_test(PYTHON " or nm (binutils) is not installed");
	l.pid = itest_spawn_until(argv, envkv, "stopped");
	capture(&l);
	cr_assert_eq(python_detect(l.exe, l.maps.buf, l.maps.len, has_symbol,
				   l.syms.buf, &d),
		     1, "%s not detected as CPython", l.exe);
	cr_assert_geq(d.minor, 7, "3.%d", d.minor);
	cr_assert_eq(python_parse_facts(l.cmdline.buf, l.cmdline.len, l.env.buf,
					l.env.len, &f),
		     0);
	cr_assert_eq(f.pymalloc, pymalloc);
	smaps_init(&s);
	cr_assert_eq(smaps_parse(l.smaps.buf, l.smaps.len, &s), 0);
	cr_assert_eq(python_classify(&s, d.minor, &f, NULL, &r), 0);
	if (pymalloc) {
		/* the kernel merges the 8 MiB read buffer (glibc's mmap'd
		 * chunk, allocated first) with the arenas mapped below it:
		 * by sizes, that run is a buffer; split at glibc's header,
		 * the buffers are the read buffer and the rows list's array
		 * (~2 MiB), a few MiB at most besides */
		struct python_rss by_size = r;
		char path[64];
		int mem;
		struct python_peek peek = {.fn = mem_read, .ctx = &mem};

		snprintf(path, sizeof(path), "/proc/%d/mem", (int)l.pid);
		mem = open(path, O_RDONLY | O_CLOEXEC);
		cr_assert_geq(mem, 0, "%s: %s", path, strerror(errno));
		cr_assert_eq(python_classify(&s, d.minor, &f, &peek, &r), 0);
		close(mem);
		cr_assert(r.peeked);
		cr_assert_geq(r.mmap_kb, 8 << 10, "%lu",
			      (unsigned long)r.mmap_kb);
		cr_assert_leq(r.mmap_kb, 16 << 10, "%lu kB of buffers",
			      (unsigned long)r.mmap_kb);
		cr_assert_geq(r.arenas, by_size.arenas);
		cr_assert_eq(r.pymalloc_kb + r.mmap_kb,
			     by_size.pymalloc_kb + by_size.mmap_kb,
			     "the split moves RSS, never adds it");
		cr_assert_eq(r.split > 0, r.arenas > by_size.arenas,
			     "%u mappings split", r.split);
		/* ~4,000 small rows a MiB: pymalloc's arenas hold them */
		cr_assert_gt(r.arenas, 20, "%lu", (unsigned long)r.arenas);
		cr_assert_gt(r.pymalloc_kb, 20 << 10);
	} else {
		/* PYTHONMALLOC=malloc: no arenas, glibc's heap holds all */
		cr_assert_eq(r.arenas, 0);
		cr_assert_gt(r.glibc_heap_kb, r.pymalloc_kb + (20 << 10));
	}
	cr_assert(python_verdict(&fig, &v));
	cr_assert_str_eq(v.kind, "python-heap");
	cr_assert(strstr(v.remedies[0], "tracemalloc"));
	/* the glibc advice comes exactly when glibc's heap is most of it */
	cr_assert_eq(v.n_remedies == 4, !pymalloc, "%zu remedies",
		     v.n_remedies);
	smaps_release(&s);
	finish(&l);
}

Test(runtime_live, python_victim)
{
	python_live(NULL, true);
}

Test(runtime_live, python_victim_pymalloc_off)
{
	python_live("PYTHONMALLOC=malloc", false);
}
