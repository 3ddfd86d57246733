/* SPDX-License-Identifier: Apache-2.0 */
/* JVM facts taken while the JVM is healthy: at first sight, VM.flags and
 * GC.heap_info (the heap's address ranges) over the attach socket, and
 * smaps for the RSS inside and outside those ranges. The configuration
 * check goes into the timeline (an event) before any kill; the ranges let
 * every later snapshot say how much of the JVM's RSS is heap without
 * attaching (jvm/heap_rss.json). Worker thread only. */
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>

#include "base/bundle_paths.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/util.h"
#include "inspect/jvm.h"
#include "kernel/procfs.h"
#include "kernel/smaps.h"
#include "run.h"

#define FACTS_TIMEOUT_MS 2000u

const struct run_jvm *run_jvm_find(const struct run_state *st, int pid)
{
	for (size_t i = 0; i < st->n_jvms; i++)
		if (st->jvms[i].pid == pid && st->jvms[i].n_ranges)
			return &st->jvms[i];
	return NULL;
}

/* RSS (bytes) of pid inside the ranges, and in all. */
static int heap_rss(struct run_state *st, int pid, const struct run_jvm *j,
		    uint64_t *ret_heap, uint64_t *ret_total)
{
	_cleanup_close_ int fd = host_open_pid(&st->h, pid);
	struct smaps s;
	uint64_t heap = 0, total = 0;
	int r;

	if (fd < 0)
		return fd;
	smaps_init(&s);
	r = smaps_read_at(fd, "smaps", &s);
	if (r >= 0 && s.idx[SMAPS_F_RSS] < 0)
		r = -EBADMSG;
	for (size_t i = 0; r >= 0 && i < s.n; i++) {
		const struct smaps_mapping *m = &s.m[i];
		uint64_t kb = m->v[s.idx[SMAPS_F_RSS]];

		total += kb * 1024;
		for (size_t k = 0; k < j->n_ranges; k++)
			if (m->start >= j->start[k] && m->end <= j->end[k])
				heap += kb * 1024;
	}
	smaps_release(&s);
	if (r < 0)
		return r;
	*ret_heap = heap;
	*ret_total = total;
	return 0;
}

void run_jvm_heap_rss(struct run_state *st, int pid, int pid_dirfd)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const struct run_jvm *j = run_jvm_find(st, pid);
	uint64_t heap, total;
	int r;

	if (!j || heap_rss(st, pid, j, &heap, &total) < 0)
		return;
	strbuf_init(&sb, 4096);
	r = strbuf_addf(&sb,
			"{\"t_ms\":%" PRIu64 ",\"heap_rss\":%" PRIu64
			",\"rss\":%" PRIu64 ",\"native_rss\":%" PRIu64
			",\"ranges\":[",
			now_realtime_us() / 1000, heap, total, total - heap);
	/* the ranges, for the report's largest-mappings table */
	for (size_t i = 0; r >= 0 && i < j->n_ranges; i++) {
		r = strbuf_addf(&sb,
				"%s{\"start\":%" PRIu64 ",\"end\":%" PRIu64
				",\"name\":",
				i ? "," : "", j->start[i], j->end[i]);
		if (r >= 0)
			r = strbuf_add_json_str(&sb, j->name[i],
						strlen(j->name[i]));
		if (r >= 0)
			r = strbuf_addch(&sb, '}');
	}
	if (r >= 0)
		r = strbuf_adds(&sb, "]}\n");
	if (r >= 0 && mkdir_p_at(pid_dirfd, BP_JVM_DIR, MODE_PRIVATE_DIR) == 0)
		(void)write_file_atomic_at(pid_dirfd, BP_JVM_HEAP_RSS, sb.buf,
					   sb.len, MODE_PRIVATE_FILE);
}

/* One command's reply text; 0 or -errno. */
static int ask(struct jvm_target *t, const char *cmd, struct jvm_reply *rep)
{
	int r = jvm_jcmd(t, cmd, rep);

	if (r == 0 && rep->status != 0) {
		jvm_reply_release(rep);
		r = -JVM_E_NO_COMMAND;
	}
	return r;
}

struct facts {
	struct jvm_flags flags;
	struct jvm_heap_info heap;
	uint64_t heap_rss, rss, limit;
	int threads;
	struct jvm_budget b;
	bool have_container; /* VM.info answered with its container part */
	struct jvm_container container;
	struct jvm_nmt nmt; /* the baseline, when NMT is on */
};

static struct run_jvm *jvm_slot(struct run_state *st, int pid)
{
	for (size_t i = 0; i < st->n_jvms; i++)
		if (st->jvms[i].pid == pid)
			return &st->jvms[i];
	return NULL;
}

/* Keeps n as the JVM's newest NMT point: the first one stays (the
 * baseline growth is measured from), the others roll. */
static void nmt_keep(struct run_jvm *j, const struct jvm_nmt *n,
		     bool first_sight)
{
	struct run_nmt_point *pt;

	if (!n->enabled)
		return;
	if (j->n_nmt == RUN_NMT_POINTS) {
		memmove(&j->nmt[1], &j->nmt[2],
			(RUN_NMT_POINTS - 2) * sizeof(j->nmt[0]));
		j->n_nmt--;
	}
	pt = &j->nmt[j->n_nmt++];
	*pt = (struct run_nmt_point){.t_ms = now_realtime_us() / 1000,
				     .first_sight = first_sight,
				     .threads = n->threads};
	for (size_t i = 0; i < n->n_categories && pt->n < RUN_NMT_CATS; i++) {
		strlcpy_safe(pt->name[pt->n], n->categories[i].name,
			     sizeof(pt->name[0]));
		pt->committed[pt->n++] = n->categories[i].committed;
	}
}

static int nmt_point_json(const struct run_nmt_point *pt, struct strbuf *sb)
{
	int r = strbuf_addf(sb,
			    "{\"t_ms\":%" PRIu64 ",\"source\":\"%s\","
			    "\"threads\":%" PRId64 ",\"committed\":{",
			    pt->t_ms,
			    pt->first_sight ? "first-sight" : "snapshot",
			    pt->threads);

	for (size_t i = 0; r >= 0 && i < pt->n; i++) {
		if (i)
			r = strbuf_addch(sb, ',');
		if (r >= 0)
			r = strbuf_add_json_str(sb, pt->name[i],
						strlen(pt->name[i]));
		if (r >= 0)
			r = strbuf_addf(sb, ":%" PRIu64, pt->committed[i]);
	}
	return r < 0 ? r : strbuf_adds(sb, "}}");
}

void run_jvm_nmt_history(struct run_state *st, int pid, int pid_dirfd)
{
	_cleanup_strbuf_ struct strbuf txt = STRBUF_INIT, sb = STRBUF_INIT;
	struct run_jvm *j = jvm_slot(st, pid);
	struct jvm_nmt *n;
	int r;

	if (!j)
		return;
	strbuf_init(&txt, 1u << 20);
	if (read_file_at(pid_dirfd, BP_JVM_NMT, 1u << 20, &txt) < 0 ||
	    !(n = calloc(1, sizeof(*n))))
		return;
	if (jvm_parse_nmt(txt.buf, txt.len, n) == 0)
		nmt_keep(j, n, false);
	free(n);
	if (j->n_nmt < 2)
		return; /* no growth to tell */
	strbuf_init(&sb, 256u << 10);
	r = strbuf_addf(&sb, "{\"pid\":%d,\"unit\":\"bytes\",\"entries\":[",
			pid);
	for (size_t i = 0; r >= 0 && i < j->n_nmt; i++) {
		if (i)
			r = strbuf_addch(&sb, ',');
		if (r >= 0)
			r = nmt_point_json(&j->nmt[i], &sb);
	}
	if (r >= 0)
		r = strbuf_adds(&sb, "]}\n");
	if (r >= 0)
		(void)write_file_atomic_at(pid_dirfd, BP_JVM_NMT_HISTORY,
					   sb.buf, sb.len, MODE_PRIVATE_FILE);
}

static int take_facts(struct run_state *st, int pid, struct run_jvm *j,
		      struct facts *f)
{
	struct jvm_attach_opts o = {.timeout_ms = FACTS_TIMEOUT_MS,
				    .reply_timeout_ms = FACTS_TIMEOUT_MS};
	struct jvm_reply rep = {0};
	struct jvm_target t;
	int r = jvm_attach(&st->h, pid, &o, &t);

	if (r == 0 && (r = ask(&t, "VM.flags", &rep)) == 0) {
		r = jvm_parse_flags(rep.text.buf, rep.text.len, &f->flags);
		jvm_reply_release(&rep);
	}
	if (r == 0 && (r = ask(&t, "GC.heap_info", &rep)) == 0) {
		r = jvm_parse_heap_info(rep.text.buf, rep.text.len, &f->heap);
		jvm_reply_release(&rep);
	}
	if (r < 0)
		return r;
	/* VM.info at first sight only: it renders the whole hs_err-style
	 * report (~52 KB and 27-62 ms here: every thread, mapping, event
	 * log), and the JVM sized its heap from its idea of the limit
	 * once, at start. (NMT summary: 18 ms.)
	 * Only the container part and the physical memory line are kept:
	 * the report also lists the environment. */
	if (ask(&t, "VM.info", &rep) == 0) {
		f->have_container =
			jvm_parse_container(rep.text.buf, rep.text.len,
					    &f->container) == 0;
		jvm_reply_release(&rep);
	}
	/* the NMT baseline the snapshots' summaries are compared with */
	if (ask(&t, "VM.native_memory summary", &rep) == 0) {
		if (jvm_parse_nmt(rep.text.buf, rep.text.len, &f->nmt) < 0)
			f->nmt.enabled = false;
		jvm_reply_release(&rep);
	}
	for (size_t i = 0; i < f->heap.n_spaces && j->n_ranges < 4; i++)
		if (f->heap.spaces[i].end > f->heap.spaces[i].start) {
			j->start[j->n_ranges] = f->heap.spaces[i].start;
			j->end[j->n_ranges] = f->heap.spaces[i].end;
			strlcpy_safe(j->name[j->n_ranges++],
				     f->heap.spaces[i].name,
				     sizeof(j->name[0]));
		}
	return heap_rss(st, pid, j, &f->heap_rss, &f->rss);
}

/* What the JVM believes its limit is ("container", "jvm_limit"), and in
 * text when that differs from the cgroup's limit by more than rounding:
 * the JVM computes its default heap (MaxRAMPercentage) from its belief. */
static void container_facts(int pid, const struct facts *f,
			    struct json_object *o, char *text, size_t size)
{
	uint64_t lim = f->limit, jl;
	bool from_ct;

	text[0] = '\0';
	if (!f->have_container)
		return;
	json_object_object_add(o, "container",
			       jvm_container_json(&f->container));
	if (!jvm_container_believed_limit(&f->container, &jl, &from_ct))
		return;
	json_object_object_add(o, "jvm_limit", json_object_new_uint64(jl));
	if (!lim || (jl <= lim + lim / 50 + (1u << 20) &&
		     jl + lim / 50 + (1u << 20) >= lim))
		return;
	snprintf(text, size,
		 "pid %d believes its memory limit is %" PRIu64 " MiB (%s) "
		 "but the container's limit is %" PRIu64
		 " MiB: its default heap (MaxRAMPercentage) is computed from "
		 "what it believes",
		 pid, jl >> 20,
		 from_ct ? "its container limit"
			 : "physical memory: it sees no container limit",
		 lim >> 20);
}

/* The facts into the timeline ("jvms") and, when the JVM is configured
 * to outgrow its container, an event with the numbers. */
static void note_facts(struct run_state *st, int pid, const struct facts *f)
{
	const struct jvm_budget *b = &f->b;
	struct json_object *o = json_object_new_object();
	struct json_object *ranges = json_object_new_array();
	const struct run_jvm *j = run_jvm_find(st, pid);
	char text[400], mismatch[300];
	uint64_t t = now_realtime_us();

	if (!o || !ranges) {
		json_object_put(o);
		json_object_put(ranges);
		return;
	}
	for (size_t i = 0; j && i < j->n_ranges; i++) {
		struct json_object *r = json_object_new_array();

		json_object_array_add(r, json_object_new_uint64(j->start[i]));
		json_object_array_add(r, json_object_new_uint64(j->end[i]));
		json_object_array_add(ranges, r);
	}
#define U(k, v) json_object_object_add(o, k, json_object_new_uint64(v))
	json_object_object_add(o, "pid", json_object_new_int(pid));
	U("t_ms", t / 1000);
	U("max_heap", f->flags.max_heap);
	if (f->flags.has_max_direct)
		U("max_direct", f->flags.max_direct);
	if (f->flags.has_max_metaspace)
		U("max_metaspace", f->flags.max_metaspace);
	U("code_cache", b->code_cache);
	U("thread_stack", b->stacks / (f->threads > 0 ? f->threads : 1));
	U("threads", (uint64_t)f->threads);
	U("metaspace_committed", f->heap.metaspace_committed);
	U("heap_committed", f->heap.committed);
	U("heap_rss", f->heap_rss);
	U("rss", f->rss);
	U("native_baseline", b->native);
	U("limit", f->limit);
	U("configured_total", b->total);
	json_object_object_add(o, "heap_ranges", ranges);
	json_object_object_add(o, "outgrows",
			       json_object_new_boolean(b->outgrows));
	json_object_object_add(o, "heap_outgrows",
			       json_object_new_boolean(b->heap_outgrows));
#undef U
	container_facts(pid, f, o, mismatch, sizeof(mismatch));
	snprintf(text, sizeof(text),
		 "pid %d is configured to outgrow its container: max heap "
		 "%" PRIu64 " MiB + direct %" PRIu64 " + metaspace %" PRIu64
		 " + code cache %" PRIu64 " + %d threads x stack = %" PRIu64
		 " MiB + native baseline %" PRIu64 " MiB = %" PRIu64
		 " MiB > limit %" PRIu64 " MiB",
		 pid, b->heap >> 20, b->direct >> 20, b->metaspace >> 20,
		 b->code_cache >> 20, f->threads, b->stacks >> 20,
		 b->native >> 20, b->total >> 20, f->limit >> 20);
	pthread_mutex_lock(&st->mu);
	(void)recorder_note_jvm(&st->rec, o);
	if (b->outgrows)
		(void)recorder_note_event(
			&st->rec, t, "jvm-configured-to-outgrow", pid, text);
	if (mismatch[0])
		(void)recorder_note_event(&st->rec, t, "jvm-limit-mismatch",
					  pid, mismatch);
	st->timeline_dirty = true;
	pthread_mutex_unlock(&st->mu);
	if (b->outgrows)
		log_warn("%s", text);
	if (mismatch[0])
		log_warn("%s", mismatch);
}

static void retry_later(struct run_state *st, int pid, unsigned tries)
{
	if (tries >= 10 || st->n_retry == RUN_MAX_JVMS)
		return;
	st->jvm_retry[st->n_retry++] = (struct run_jvm_retry){
		.pid = pid,
		.tries = tries + 1,
		.at_mono_us = now_monotonic_us() + 1000000ull,
	};
}

/* 0 facts taken, 1 not a JVM, -errno (maybe not ready yet). */
static int first_sight(struct run_state *st, int pid)
{
	_cleanup_close_ int fd = -1;
	struct jvm_info info;
	struct proc_status ps;
	struct run_jvm *j;
	struct facts *f;
	int r;

	if (st->n_jvms == RUN_MAX_JVMS)
		return 1;
	r = jvm_detect(&st->h, pid, &info);
	if (r < 0)
		return r;
	if (!jvm_info_is_jvm(&info))
		return -JVM_E_NOT_JVM;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	j = &st->jvms[st->n_jvms];
	*j = (struct run_jvm){.pid = pid};
	r = take_facts(st, pid, j, f);
	fd = host_open_pid(&st->h, pid);
	if (r == 0 && fd >= 0 && procfs_read_status(fd, &ps) == 0)
		f->threads = ps.threads;
	if (r < 0) {
		free(f);
		return r;
	}
	j->done = true;
	nmt_keep(j, &f->nmt, true);
	st->n_jvms++;
	pthread_mutex_lock(&st->mu);
	if (st->rec.count)
		f->limit = recorder_sample(&st->rec, st->rec.count - 1)->limit;
	pthread_mutex_unlock(&st->mu);
	jvm_budget_compute(&f->flags,
			   (uint64_t)(f->threads > 0 ? f->threads : 0),
			   f->heap.metaspace_committed, f->rss - f->heap_rss,
			   f->limit, &f->b);
	note_facts(st, pid, f);
	log_info("JVM pid %d: max heap %" PRIu64 " MiB, heap RSS %" PRIu64
		 " MiB of %" PRIu64 " MiB, limit %" PRIu64 " MiB",
		 pid, f->flags.max_heap >> 20, f->heap_rss >> 20, f->rss >> 20,
		 f->limit >> 20);
	free(f);
	return 0;
}

static void sight(struct run_state *st, int pid, unsigned tries)
{
	int r = first_sight(st, pid);

	if (r == -ESRCH || r >= 0)
		return;
	/* A process that is no JVM after 3 looks is left alone. */
	if (r == -JVM_E_NOT_JVM && tries >= 2)
		return;
	if (tries >= 9)
		log_info("JVM pid %d: no facts at first sight: %s", pid,
			 jvm_strerror(r));
	retry_later(st, pid, tries);
}

void run_jvm_first_sight(struct run_state *st, int pid)
{
	sight(st, pid, 0);
}

void run_jvm_poll(struct run_state *st)
{
	struct run_jvm_retry due[RUN_MAX_JVMS];
	uint64_t now = now_monotonic_us();
	size_t n_due = 0, k = 0;

	for (size_t i = 0; i < st->n_retry; i++) {
		if (st->jvm_retry[i].at_mono_us <= now)
			due[n_due++] = st->jvm_retry[i];
		else
			st->jvm_retry[k++] = st->jvm_retry[i];
	}
	st->n_retry = k;
	for (size_t i = 0; i < n_due; i++)
		sight(st, due[i].pid, due[i].tries);
}

/* ---- the class histogram (--jvm-histogram) ---- */

/* The pause allowed: the max pause, or the time left when it is
 * shorter: the snapshot's (less 50 ms for the rest of it), or the
 * limit's at the growth seen when it was asked for (a kill would end the
 * walk, and the JVM with it: a JVM at 99 % and 40 MiB/s is 50 ms from
 * it). what names the bound for the reason a walk is skipped. At least
 * 1 ms (0 would mean the default). */
static unsigned histo_budget(const struct run_cfg *c, uint64_t left_ms,
			     uint64_t limit_ms, char *what, size_t size)
{
	uint64_t max = c->jvm_histogram_max_pause_ms
			       ? c->jvm_histogram_max_pause_ms
			       : JVM_HISTO_BUDGET_MS_DEFAULT;
	uint64_t left = left_ms > 50 ? left_ms - 50 : 0;

	if (limit_ms < max && limit_ms <= left) {
		snprintf(what, size,
			 "left before the limit at the growth seen");
		return limit_ms ? (unsigned)limit_ms : 1;
	}
	if (left < max) {
		snprintf(what, size, "left before the snapshot's deadline");
		return left ? (unsigned)left : 1;
	}
	snprintf(what, size, "allowed (%s)",
		 c->histogram_knob ? c->histogram_knob
				   : "--jvm-histogram-max-pause-ms");
	return (unsigned)max;
}

static void histo_log(int pid, const struct jvm_histo_take *t)
{
	const struct jvm_histo_class *c = t->h.n ? &t->h.top[0] : NULL;

	if (!t->taken)
		return;
	log_info("class histogram of pid %d: %" PRIu64 " classes, %" PRIu64
		 " MiB; top %s %" PRIu64 " MiB; wall %.1f ms, safepoints "
		 "%.1f ms",
		 pid, t->h.n_classes, t->h.total_bytes >> 20,
		 c ? c->name : "(none)", c ? c->bytes >> 20 : 0,
		 (double)t->wall_us / 1000.0,
		 t->have_pause ? (double)t->pause_us / 1000.0 : -1.0);
}

/* Takes it, keeps its JSON in j. */
static void histo_take(struct run_state *st, struct run_jvm *j,
		       const char *reason, uint64_t left_ms, uint64_t limit_ms)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct jvm_histo_take *t = calloc(1, sizeof(*t));
	char what[96];
	struct jvm_histo_opts o = {
		.attach = {.timeout_ms = FACTS_TIMEOUT_MS},
		.budget_what = what,
	};
	int r;

	if (!t)
		return;
	o.budget_ms =
		histo_budget(st->cfg, left_ms, limit_ms, what, sizeof(what));
	/* the snapshot's deadline bounds the attach and GC.heap_info too */
	o.deadline_mono_us = now_monotonic_us() + left_ms * 1000;
	r = jvm_histo_take(&st->h, j->pid, &o, t);
	strbuf_init(&sb, 64u << 10);
	if (r == 0)
		r = jvm_histo_take_to_json(t, j->pid, now_realtime_us() / 1000,
					   reason, &sb);
	if (r == 0)
		r = strbuf_addch(&sb, '\n');
	if (r == 0) {
		j->histo_tried = true;
		free(j->histo_json);
		j->histo_json = strbuf_detach(&sb, &j->histo_len);
	}
	if (r == 0 && !t->taken)
		strlcpy_safe(j->histo_why, t->why, sizeof(j->histo_why));
	else if (r == 0)
		histo_log(j->pid, t);
	else if (r != -ESRCH)
		log_warn("class histogram of pid %d: %s, ignoring", j->pid,
			 jvm_strerror(r));
	free(t);
}

const char *run_jvm_histogram(struct run_state *st, int pid, int pid_dirfd,
			      const char *reason, bool attached,
			      uint64_t left_ms, uint64_t limit_ms)
{
	struct run_jvm *j = jvm_slot(st, pid);
	bool now = false;

	if (!st->cfg->jvm_histogram || !j)
		return NULL;
	if (!j->histo_tried && attached && startswith(reason, "threshold-")) {
		histo_take(st, j, reason, left_ms, limit_ms);
		now = true;
	}
	if (j->histo_json &&
	    mkdir_p_at(pid_dirfd, BP_JVM_DIR, MODE_PRIVATE_DIR) == 0)
		(void)write_file_atomic_at(pid_dirfd, BP_JVM_CLASS_HISTO,
					   j->histo_json, j->histo_len,
					   MODE_PRIVATE_FILE);
	return now && j->histo_why[0] ? j->histo_why : NULL;
}

void run_jvm_release(struct run_state *st)
{
	for (size_t i = 0; i < st->n_jvms; i++) {
		free(st->jvms[i].histo_json);
		st->jvms[i].histo_json = NULL;
	}
}
