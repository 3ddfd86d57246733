/* SPDX-License-Identifier: Apache-2.0 */
/* report.html: one page a person reads at a glance. */
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>

#include "base/bundle_paths.h"
#include "base/jget.h"
#include "forensics/bundle.h"
#include "forensics/capture.h"
#include "forensics/manifest.h"
#include "base/parse.h"
#include "forensics/report.h"
#include "forensics/runtimes/registry.h"
#include "base/util.h"

#define MiB (1024.0 * 1024.0)

static const char *const palette[] = {
	"#d9534f", "#f0ad4e", "#5bc0de", "#5cb85c", "#9b59b6", "#34495e",
	"#e67e22", "#16a085", "#c0392b", "#7f8c8d", "#2980b9", "#8e44ad",
};

int report_html_escape(struct strbuf *out, const char *s)
{
	int r = 0;

	for (; r >= 0 && s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&':
			r = strbuf_adds(out, "&amp;");
			break;
		case '<':
			r = strbuf_adds(out, "&lt;");
			break;
		case '>':
			r = strbuf_adds(out, "&gt;");
			break;
		case '"':
			r = strbuf_adds(out, "&quot;");
			break;
		case '\'':
			r = strbuf_adds(out, "&#39;");
			break;
		default:
			if (c < 0x20 && c != '\n' && c != '\t')
				r = strbuf_addf(out, "&#%u;", 0x2400 + c);
			else
				r = strbuf_addch(out, (char)c);
		}
	}
	return r;
}

static const char *mib(char *buf, size_t n, double bytes)
{
	if (bytes >= 1024 * MiB)
		snprintf(buf, n, "%.2f GiB", bytes / (1024 * MiB));
	else if (bytes >= 10 * MiB)
		snprintf(buf, n, "%.0f MiB", bytes / MiB);
	else
		snprintf(buf, n, "%.1f MiB", bytes / MiB);
	return buf;
}

#define M(x) mib((char[32]){0}, 32, (x))

struct page {
	const struct bundle *b;
	struct strbuf *out;
	struct json_object *man, *diag, *tl;
	bool tl_agent; /* tl is the agent's cgroup series (no sidecar) */
	/* who was killed (manifest.h); in a pod, the kernel's pids are the
	 * node's and the sidecar's the pod's: each is labelled */
	struct manifest_who who;
	/* fields dropped for a wrong type: the page says which */
	struct jget_notes notes;
	int r;
};

/* Typed reads from the bundle's JSON (written by a pod's sidecar or by any
 * tool): a wrong type reads as absent and is noted, never an abort. */
static const char *jstr(struct page *p, struct json_object *o, const char *k)
{
	const char *s = jget_str(&p->notes, o, k);

	return s ? s : "";
}

/* A byte count or other figure ≥ 0; 0 when absent or of another type. */
static double getb(struct page *p, struct json_object *o, const char *k)
{
	return (double)jget_u64_or0(&p->notes, o, k);
}

static int geti(struct page *p, struct json_object *o, const char *k)
{
	int v = 0;

	jget_int(&p->notes, o, k, &v);
	return v;
}

static bool getbool(struct page *p, struct json_object *o, const char *k)
{
	bool v = false;

	jget_bool(&p->notes, o, k, &v);
	return v;
}

static struct json_object *arr(struct page *p, struct json_object *o,
			       const char *k)
{
	return jget_array(&p->notes, o, k);
}

static const char *idx_str(struct page *p, struct json_object *a, size_t i)
{
	const char *s = jget_idx_str(&p->notes, a, i);

	return s ? s : "";
}

static void out(struct page *p, const char *s)
{
	if (p->r >= 0)
		p->r = strbuf_adds(p->out, s);
}

static void outf(struct page *p, const char *fmt, ...) _printf_(2, 3);
static void outf(struct page *p, const char *fmt, ...)
{
	va_list ap;

	if (p->r < 0)
		return;
	va_start(ap, fmt);
	p->r = strbuf_vaddf(p->out, fmt, ap);
	va_end(ap);
}

static void esc(struct page *p, const char *s)
{
	if (p->r >= 0)
		p->r = report_html_escape(p->out, s);
}

/* What a verdict rests on (diagnosis.json "basis"), after sep: only the
 * two words the diagnosis writes (the bundle's JSON is anyone's), and
 * nothing for a bundle written before verdicts carried it. */
static void basis(struct page *p, struct json_object *v, const char *sep)
{
	const char *b = jstr(p, v, "basis");

	if (strcmp(b, "measured") && strcmp(b, "inferred"))
		return;
	out(p, sep);
	out(p, b);
}

static const char css[] =
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;"
	"margin:0;background:#f5f6f8;color:#1d2330}"
	"main{max-width:1100px;margin:0 auto;padding:20px}"
	"h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:0 0 10px}"
	".sub{color:#5a6372}.card{background:#fff;border-radius:8px;"
	"box-shadow:0 1px 3px rgba(0,0,0,.12);padding:16px;margin:14px 0}"
	".verdict{border-left:6px solid #d9534f}"
	".vname{font-size:22px;font-weight:700;color:#b52b27}"
	".conf{display:inline-block;background:#eef;border-radius:10px;"
	"padding:1px 8px;margin-left:8px;font-size:12px;color:#334}"
	".other{color:#5a6372;font-size:13px}"
	"table{border-collapse:collapse;width:100%}"
	"td,th{padding:4px 8px;border-bottom:1px solid #e4e6ea;text-align:left;"
	"font-variant-numeric:tabular-nums}th{color:#5a6372;font-weight:600}"
	"td.n,th.n{text-align:right}.victim{background:#fdecea}"
	".sw{display:inline-block;width:11px;height:11px;border-radius:2px;"
	"margin-right:6px;vertical-align:-1px}"
	"pre{background:#1d2330;color:#e6e6e6;padding:12px;overflow:auto;"
	"font-size:12px;border-radius:6px}code{font-size:13px}"
	"li{margin:3px 0}.est{color:#8a6d3b;font-size:12px}"
	"svg text{font-size:11px;fill:#5a6372}";

static void page_head(struct page *p)
{
	struct json_object *victims, *v0;
	const char *verdict;
	char who[512];

	manifest_who_label(&p->who, who, sizeof(who));
	jget_where(&p->notes, BP_DIAGNOSIS);
	verdict = jstr(p, p->diag, "verdict");
	jget_where(&p->notes, BP_MANIFEST);
	victims = arr(p, p->man, "victims");
	v0 = jget_idx(victims, 0);
	out(p,
	    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	    "<meta name=\"viewport\" content=\"width=device-width\">"
	    "<meta http-equiv=\"Content-Security-Policy\" content=\""
	    "default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
	    "<title>oomlens: ");
	/* who was killed as the user knows it first (namespace/pod/container,
	 * else the cgroup), then the verdict and the process */
	esc(p, who);
	out(p, " — ");
	esc(p, verdict);
	out(p, " (");
	esc(p, jstr(p, v0, "comm"));
	outf(p, ")</title><style>%s</style></head><body><main>\n", css);
	out(p, "<h1><code>");
	esc(p, who);
	out(p, "</code>: OOM kill of ");
	esc(p, v0 ? jstr(p, v0, "comm") : "an unknown process");
	if (v0)
		outf(p, " (pid %d%s)", geti(p, v0, "pid"),
		     p->who.in_pod ? " on the node" : "");
	out(p, "</h1><div class=\"sub\">");
	esc(p, jstr(p, p->man, "captured_at"));
	out(p, " · node ");
	esc(p, p->who.node);
	out(p, " · cgroup <code>");
	esc(p, p->who.cgroup);
	out(p, "</code> · bundle ");
	esc(p, bundle_id(p->b));
	out(p, "</div>\n");
}

/* The manifest's "capture" (what the sidecar ran as and what it could not
 * capture): one line, then the misses. NULL when the bundle has none (no
 * sidecar, or an older one); the caller frees. */
static struct capture_notes *capture_of(struct page *p)
{
	struct capture_notes *c = calloc(1, sizeof(*c));

	jget_where(&p->notes, BP_MANIFEST);
	if (c && capture_from_json(jget(p->man, "capture"), &p->notes, c) == 0)
		return c;
	free(c);
	return NULL;
}

static void capture_line(struct page *p, const struct capture_notes *c)
{
	if (c->have_ids)
		outf(p, "uid %u, gid %u, ", c->uid, c->gid);
	out(p, "capabilities ");
	for (size_t i = 0; i < c->n_caps; i++)
		outf(p, "%s%s", i ? "," : "", c->caps[i]);
	if (!c->n_caps)
		out(p, "none");
	if (c->pod_security[0])
		outf(p, ", pod security %s", c->pod_security);
}

/* "smaps of pid 12 (in the pod)": the sidecar's pids are the pod's. */
static void miss_what(struct page *p, const struct capture_miss *m, bool html)
{
	if (html)
		esc(p, m->what);
	else
		out(p, m->what);
	if (m->pid)
		outf(p, " of pid %d%s", m->pid,
		     p->who.in_pod ? " (in the pod)" : "");
}

static void page_capture(struct page *p)
{
	struct capture_notes *c = capture_of(p);

	if (!c)
		return;
	out(p, "<section class=\"card\"><h2>What the sidecar could not "
	       "capture</h2><div class=\"sub\">sidecar ran as ");
	capture_line(p, c); /* names of [A-Z0-9_] and numbers only */
	out(p, "</div>");
	if (!c->n)
		out(p, "<p>nothing: every capture it tried worked</p>");
	else
		out(p, "<ul>");
	for (size_t i = 0; i < c->n; i++) {
		out(p, "<li><b>");
		miss_what(p, &c->miss[i], true);
		out(p, "</b>: ");
		esc(p, c->miss[i].why);
		out(p, "</li>");
	}
	if (c->more)
		outf(p, "<li>and %llu more</li>", (unsigned long long)c->more);
	if (c->n)
		out(p, "</ul>");
	out(p, "</section>\n");
	free(c);
}

static void list(struct page *p, struct json_object *a)
{
	out(p, "<ul>");
	for (size_t i = 0; i < jget_len(a); i++) {
		out(p, "<li>");
		esc(p, idx_str(p, a, i));
		out(p, "</li>");
	}
	out(p, "</ul>");
}

static void page_verdict(struct page *p)
{
	struct json_object *vs, *v;
	size_t n;

	jget_where(&p->notes, BP_DIAGNOSIS);
	vs = arr(p, p->diag, "verdicts");
	n = jget_len(vs);
	if (!n) {
		out(p, "<section class=\"card verdict\"><div class=\"vname\">"
		       "no diagnosis</div></section>");
		return;
	}
	v = jget_idx(vs, 0);
	out(p, "<section class=\"card verdict\"><div class=\"vname\">");
	esc(p, jstr(p, v, "verdict"));
	if (jstr(p, v, "detail")[0]) {
		out(p, ": ");
		esc(p, jstr(p, v, "detail"));
	}
	outf(p, "<span class=\"conf\">confidence %d%%",
	     geti(p, v, "confidence"));
	basis(p, v, " · ");
	out(p, "</span></div><p>");
	esc(p, jstr(p, p->diag, "summary"));
	out(p, "</p><h2>Evidence</h2>");
	list(p, arr(p, v, "evidence"));
	out(p, "<h2>What to change</h2>");
	list(p, arr(p, v, "recommendations"));
	for (size_t i = 1; i < n; i++) {
		v = jget_idx(vs, i);
		out(p, "<div class=\"other\">also: <b>");
		esc(p, jstr(p, v, "verdict"));
		outf(p, "</b> (confidence %d%%", geti(p, v, "confidence"));
		basis(p, v, ", ");
		out(p, ") — ");
		esc(p, idx_str(p, arr(p, v, "evidence"), 0));
		out(p, "</div>");
	}
	out(p, "</section>\n");
}

static void ledger_bar(struct page *p, struct json_object *parts, double scale,
		       double limit)
{
	double x = 0;

	out(p, "<svg viewBox=\"0 0 1000 56\" width=\"100%\" role=\"img\" "
	       "aria-label=\"ledger\">");
	for (size_t i = 0; i < jget_len(parts); i++) {
		struct json_object *e = jget_idx(parts, i);
		double w = getb(p, e, "bytes") / scale * 1000;

		outf(p,
		     "<rect x=\"%.1f\" y=\"4\" width=\"%.1f\" height=\"32\" "
		     "fill=\"%s\"><title>",
		     x, w, palette[i % ARRAY_SIZE(palette)]);
		esc(p, jstr(p, e, "name"));
		outf(p, ": %s</title></rect>", M(getb(p, e, "bytes")));
		x += w;
	}
	if (limit > 0)
		outf(p,
		     "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"0\" y2=\"40\" "
		     "stroke=\"#b52b27\" stroke-width=\"2\"/>"
		     "<text x=\"%.1f\" y=\"52\" text-anchor=\"end\">limit %s"
		     "</text>",
		     limit / scale * 1000 - 1, limit / scale * 1000 - 1,
		     limit / scale * 1000 - 1, M(limit));
	out(p, "</svg>");
}

static void page_ledger(struct page *p)
{
	struct json_object *parts;
	double usage, limit, scale;
	size_t n;

	jget_where(&p->notes, BP_DIAGNOSIS);
	parts = arr(p, p->diag, "ledger");
	usage = getb(p, p->diag, "usage_bytes");
	limit = getb(p, p->diag, "limit_bytes");
	scale = limit > usage ? limit : usage;
	n = jget_len(parts);
	if (!n || scale <= 0)
		return;
	out(p, "<section class=\"card\"><h2>Where the memory was at the kill"
	       "</h2>");
	ledger_bar(p, parts, scale, limit);
	out(p, "<table><tr><th></th><th>part</th><th class=\"n\">size"
	       "</th><th class=\"n\">of usage</th><th>source</th></tr>");
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = jget_idx(parts, i);

		outf(p,
		     "<tr><td><span class=\"sw\" style=\"background:%s\">"
		     "</span></td><td>",
		     palette[i % ARRAY_SIZE(palette)]);
		esc(p, jstr(p, e, "name"));
		outf(p,
		     "</td><td class=\"n\">%s</td><td class=\"n\">%.0f%%"
		     "</td><td>",
		     M(getb(p, e, "bytes")),
		     usage > 0 ? 100 * getb(p, e, "bytes") / usage : 0);
		esc(p, jstr(p, e, "source"));
		if (getbool(p, e, "estimate"))
			out(p, " <span class=\"est\">(estimate)</span>");
		out(p, "</td></tr>");
	}
	outf(p,
	     "<tr><td></td><td><b>usage at the kill</b></td><td class=\"n\">"
	     "<b>%s</b></td><td></td><td>",
	     M(usage));
	esc(p, jstr(p, p->diag, "usage_source"));
	outf(p, "; unreconciled: %s</td></tr></table></section>\n",
	     M(getb(p, p->diag, "unreconciled_bytes")));
}

#define TL_W 1000.0
#define TL_H 260.0
#define TL_L 60.0 /* left margin for the axis */
#define TL_B 24.0 /* bottom margin */
#define TL_MAXP 8 /* processes drawn; the rest are summed */

struct tl_geom {
	double t0, t1, ymax;
};

static double tx(const struct tl_geom *g, double t)
{
	return TL_L + (t - g->t0) / (g->t1 - g->t0) * (TL_W - TL_L - 10);
}

static double ty(const struct tl_geom *g, double v)
{
	return (TL_H - TL_B) - v / g->ymax * (TL_H - TL_B - 8);
}

static int proc_slot(int *pids, size_t *n, int pid)
{
	for (size_t i = 0; i < *n; i++)
		if (pids[i] == pid)
			return (int)i;
	if (*n < TL_MAXP) {
		pids[*n] = pid;
		return (int)(*n)++;
	}
	return TL_MAXP; /* "others" */
}

static double proc_rss(struct page *p, struct json_object *pr)
{
	return (getb(p, pr, "anon_kb") + getb(p, pr, "file_kb") +
		getb(p, pr, "shmem_kb")) *
	       1024;
}

/* Seconds from the kill to sample i. */
static double sample_t(struct page *p, struct json_object *samples, size_t i,
		       double kill_ms)
{
	return (getb(p, jget_idx(samples, i), "t_ms") - kill_ms) / 1000;
}

/* Stacked areas: one polygon per process slot, bottom to top. */
static void tl_stack(struct page *p, const struct tl_geom *g,
		     struct json_object *samples, double kill_ms)
{
	size_t n = jget_len(samples), np = 0;
	int pids[TL_MAXP];
	double *acc = calloc(n * (TL_MAXP + 2), sizeof(double));

	if (!acc)
		return;
	for (size_t i = 0; i < n; i++) {
		struct json_object *pr = arr(p, jget_idx(samples, i), "procs");
		for (size_t j = 0; j < jget_len(pr); j++) {
			struct json_object *e = jget_idx(pr, j);
			int s = proc_slot(pids, &np, geti(p, e, "pid"));
			acc[i * (TL_MAXP + 2) + (size_t)s + 1] +=
				proc_rss(p, e);
		}
		for (size_t s = 1; s < TL_MAXP + 2; s++) /* cumulative */
			acc[i * (TL_MAXP + 2) + s] +=
				acc[i * (TL_MAXP + 2) + s - 1];
	}
	for (size_t s = 1; s <= np + 1 && s < TL_MAXP + 2; s++) {
		outf(p, "<polygon fill=\"%s\" fill-opacity=\".35\" points=\"",
		     palette[(s + 1) % ARRAY_SIZE(palette)]);
		for (size_t i = 0; i < n; i++)
			outf(p, "%.1f,%.1f ",
			     tx(g, sample_t(p, samples, i, kill_ms)),
			     ty(g, acc[i * (TL_MAXP + 2) + s]));
		for (size_t i = n; i-- > 0;)
			outf(p, "%.1f,%.1f ",
			     tx(g, sample_t(p, samples, i, kill_ms)),
			     ty(g, acc[i * (TL_MAXP + 2) + s - 1]));
		if (s <= np)
			outf(p, "\"><title>pid %d RSS</title></polygon>",
			     pids[s - 1]);
		else
			out(p, "\"><title>other processes</title></polygon>");
	}
	free(acc);
}

static void tl_frame(struct page *p, const struct tl_geom *g, double limit,
		     struct json_object *snaps, double kill_ms)
{
	static const int pcts[] = {80, 90, 95};

	for (int i = 0; i <= 4; i++) {
		double v = g->ymax * i / 4;
		outf(p,
		     "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" "
		     "stroke=\"#e4e6ea\"/><text x=\"%.0f\" y=\"%.1f\" "
		     "text-anchor=\"end\">%s</text>",
		     TL_L, TL_W - 10, ty(g, v), ty(g, v), TL_L - 4,
		     ty(g, v) + 4, M(v));
	}
	if (limit > 0) {
		outf(p,
		     "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" "
		     "stroke=\"#b52b27\" stroke-width=\"2\"/>",
		     TL_L, TL_W - 10, ty(g, limit), ty(g, limit));
		for (size_t i = 0; i < ARRAY_SIZE(pcts); i++)
			outf(p,
			     "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" "
			     "y2=\"%.1f\" stroke=\"#f0ad4e\" "
			     "stroke-dasharray=\"4 4\"><title>%d%% of the "
			     "limit</title></line>",
			     TL_L, TL_W - 10, ty(g, limit * pcts[i] / 100),
			     ty(g, limit * pcts[i] / 100), pcts[i]);
	}
	for (size_t i = 0; i < jget_len(snaps); i++) {
		struct json_object *s = jget_idx(snaps, i);
		double x = tx(g, (getb(p, s, "t_ms") - kill_ms) / 1000);

		outf(p,
		     "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"8\" y2=\"%.0f\" "
		     "stroke=\"#2980b9\" stroke-dasharray=\"2 3\"/>"
		     "<text x=\"%.1f\" y=\"%.0f\" fill=\"#2980b9\">snapshot ",
		     x, x, TL_H - TL_B, x + 3, 18.0 + 12 * (double)(i % 3));
		esc(p, jstr(p, s, "reason"));
		out(p, "</text>");
	}
	outf(p,
	     "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"8\" y2=\"%.0f\" "
	     "stroke=\"#b52b27\" stroke-width=\"2\"/><text x=\"%.1f\" "
	     "y=\"%.0f\" text-anchor=\"end\" fill=\"#b52b27\">kill</text>"
	     "<text x=\"%.0f\" y=\"%.0f\">%.0f s</text><text x=\"%.0f\" "
	     "y=\"%.0f\" text-anchor=\"end\">0 s</text>",
	     tx(g, 0), tx(g, 0), TL_H - TL_B, tx(g, 0) - 3, 14.0, TL_L,
	     TL_H - 6, g->t0, TL_W - 10, TL_H - 6);
}

/* The chart's scale: the samples and the limit; a sample far above the
 * limit is a misreading and would squash the rest, so at most 2× it. */
static void tl_scale(struct page *p, struct json_object *samples,
		     struct tl_geom *g, double *ret_limit)
{
	double limit = 0;

	for (size_t i = 0; i < jget_len(samples); i++) {
		struct json_object *s = jget_idx(samples, i);
		double l = getb(p, s, "limit");

		g->ymax = fmax(g->ymax, getb(p, s, "usage"));
		if (l > 0 && l < 1e18)
			limit = l;
	}
	g->ymax = fmax(g->ymax, limit) * 1.08 + 1;
	if (limit > 0)
		g->ymax = fmin(g->ymax, 2 * limit);
	*ret_limit = limit;
}

static void page_timeline(struct page *p)
{
	struct json_object *samples;
	size_t n;
	double kill_ms, limit = 0, usage;
	struct tl_geom g = {0, 0, 0};

	jget_where(&p->notes, BP_DIAGNOSIS);
	usage = getb(p, p->diag, "usage_bytes");
	jget_where(&p->notes, BP_MANIFEST);
	kill_ms = getb(p, p->man, "killed_at_ms");
	jget_where(&p->notes, p->tl_agent ? BP_AGENT_TIMELINE : BP_TIMELINE);
	samples = arr(p, p->tl, "samples");
	n = jget_len(samples);
	if (n < 2) {
		out(p,
		    "<section class=\"card\"><h2>Timeline</h2><p class=\"sub\">"
		    "No flight recorder timeline in this bundle: run the "
		    "sidecar next to the workload to see the minutes before "
		    "the kill.</p></section>\n");
		return;
	}
	if (kill_ms <= 0)
		kill_ms = getb(p, jget_idx(samples, n - 1), "t_ms");
	g.t0 = sample_t(p, samples, 0, kill_ms);
	g.t1 = 0;
	if (g.t0 >= g.t1)
		g.t0 = g.t1 - 1;
	tl_scale(p, samples, &g, &limit);
	outf(p,
	     "<section class=\"card\"><h2>Timeline: the last %.0f s before "
	     "the kill</h2><svg viewBox=\"0 0 %.0f %.0f\" width=\"100%%\" "
	     "role=\"img\" aria-label=\"timeline\">",
	     -g.t0, TL_W, TL_H);
	tl_stack(p, &g, samples, kill_ms);
	tl_frame(p, &g, limit, arr(p, p->tl, "snapshots"), kill_ms);
	out(p, "<polyline fill=\"none\" stroke=\"#1d2330\" stroke-width=\"2\" "
	       "points=\"");
	for (size_t i = 0; i < n; i++)
		outf(p, "%.1f,%.1f ", tx(&g, sample_t(p, samples, i, kill_ms)),
		     ty(&g, getb(p, jget_idx(samples, i), "usage")));
	out(p, "\"><title>cgroup usage</title></polyline>");
	if (usage > 0) /* last sample → the kill */
		outf(p,
		     "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		     "y2=\"%.1f\" stroke=\"#1d2330\" stroke-width=\"2\" "
		     "stroke-dasharray=\"3 3\"/>",
		     tx(&g, sample_t(p, samples, n - 1, kill_ms)),
		     ty(&g, getb(p, jget_idx(samples, n - 1), "usage")),
		     tx(&g, 0), ty(&g, usage));
	out(p,
	    p->tl_agent
		    ? "</svg><div class=\"sub\">black: the cgroup's usage, "
		      "the agent's 1 Hz samples (no sidecar: no process "
		      "detail) · red: the limit and the kill · orange "
		      "dashed: 80/90/95%</div></section>\n"
		    : "</svg><div class=\"sub\">"
		      "black: the cgroup's usage · red: the limit and the "
		      "kill · orange dashed: 80/90/95% · blue: snapshots · "
		      "shaded: each process's RSS, stacked</div></section>\n");
}

struct mapping_row {
	uint64_t rss_kb;
	int pid;
	char addr[20], perm[6], name[96];
};

#define TOP_MAPPINGS 15

static void keep_top(struct mapping_row *top, size_t *n,
		     const struct mapping_row *m)
{
	size_t i = *n < TOP_MAPPINGS ? (*n)++ : TOP_MAPPINGS - 1;

	if (i == TOP_MAPPINGS - 1 && *n == TOP_MAPPINGS &&
	    top[i].rss_kb >= m->rss_kb)
		return;
	top[i] = *m;
	while (i > 0 && top[i - 1].rss_kb < top[i].rss_kb) {
		struct mapping_row t = top[i - 1];
		top[i - 1] = top[i];
		top[i] = t;
		i--;
	}
}

/* Next whitespace-separated token of [*p, end). */
static size_t token(const char **p, const char *end, const char **ret)
{
	const char *s = *p;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	*ret = s;
	while (s < end && *s != ' ' && *s != '\t')
		s++;
	*p = s;
	return (size_t)(s - *ret);
}

/* pmap -X text: a header naming the columns, Mapping last (may hold
 * spaces or be empty). */
static void scan_pmap(const char *data, size_t len, int pid,
		      struct mapping_row *top, size_t *n)
{
	const char *end = data + len, *line = data, *tok;
	int rss_col = -1, cols = 0;

	while (line < end) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		const char *q = line;
		struct mapping_row m = {.pid = pid};
		size_t l;
		int c = 0;

		eol = eol ? eol : end;
		if (rss_col < 0 &&
		    memmem(line, (size_t)(eol - line), " Address ", 9) &&
		    eol - line < 1024) {
			for (; (l = token(&q, eol, &tok)) > 0; cols++)
				if (l == 3 && !memcmp(tok, "Rss", 3))
					rss_col = cols;
		} else if (rss_col >= 0) {
			for (; c < cols - 1 && (l = token(&q, eol, &tok)) > 0;
			     c++) {
				if (c == 0)
					snprintf(m.addr, sizeof(m.addr), "%.*s",
						 (int)l, tok);
				else if (c == 1)
					snprintf(m.perm, sizeof(m.perm), "%.*s",
						 (int)l, tok);
				else if (c == rss_col)
					(void)parse_u64_n(tok, l, &m.rss_kb);
			}
			while (q < eol && *q == ' ')
				q++;
			snprintf(m.name, sizeof(m.name), "%.*s", (int)(eol - q),
				 q);
			if (c == cols - 1 && m.perm[0] && m.addr[0] != '=')
				keep_top(top, n, &m);
		}
		line = eol + 1;
	}
}

struct scan_ctx {
	struct mapping_row top[TOP_MAPPINGS];
	size_t n_top;
	struct page *p;
};

/* Each runtime names the rows that are its own (glibc's arena heaps, a
 * JVM's heap ranges). */
static void label_rows(struct scan_ctx *c, const char *dir, int pid)
{
	struct rt_mapping rows[TOP_MAPPINGS];
	size_t n = 0;

	for (size_t j = 0; j < c->n_top; j++)
		if (parse_u64_base(c->top[j].addr, 16, &rows[n].addr) == 0) {
			rows[n].pid = c->top[j].pid;
			rows[n].name = c->top[j].name;
			rows[n++].name_size = sizeof(c->top[j].name);
		}
	for (size_t i = 0; i < diag_runtime_count(); i++) {
		const struct diag_runtime *rt = diag_runtime_at(i);

		if (rt->label_mappings)
			rt->label_mappings(c->p->b, dir, pid, rows, n,
					   &c->p->notes);
	}
}

static int scan_pmaps(const char *path, const char *data, size_t len, void *ud)
{
	struct scan_ctx *c = ud;
	const char *tail = strrchr(path, '/');
	uint64_t pid = 0;
	char dir[128];

	if (!startswith(path, BP_PROCESSES) || !tail ||
	    !streq(tail, "/" BP_P_PMAP))
		return 0;
	(void)parse_u64_n(path + 10, (size_t)(tail - path - 10), &pid);
	scan_pmap(data, len, (int)pid, c->top, &c->n_top);
	snprintf(dir, sizeof(dir), "%.*s", (int)(tail - path), path);
	label_rows(c, dir, (int)pid);
	return 0;
}

static int proc_row(const char *path, const char *data, size_t len, void *ud)
{
	struct page *p = ud;
	struct json_object *o, *ar;
	char dir[128];
	const char *tail = strrchr(path, '/');

	if (!startswith(path, BP_PROCESSES) || !tail ||
	    !streq(tail, "/" BP_P_SNAPSHOT))
		return 0;
	o = bundle_get_json(p->b, path);
	(void)data;
	(void)len;
	jget_where(&p->notes, path);
	outf(p, "<tr><td class=\"n\">%d</td><td>", geti(p, o, "pid"));
	esc(p, jstr(p, o, "name"));
	outf(p, "</td><td class=\"n\">%s</td>", M(getb(p, o, "rss_kb") * 1024));
	snprintf(dir, sizeof(dir), "%.*s/" BP_P_ARENAS, (int)(tail - path),
		 path);
	ar = bundle_get_json(p->b, dir);
	jget_where(&p->notes, dir);
	if (ar)
		outf(p,
		     "<td class=\"n\">%s</td><td class=\"n\">%.0f</td>"
		     "<td class=\"n\">%s</td>",
		     M(getb(p, jget_obj(&p->notes, ar, "main_heap"), "rss_kb") *
		       1024),
		     getb(p, ar, "arena_heaps"),
		     M(getb(p, ar, "arena_rss_kb") * 1024));
	else
		out(p, "<td></td><td></td><td></td>");
	out(p, "</tr>");
	json_object_put(o);
	json_object_put(ar);
	return 0;
}

static int count_snapshots(const char *path, const char *data, size_t len,
			   void *ud)
{
	(void)data;
	(void)len;
	if (startswith(path, BP_PROCESSES) && strstr(path, "/" BP_P_SNAPSHOT))
		(*(int *)ud)++;
	return 0;
}

/* ---- the runtimes' own tables (a JVM's class histogram) ---- */

struct tables {
	struct page *p;
	bool text;
	const char *bold, *off;
	struct rt_table *t;
};

static void table_html(struct page *p, const struct rt_table *t)
{
	out(p, "<section class=\"card\"><h2>");
	esc(p, t->title);
	out(p, "</h2>");
	if (t->note[0]) {
		out(p, "<p class=\"sub\">");
		esc(p, t->note);
		out(p, "</p>");
	}
	if (t->n_rows) {
		out(p, "<table><tr>");
		for (size_t c = 0; c < t->n_cols; c++) {
			out(p, t->numeric[c] ? "<th class=\"n\">" : "<th>");
			esc(p, t->head[c]);
			out(p, "</th>");
		}
		out(p, "</tr>");
	}
	for (size_t r = 0; r < t->n_rows; r++) {
		out(p, "<tr>");
		for (size_t c = 0; c < t->n_cols; c++) {
			out(p, t->numeric[c] ? "<td class=\"n\">" : "<td>");
			esc(p, t->cell[r][c]);
			out(p, "</td>");
		}
		out(p, "</tr>");
	}
	if (t->n_rows)
		out(p, "</table>");
	out(p, "</section>\n");
}

/* One line of the text table (cells: its columns' strings): each column
 * padded to its width, numbers to the right; a last text column is not
 * padded. */
static void table_line(struct page *p, const struct rt_table *t,
		       const char *const *cells, const size_t *w)
{
	out(p, " ");
	for (size_t c = 0; c < t->n_cols; c++) {
		int pad = (int)w[c];

		if (!t->numeric[c] && c + 1 == t->n_cols)
			pad = 0;
		outf(p, t->numeric[c] ? " %*s" : " %-*s", pad, cells[c]);
	}
	out(p, "\n");
}

static void table_text(struct page *p, const struct rt_table *t,
		       const char *bold, const char *off)
{
	size_t w[RT_TABLE_COLS] = {0};
	const char *cells[RT_TABLE_COLS];

	outf(p, "\n%s%s%s\n", bold, t->title, off);
	if (t->note[0])
		outf(p, "  %s\n", t->note);
	if (!t->n_rows)
		return;
	for (size_t c = 0; c < t->n_cols; c++) {
		w[c] = strlen(t->head[c]);
		for (size_t r = 0; r < t->n_rows; r++)
			w[c] = w[c] > strlen(t->cell[r][c])
				       ? w[c]
				       : strlen(t->cell[r][c]);
		w[c] = w[c] > 60 ? 60 : w[c];
		cells[c] = t->head[c];
	}
	table_line(p, t, cells, w);
	for (size_t r = 0; r < t->n_rows; r++) {
		for (size_t c = 0; c < t->n_cols; c++)
			cells[c] = t->cell[r][c];
		table_line(p, t, cells, w);
	}
}

/* For each process of the snapshot, each runtime's table. */
static int table_each(const char *path, const char *data, size_t len, void *ud)
{
	struct tables *c = ud;
	const char *tail = strrchr(path, '/');
	uint64_t pid = 0, kill_ms;
	char dir[128];

	(void)data;
	(void)len;
	if (!startswith(path, BP_PROCESSES) || !tail ||
	    !streq(tail, "/" BP_P_SNAPSHOT) ||
	    parse_u64_n(path + strlen(BP_PROCESSES),
			(size_t)(tail - path) - strlen(BP_PROCESSES),
			&pid) < 0 ||
	    pid > INT32_MAX)
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", (int)(tail - path), path);
	jget_where(&c->p->notes, BP_MANIFEST);
	kill_ms = jget_u64_or0(&c->p->notes, c->p->man, "killed_at_ms");
	for (size_t i = 0; i < diag_runtime_count(); i++) {
		const struct diag_runtime *rt = diag_runtime_at(i);

		if (!rt->report_table)
			continue;
		memset(c->t, 0, sizeof(*c->t));
		if (rt->report_table(c->p->b, dir, (int)pid, kill_ms, c->t,
				     &c->p->notes) != 1)
			continue;
		if (c->text)
			table_text(c->p, c->t, c->bold, c->off);
		else
			table_html(c->p, c->t);
	}
	return 0;
}

static void runtime_tables(struct page *p, bool text, const char *bold,
			   const char *off)
{
	struct tables c = {.p = p, .text = text, .bold = bold, .off = off};

	c.t = calloc(1, sizeof(*c.t));
	if (!c.t) {
		p->r = -ENOMEM;
		return;
	}
	bundle_foreach(p->b, table_each, &c);
	free(c.t);
}

static void page_proc_table(struct page *p);

/* The sidecar's pids, as the processes it shares a namespace with see
 * them: the pod's in a pod, not the node's the kernel prints. */
static const char *pid_heading(const struct page *p)
{
	return p->who.in_pod ? "pid in the pod" : "pid";
}
static void page_mappings(struct page *p);

static void page_processes(struct page *p)
{
	int n = 0;

	bundle_foreach(p->b, count_snapshots, &n);
	if (n)
		page_proc_table(p);
	runtime_tables(p, false, "", "");
	page_mappings(p);
}

static void page_proc_table(struct page *p)
{
	out(p, "<section class=\"card\"><h2>Processes in the newest snapshot "
	       "before the kill</h2><table><tr><th class=\"n\">");
	out(p, pid_heading(p));
	out(p, "</th><th>name</th><th class=\"n\">RSS</th><th "
	       "class=\"n\">[heap] RSS</th>"
	       "<th class=\"n\">glibc arenas</th><th class=\"n\">arena RSS</th>"
	       "</tr>");
	bundle_foreach(p->b, proc_row, p);
	out(p, "</table></section>\n");
}

static void page_mappings(struct page *p)
{
	struct scan_ctx c = {.p = p};

	bundle_foreach(p->b, scan_pmaps, &c);
	if (!c.n_top)
		return;
	out(p, "<section class=\"card\"><h2>Largest mappings by RSS</h2><table>"
	       "<tr><th class=\"n\">");
	out(p, pid_heading(p));
	out(p, "</th><th>address</th><th>perm</th>"
	       "<th class=\"n\">RSS</th><th>mapping</th></tr>");
	for (size_t i = 0; i < c.n_top; i++) {
		outf(p, "<tr><td class=\"n\">%d</td><td><code>", c.top[i].pid);
		esc(p, c.top[i].addr);
		out(p, "</code></td><td>");
		esc(p, c.top[i].perm);
		outf(p, "</td><td class=\"n\">%s</td><td>",
		     M((double)c.top[i].rss_kb * 1024));
		esc(p, c.top[i].name[0] ? c.top[i].name : "[anon]");
		out(p, "</td></tr>");
	}
	out(p, "</table></section>\n");
}

static void page_kernel(struct page *p)
{
	size_t len;
	const char *raw = bundle_get(p->b, BP_KERNEL_OOM, &len);
	_cleanup_free_ char *copy = NULL;

	if (!raw)
		return;
	copy = strndup(raw, len);
	out(p, "<section class=\"card\"><details><summary><b>The kernel's "
	       "report</b> (kernel/oom.txt)</summary><pre>");
	esc(p, copy);
	out(p, "</pre></details></section>\n");
}

static struct json_object *manifest_of(const struct bundle *b)
{
	struct json_object *m = bundle_get_json(b, BP_MANIFEST);

	/* A bundle being built has its manifest as an object, not a file. */
	return m ? m : json_object_get(bundle_manifest((struct bundle *)b));
}

/* What was dropped for a wrong type, so a reader knows the page lacks it. */
static void page_notes(struct page *p)
{
	if (!p->notes.n)
		return;
	out(p, "<section class=\"card\"><h2>Ignored in this bundle</h2>"
	       "<p class=\"sub\">fields of a wrong type, left out of the "
	       "page</p><ul>");
	for (size_t i = 0; i < p->notes.n; i++) {
		out(p, "<li>");
		esc(p, p->notes.text[i]);
		out(p, "</li>");
	}
	if (p->notes.more)
		outf(p, "<li>and %zu more</li>", p->notes.more);
	out(p, "</ul></section>\n");
}

/* manifest.truncated[]: what was cut or left out, and why. A bundle being
 * built has it in the bundle (its manifest gets it when written). */
static struct json_object *left_out(struct page *p)
{
	struct json_object *t = jget(p->man, "truncated");

	if (!t && !bundle_get(p->b, BP_MANIFEST, NULL))
		t = bundle_truncated(p->b);
	return json_object_is_type(t, json_type_array) ? t : NULL;
}

#define LEFT_OUT_SHOWN 40

static void page_left_out(struct page *p)
{
	struct json_object *t = left_out(p);
	size_t n = jget_len(t);

	if (!n)
		return;
	outf(p,
	     "<section class=\"card\"><h2>Left out of this bundle</h2>"
	     "<p class=\"sub\">%zu cut or left out, with why "
	     "(manifest.json truncated[])</p><ul>",
	     n);
	for (size_t i = 0; i < n && i < LEFT_OUT_SHOWN; i++) {
		struct json_object *e = jget_idx(t, i);

		out(p, "<li><code>");
		esc(p, jget_str(&p->notes, e, "path"));
		out(p, "</code>: ");
		esc(p, jget_str(&p->notes, e, "reason"));
		out(p, "</li>");
	}
	if (n > LEFT_OUT_SHOWN)
		outf(p, "<li>and %zu more</li>", n - LEFT_OUT_SHOWN);
	out(p, "</ul></section>\n");
}

static void text_left_out(struct page *p, const char *bold, const char *off)
{
	struct json_object *t = left_out(p);
	size_t n = jget_len(t);

	if (n)
		outf(p, "\n%sLeft out of this bundle%s (%zu)\n", bold, off, n);
	for (size_t i = 0; i < n && i < LEFT_OUT_SHOWN; i++)
		outf(p, "  %s: %s\n",
		     jget_str(&p->notes, jget_idx(t, i), "path") ?: "?",
		     jget_str(&p->notes, jget_idx(t, i), "reason") ?: "?");
	if (n > LEFT_OUT_SHOWN)
		outf(p, "  and %zu more\n", n - LEFT_OUT_SHOWN);
}

/* The sidecar's timeline too big a tree to parse whole (many processes):
 * read one element at a time, each sample's processes folded to what the
 * chart draws (tl_stack: the first TL_MAXP pids, the rest one "other"
 * entry, pid -1, their RSS in anon_kb), so the chart is the same and the
 * tree stays small. */
struct tl_fold {
	struct page *p;
	struct json_object *into; /* the array being filled */
	int pids[TL_MAXP];
	size_t np;
};

static int fold_sample(const char *text, size_t len, void *ud)
{
	struct tl_fold *f = ud;
	struct json_object *s =
		jget_parse_object(text, len, BUNDLE_JSON_MAX_TREE);
	struct json_object *procs = jget_array(NULL, s, "procs"), *keep;
	double rest = 0;

	if (!s || !f->into) {
		json_object_put(s);
		return 0;
	}
	keep = json_object_new_array();
	for (size_t j = 0; keep && j < jget_len(procs); j++) {
		struct json_object *e = jget_idx(procs, j);

		if (proc_slot(f->pids, &f->np, geti(f->p, e, "pid")) < TL_MAXP)
			json_object_array_add(keep, json_object_get(e));
		else
			rest += proc_rss(f->p, e) / 1024;
	}
	if (keep && rest > 0) {
		struct json_object *other = json_object_new_object();

		json_object_object_add(other, "pid", json_object_new_int(-1));
		json_object_object_add(other, "anon_kb",
				       json_object_new_double(rest));
		json_object_array_add(keep, other);
	}
	if (keep)
		json_object_object_add(s, "procs", keep);
	json_object_array_add(f->into, s);
	return 0;
}

static int keep_element(const char *text, size_t len, void *ud)
{
	struct tl_fold *f = ud;
	struct json_object *s =
		jget_parse_object(text, len, BUNDLE_JSON_MAX_TREE);

	if (s && f->into)
		json_object_array_add(f->into, s);
	else
		json_object_put(s);
	return 0;
}

static struct json_object *folded_timeline(struct page *p, const char *text,
					   size_t len)
{
	static const char *const samples[] = {"samples", NULL};
	static const char *const snaps[] = {"snapshots", NULL};
	struct json_object *tl = json_object_new_object();
	struct tl_fold f = {.p = p};

	if (!tl)
		return NULL;
	jget_where(&p->notes, BP_TIMELINE);
	f.into = json_object_new_array();
	json_object_object_add(tl, "samples", f.into);
	(void)jget_scan_each(&p->notes, text, len, samples, fold_sample, &f);
	f.into = json_object_new_array();
	json_object_object_add(tl, "snapshots", f.into);
	(void)jget_scan_each(&p->notes, text, len, snaps, keep_element, &f);
	return tl;
}

/* The sidecar's timeline: whole when its tree is within the budget (a
 * wrong type noted on its card), else folded. */
static struct json_object *sidecar_timeline(struct page *p)
{
	size_t len;
	const char *text = bundle_get(p->b, BP_TIMELINE, &len);

	if (text && jget_tree_cost(text, len) > BUNDLE_JSON_MAX_TREE)
		return folded_timeline(p, text, len);
	return bundle_get_json(p->b, BP_TIMELINE);
}

/* Without the sidecar's timeline, the agent's own 1 Hz cgroup samples
 * (agent/timeline.json) up to the kill: of the cgroup whose limit was hit,
 * else the victim's, as the diagnosis reads them. p->tl becomes
 * {"samples": [...]}. */
static void agent_timeline(struct page *p)
{
	static const char *const roles[] = {"oom_memcg", "task_memcg"};
	struct json_object *o = bundle_get_json(p->b, BP_AGENT_TIMELINE);
	struct json_object *cgs, *src = NULL, *keep;
	double kill_ms;

	jget_where(&p->notes, BP_AGENT_TIMELINE);
	cgs = arr(p, o, "cgroups");
	for (size_t r = 0; r < ARRAY_SIZE(roles) && !src; r++)
		for (size_t i = 0; i < jget_len(cgs) && !src; i++) {
			bool is = false;

			if (jget_bool(&p->notes, jget_idx(cgs, i), roles[r],
				      &is) &&
			    is)
				src = arr(p, jget_idx(cgs, i), "samples");
		}
	jget_where(&p->notes, BP_MANIFEST);
	kill_ms = getb(p, p->man, "killed_at_ms");
	keep = json_object_new_array();
	for (size_t i = 0; keep && i < jget_len(src); i++) {
		struct json_object *sm = jget_idx(src, i);

		if (kill_ms <= 0 || getb(p, sm, "t_ms") <= kill_ms)
			json_object_array_add(keep, json_object_get(sm));
	}
	json_object_put(p->tl);
	p->tl = json_object_new_object();
	if (p->tl)
		json_object_object_add(p->tl, "samples", keep);
	else
		json_object_put(keep);
	p->tl_agent = true;
	json_object_put(o);
}

int report_render_html(const struct bundle *b, struct strbuf *out_sb)
{
	struct page p = {.b = b, .out = out_sb};

	p.man = manifest_of(b);
	jget_where(&p.notes, BP_MANIFEST);
	manifest_who(p.man, &p.notes, &p.who);
	p.diag = bundle_get_json(b, BP_DIAGNOSIS);
	p.tl = sidecar_timeline(&p);
	/* a wrong type in the sidecar's is noted on its card, not replaced */
	if (!p.tl ||
	    (json_object_is_type(jget(p.tl, "samples"), json_type_array) &&
	     jget_len(jget(p.tl, "samples")) < 2))
		agent_timeline(&p);
	page_head(&p);
	page_verdict(&p);
	page_capture(&p);
	page_ledger(&p);
	page_timeline(&p);
	page_processes(&p);
	page_kernel(&p);
	page_left_out(&p);
	page_notes(&p);
	out(&p, "<p class=\"sub\">oomlens bundle v1 · files: manifest.json, "
		"diagnosis.json, timeline.json, kernel/, cgroup/, processes/"
		"</p></main></body></html>\n");
	json_object_put(p.man);
	json_object_put(p.diag);
	json_object_put(p.tl);
	return p.r;
}

/* The text is sanitised by the callers (term.c) before a terminal. */
static void text_capture(struct page *p)
{
	struct capture_notes *c = capture_of(p);

	if (!c)
		return;
	out(p, "sidecar ");
	capture_line(p, c);
	out(p, "\n");
	for (size_t i = 0; i < c->n; i++) {
		out(p, "  not captured: ");
		miss_what(p, &c->miss[i], false);
		outf(p, ": %s\n", c->miss[i].why);
	}
	if (c->more)
		outf(p, "  and %llu more not captured\n",
		     (unsigned long long)c->more);
	free(c);
}

static void text_head(struct page *p, const char *bold, const char *off)
{
	struct json_object *victims;

	jget_where(&p->notes, BP_MANIFEST);
	outf(p, "%sbundle%s  %s\n", bold, off, jstr(p, p->man, "id"));
	if (p->who.in_pod)
		outf(p, "pod     %s\n",
		     manifest_who_label(&p->who, (char[512]){0}, 512));
	outf(p, "cgroup  %s\nnode    %s\ntime    %s\n", p->who.cgroup,
	     p->who.node, jstr(p, p->man, "captured_at"));
	victims = arr(p, p->man, "victims");
	for (size_t i = 0; i < jget_len(victims); i++) {
		struct json_object *v = jget_idx(victims, i);

		outf(p, "killed  pid %d%s (%s), anon %s\n", geti(p, v, "pid"),
		     p->who.in_pod ? " on the node" : "", jstr(p, v, "comm"),
		     M(getb(p, v, "anon_rss_kb") * 1024));
	}
	text_capture(p);
}

static void text_verdict(struct page *p, const char *bold, const char *red,
			 const char *off)
{
	struct json_object *v0, *lines;

	jget_where(&p->notes, BP_DIAGNOSIS);
	v0 = jget_idx(arr(p, p->diag, "verdicts"), 0);
	if (!v0)
		return;
	outf(p, "\n%sverdict%s %s%s%s (confidence %d%%)", bold, off, red,
	     jstr(p, v0, "verdict"), off, geti(p, v0, "confidence"));
	basis(p, v0, ", ");
	outf(p, "\n  %s\n", jstr(p, p->diag, "summary"));
	lines = arr(p, v0, "evidence");
	for (size_t i = 0; i < jget_len(lines); i++)
		outf(p, "  - %s\n", idx_str(p, lines, i));
	lines = arr(p, v0, "recommendations");
	for (size_t i = 0; i < jget_len(lines); i++)
		outf(p, "  > %s\n", idx_str(p, lines, i));
}

static void text_ledger(struct page *p, const char *bold, const char *off)
{
	struct json_object *parts = arr(p, p->diag, "ledger");
	uint64_t limit;

	if (!parts)
		return;
	outf(p, "\n%sledger%s (usage %s", bold, off,
	     M(getb(p, p->diag, "usage_bytes")));
	if (jstr(p, p->diag, "usage_source")[0])
		outf(p, " from the %s", jstr(p, p->diag, "usage_source"));
	outf(p, ", limit %s)\n",
	     jget_u64(&p->notes, p->diag, "limit_bytes", &limit)
		     ? M((double)limit)
		     : "none");
	for (size_t i = 0; i < jget_len(parts); i++) {
		struct json_object *e = jget_idx(parts, i);

		outf(p, "  %-32s %10s  %s%s\n", jstr(p, e, "name"),
		     M(getb(p, e, "bytes")), jstr(p, e, "source"),
		     getbool(p, e, "estimate") ? " (estimate)" : "");
	}
}

int report_render_text(const struct bundle *b, bool colour, struct strbuf *o)
{
	struct page p = {.b = b, .out = o};
	const char *bold = colour ? "\033[1m" : "",
		   *red = colour ? "\033[31m" : "";
	const char *off = colour ? "\033[0m" : "";

	p.man = manifest_of(b);
	jget_where(&p.notes, BP_MANIFEST);
	manifest_who(p.man, &p.notes, &p.who);
	p.diag = bundle_get_json(b, BP_DIAGNOSIS);
	text_head(&p, bold, off);
	text_verdict(&p, bold, red, off);
	text_ledger(&p, bold, off);
	runtime_tables(&p, true, bold, off);
	text_left_out(&p, bold, off);
	for (size_t i = 0; i < p.notes.n; i++)
		outf(&p, "%snote: %s\n", i ? "" : "\n", p.notes.text[i]);
	if (p.notes.more)
		outf(&p, "note: and %zu more\n", p.notes.more);
	json_object_put(p.man);
	json_object_put(p.diag);
	return p.r;
}
