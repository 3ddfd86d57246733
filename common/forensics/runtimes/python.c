/* SPDX-License-Identifier: Apache-2.0 */
/* CPython: detection from libpython or the interpreter's symbols, its
 * allocator settings, pymalloc arenas against the glibc heap and mmap'd
 * buffers from smaps, and the python-heap verdict (pure, python.h); then
 * its table entry, rt_python: detected in the sidecar, at first sight
 * whether anything bounds its heap below the container's limit (an event
 * in the timeline), at each snapshot processes/<pid>/python/facts.json;
 * in the diagnosis the "python heap" (pymalloc) and "python buffers"
 * ledger rows, before glibc's, and the python-heap verdict
 * (docs/diagnosis.md, "Python"). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bundle_paths.h"
#include "base/jget.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "forensics/bundle.h"
#include "forensics/diagnosis_frame.h"
#include "forensics/runtimes/python.h"
#include "forensics/runtimes/registry.h"
#include "forensics/runtimes/rtio.h"
#include "kernel/procfs_access.h"
#include "kernel/smaps.h"

#define KIB 1024ull
#define MMAP_THRESHOLD_KB 128ull
#define CMDLINE_MAX (64u << 10)
#define LIMITS_MAX (8u << 10)

int python_minor_from_name(const char *name)
{
	char b[256];
	const char *p;
	int minor = 0, digits = 0;

	rtproc_basename(name, b, sizeof(b));
	p = startswith(b, "lib") ? b + 3 : b;
	if (!startswith(p, "python3."))
		return -1;
	for (p += 8; *p >= '0' && *p <= '9' && digits < 3; p++, digits++)
		minor = minor * 10 + (*p - '0');
	return digits && (*p < '0' || *p > '9') ? minor : -1;
}

int python_detect(const char *exe, const char *maps, size_t maps_len,
		  rtproc_has_symbol_fn has_symbol, const void *ctx,
		  struct python_detect *ret)
{
	struct smaps s;
	struct python_detect d = {.minor = -1};
	long lib;
	int r;

	smaps_init(&s);
	r = smaps_parse(maps, maps_len, &s);
	if (r < 0)
		return r;
	lib = rtproc_maps_find_lib(&s, "libpython3.");
	if (lib >= 0) {
		d.how = PYTHON_BY_LIBPYTHON;
		d.minor = python_minor_from_name(s.m[lib].name);
	} else if (has_symbol && has_symbol(ctx, PYTHON_SYMBOL)) {
		d.how = PYTHON_BY_SYMBOL;
		d.minor = exe ? python_minor_from_name(exe) : -1;
	}
	smaps_release(&s);
	*ret = d;
	return d.how != PYTHON_NOT;
}

/* PYTHONTRACEMALLOC=N or -X tracemalloc=N: N frames (1 when only named;
 * 0 turns it off). The interpreter refuses more than 65535. */
static unsigned trace_frames(const char *v, size_t n, bool bare_is_one)
{
	uint64_t f;

	if (!n)
		return bare_is_one ? 1 : 0;
	if (rtproc_parse_u64(v, n, 10, &f) < 0 || f > 65535)
		return 0;
	return (unsigned)f;
}

static void x_option(const char *x, size_t n, struct python_facts *f)
{
	static const char name[] = "tracemalloc";
	size_t k = sizeof(name) - 1;

	if (n < k || memcmp(x, name, k) != 0)
		return;
	if (n == k)
		f->tracemalloc = 1;
	else if (x[k] == '=')
		f->tracemalloc = trace_frames(x + k + 1, n - k - 1, false);
}

static void parse_cmdline(const char *cmd, size_t len, struct python_facts *f)
{
	const char *a;
	size_t n, pos = 0;

	if (!rtproc_arg_next(cmd, len, &pos, &a, &n))
		return;
	while (rtproc_arg_next(cmd, len, &pos, &a, &n)) {
		if (n < 2 || a[0] != '-' || rtproc_eq(a, n, "--") ||
		    rtproc_eq(a, n, "-c") || rtproc_eq(a, n, "-m"))
			break;
		if (rtproc_eq(a, n, "-X") || rtproc_eq(a, n, "-W")) {
			bool x = a[1] == 'X';

			if (!rtproc_arg_next(cmd, len, &pos, &a, &n))
				break;
			if (x)
				x_option(a, n, f);
		} else if (a[1] == 'X') {
			x_option(a + 2, n - 2, f);
		}
	}
}

int python_parse_facts(const char *cmdline, size_t cmdline_len, const char *env,
		       size_t env_len, struct python_facts *ret)
{
	struct python_facts f = {.pymalloc = true};
	const char *pymalloc = NULL, *trace;
	size_t n = 0, pymalloc_len = 0, trace_len;

	if (rtproc_environ_get(env, env_len, "PYTHONTRACEMALLOC", &trace,
			       &trace_len) == 0)
		f.tracemalloc = trace_frames(trace, trace_len, false);
	if (rtproc_environ_get(env, env_len, "PYTHONMALLOC", &pymalloc,
			       &pymalloc_len) < 0)
		pymalloc = NULL;
	parse_cmdline(cmdline, cmdline_len, &f);
	for (; pymalloc && n < pymalloc_len && n + 1 < sizeof(f.pymalloc_env);
	     n++) {
		char c = pymalloc[n];

		f.pymalloc_env[n] =
			(c >= 'a' && c <= 'z') || c == '_' ? c : '?';
	}
	f.pymalloc_env[n] = '\0';
	/* "malloc", "malloc_debug": every object is glibc's; "mimalloc"
	 * (3.13): its own segments, not pymalloc's arenas */
	if (n && !startswith(f.pymalloc_env, "pymalloc") &&
	    !streq(f.pymalloc_env, "debug"))
		f.pymalloc = false;
	*ret = f;
	return 0;
}

struct py_walk {
	uint64_t arena;
	bool pymalloc;
	const struct python_peek *peek;
	unsigned peeks; /* reads made, up to PYTHON_PEEK_MAX */
	struct python_rss p;
};

/* Whether the 16 bytes at a mapping's offset are the header of a glibc
 * chunk of its own mapping (mmap'd), of at most room bytes; its size in
 * *ret. */
static bool mmapped_chunk(const uint64_t h[2], uint64_t room, uint64_t *ret)
{
	uint64_t size = h[1] & ~(uint64_t)7;

	if (h[0] != 0 || (h[1] & 7) != 2 || size < 4096 || size % 4096 ||
	    size > room)
		return false;
	*ret = size;
	return true;
}

/* Walks the mapping [start, end) piece by piece (struct python_peek):
 * how many of its bytes are buffers in *ret_buf, the rest arenas.
 * Returns false when a read failed or the reads ran out: sizes decide. */
static bool split_at_headers(struct py_walk *w, uint64_t start, uint64_t end,
			     uint64_t *ret_buf)
{
	uint64_t at = start, buf = 0;

	while (at < end) {
		uint64_t h[2], chunk;

		if (w->peeks >= PYTHON_PEEK_MAX)
			return false;
		w->peeks++;
		if (w->peek->fn(w->peek->ctx, at, h, sizeof(h)) < 0)
			return false;
		w->p.peeked = true;
		if (mmapped_chunk(h, end - at, &chunk)) {
			buf += chunk;
			at += chunk;
		} else if (end - at >= w->arena) {
			at += w->arena;
		} else {
			buf += end - at;
			at = end;
		}
	}
	*ret_buf = buf;
	return true;
}

static void add_buffer(struct python_rss *p, const struct smaps_mapping *m,
		       uint64_t rss)
{
	p->mmap_kb += rss;
	rtproc_ranges_add(&p->buffers, m->start, m->end, rss);
}

static void add_arenas(struct python_rss *p, const struct smaps_mapping *m,
		       uint64_t rss, uint64_t n)
{
	p->pymalloc_kb += rss;
	p->arenas += n;
	rtproc_ranges_add(&p->arena_runs, m->start, m->end, rss);
}

static void add_anon(const struct smaps *s, size_t i, struct py_walk *w)
{
	const struct smaps_mapping *m = &s->m[i];
	uint64_t size = m->end - m->start, rss = smaps_get(s, i, SMAPS_F_RSS);
	bool rw = m->perms[0] == 'r' && m->perms[1] == 'w';
	uint64_t buf;

	if (w->pymalloc && rw && size % w->arena == 0) {
		add_arenas(&w->p, m, rss, size / w->arena);
	} else if (w->pymalloc && rw && size > w->arena && w->peek &&
		   split_at_headers(w, m->start, m->end, &buf)) {
		/* RSS in proportion: which pages are resident is not read */
		uint64_t buf_kb =
			(uint64_t)((unsigned __int128)rss * buf / size);

		if (buf && buf < size)
			w->p.split++;
		w->p.mmap_kb += buf_kb;
		w->p.pymalloc_kb += rss - buf_kb;
		w->p.arenas += (size - buf) / w->arena;
		if (buf * 2 > size)
			rtproc_ranges_add(&w->p.buffers, m->start, m->end,
					  buf_kb);
		else
			rtproc_ranges_add(&w->p.arena_runs, m->start, m->end,
					  rss - buf_kb);
	} else if (size >= MMAP_THRESHOLD_KB * KIB && m->perms[1] == 'w') {
		add_buffer(&w->p, m, rss);
	} else {
		w->p.other_kb += rss;
	}
}

static void py_mapping(const struct smaps *s, size_t i, int c, uint64_t rss,
		       void *ctx)
{
	struct py_walk *w = ctx;

	w->p.total_kb += rss;
	if (c == SMAPS_C_HEAP || c == SMAPS_C_ARENA)
		w->p.glibc_heap_kb += rss;
	else if (c == SMAPS_C_ANON && rtproc_is_anon(s, i))
		add_anon(s, i, w);
	else if (rtproc_is_file_class(c))
		w->p.file_kb += rss;
	else if (c != SMAPS_C_KERNEL)
		w->p.other_kb += rss;
}

int python_classify(const struct smaps *s, int minor,
		    const struct python_facts *facts,
		    const struct python_peek *peek, struct python_rss *ret)
{
	struct py_walk w = {
		.arena = (minor >= 10 ? 1024 : 256) * KIB,
		.pymalloc = !facts || facts->pymalloc,
		.peek = peek && peek->fn ? peek : NULL,
	};
	int r = rtproc_classify_each(s, py_mapping, &w);

	if (r < 0)
		return r;
	*ret = w.p;
	return 0;
}

static void python_remedies(const struct python_figures *fig, bool glibc,
			    struct rtproc_verdict *v)
{
	const struct python_rss *p = fig->rss;
	unsigned frames = fig->facts ? fig->facts->tracemalloc : 0;

	if (frames)
		rtproc_remedy(v,
			      "tracemalloc is on (%u frames): "
			      "tracemalloc.take_snapshot().statistics('lineno')"
			      " near the peak names the lines holding memory",
			      frames);
	else
		rtproc_remedy(v, "tracemalloc: PYTHONTRACEMALLOC=25 (or python "
				 "-X tracemalloc=25), then tracemalloc."
				 "take_snapshot().statistics('lineno') near "
				 "the peak names the lines holding memory");
	rtproc_remedy(v, "memray: memray run --native -o heap.bin app.py, then "
			 "memray flamegraph heap.bin (memray attach PID on a "
			 "live process)");
	if (!glibc)
		return;
	rtproc_remedy(v,
		      "the glibc heap (%.1f MiB) is most of it: "
		      "MALLOC_ARENA_MAX=2 (fewer arenas keep less), or "
		      "GLIBC_TUNABLES=glibc.malloc.arena_max=2:glibc.malloc."
		      "trim_threshold=131072",
		      rtproc_mib(p->glibc_heap_kb * KIB));
	rtproc_remedy(v, "ctypes.CDLL('libc.so.6').malloc_trim(0) after a "
			 "large batch gives glibc's free memory back");
}

bool python_verdict(const struct python_figures *fig,
		    struct rtproc_verdict *ret)
{
	const struct python_rss *p = fig->rss;
	struct rtproc_verdict v = {.kind = "python-heap", .confidence = 70};
	uint64_t heap = (p->pymalloc_kb + p->glibc_heap_kb + p->mmap_kb) * KIB;
	uint64_t base = fig->usage ? fig->usage : p->total_kb * KIB;
	bool glibc = p->glibc_heap_kb * 2 >
		     p->pymalloc_kb + p->glibc_heap_kb + p->mmap_kb;

	if (!heap || heap < base - base / 2)
		return false;
	if (p->mmap_kb * 2 > p->pymalloc_kb + p->glibc_heap_kb + p->mmap_kb)
		v.confidence = 60;
	v.bytes = heap;
	snprintf(v.summary, sizeof(v.summary),
		 "the Python heap (%.0f MiB) is most of the usage (%.0f MiB): "
		 "pymalloc arenas %.0f MiB, glibc heap %.0f MiB, mmap'd "
		 "buffers %.0f MiB",
		 rtproc_mib(heap), rtproc_mib(base),
		 rtproc_mib(p->pymalloc_kb * KIB),
		 rtproc_mib(p->glibc_heap_kb * KIB),
		 rtproc_mib(p->mmap_kb * KIB));
	rtproc_evidence(&v,
			"%" PRIu64 " pymalloc arenas (%.1f MiB RSS), estimated "
			"from whole-arena anonymous mappings%s",
			p->arenas, rtproc_mib(p->pymalloc_kb * KIB),
			p->peeked ? " and from mappings split at the headers "
				    "of glibc's mmap'd chunks"
				  : "");
	if (fig->facts && !fig->facts->pymalloc)
		rtproc_evidence(&v,
				"PYTHONMALLOC=%s: objects come from that "
				"allocator, not pymalloc's arenas",
				fig->facts->pymalloc_env);
	if (fig->limit)
		rtproc_evidence(&v, "the container's limit: %.0f MiB",
				rtproc_mib(fig->limit));
	python_remedies(fig, glibc, &v);
	*ret = v;
	return true;
}

/* ---- the sidecar ---- */

static int detect_live(const struct rt_sight *s, struct python_detect *ret)
{
	_cleanup_strbuf_ struct strbuf own = STRBUF_INIT;
	const struct strbuf *maps;
	struct rtio_exe exe = {.fd = -1};
	char path[256];
	bool have_exe;
	int r = rtio_maps(s, &own, &maps);

	if (r < 0)
		return r;
	rtio_exe_path(s, path, sizeof(path));
	have_exe = rtio_exe_open(s, &exe) == 0;
	r = python_detect(path[0] ? path : NULL, maps->buf, maps->len,
			  have_exe ? rtio_exe_has_symbol : NULL, &exe, ret);
	rtio_exe_close(&exe);
	return r;
}

static int python_detect_hook(const struct rt_sight *s)
{
	struct python_detect d;
	int r = detect_live(s, &d);

	return r == -ENOMEM ? r : r == 1;
}

/* What the live interpreter says of its allocator and its bounds. */
struct live {
	struct python_detect det;
	struct python_facts facts;
	bool env_read;
	bool have_as; /* RLIMIT_AS read */
	uint64_t as;  /* its soft limit, UINT64_MAX unlimited */
};

struct env_ctx {
	const struct strbuf *cmd;
	struct python_facts *ret;
};

static int facts_with_env(const char *env, size_t len, void *ctx)
{
	struct env_ctx *c = ctx;

	return python_parse_facts(c->cmd->buf, c->cmd->len, env, len, c->ret);
}

/* Its command line, PYTHONMALLOC and PYTHONTRACEMALLOC (the only keys
 * read of the environment) and its address-space limit. */
static int read_live(const struct rt_sight *s, struct live *ret)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf lim = STRBUF_INIT;
	struct live l = {.det.minor = -1};
	struct env_ctx c = {&cmd, &l.facts};
	int r = rtio_read(s, "cmdline", CMDLINE_MAX, &cmd);

	if (r < 0)
		return r;
	if (detect_live(s, &l.det) < 0)
		l.det = (struct python_detect){.minor = -1};
	l.env_read = rtio_with_env(s, facts_with_env, &c) == 0;
	if (!l.env_read) /* another user's environ: the command line alone */
		python_parse_facts(cmd.buf, cmd.len, NULL, 0, &l.facts);
	l.have_as = rtio_read(s, "limits", LIMITS_MAX, &lim) == 0 &&
		    rtproc_parse_limit(lim.buf, lim.len, "Max address space",
				       &l.as) == 0;
	*ret = l;
	return 0;
}

static const char *version_of(int minor, char *buf, size_t size)
{
	if (minor >= 0)
		snprintf(buf, size, "CPython 3.%d", minor);
	else
		snprintf(buf, size, "CPython 3");
	return buf;
}

/* An address-space limit at or below the container's limit makes malloc
 * fail first, and CPython raise MemoryError, instead of the kernel
 * killing; nothing else bounds its heap. */
static int python_first_sight(struct rt_sight *s)
{
	struct live l;
	char who[24], trace[48] = "tracemalloc off";
	int r = read_live(s, &l);

	if (r < 0)
		return r;
	if (!s->limit || (l.have_as && l.as <= s->limit))
		return 0;
	if (l.facts.tracemalloc)
		snprintf(trace, sizeof(trace), "tracemalloc on (%u frames)",
			 l.facts.tracemalloc);
	strlcpy_safe(s->event_kind, "python-heap-unbounded",
		     sizeof(s->event_kind));
	snprintf(s->event_text, sizeof(s->event_text),
		 "pid %d (%s): nothing bounds its heap below the container's "
		 "limit (%" PRIu64 " MiB): CPython has no heap limit of its "
		 "own and no address-space limit (RLIMIT_AS) is set below it, "
		 "so the kernel kills before any MemoryError; %s",
		 s->pid, version_of(l.det.minor, who, sizeof(who)),
		 s->limit >> 20, trace);
	return 0;
}

static const char *how_name(enum python_how h)
{
	return h == PYTHON_BY_LIBPYTHON ? "libpython"
	       : h == PYTHON_BY_SYMBOL	? "symbol"
					: "";
}

static struct json_object *facts_json(const struct rt_sight *s,
				      const struct live *l,
				      const struct python_rss *p)
{
	struct json_object *o = json_object_new_object();
	char ver[16];

	if (!o)
		return NULL;
	snprintf(ver, sizeof(ver), "3.%d", l->det.minor);
#define ADD(k, v) json_object_object_add(o, k, v)
	ADD("t_ms", json_object_new_uint64(now_realtime_us() / 1000));
	ADD("pid", json_object_new_int(s->pid));
	ADD("version", l->det.minor >= 0 ? json_object_new_string(ver) : NULL);
	ADD("detected_by", json_object_new_string(how_name(l->det.how)));
	ADD("pymalloc", json_object_new_boolean(l->facts.pymalloc));
	ADD("pythonmalloc", json_object_new_string(l->facts.pymalloc_env));
	ADD("tracemalloc", json_object_new_uint64(l->facts.tracemalloc));
	ADD("environ_read", json_object_new_boolean(l->env_read));
	ADD("address_space_limit", l->have_as && l->as != UINT64_MAX
					   ? json_object_new_uint64(l->as)
					   : NULL);
	ADD("pymalloc_rss", json_object_new_uint64(p->pymalloc_kb * 1024));
	ADD("arenas", json_object_new_uint64(p->arenas));
	ADD("glibc_heap_rss", json_object_new_uint64(p->glibc_heap_kb * 1024));
	ADD("mmap_rss", json_object_new_uint64(p->mmap_kb * 1024));
	ADD("other_rss", json_object_new_uint64(p->other_kb * 1024));
	ADD("file_rss", json_object_new_uint64(p->file_kb * 1024));
	ADD("rss", json_object_new_uint64(p->total_kb * 1024));
	ADD("limit", json_object_new_uint64(s->limit));
	ADD("arena_ranges", rtio_ranges_json(&p->arena_runs));
	ADD("buffer_ranges", rtio_ranges_json(&p->buffers));
	ADD("split", json_object_new_string(p->peeked ? "headers" : "sizes"));
	ADD("split_mappings", json_object_new_uint64(p->split));
#undef ADD
	return o;
}

/* python_peek over /proc/PID/mem: 16 bytes a read, never past a
 * mapping (a read of a page never touched maps the zero page, no RSS). */
static int mem_peek(void *ctx, uint64_t addr, void *buf, size_t n)
{
	ssize_t got = pread(*(const int *)ctx, buf, n, (off_t)addr);

	if (got < 0)
		return -errno;
	return (size_t)got == n ? 0 : -EIO;
}

static int python_snapshot(const struct rt_sight *s, int pid_dirfd)
{
	struct live l;
	struct python_rss p = {0};
	struct smaps sm;
	struct json_object *o;
	int r = read_live(s, &l), mem;
	struct python_peek peek = {.fn = mem_peek, .ctx = &mem};

	if (r < 0)
		return r;
	/* ptrace-attach access (CAP_SYS_PTRACE, or the same ids and no
	 * Yama restriction); without, sizes decide */
	mem = procfs_open_at(s->proc_fd, "mem", O_RDONLY | O_CLOEXEC);
	smaps_init(&sm);
	r = smaps_read_at(s->proc_fd, "smaps", &sm);
	if (r >= 0)
		r = python_classify(&sm, l.det.minor, &l.facts,
				    mem >= 0 ? &peek : NULL, &p);
	smaps_release(&sm);
	if (mem >= 0)
		close(mem);
	if (r < 0)
		return r;
	o = facts_json(s, &l, &p);
	if (!o)
		return -ENOMEM;
	r = rtio_write_facts(pid_dirfd, BP_PYTHON_DIR, BP_PYTHON_FACTS, o);
	json_object_put(o);
	return r;
}

/* ---- from a bundle ---- */

static void load_facts(struct jget_notes *n, struct json_object *o, void *item)
{
	struct python_proc *p = item;
	const char *v = jget_str(n, o, "version"), *pm;
	uint64_t frames = 0;
	int minor;

	p->minor = v && startswith(v, "3.") && parse_int(v + 2, &minor) == 0 &&
				   minor >= 0 && minor < 1000
			   ? minor
			   : -1;
	p->facts.pymalloc = true;
	jget_bool(n, o, "pymalloc", &p->facts.pymalloc);
	if ((pm = jget_str(n, o, "pythonmalloc"))) {
		/* as python_parse_facts kept it: [a-z_], else '?' */
		size_t k = 0;

		for (; pm[k] && k + 1 < sizeof(p->facts.pymalloc_env); k++)
			p->facts.pymalloc_env[k] =
				(pm[k] >= 'a' && pm[k] <= 'z') || pm[k] == '_'
					? pm[k]
					: '?';
		p->facts.pymalloc_env[k] = '\0';
	}
	if (jget_u64(n, o, "tracemalloc", &frames) && frames <= 65535)
		p->facts.tracemalloc = (unsigned)frames;
	p->pymalloc_rss = jget_u64_or0(n, o, "pymalloc_rss");
	p->arenas = jget_u64_or0(n, o, "arenas");
	p->glibc_heap_rss = jget_u64_or0(n, o, "glibc_heap_rss");
	p->mmap_rss = jget_u64_or0(n, o, "mmap_rss");
	p->rss = jget_u64_or0(n, o, "rss");
	p->split_by_headers =
		(v = jget_str(n, o, "split")) && streq(v, "headers");
}

static const struct rtio_procs python_table = {
	.file = BP_PYTHON_FACTS,
	.size = sizeof(struct python_proc),
	.max = PYTHON_MAX_PROCS,
	.age_off = offsetof(struct python_proc, age_s),
	.load = load_facts,
};
_Static_assert(offsetof(struct python_proc, pid) == 0, "rtio_procs: pid first");

static void python_load(const struct bundle *b, uint64_t kill_ms,
			struct diag_input *in, void **data)
{
	struct python_procs *f = calloc(1, sizeof(*f));

	if (f)
		f->n = rtio_procs_load(b, in, kill_ms, &python_table, f->p);
	if (f && !f->n) {
		free(f);
		f = NULL;
	}
	*data = f;
}

static void python_release(void *data)
{
	free(data);
}

static const struct python_proc *python_of(const void *data, int pid)
{
	const struct python_procs *f = data;

	return f ? rtio_procs_find(f->p, sizeof(f->p[0]), f->n, pid) : NULL;
}

/* ---- the ledger and the verdict ---- */

/* pymalloc's arenas and the buffers over glibc's mmap threshold, before
 * glibc's rows take its [heap] and arenas: the split is the smaps
 * layout's, an estimate (adjacent anonymous mappings merge). */
static void python_ledger(struct diag_ledger *l, const struct diag_input *in,
			  const void *data, const struct diag_proc *p)
{
	const struct python_proc *pp = python_of(data, p->pid);

	(void)in;
	if (!pp)
		return;
	diag_part(l->d, p->pid, "python heap",
		  diag_take_anon(l, pp->pymalloc_rss), true,
		  "smaps pid %d: pymalloc arenas (%" PRIu64
		  " in whole-arena anonymous mappings)",
		  p->pid, pp->arenas);
	diag_part(l->d, p->pid, "python buffers",
		  diag_take_anon(l, pp->mmap_rss), true,
		  "smaps pid %d: anonymous mappings of 128 KiB or more "
		  "(allocations over glibc's mmap threshold)",
		  p->pid);
}

static uint64_t heap_of(const struct python_proc *p)
{
	return add_sat(add_sat(p->pymalloc_rss, p->glibc_heap_rss),
		       p->mmap_rss);
}

static bool python_explains_growth(const struct diag_input *in,
				   const void *data, uint64_t usage)
{
	const struct python_procs *f = data;

	(void)in;
	(void)usage;
	for (size_t i = 0; f && i < f->n; i++)
		if (f->p[i].rss && mul_sat(heap_of(&f->p[i]), 2) >= f->p[i].rss)
			return true;
	return false;
}

/* The glibc heap's share as the ledger holds it for pid (glibc's rows). */
static uint64_t glibc_part(const struct diagnosis *d, int pid)
{
	return add_sat(add_sat(rtio_part_of(d, pid, "glibc heap in use"),
			       rtio_part_of(d, pid, "glibc retention")),
		       rtio_part_of(d, pid, "glibc arenas (in-use unknown)"));
}

static void python_one(const struct diag_input *in,
		       const struct python_proc *pp, struct diagnosis *d)
{
	struct python_rss r = {
		.pymalloc_kb = rtio_part_of(d, pp->pid, "python heap") / 1024,
		.arenas = pp->arenas,
		.glibc_heap_kb = glibc_part(d, pp->pid) / 1024,
		.mmap_kb = rtio_part_of(d, pp->pid, "python buffers") / 1024,
		.total_kb = pp->rss / 1024,
		.peeked = pp->split_by_headers,
	};
	struct python_figures fig = {
		.limit = d->limit_bytes != UINT64_MAX ? d->limit_bytes : 0,
		.usage = d->usage_bytes,
		.rss = &r,
		.facts = &pp->facts,
	};
	struct rtproc_verdict rv;
	const char *detail = "pymalloc arenas";
	char who[24];

	if (!python_verdict(&fig, &rv))
		return;
	if (r.glibc_heap_kb > r.pymalloc_kb && r.glibc_heap_kb >= r.mmap_kb)
		detail = "glibc heap";
	else if (r.mmap_kb > r.pymalloc_kb)
		detail = "mmap'd buffers";
	rtio_verdict(in, d, DIAG_PYTHON_HEAP, detail, &rv, pp->pid,
		     version_of(pp->minor, who, sizeof(who)), pp->age_s);
}

static void python_verdicts(const struct diag_input *in, const void *data,
			    struct diagnosis *d)
{
	const struct python_procs *f = data;

	for (size_t i = 0; f && i < f->n; i++)
		python_one(in, &f->p[i], d);
}

/* ---- report.html ---- */

static void python_label_mappings(const struct bundle *b, const char *dir,
				  int pid, struct rt_mapping *rows, size_t n,
				  struct jget_notes *notes)
{
	rtio_label_ranges(b, dir, BP_PYTHON_FACTS, "arena_ranges", pid, rows, n,
			  notes, "python heap (pymalloc arenas)");
	rtio_label_ranges(b, dir, BP_PYTHON_FACTS, "buffer_ranges", pid, rows,
			  n, notes, "python buffer (mmap)");
}

const struct diag_runtime rt_python = {
	.name = "python",
	.detect = python_detect_hook,
	.first_sight = python_first_sight,
	.snapshot = python_snapshot,
	.load = python_load,
	.release = python_release,
	.ledger = python_ledger,
	.verdicts = python_verdicts,
	.explains_growth = python_explains_growth,
	.label_mappings = python_label_mappings,
};
