/* SPDX-License-Identifier: Apache-2.0 */
/* The finish step of one kill's bundle: diagnosis.json from what the bundle
 * holds, report.html rendered from the bundle itself, then the one write
 * of reports/<id>.tar.gz. The first capture (capture.c) and a bundle
 * finished later, when its pod's snapshot arrives (../run_late_snap.c),
 * both finish through it. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "forensics/bundle.h"
#include "forensics/diagnosis.h"
#include "forensics/manifest.h"
#include "forensics/report.h"
#include "forensics/spool.h"
#include "base/bundle_paths.h"
#include "base/fileio.h"
#include "base/jget.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "base/util.h"

/* diagnosis.json from what the bundle holds so far; the verdict and summary
 * also go into the manifest and the report line. */
void agent_bundle_diagnose(struct bundle *b, const struct oom_report *r,
			   struct json_object *man, uint64_t kill_ms,
			   struct agent_verdict *ret)
{
	struct diag_input in;
	struct diagnosis *d = calloc(1, sizeof(*d));
	struct json_object *dj;

	if (!d || diagnosis_load_bundle(b, r, kill_ms, &in) < 0) {
		free(d);
		bundle_note_truncated(b, "diagnosis.json", "out of memory");
		return;
	}
	diagnosis_run(&in, d);
	/* fields of the pod's files dropped for a wrong type, and figures
	 * that did not add up: in diagnosis.json, and said here */
	for (size_t i = 0; i < d->notes.n; i++)
		log_warn("bundle \"%s\": %s", bundle_id(b), d->notes.text[i]);
	dj = diagnosis_to_json(d);
	if (dj)
		bundle_add_json(b, "diagnosis.json", dj, BUNDLE_ESSENTIAL);
	json_object_put(dj);
	strlcpy_safe(ret->verdict, diag_kind_name(d->verdicts[0].kind),
		     sizeof(ret->verdict));
	strlcpy_safe(ret->summary, d->summary, sizeof(ret->summary));
	ret->usage = d->usage_bytes;
	ret->limit = d->limit_bytes;
	json_object_object_add(man, "verdict",
			       json_object_new_string(ret->verdict));
	json_object_object_add(man, "summary",
			       json_object_new_string(ret->summary));
	diag_input_release(&in);
	free(d);
}

/* The manifest against its one description (forensics/manifest.h), before
 * the readers meet it: a mismatch is the agent's own bug, said once per
 * field, and the bundle is written all the same. */
static void check_manifest(struct bundle *b)
{
	struct jget_notes notes = {0};

	if (!manifest_check(bundle_manifest(b), &notes))
		return;
	for (size_t i = 0; i < notes.n; i++)
		log_warn("bundle %s: %s (docs/manifest.md)", bundle_id(b),
			 notes.text[i]);
}

/* The kernel's first victim's own files (processes/<pid>/ of the
 * snapshot, found by its name and RSS: the snapshot's pids are the pod's)
 * are kept before every other process's. */
static void raise_victim(struct bundle *b)
{
	struct json_object *v =
		jget_idx(jget_array(NULL, bundle_manifest(b), "victims"), 0);
	uint64_t rss = jget_u64_or0(NULL, v, "anon_rss_kb") +
		       jget_u64_or0(NULL, v, "file_rss_kb") +
		       jget_u64_or0(NULL, v, "shmem_rss_kb");
	char dir[64];
	int pid = -1;

	if (!v || !jget_int(NULL, v, "pid", &pid))
		return;
	pid = spool_victim_pid(b, pid, jget_str(NULL, v, "comm"), rss);
	if (pid < 0)
		return;
	snprintf(dir, sizeof(dir), BP_PROC_DIR_FMT "/", pid);
	bundle_raise_prio(b, dir, BUNDLE_VICTIM);
}

static int render(struct bundle *b, struct strbuf *html)
{
	int q;

	strbuf_reset(html);
	q = report_render_html(b, html);
	if (q < 0)
		bundle_note_truncated(b, "report.html", strerror(-q));
	else
		bundle_add(b, "report.html", html->buf, html->len,
			   BUNDLE_ESSENTIAL);
	return q;
}

/* report.html inside the bundle, and beside it on disk for a browser. The
 * bundle is fitted to its budget first, so that the page lists what was
 * left out (rendered again when the fit dropped anything). */
void agent_bundle_report(struct agent *a, struct bundle *b, const char *id)
{
	_cleanup_strbuf_ struct strbuf html = STRBUF_INIT;
	char name[128];
	int q;

	check_manifest(b);
	raise_victim(b);
	strbuf_init(&html, 4u << 20);
	if (render(b, &html) < 0)
		return;
	q = bundle_fit(b, a->opts.bundle_max);
	if (q > 0 && render(b, &html) < 0)
		return;
	snprintf(name, sizeof(name), "%s.html", id);
	q = write_file_atomic_at(a->reports_fd, name, html.buf, html.len, 0640);
	if (q < 0)
		log_warn("cannot write \"%s\": %s, ignoring", name,
			 strerror(-q));
}

long agent_bundle_finish(struct agent *a, struct bundle *b,
			 const struct oom_report *r, uint64_t kill_ms,
			 const char *id, struct agent_verdict *ret)
{
	char name[128];

	agent_bundle_diagnose(b, r, bundle_manifest(b), kill_ms, ret);
	agent_bundle_report(a, b, id);
	snprintf(name, sizeof(name), "%s.tar.gz", id);
	return bundle_write(b, a->reports_fd, name, a->opts.bundle_max);
}

struct saved_ctx {
	struct agent_verdict *v;
	uint64_t kill_ms;
	bool have_manifest;
};

static int saved_one(const char *name, const char *data, size_t len, void *ud)
{
	struct saved_ctx *c = ud;
	const char *path = strchr(name, '/');
	struct json_object *o;

	if (!path ||
	    (!streq(path, "/" BP_MANIFEST) && !streq(path, "/diagnosis.json")))
		return 0;
	if (strlen(data) != len)
		return -EBADMSG;
	o = json_tokener_parse(data);
	if (streq(path, "/" BP_MANIFEST) &&
	    json_object_is_type(o, json_type_object)) {
		c->have_manifest = true;
		c->kill_ms = jget_u64_or0(NULL, o, "killed_at_ms");
		strlcpy_safe(c->v->verdict, jget_str(NULL, o, "verdict") ?: "",
			     sizeof(c->v->verdict));
		strlcpy_safe(c->v->summary, jget_str(NULL, o, "summary") ?: "",
			     sizeof(c->v->summary));
	} else if (json_object_is_type(o, json_type_object)) {
		c->v->usage = jget_u64_or0(NULL, o, "usage_bytes");
		c->v->limit = jget_u64_or0(NULL, o, "limit_bytes");
	}
	json_object_put(o);
	return 0;
}

int agent_bundle_verdict(struct agent *a, const char *id,
			 struct agent_verdict *ret, uint64_t *ret_kill_ms)
{
	struct saved_ctx c = {.v = ret};
	char name[128];
	int r;

	memset(ret, 0, sizeof(*ret));
	snprintf(name, sizeof(name), "%s.tar.gz", id);
	r = bundle_read(a->reports_fd, name, saved_one, &c);
	if (r == 0 && !c.have_manifest)
		r = -EBADMSG;
	if (r == 0)
		*ret_kill_ms = c.kill_ms;
	return r;
}
