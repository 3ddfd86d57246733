/* SPDX-License-Identifier: Apache-2.0 */
/* Node.js: detection from the mappings and the exe's symbols, the heap
 * options of its command line and NODE_OPTIONS, V8's default heap limit,
 * the V8 heap's RSS from smaps and the node-heap verdict (pure, node.h);
 * then its table entry, rt_node: detected in the sidecar, at first sight
 * whether V8's heap limit is above the container's (an event in the
 * timeline), at each snapshot processes/<pid>/node/facts.json; in the
 * diagnosis the "node heap" ledger row and the node-heap verdict with
 * the --max-old-space-size that fits (docs/diagnosis.md, "Node.js"). */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bundle_paths.h"
#include "base/jget.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "forensics/bundle.h"
#include "forensics/diagnosis_frame.h"
#include "forensics/runtimes/node.h"
#include "forensics/runtimes/registry.h"
#include "forensics/runtimes/rtio.h"
#include "kernel/smaps.h"

#define MIB (1ull << 20)
#define CMDLINE_MAX (64u << 10)
#define V8_PAGE (256ull << 10)

static bool v8_page(const struct smaps *s, size_t i, enum smaps_class c)
{
	const struct smaps_mapping *m = &s->m[i];

	return c == SMAPS_C_ANON && rtproc_is_anon(s, i) &&
	       m->perms[0] == 'r' && m->start % V8_PAGE == 0 &&
	       m->end - m->start >= V8_PAGE;
}

int node_detect(const char *maps, size_t maps_len,
		rtproc_has_symbol_fn has_symbol, const void *ctx,
		struct node_detect *ret)
{
	struct smaps s;
	struct smaps_summary sum;
	struct node_detect d = {0};
	int r;

	smaps_init(&s);
	r = smaps_parse(maps, maps_len, &s);
	if (r < 0)
		return r;
	r = smaps_classify(&s, &sum);
	if (r < 0) {
		smaps_release(&s);
		return r;
	}
	for (size_t i = 0; i < s.n; i++)
		d.v8_pages += v8_page(&s, i, sum.class_of[i]);
	if (rtproc_maps_find_lib(&s, "libnode.so") >= 0)
		d.how = NODE_BY_LIBNODE;
	else if (has_symbol && has_symbol(ctx, NODE_SYMBOL))
		d.how = NODE_BY_SYMBOL;
	smaps_summary_release(&sum);
	smaps_release(&s);
	*ret = d;
	return d.how != NODE_NOT;
}

/* Node's options that take the next argument as their value. */
static bool takes_value(const char *a, size_t n)
{
	static const char *const opts[] = {
		"-e",	      "--eval",
		"-p",	      "--print",
		"-r",	      "--require",
		"--import",   "--loader",
		"-C",	      "--conditions",
		"--title",    "--input-type",
		"--env-file", "--experimental-loader",
	};

	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		if (rtproc_eq(a, n, opts[i]))
			return true;
	return false;
}

static bool is_max_old(const char *a, size_t n)
{
	return rtproc_eq(a, n, "--max-old-space-size") ||
	       rtproc_eq(a, n, "--max_old_space_size");
}

/* One option of Node's (a, n), with its value (v, vn) when given apart
 * ("--max-old-space-size 4096"); from names where it came from. Returns
 * whether the separate value was used. */
static bool take_option(const char *a, size_t n, const char *v, size_t vn,
			const char *from, struct node_facts *f)
{
	const char *eq = memchr(a, '=', n);
	size_t name_len = eq ? (size_t)(eq - a) : n;
	uint64_t mib;
	bool used = false;

	if (rtproc_eq(a, name_len, "--heapsnapshot-near-heap-limit"))
		f->near_limit_snapshot = true;
	if (!is_max_old(a, name_len))
		return false;
	if (!eq) {
		if (!v)
			return false;
		a = v;
		n = vn;
		used = true;
	} else {
		n -= name_len + 1;
		a = eq + 1;
	}
	if (rtproc_parse_u64(a, n, 10, &mib) < 0 || mib == 0 ||
	    mib > UINT64_MAX / MIB) {
		f->bad_value = true;
		return used;
	}
	f->has_max_old = true;
	f->max_old_mib = mib;
	strlcpy_safe(f->max_old_from, from, sizeof(f->max_old_from));
	return used;
}

/* NODE_OPTIONS: space-separated, double quotes group (a backslash escapes
 * the next character inside them), as Node splits it. */
static void parse_node_options(const char *s, size_t len, struct node_facts *f)
{
	char tok[256], prev[256] = "";
	size_t i = 0;

	while (i < len) {
		size_t n = 0;
		bool quoted = false;

		while (i < len && s[i] == ' ')
			i++;
		if (i >= len)
			break;
		for (; i < len && (quoted || s[i] != ' '); i++) {
			if (s[i] == '"') {
				quoted = !quoted;
				continue;
			}
			if (quoted && s[i] == '\\' && i + 1 < len)
				i++;
			if (n + 1 < sizeof(tok))
				tok[n++] = s[i];
		}
		tok[n] = '\0';
		if (prev[0] && is_max_old(prev, strlen(prev)))
			take_option(prev, strlen(prev), tok, n, "NODE_OPTIONS",
				    f);
		else
			take_option(tok, n, NULL, 0, "NODE_OPTIONS", f);
		strlcpy_safe(prev, tok, sizeof(prev));
	}
}

static bool is_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

int node_parse_facts(const char *cmdline, size_t cmdline_len, const char *env,
		     size_t env_len, struct node_facts *ret)
{
	struct node_facts f = {0};
	const char *a, *v;
	size_t n, vn, pos = 0, peek;

	if (rtproc_environ_get(env, env_len, "NODE_OPTIONS", &v, &vn) == 0) {
		f.node_options = true;
		parse_node_options(v, vn, &f);
	}
	/* argv[0], then Node's options up to the script or "--" */
	if (rtproc_arg_next(cmdline, cmdline_len, &pos, &a, &n)) {
		while (rtproc_arg_next(cmdline, cmdline_len, &pos, &a, &n)) {
			if (n < 2 || a[0] != '-' || rtproc_eq(a, n, "--"))
				break;
			peek = pos;
			if (!rtproc_arg_next(cmdline, cmdline_len, &peek, &v,
					     &vn) ||
			    !is_digits(v, vn))
				v = NULL;
			if (take_option(a, n, v, vn, "command line", &f) ||
			    takes_value(a, n))
				pos = peek;
		}
	}
	*ret = f;
	return 0;
}

static uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

bool node_heap_limit(const struct node_facts *f, uint64_t limit,
		     uint64_t host_mem, unsigned node_major,
		     struct node_heap_limit *ret)
{
	struct node_heap_limit h = {0};
	uint64_t phys = host_mem, semi;

	if (limit && (!host_mem || limit < host_mem))
		phys = limit;
	if (f && f->has_max_old) {
		h.old_space = f->max_old_mib * MIB;
		h.from_flag = true;
	} else if (node_major && node_major < 12) {
		h.old_space = 1400 * MIB;
	} else if (phys) {
		h.old_space = clamp_u64(phys / 2 / V8_PAGE * V8_PAGE, 256 * MIB,
					phys >= (16ull << 30) ? 4096 * MIB
							      : 2048 * MIB);
	} else {
		return false;
	}
	semi = clamp_u64(h.old_space / 128, MIB, 16 * MIB);
	if (phys && phys <= 512 * MIB)
		semi = MIB;
	h.young = 3 * semi;
	h.total = h.old_space + h.young;
	*ret = h;
	return true;
}

static void node_mapping(const struct smaps *s, size_t i, int c, uint64_t rss,
			 void *ctx)
{
	struct node_rss *n = ctx;

	n->total_kb += rss;
	if (v8_page(s, i, c)) {
		n->v8_heap_kb += rss;
		n->v8_pages++;
		rtproc_ranges_add(&n->pages, s->m[i].start, s->m[i].end, rss);
	} else if (rtproc_is_file_class(c)) {
		n->file_kb += rss;
	} else if (c != SMAPS_C_KERNEL) {
		n->native_kb += rss;
	}
}

int node_classify(const struct smaps *s, struct node_rss *ret)
{
	struct node_rss n = {0};
	int r = rtproc_classify_each(s, node_mapping, &n);

	if (r < 0)
		return r;
	*ret = n;
	return 0;
}

uint64_t node_recommend_old_mib(uint64_t limit, uint64_t nonheap,
				uint64_t young)
{
	uint64_t room = limit / 10 * 9;

	if (room < nonheap || room - nonheap < young ||
	    room - nonheap - young < 16 * MIB)
		return 0;
	return (room - nonheap - young) / MIB;
}

static void limit_evidence(const struct node_figures *fig,
			   struct rtproc_verdict *v)
{
	const struct node_heap_limit *h = &fig->heap;

	if (!fig->have_limit_rule)
		return;
	if (h->from_flag && fig->facts)
		rtproc_evidence(
			v,
			"heap limit %.0f MiB: --max-old-space-size=%" PRIu64
			" (%s) and %.0f MiB of young generation",
			rtproc_mib(h->total), fig->facts->max_old_mib,
			fig->facts->max_old_from, rtproc_mib(h->young));
	else
		rtproc_evidence(
			v,
			"heap limit %.0f MiB: V8's default for the memory "
			"Node sees (%.0f MiB old space, %.0f MiB young)",
			rtproc_mib(h->total), rtproc_mib(h->old_space),
			rtproc_mib(h->young));
}

static void node_remedies(const struct node_figures *fig,
			  struct rtproc_verdict *v)
{
	uint64_t young = fig->have_limit_rule ? fig->heap.young : 3 * MIB;
	uint64_t rec = fig->limit ? node_recommend_old_mib(
					    fig->limit, fig->nonheap_rss, young)
				  : 0;

	if (rec)
		rtproc_remedy(v,
			      "--max-old-space-size=%" PRIu64
			      " (command line or NODE_OPTIONS): 90%% of the "
			      "%.0f MiB limit less %.1f MiB measured outside "
			      "the V8 heap and %.0f MiB of young generation",
			      rec, rtproc_mib(fig->limit),
			      rtproc_mib(fig->nonheap_rss), rtproc_mib(young));
	else if (fig->limit)
		rtproc_remedy(
			v,
			"raise the limit: the %.1f MiB outside the V8 heap "
			"leaves no room for a heap under %.0f MiB",
			rtproc_mib(fig->nonheap_rss), rtproc_mib(fig->limit));
	rtproc_remedy(v, "--heapsnapshot-near-heap-limit=1 writes a heap "
			 "snapshot as the heap nears its limit: open it in "
			 "Chrome DevTools (Memory) to see what holds it");
	rtproc_remedy(v, "--heap-prof writes a sampling heap profile "
			 "(.heapprofile) at exit: which stacks allocated "
			 "what is held");
}

bool node_verdict(const struct node_figures *fig, struct rtproc_verdict *ret)
{
	struct rtproc_verdict v = {.kind = "node-heap", .confidence = 60};
	uint64_t base =
		fig->usage ? fig->usage : fig->heap_rss + fig->nonheap_rss;
	bool outgrows = fig->have_limit_rule && fig->limit &&
			fig->heap.total + fig->nonheap_rss > fig->limit;

	/* at least half of the usage (base - base / 2 rounds up) */
	if (!fig->heap_rss || fig->heap_rss < base - base / 2)
		return false;
	v.bytes = fig->heap_rss;
	if (outgrows) {
		v.confidence = 85;
		snprintf(v.summary, sizeof(v.summary),
			 "the V8 heap (%.0f MiB) outgrew the container: "
			 "Node may grow it to %.0f MiB, %.1fx the %.0f MiB "
			 "limit",
			 rtproc_mib(fig->heap_rss), rtproc_mib(fig->heap.total),
			 (double)fig->heap.total / (double)fig->limit,
			 rtproc_mib(fig->limit));
	} else {
		snprintf(v.summary, sizeof(v.summary),
			 "the V8 heap (%.0f MiB) is most of the usage "
			 "(%.0f MiB)",
			 rtproc_mib(fig->heap_rss), rtproc_mib(base));
	}
	rtproc_evidence(&v,
			"V8 heap pages: %.1f MiB RSS; outside the "
			"heap: %.1f MiB",
			rtproc_mib(fig->heap_rss),
			rtproc_mib(fig->nonheap_rss));
	limit_evidence(fig, &v);
	node_remedies(fig, &v);
	*ret = v;
	return true;
}

/* ---- the sidecar ---- */

static int detect_live(const struct rt_sight *s, struct node_detect *ret)
{
	_cleanup_strbuf_ struct strbuf own = STRBUF_INIT;
	const struct strbuf *maps;
	struct rtio_exe exe = {.fd = -1};
	bool have_exe;
	int r = rtio_maps(s, &own, &maps);

	if (r < 0)
		return r;
	have_exe = rtio_exe_open(s, &exe) == 0;
	r = node_detect(maps->buf, maps->len,
			have_exe ? rtio_exe_has_symbol : NULL, &exe, ret);
	rtio_exe_close(&exe);
	return r;
}

static int node_detect_hook(const struct rt_sight *s)
{
	struct node_detect d;
	int r = detect_live(s, &d);

	return r == -ENOMEM ? r : r == 1;
}

/* What the live process says of its heap's limit. */
struct live {
	struct node_facts facts;
	bool env_read;
	uint64_t host_mem; /* 0 unknown */
	bool have_heap;
	struct node_heap_limit heap;
};

struct env_ctx {
	const struct strbuf *cmd;
	struct node_facts *ret;
};

static int facts_with_env(const char *env, size_t len, void *ctx)
{
	struct env_ctx *c = ctx;

	return node_parse_facts(c->cmd->buf, c->cmd->len, env, len, c->ret);
}

/* The command line, NODE_OPTIONS (the one key read of the environment)
 * and the host's memory. */
static int read_live(const struct rt_sight *s, struct live *ret)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	struct live l = {0};
	struct env_ctx c = {&cmd, &l.facts};
	int r = rtio_read(s, "cmdline", CMDLINE_MAX, &cmd);

	if (r < 0)
		return r;
	l.env_read = rtio_with_env(s, facts_with_env, &c) == 0;
	if (!l.env_read) /* another user's environ: the command line alone */
		node_parse_facts(cmd.buf, cmd.len, NULL, 0, &l.facts);
	if (rtio_host_mem(s, &l.host_mem) < 0)
		l.host_mem = 0;
	l.have_heap =
		node_heap_limit(&l.facts, s->limit, l.host_mem, 0, &l.heap);
	*ret = l;
	return 0;
}

/* Where the heap limit comes from, for a line of text. */
static const char *limit_from(const struct node_facts *f,
			      const struct node_heap_limit *h, uint64_t limit,
			      uint64_t host_mem, char *buf, size_t size)
{
	uint64_t phys =
		limit && (!host_mem || limit < host_mem) ? limit : host_mem;

	if (h->from_flag)
		snprintf(buf, size,
			 "--max-old-space-size=%" PRIu64 " from the %s",
			 f->max_old_mib, f->max_old_from);
	else
		snprintf(buf, size,
			 "V8's default for the %" PRIu64 " MiB of memory Node "
			 "sees%s",
			 phys >> 20,
			 f->bad_value ? "; a --max-old-space-size "
					"that is no number is "
					"ignored"
				      : "");
	return buf;
}

static int node_first_sight(struct rt_sight *s)
{
	struct live l;
	char from[160];
	int r = read_live(s, &l);

	if (r < 0)
		return r;
	if (!s->limit || !l.have_heap || l.heap.total <= s->limit)
		return 0;
	strlcpy_safe(s->event_kind, "node-heap-limit-above-limit",
		     sizeof(s->event_kind));
	snprintf(s->event_text, sizeof(s->event_text),
		 "pid %d (Node.js): V8's heap limit %" PRIu64
		 " MiB (%s) is above the container's limit (%" PRIu64
		 " MiB): V8 does not collect hard before the kernel kills%s",
		 s->pid, l.heap.total >> 20,
		 limit_from(&l.facts, &l.heap, s->limit, l.host_mem, from,
			    sizeof(from)),
		 s->limit >> 20,
		 l.env_read || l.heap.from_flag
			 ? ""
			 : " (its environment, NODE_OPTIONS, could not be "
			   "read)");
	return 0;
}

static const char *how_name(enum node_how h)
{
	return h == NODE_BY_LIBNODE  ? "libnode"
	       : h == NODE_BY_SYMBOL ? "symbol"
				     : "";
}

static struct json_object *facts_json(const struct rt_sight *s,
				      const struct live *l,
				      const struct node_detect *d,
				      const struct node_rss *n)
{
	struct json_object *o = json_object_new_object();
	const struct node_facts *f = &l->facts;

	if (!o)
		return NULL;
#define ADD(k, v) json_object_object_add(o, k, v)
#define U64_OR_NULL(c, v) ((c) ? json_object_new_uint64(v) : NULL)
	ADD("t_ms", json_object_new_uint64(now_realtime_us() / 1000));
	ADD("pid", json_object_new_int(s->pid));
	ADD("detected_by", json_object_new_string(how_name(d->how)));
	ADD("max_old_space_size", U64_OR_NULL(f->has_max_old, f->max_old_mib));
	ADD("max_old_from",
	    f->has_max_old ? json_object_new_string(f->max_old_from) : NULL);
	ADD("max_old_bad", json_object_new_boolean(f->bad_value));
	ADD("node_options", json_object_new_boolean(f->node_options));
	ADD("heapsnapshot_near_heap_limit",
	    json_object_new_boolean(f->near_limit_snapshot));
	ADD("environ_read", json_object_new_boolean(l->env_read));
	ADD("host_mem", U64_OR_NULL(l->host_mem, l->host_mem));
	ADD("heap_limit", U64_OR_NULL(l->have_heap, l->heap.total));
	ADD("heap_limit_young", U64_OR_NULL(l->have_heap, l->heap.young));
	ADD("heap_limit_from",
	    l->have_heap ? json_object_new_string(l->heap.from_flag
							  ? "max-old-space-size"
							  : "default")
			 : NULL);
	ADD("v8_heap_rss", json_object_new_uint64(n->v8_heap_kb * 1024));
	ADD("v8_pages", json_object_new_uint64(n->v8_pages));
	ADD("native_rss", json_object_new_uint64(n->native_kb * 1024));
	ADD("file_rss", json_object_new_uint64(n->file_kb * 1024));
	ADD("rss", json_object_new_uint64(n->total_kb * 1024));
	ADD("limit", json_object_new_uint64(s->limit));
	ADD("heap_ranges", rtio_ranges_json(&n->pages));
#undef U64_OR_NULL
#undef ADD
	return o;
}

static int node_snapshot(const struct rt_sight *s, int pid_dirfd)
{
	struct live l;
	struct node_detect d = {0};
	struct node_rss n = {0};
	struct smaps sm;
	struct json_object *o;
	int r = read_live(s, &l);

	if (r < 0)
		return r;
	(void)detect_live(s, &d);
	smaps_init(&sm);
	r = smaps_read_at(s->proc_fd, "smaps", &sm);
	if (r >= 0)
		r = node_classify(&sm, &n);
	smaps_release(&sm);
	if (r < 0)
		return r;
	o = facts_json(s, &l, &d, &n);
	if (!o)
		return -ENOMEM;
	r = rtio_write_facts(pid_dirfd, BP_NODE_DIR, BP_NODE_FACTS, o);
	json_object_put(o);
	return r;
}

/* ---- from a bundle ---- */

static void load_facts(struct jget_notes *n, struct json_object *o, void *item)
{
	struct node_proc *p = item;
	struct node_facts *f = &p->facts;
	const char *from;
	uint64_t mib;

	if (jget_u64(n, o, "max_old_space_size", &mib) && mib &&
	    mib <= UINT64_MAX / MIB) {
		f->has_max_old = true;
		f->max_old_mib = mib;
		from = jget_str(n, o, "max_old_from");
		strlcpy_safe(f->max_old_from,
			     from && (streq(from, "command line") ||
				      streq(from, "NODE_OPTIONS"))
				     ? from
				     : "?",
			     sizeof(f->max_old_from));
	}
	jget_bool(n, o, "max_old_bad", &f->bad_value);
	jget_bool(n, o, "node_options", &f->node_options);
	jget_bool(n, o, "heapsnapshot_near_heap_limit",
		  &f->near_limit_snapshot);
	p->host_mem = jget_u64_or0(n, o, "host_mem");
	p->heap_rss = jget_u64_or0(n, o, "v8_heap_rss");
	p->rss = jget_u64_or0(n, o, "rss");
}

static const struct rtio_procs node_table = {
	.file = BP_NODE_FACTS,
	.size = sizeof(struct node_proc),
	.max = NODE_MAX_PROCS,
	.age_off = offsetof(struct node_proc, age_s),
	.load = load_facts,
};
_Static_assert(offsetof(struct node_proc, pid) == 0, "rtio_procs: pid first");

static void node_load(const struct bundle *b, uint64_t kill_ms,
		      struct diag_input *in, void **data)
{
	struct node_procs *f = calloc(1, sizeof(*f));

	if (f)
		f->n = rtio_procs_load(b, in, kill_ms, &node_table, f->p);
	if (f && !f->n) {
		free(f);
		f = NULL;
	}
	*data = f;
}

static void node_release(void *data)
{
	free(data);
}

static const struct node_proc *node_of(const void *data, int pid)
{
	const struct node_procs *f = data;

	return f ? rtio_procs_find(f->p, sizeof(f->p[0]), f->n, pid) : NULL;
}

/* ---- the ledger and the verdict ---- */

static void node_ledger(struct diag_ledger *l, const struct diag_input *in,
			const void *data, const struct diag_proc *p)
{
	const struct node_proc *np = node_of(data, p->pid);

	(void)in;
	if (np)
		diag_part(l->d, p->pid, "node heap",
			  diag_take_anon(l, np->heap_rss), false,
			  "smaps pid %d: V8 heap pages (anonymous, at 256 KiB "
			  "boundaries)",
			  p->pid);
}

static bool node_explains_growth(const struct diag_input *in, const void *data,
				 uint64_t usage)
{
	const struct node_procs *f = data;

	(void)in;
	(void)usage;
	for (size_t i = 0; f && i < f->n; i++)
		if (f->p[i].rss && mul_sat(f->p[i].heap_rss, 2) >= f->p[i].rss)
			return true;
	return false;
}

static void node_one(const struct diag_input *in, const struct node_proc *np,
		     struct diagnosis *d)
{
	uint64_t lim = d->limit_bytes != UINT64_MAX ? d->limit_bytes : 0;
	struct node_figures fig = {
		.limit = lim,
		.usage = d->usage_bytes,
		.heap_rss = rtio_part_of(d, np->pid, "node heap"),
		.nonheap_rss = sub_sat(np->rss, np->heap_rss),
		.facts = &np->facts,
	};
	struct rtproc_verdict rv;
	const char *detail = "";

	fig.have_limit_rule =
		node_heap_limit(&np->facts, lim, np->host_mem, 0, &fig.heap);
	if (!node_verdict(&fig, &rv))
		return;
	if (fig.have_limit_rule && lim &&
	    fig.heap.total + fig.nonheap_rss > lim)
		detail = fig.heap.from_flag
				 ? "--max-old-space-size above the limit"
				 : "V8's default heap limit above the limit";
	rtio_verdict(in, d, DIAG_NODE_HEAP, detail, &rv, np->pid, "Node.js",
		     np->age_s);
}

static void node_verdicts(const struct diag_input *in, const void *data,
			  struct diagnosis *d)
{
	const struct node_procs *f = data;

	for (size_t i = 0; f && i < f->n; i++)
		node_one(in, &f->p[i], d);
}

/* ---- report.html ---- */

static void node_label_mappings(const struct bundle *b, const char *dir,
				int pid, struct rt_mapping *rows, size_t n,
				struct jget_notes *notes)
{
	rtio_label_ranges(b, dir, BP_NODE_FACTS, "heap_ranges", pid, rows, n,
			  notes, "node heap (V8 pages)");
}

const struct diag_runtime rt_node = {
	.name = "node",
	.detect = node_detect_hook,
	.first_sight = node_first_sight,
	.snapshot = node_snapshot,
	.load = node_load,
	.release = node_release,
	.ledger = node_ledger,
	.verdicts = node_verdicts,
	.explains_growth = node_explains_growth,
	.label_mappings = node_label_mappings,
};
