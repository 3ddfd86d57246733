/* SPDX-License-Identifier: Apache-2.0 */
/* One kill → one bundle: the kernel report, the cgroup's counters and files,
 * written atomically, then one JSON line on stdout. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "kill/cgtimeline.h"
#include "obs/forecast_sampler.h"
#include "obs/metrics_agent.h"
#include "base/bundle_paths.h"
#include "base/jget.h"
#include "forensics/bundle.h"
#include "forensics/capture.h"
#include "forensics/diagnosis.h"
#include "base/fileio.h"
#include "base/log.h"
#include "forensics/report.h"
#include "forensics/spool.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "kernel/procfs.h"

static const char *value_state(const struct cgroup_value *v)
{
	static const char *const names[] = {"absent", "ok", "unlimited",
					    "unparsable"};
	return names[v->state];
}

static struct json_object *value_json(const struct cgroup_value *v)
{
	if (v->state == CGV_OK)
		return json_object_new_int64((int64_t)v->v);
	return json_object_new_string(value_state(v));
}

static struct json_object *state_json(const struct cgroup_state *s)
{
	struct json_object *o = json_object_new_object();
	struct json_object *ev = json_object_new_object();

	json_object_object_add(o, "usage_bytes", value_json(&s->usage));
	json_object_object_add(o, "limit_bytes", value_json(&s->limit));
	json_object_object_add(o, "peak_bytes", value_json(&s->peak));
	json_object_object_add(o, "swap_bytes", value_json(&s->swap));
	json_object_object_add(o, "failcnt", value_json(&s->failcnt));
	json_object_object_add(ev, "oom",
			       json_object_new_int64((int64_t)s->events.oom));
	json_object_object_add(
		ev, "oom_kill",
		json_object_new_int64((int64_t)s->events.oom_kill));
	json_object_object_add(ev, "max",
			       json_object_new_int64((int64_t)s->events.max));
	json_object_object_add(o, "events", ev);
	json_object_object_add(o, "oom_group",
			       json_object_new_boolean(s->oom_group));
	return o;
}

struct dump_ctx {
	struct bundle *b;
	const char *dir;
};

static int dump_one(const char *name, const char *data, size_t len, void *ud)
{
	struct dump_ctx *c = ud;
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", c->dir, name);
	return bundle_add(c->b, path, data, len, BUNDLE_HIGH);
}

/* memory.stat as read at the OOM notification, before the kill. */
static void add_stat_file(struct bundle *b, const char *path,
			  const struct cgroup_stat *st)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	if (!st->n)
		return;
	strbuf_init(&sb, 65536);
	for (size_t i = 0; i < st->n; i++)
		strbuf_addf(&sb, "%s %llu\n", st->e[i].name,
			    (unsigned long long)st->e[i].value);
	bundle_add(b, path, sb.buf, sb.len, BUNDLE_HIGH);
}

/* Adds cgroup/ for the victim's memcg and, when the kernel blamed another
 * (an ancestor holding the limit), cgroup/oom_memcg/ as well. */
static void add_cgroup(struct agent *a, struct bundle *b, struct corr_kill *k,
		       struct json_object *man)
{
	const char *oom = k->paths.oom;
	const char *victim = k->cgroup;
	struct cgroup_state now = {0};
	struct dump_ctx c = {b, "cgroup"};
	int q;

	q = cgroup_read_state(&a->cgfs, victim, &now);
	if (q >= 0) {
		json_object_object_add(man, "cgroup_state", state_json(&now));
		cgroup_state_release(&now);
	} else {
		bundle_note_truncated(b, "cgroup/",
				      q == -ENOENT
					      ? "cgroup removed before capture"
					      : "cgroup not readable");
	}
	if (k->have_state) {
		json_object_object_add(man, "cgroup_state_at_notification",
				       state_json(&k->state_at_notification));
		add_stat_file(b, "cgroup/at-notification/memory.stat",
			      &k->state_at_notification.stat);
	}
	if (q >= 0)
		cgroup_dump_files(&a->cgfs, victim, dump_one, &c);
	if (oom[0] && !streq(oom, victim)) {
		c.dir = "cgroup/oom_memcg";
		cgroup_dump_files(&a->cgfs, oom, dump_one, &c);
	}
}

static struct json_object *victims_json(const struct oom_report *r)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; arr && i < r->n_victims; i++)
		json_object_array_add(arr, kmsg_victim_to_json(&r->victims[i]));
	return arr;
}

/* The kernel's path of the victim's cgroup: as the report printed it when
 * the report named it, else ours turned back (null when that cannot be
 * known: a hidden mount). */
static struct json_object *cgroup_kernel_json(const struct agent *a,
					      const struct corr_kill *k)
{
	const char *printed = oom_report_victim_memcg(&k->report);
	char buf[KMSG_PATH_MAX];

	if (printed[0] && streq(k->cgroup, corr_paths_victim(&k->paths)))
		return json_object_new_string(printed);
	if (!agent_kernel_path(a, k->cgroup, buf, sizeof(buf)))
		return NULL;
	return json_object_new_string(buf);
}

/* cgroup and oom_memcg are paths under our mount; *_kernel are the
 * kernel's (as kernel/oom.txt prints them; the report's own, beside the
 * mounted ones since it was read); cgroup_mount says how one became the
 * other. */
static void add_paths(struct agent *a, const struct corr_kill *k,
		      struct json_object *man)
{
	const struct cgroup_mount *m = &a->cgmount;
	struct json_object *o = json_object_new_object();

	json_object_object_add(man, "cgroup",
			       json_object_new_string(k->cgroup));
	json_object_object_add(man, "oom_memcg",
			       json_object_new_string(k->paths.oom));
	json_object_object_add(man, "cgroup_kernel", cgroup_kernel_json(a, k));
	json_object_object_add(
		man, "oom_memcg_kernel",
		k->report.oom_memcg[0]
			? json_object_new_string(k->report.oom_memcg)
			: NULL);
	json_object_object_add(
		o, "state",
		json_object_new_string(m->state == CGROUP_BASE_KNOWN ? "known"
				       : m->state == CGROUP_BASE_HIDDEN
					       ? "hidden"
					       : "assumed"));
	json_object_object_add(o, "kernel_path",
			       m->state == CGROUP_BASE_HIDDEN
				       ? NULL
				       : json_object_new_string(m->base));
	json_object_object_add(o, "namespace_path",
			       json_object_new_string(m->ns_base));
	json_object_object_add(man, "cgroup_mount", o);
}

/* Task pids a cut left out of a global OOM's dump (cut_node_tasks). */
struct pid_set {
	int *pid;
	size_t n, cap;
	bool all; /* the cut failed: every task left out */
};

static bool pid_set_has(const struct pid_set *s, int pid)
{
	if (s->all)
		return true;
	for (size_t i = 0; i < s->n; i++)
		if (s->pid[i] == pid)
			return true;
	return false;
}

/* kernel/oom.json: the report as the kernel printed it (its paths are
 * the kernel's: the agent's own travel beside it), without the tasks the
 * cut left out of kernel/oom.txt. NULL on allocation failure. */
static struct json_object *kernel_json(const struct oom_report *r,
				       const struct pid_set *left_out)
{
	struct json_object *j = oom_report_to_json(r), *tasks;

	if (!j || (!left_out->n && !left_out->all) ||
	    !(tasks = jget_array(NULL, j, "tasks")))
		return j;
	for (size_t i = json_object_array_length(tasks); i-- > 0;) {
		int pid = -1;

		if (jget_int(NULL, json_object_array_get_idx(tasks, i), "pid",
			     &pid) &&
		    pid_set_has(left_out, pid))
			json_object_array_del_idx(tasks, i, 1);
	}
	return j;
}

/* Whether a task of a global OOM's dump is the victim or its owner's: by
 * /proc/<pid>/cgroup read now (a task gone since is left out). */
struct owner_tasks {
	const struct agent *a;
	const struct kill_owner *owner; /* NULL when the victim is nobody's */
	int victim;
	struct pid_set *left_out; /* each pid refused, for kernel/oom.json */
	bool nomem;
};

static bool is_owner_task(const struct owner_tasks *t, int pid)
{
	_cleanup_close_ int fd = -1;
	char cg[KMSG_PATH_MAX];

	if (pid == t->victim)
		return true;
	if (!t->owner || (fd = host_open_pid(&t->a->host, pid)) < 0)
		return false;
	return procfs_read_cgroup(fd, cg, sizeof(cg)) == 0 &&
	       t->a->hooks->owner_task(t->owner, cg);
}

/* The cut's keep(): asks once per line and remembers each refusal, so
 * that kernel/oom.json leaves out the same tasks as kernel/oom.txt. */
static bool owner_task(int pid, void *arg)
{
	struct owner_tasks *t = arg;
	struct pid_set *s = t->left_out;

	if (is_owner_task(t, pid))
		return true;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		int *grown = reallocarray(s->pid, cap, sizeof(*grown));

		if (!grown) {
			t->nomem = true;
			return false;
		}
		s->pid = grown;
		s->cap = cap;
	}
	s->pid[s->n++] = pid;
	return false;
}

/* A mode whose bundles others than the node's owner read (cluster mode:
 * the victim's namespace; the hooks' cut_node_tasks): a global OOM's task
 * dump, which lists every process of the node, is cut to the victim and
 * its owner's tasks into *cut, with how many were left out in the
 * manifest; the whole report stays on the node, 0600 beside the bundle
 * (STATE/reports/<id>.node-oom.txt). false: nothing to cut, or it failed
 * (then the dump is left out whole). */
static bool cut_node_tasks(struct agent *a, const struct corr_kill *k,
			   const struct kill_owner *owner, const char *id,
			   struct json_object *man, struct strbuf *cut,
			   struct pid_set *left_out)
{
	const struct oom_report *r = &k->report;
	struct owner_tasks t = {.a = a,
				.owner = owner,
				.victim = r->n_victims ? r->victims[0].pid : -1,
				.left_out = left_out};
	struct oom_tasks_cut c = {0};
	struct json_object *o;
	char name[128];
	int q;

	if (!a->hooks || !a->hooks->cut_node_tasks || !r->global || !r->n_tasks)
		return false;
	snprintf(name, sizeof(name), "%s.node-oom.txt", id);
	q = write_file_atomic_at(a->reports_fd, name, r->raw.buf, r->raw.len,
				 0600);
	if (q < 0)
		log_warn("%s: the node's whole OOM report not kept: %s", name,
			 strerror(-q));
	q = oom_report_cut_tasks(r, owner_task, &t, cut, &c);
	if (q == 0 && t.nomem)
		q = -ENOMEM; /* oom.json could not leave out the same tasks */
	if (q < 0) {
		/* no task line of anyone's rather than everyone's */
		strbuf_reset(cut);
		left_out->all = true;
		log_warn("%s: the task dump could not be cut (%s): left out",
			 id, strerror(-q));
	}
	o = json_object_new_object();
	json_object_object_add(
		o, "tasks",
		json_object_new_uint64(q < 0 ? r->n_tasks : c.left_out));
	json_object_object_add(o, "rss_pages",
			       json_object_new_uint64(c.left_out_rss));
	json_object_object_add(
		o, "why",
		json_object_new_string(
			"a node-wide OOM: the kernel listed every process of "
			"the node; those of other pods are left out of a "
			"bundle published in this namespace"));
	json_object_object_add(man, "node_tasks_left_out", o);
	return true;
}

static void fill_manifest(struct agent *a, const struct corr_kill *k,
			  struct json_object *man, uint64_t wall_us)
{
	const struct oom_report *r = &k->report;
	char ts[64];
	time_t t = (time_t)(wall_us / 1000000u);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_object_add(man, "node", json_object_new_string(a->node));
	add_paths(a, k, man);
	/* how the agent found the cgroup: kernel/oom.json keeps only what
	 * the kernel printed */
	json_object_object_add(
		man, "how_found",
		json_object_new_string(corr_how_name(k->how_found)));
	json_object_object_add(
		man, "confidence",
		json_object_new_string(corr_confidence_name(k->confidence)));
	json_object_object_add(man, "cgroup_mode",
			       json_object_new_string(a->cgfs.mode == CGROUP_V2
							      ? "v2"
							      : "v1"));
	json_object_object_add(man, "pod", NULL);
	json_object_object_add(man, "container", NULL);
	json_object_object_add(man, "captured_at", json_object_new_string(ts));
	json_object_object_add(man, "captured_at_ms",
			       json_object_new_uint64(wall_us / 1000));
	json_object_object_add(man, "trigger",
			       json_object_new_string("oom_kill"));
	json_object_object_add(man, "kernel_report_complete",
			       json_object_new_boolean(r->complete));
	json_object_object_add(man, "kmsg_seq",
			       json_object_new_int64((int64_t)r->seq_first));
	json_object_object_add(man, "victims", victims_json(r));
}

/* agent/timeline.json: the sampler's 1 Hz timeline of the victim's cgroup
 * and of the one whose limit was hit, when another (the pod's, when pod
 * and container limits are equal). The same path form as the sampler
 * walks: under the agent's mount, as the correlator gives it. Runs on the
 * detector thread, which owns the sampler. */
static void add_agent_timeline(struct forecast_sampler *fs, struct bundle *b,
			       const struct corr_kill *k, uint64_t kill_mono_ms,
			       int64_t wall_minus_mono_ms, uint64_t kill_ms)
{
	/* 3 KiB: off the stack */
	_cleanup_free_ struct forecast_history *h = calloc(2, sizeof(*h));
	const char *oom = k->paths.oom;
	struct cgtimeline_series s[2];
	struct json_object *j;
	size_t n = 0;

	if (!h) /* as when the sampler has no history of the cgroup */
		return;
	if (forecast_sampler_history(fs, k->cgroup, kill_mono_ms, &h[n]) > 0)
		s[n++] = (struct cgtimeline_series){
			.cgroup = k->cgroup,
			.task_memcg = true,
			.oom_memcg = streq(oom, k->cgroup),
			.h = &h[0],
		};
	/* the limit hit; the victim's cgroup may have none to sample */
	if (oom[0] && !streq(oom, k->cgroup) &&
	    forecast_sampler_history(fs, oom, kill_mono_ms, &h[n]) > 0) {
		s[n] = (struct cgtimeline_series){
			.cgroup = oom,
			.oom_memcg = true,
			.h = &h[n],
		};
		n++;
	}
	if (!n)
		return;
	j = cgtimeline_to_json(s, n, wall_minus_mono_ms, kill_ms);
	if (j)
		bundle_add_json(b, "agent/timeline.json", j, BUNDLE_HIGH);
	json_object_put(j);
}

/* What the sidecar says it could not capture (its manifest's "capture",
 * a pod's words: read through capture_from_json's bounds and types). */
static void add_capture(struct bundle *b, struct json_object *man)
{
	struct json_object *sm = bundle_get_json(b, BP_SPOOL_MANIFEST);
	struct capture_notes *c = calloc(1, sizeof(*c));
	struct jget_notes notes = {0};

	jget_where(&notes, BP_SPOOL_MANIFEST);
	if (c && capture_from_json(jget(sm, "capture"), &notes, c) == 0)
		json_object_object_add(man, "capture", capture_to_json(c));
	for (size_t i = 0; i < notes.n; i++)
		log_warn("%s, ignoring", notes.text[i]);
	free(c);
	json_object_put(sm);
}

/* The sidecar's flight recorder and newest pre-kill snapshot. */
static void add_spool(struct bundle *b, const char *const *dirs, size_t n,
		      const char *cgroup, struct json_object *man,
		      uint64_t kill_ms)
{
	struct spool_info info;
	struct spool_ignored ignored;
	struct json_object *o;
	int q;

	if (!n)
		return;
	q = spool_attach(b, dirs, n, cgroup, kill_ms, &ignored, &info);
	/* A spool is attributed by where it sits, not by what it says: a
	 * disagreeing claim is a pod pointing at someone else's kills. */
	for (size_t i = 0; i < ignored.n && i < ARRAY_SIZE(ignored.dir); i++)
		log_warn("spool \"%s\" %s, ignoring", ignored.dir[i],
			 ignored.why[i]);
	if (q == -ENOENT) {
		log_info("no sidecar spool watches \"%s\"", cgroup);
		return;
	}
	if (q < 0) {
		/* info is not filled on failure: name the cgroup instead. */
		log_warn("spool for \"%s\": %s, ignoring", cgroup,
			 strerror(-q));
		bundle_note_truncated(b, "spool/", strerror(-q));
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "dir", json_object_new_string(info.dir));
	json_object_object_add(o, "cgroup",
			       json_object_new_string(info.cgroup));
	json_object_object_add(o, "snapshot",
			       json_object_new_string(info.snapshot));
	json_object_object_add(o, "snapshot_ms",
			       json_object_new_uint64(info.snapshot_ms));
	if (info.snapshot_ms && kill_ms >= info.snapshot_ms)
		json_object_object_add(
			o, "snapshot_age_s",
			json_object_new_double(
				(double)(kill_ms - info.snapshot_ms) / 1000.0));
	json_object_object_add(man, "sidecar", o);
	add_capture(b, man);
}

/* The spools of the kill: --spool-dir's (standalone), or its owner's
 * (cluster mode: the spool of the victim's pod, found by the UID in its
 * cgroup path; whatever cgroup the spool names for itself, the sidecar
 * seeing its pod from inside, maybe through a cgroup namespace, its
 * location makes it this pod's: spool.c, located_score). */
static void add_spools(struct agent *a, struct bundle *b,
		       const struct kill_owner *owner, const char *cgroup,
		       struct json_object *man, uint64_t kill_ms)
{
	char dir[4096];
	const char *dirs[AGENT_MAX_SPOOL + 1];
	size_t n = 0;

	for (int i = 0; i < a->opts.n_spool; i++)
		dirs[n++] = a->opts.spool[i];
	if (a->hooks && owner &&
	    (dirs[n] = a->hooks->spool(a->hooks->ud, owner, dir, sizeof(dir))))
		n++;
	add_spool(b, dirs, n, cgroup, man, kill_ms);
}

/* The report line of k, printed by print_line() once what the bundle
 * gives is known; made before a mode may take k's report over. */
static struct json_object *line_json(const char *id, const char *path,
				     const struct corr_kill *k, int64_t latency)
{
	const struct oom_report *r = &k->report;
	char html[4096];
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "cgroup", json_object_new_string(k->cgroup));
	json_object_object_add(o, "victims", victims_json(r));
	json_object_object_add(o, "group_kill",
			       json_object_new_boolean(r->group_kill));
	json_object_object_add(o, "detect_latency_us",
			       json_object_new_int64(latency));
	snprintf(html, sizeof(html), "%.*s.html",
		 (int)(strlen(path) - strlen(".tar.gz")), path);
	json_object_object_add(o, "report_html", json_object_new_string(html));
	return o;
}

/* Prints o (taken) with the bundle's size and verdict, when it has them
 * (size < 0: a bundle to be finished later). */
static void print_line(struct json_object *o, long size,
		       const struct agent_verdict *v)
{
	if (size >= 0)
		json_object_object_add(o, "bundle_bytes",
				       json_object_new_int64(size));
	if (v->verdict[0]) {
		json_object_object_add(o, "verdict",
				       json_object_new_string(v->verdict));
		json_object_object_add(o, "summary",
				       json_object_new_string(v->summary));
	}
	printf("%s\n", json_object_to_json_string_ext(
			       o, JSON_C_TO_STRING_PLAIN |
					  JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
	json_object_put(o);
}

/* oomlens_oom_kills_total by the victim's namespace, container and
 * workload (its owner's labels: cluster mode, a kill in a known pod), else
 * by its verdict alone: a cgroup path is no bounded label (a scope, a
 * container id). */
static void count_kill(struct agent *a, const struct kill_owner *owner,
		       const char *verdict, int64_t latency,
		       const struct bundle *b)
{
	struct agent_kill_labels l = {0};

	if (a->hooks && owner)
		a->hooks->labels(owner, &l);
	l.verdict = verdict && verdict[0] ? verdict : "unknown";
	agent_metrics_on_capture(a->metrics, &l, latency, b);
}

/* A kernel report's id is its boot and sequence: an agent stopped by force
 * after it wrote the bundle but before it saved its progress
 * (detector/state.c) meets the same report again at its next start. Its
 * bundle is not made again (a new one would differ from what the queue
 * may already have published): with a mode's hooks that do not hold it
 * (no publish item staged, no case waiting) it is handed to them as it
 * is (hand_over_saved()). saved: reports/<id>.tar.gz is a regular
 * file. */
static bool captured_before(const struct agent *a, const char *id, bool saved)
{
	if (a->hooks ? !a->hooks->captured(a->hooks->ud, id, saved) : !saved)
		return false;
	log_info("report %s: captured before the agent's last stop (%s); "
		 "not again",
		 id,
		 !saved	    ? "its case waits in the queue"
		 : a->hooks ? "its bundle saved, queued"
			    : "its bundle saved");
	return true;
}

/* A bundle saved before the agent's last stop that its mode never got
 * (the agent stopped between the write and the hand-over, or a case
 * finished at this start without its publish item): handed over as it
 * was written, its verdict and kill time read back from it, not captured
 * again. False without hooks, or when it cannot be read. */
static bool hand_over_saved(struct agent *a, struct corr_kill *k,
			    const struct kill_owner *owner, const char *id)
{
	struct agent_verdict v;
	uint64_t kill_ms = 0;
	int r;

	if (!a->hooks)
		return false;
	r = agent_bundle_verdict(a, id, &v, &kill_ms);
	if (r < 0) {
		log_warn("report %s: its bundle from before the agent's last "
			 "stop cannot be read back (%s); captured again",
			 id, bundle_strerror(r));
		return false;
	}
	log_info("report %s: its bundle was saved before the agent's last "
		 "stop, not queued; queued as it is, not captured again",
		 id);
	a->hooks->hand_over(a->hooks->ud, k, owner, id, &v, kill_ms);
	return true;
}

/* The evidence of k under id into b, with its manifest, not yet
 * diagnosed: its kill time into *ret_kill_ms. */
static void collect(struct agent *a, struct corr_kill *k,
		    const struct kill_owner *owner, const char *id,
		    struct bundle *b, int64_t latency, uint64_t mono,
		    uint64_t wall, uint64_t *ret_kill_ms)
{
	const struct oom_report *r = &k->report;
	struct json_object *man = bundle_manifest(b), *kj;
	_cleanup_strbuf_ struct strbuf raw = STRBUF_INIT;
	_cleanup_free_ int *left_out_pids = NULL;
	struct pid_set left_out = {0};
	bool cut;
	uint64_t kill_ms;

	strbuf_init(&raw, KMSG_RAW_MAX + 1);
	fill_manifest(a, k, man, wall);
	if (a->hooks && owner)
		a->hooks->manifest(owner, man);
	cut = cut_node_tasks(a, k, owner, id, man, &raw, &left_out);
	left_out_pids = left_out.pid;
	if (!cut)
		strbuf_add(&raw, r->raw.buf, r->raw.len);
	bundle_add(b, "kernel/oom.txt", raw.buf, raw.len, BUNDLE_ESSENTIAL);
	kj = kernel_json(r, &left_out);
	if (kj)
		bundle_add_json(b, "kernel/oom.json", kj, BUNDLE_ESSENTIAL);
	json_object_put(kj);
	add_cgroup(a, b, k, man);
	json_object_object_add(man, "detect_latency_us",
			       json_object_new_int64(latency));
	kill_ms = (wall - (latency > 0 ? (uint64_t)latency : 0)) / 1000;
	json_object_object_add(man, "killed_at_ms",
			       json_object_new_uint64(kill_ms));
	add_agent_timeline(a->sampler, b, k,
			   (mono - (latency > 0 ? (uint64_t)latency : 0)) /
				   1000,
			   ((int64_t)wall - (int64_t)mono) / 1000, kill_ms);
	add_spools(a, b, owner, k->cgroup, man, kill_ms);
	*ret_kill_ms = kill_ms;
}

static int capture(struct agent *a, struct corr_kill *k,
		   const struct kill_owner *owner)
{
	const struct oom_report *r = &k->report;
	uint64_t mono = now_monotonic_us(), wall = now_realtime_us();
	uint64_t kill_us = r->n_victims ? r->victims[0].usec : r->usec;
	/* kmsg stamps are converted to CLOCK_MONOTONIC by the offset
	 * measured at start (0 where they are the same clock). */
	int64_t latency =
		kill_us != UINT64_MAX
			? (int64_t)mono - ((int64_t)kill_us - a->kmsg_offset_us)
			: -1;
	char id[96], path[4096];
	struct bundle *b;
	struct json_object *line;
	struct agent_verdict verdict = {0};
	bool saved;
	uint64_t kill_ms = 0;
	long size;
	int q;

	if (r->seq_first != UINT64_MAX)
		snprintf(id, sizeof(id), "oom-%.8s-%llu", a->boot_id,
			 (unsigned long long)r->seq_first);
	else /* no kernel report: a name that cannot collide with one */
		snprintf(id, sizeof(id), "oom-%.8s-m%llu", a->boot_id,
			 (unsigned long long)mono);
	snprintf(path, sizeof(path), "%s.tar.gz", id);
	saved = is_regular_at(a->reports_fd, path);
	if (captured_before(a, id, saved) ||
	    (saved && hand_over_saved(a, k, owner, id)))
		return 0;
	q = bundle_new(id, &b);
	if (q < 0)
		return q;
	collect(a, k, owner, id, b, latency, mono, wall, &kill_ms);
	snprintf(path, sizeof(path), "%s/reports/%s.tar.gz", a->opts.state_dir,
		 id);
	/* a mode that publishes it may keep it until more comes (cluster
	 * mode: the pod's uploaded snapshot when the node has none,
	 * run_late_snap.c), and finish it then: its line now, without the
	 * verdict and size the bundle does not have yet */
	line = line_json(id, path, k, latency);
	if (a->hooks &&
	    a->hooks->keep(a->hooks->ud, k, owner, b, id, kill_ms, latency)) {
		print_line(line, -1, &verdict);
		a->reports_written++;
		return 0;
	}
	size = agent_bundle_finish(a, b, r, kill_ms, id, &verdict);
	if (size < 0) {
		json_object_put(line);
		count_kill(a, owner, verdict.verdict, latency, b);
		bundle_free(b);
		return (int)size;
	}
	print_line(line, size, &verdict);
	a->reports_written++;
	count_kill(a, owner, verdict.verdict, latency, b);
	bundle_free(b);
	if (a->hooks)
		a->hooks->hand_over(a->hooks->ud, k, owner, id, &verdict,
				    kill_ms);
	return 0;
}

int agent_capture(struct agent *a, struct corr_kill *k)
{
	struct kill_owner *owner = NULL;
	int r;

	if (a->hooks && !a->hooks->want(a->hooks->ud, k->cgroup, &owner))
		return 0;
	r = capture(a, k, owner);
	if (a->hooks)
		a->hooks->owner_free(owner);
	return r;
}
