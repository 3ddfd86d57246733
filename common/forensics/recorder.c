/* SPDX-License-Identifier: Apache-2.0 */
#include <json-c/json.h>

#include "base/parse.h"
#include "forensics/recorder.h"
#include "base/util.h"

int rec_thresholds_parse(const char *s, struct rec_thresholds *ret)
{
	struct rec_thresholds t = {0};
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	for (;;) {
		uint64_t v;
		size_t k;

		if (scan_u64(&p, &v) < 0 || v < 1 || v > 100)
			return -EINVAL;
		for (k = 0; k < t.n && t.pct[k] != v; k++)
			;
		if (k == t.n) {
			if (t.n == REC_MAX_THRESHOLDS)
				return -EINVAL;
			t.pct[t.n] = (unsigned)v;
			t.armed[t.n++] = true;
		}
		if (*p == '\0')
			break;
		if (*p++ != ',')
			return -EINVAL;
	}
	/* Insertion sort: at most 8 entries. */
	for (size_t i = 1; i < t.n; i++)
		for (size_t j = i; j > 0 && t.pct[j - 1] > t.pct[j]; j--) {
			unsigned x = t.pct[j];

			t.pct[j] = t.pct[j - 1];
			t.pct[j - 1] = x;
		}
	*ret = t;
	return 0;
}

unsigned rec_thresholds_update(struct rec_thresholds *t, double pct)
{
	unsigned crossed = 0;

	for (size_t i = 0; i < t->n; i++) {
		if (t->armed[i] && pct >= t->pct[i]) {
			t->armed[i] = false;
			crossed = t->pct[i];
		} else if (!t->armed[i] &&
			   pct <= t->pct[i] - REC_REARM_POINTS) {
			t->armed[i] = true;
		}
	}
	return crossed;
}

void recorder_init(struct recorder *r)
{
	memset(r, 0, sizeof(*r));
	r->snapshots = json_object_new_array();
	r->trims = json_object_new_array();
	r->jvms = json_object_new_array();
	r->events = json_object_new_array();
}

void recorder_release(struct recorder *r)
{
	for (size_t i = 0; i < r->count; i++)
		free(r->ring[(r->head + i) % REC_RING_MAX].enc);
	free(r->base.v);
	free(r->last.v);
	for (size_t i = 0; i < r->n_procs; i++)
		free(r->procs[i].cmdline);
	free(r->procs);
	json_object_put(r->snapshots);
	json_object_put(r->trims);
	json_object_put(r->jvms);
	json_object_put(r->events);
	memset(r, 0, sizeof(*r));
}

/* The encoding of a sample's processes (struct rec_slot). Process i is
 * written against process i of the sample before (the same pid, as a rule:
 * the cgroup lists its tasks in the same order at every round; zeros past
 * that sample's end): a tag byte whose bit k says field k differs, then
 * for each such field the difference, zigzag'd, as a LEB128 varint. At
 * most 1 + 7 * 10 bytes a process; one when nothing changed. */
#define REC_FIELDS 7
#define REC_ENC_MAX (1 + REC_FIELDS * 10)

static const struct rec_proc_sample zero_proc;

static void fields_of(const struct rec_proc_sample *p, uint64_t f[REC_FIELDS])
{
	f[0] = (uint64_t)(int64_t)p->pid;
	f[1] = (uint64_t)(int64_t)p->threads;
	f[2] = p->rss_kb;
	f[3] = p->anon_kb;
	f[4] = p->file_kb;
	f[5] = p->shmem_kb;
	f[6] = p->swap_kb;
}

static void set_fields(struct rec_proc_sample *p, const uint64_t f[REC_FIELDS])
{
	p->pid = (int)(int64_t)f[0];
	p->threads = (int)(int64_t)f[1];
	p->rss_kb = f[2];
	p->anon_kb = f[3];
	p->file_kb = f[4];
	p->shmem_kb = f[5];
	p->swap_kb = f[6];
}

/* Writes v to out (NULL: only counts). Returns the bytes. */
static size_t put_varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	do {
		uint8_t b = (uint8_t)(v & 0x7f);

		v >>= 7;
		if (out)
			out[n] = (uint8_t)(b | (v ? 0x80 : 0));
		n++;
	} while (v);
	return n;
}

static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *ret)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (*p == end)
			return -EBADMSG;
		b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*ret = v;
			return 0;
		}
	}
	return -EBADMSG;
}

/* Encodes n processes against ref into out (NULL: only counts). Returns
 * the bytes. Differences wrap around: any uint64 and int round-trips. */
static size_t encode(const struct rec_procs *ref,
		     const struct rec_proc_sample *procs, size_t n,
		     uint8_t *out)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t a[REC_FIELDS], b[REC_FIELDS];
		size_t tag_at = len++;
		uint8_t tag = 0;

		fields_of(i < ref->n ? &ref->v[i] : &zero_proc, a);
		fields_of(&procs[i], b);
		for (unsigned k = 0; k < REC_FIELDS; k++) {
			uint64_t d = b[k] - a[k];

			if (!d)
				continue;
			tag |= (uint8_t)(1u << k);
			/* zigzag: a small negative difference is small too */
			len += put_varint(out ? out + len : NULL,
					  (d << 1) ^ (0 - (d >> 63)));
		}
		if (out)
			out[tag_at] = tag;
	}
	return len;
}

static int procs_reserve(struct rec_procs *p, size_t n)
{
	struct rec_proc_sample *v;

	if (n <= p->cap)
		return 0;
	v = realloc(p->v, n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->v = v;
	p->cap = n;
	return 0;
}

static int procs_copy(struct rec_procs *dst, const struct rec_proc_sample *src,
		      size_t n)
{
	int q = procs_reserve(dst, n);

	if (q < 0)
		return q;
	if (n)
		memcpy(dst->v, src, n * sizeof(*src));
	dst->n = n;
	return 0;
}

/* Decodes s over p, which holds the sample before s. */
static int decode(const struct rec_slot *s, struct rec_procs *p)
{
	const uint8_t *e = s->enc, *end = s->enc + s->enc_len;
	int q = procs_reserve(p, s->n_procs);

	if (q < 0)
		return q;
	for (size_t i = p->n; i < s->n_procs; i++)
		p->v[i] = zero_proc;
	for (size_t i = 0; i < s->n_procs; i++) {
		uint64_t f[REC_FIELDS], z;
		uint8_t tag;

		if (e == end)
			return -EBADMSG;
		tag = *e++;
		fields_of(&p->v[i], f);
		for (unsigned k = 0; k < REC_FIELDS; k++) {
			if (!(tag & (1u << k)))
				continue;
			if (get_varint(&e, end, &z) < 0)
				return -EBADMSG;
			f[k] += (z >> 1) ^ (0 - (z & 1));
		}
		set_fields(&p->v[i], f);
	}
	p->n = s->n_procs;
	return 0;
}

static const struct rec_slot *slot_of(const struct recorder *r, uint64_t seq)
{
	return &r->ring[(r->head + (seq - r->seq_first)) % REC_RING_MAX];
}

/* The processes of sample seq into p: the oldest from base, a later one
 * decoded over p, which must then hold sample seq - 1. */
static int sample_procs(const struct recorder *r, uint64_t seq,
			struct rec_procs *p)
{
	if (seq == r->seq_first)
		return procs_copy(p, r->base.v, r->base.n);
	return decode(slot_of(r, seq), p);
}

/* The oldest sample goes; the next one's processes become base. base has
 * room for them (recorder_add reserved it). */
static void drop_oldest(struct recorder *r)
{
	struct rec_slot *next = &r->ring[(r->head + 1) % REC_RING_MAX];

	(void)decode(next, &r->base);
	free(next->enc);
	next->enc = NULL;
	next->enc_len = 0;
	r->head = (r->head + 1) % REC_RING_MAX;
	r->count--;
	r->seq_first++;
}

int recorder_add(struct recorder *r, const struct rec_sample *s)
{
	size_t len = 0, n = s->n_procs;
	uint8_t *enc = NULL;
	int q = 0;

	if (n > UINT32_MAX / REC_ENC_MAX)
		return -E2BIG;
	/* What can fail comes first: a failure leaves the ring as it was. */
	if (r->count) {
		len = encode(&r->last, s->procs, n, NULL);
		enc = len ? malloc(len) : NULL;
		if (len && !enc)
			return -ENOMEM;
		encode(&r->last, s->procs, n, enc);
	}
	if (r->count == REC_RING_MAX)
		q = procs_reserve(&r->base, recorder_sample(r, 1)->n_procs);
	if (q == 0 && !r->count)
		q = procs_reserve(&r->base, n);
	if (q == 0)
		q = procs_reserve(&r->last, n);
	if (q < 0) {
		free(enc);
		return q;
	}
	if (r->count == REC_RING_MAX)
		drop_oldest(r);
	r->ring[(r->head + r->count) % REC_RING_MAX] =
		(struct rec_slot){.t_us = s->t_us,
				  .mono_us = s->mono_us,
				  .usage = s->usage,
				  .limit = s->limit,
				  .enc = enc,
				  .enc_len = (uint32_t)len,
				  .n_procs = (uint32_t)n};
	if (!r->count)
		(void)procs_copy(&r->base, s->procs, n);
	(void)procs_copy(&r->last, s->procs, n);
	r->count++;
	return 0;
}

const struct rec_slot *recorder_sample(const struct recorder *r, size_t i)
{
	if (i >= r->count)
		return NULL;
	return &r->ring[(r->head + i) % REC_RING_MAX];
}

static struct rec_proc *find_proc(const struct recorder *r, int pid)
{
	/* The newest entry for a pid wins: pids can be reused. */
	for (size_t i = r->n_procs; i > 0; i--)
		if (r->procs[i - 1].pid == pid)
			return &r->procs[i - 1];
	return NULL;
}

static void forget_oldest_ended(struct recorder *r)
{
	for (size_t i = 0; i < r->n_procs; i++) {
		if (!r->procs[i].end_us)
			continue;
		free(r->procs[i].cmdline);
		memmove(&r->procs[i], &r->procs[i + 1],
			(r->n_procs - i - 1) * sizeof(r->procs[0]));
		r->n_procs--;
		return;
	}
}

int recorder_proc_seen(struct recorder *r, int pid, const char *name,
		       const char *cmdline, uint64_t t_us)
{
	struct rec_proc *p = find_proc(r, pid), *np;

	if (p && !p->end_us) {
		p->last_us = t_us;
		return 0;
	}
	if (r->n_procs >= REC_PROCS_MAX)
		forget_oldest_ended(r);
	np = realloc(r->procs, (r->n_procs + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	r->procs = np;
	p = &np[r->n_procs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	strlcpy_safe(p->name, name ? name : "", sizeof(p->name));
	p->cmdline = strdup(cmdline ? cmdline : "");
	if (!p->cmdline)
		return -ENOMEM;
	p->first_us = p->last_us = t_us;
	p->serial = r->next_serial++;
	r->n_procs++;
	return 0;
}

void recorder_proc_ended(struct recorder *r, int pid, uint64_t t_us)
{
	struct rec_proc *p = find_proc(r, pid);

	if (p && !p->end_us)
		p->end_us = t_us;
}

bool recorder_proc_alive(const struct recorder *r, int pid)
{
	struct rec_proc *p = find_proc(r, pid);

	return p && !p->end_us;
}

double recorder_predict_s(const struct recorder *r, size_t window)
{
	const struct rec_slot *last;
	double st = 0, su = 0, stt = 0, stu = 0, n, slope, t0;
	size_t first;

	if (r->count < 3 || window < 3)
		return -1;
	last = recorder_sample(r, r->count - 1);
	if (!last->limit)
		return -1;
	if (last->usage >= last->limit)
		return 0;
	first = r->count > window ? r->count - window : 0;
	n = (double)(r->count - first);
	t0 = (double)recorder_sample(r, first)->mono_us / 1e6;
	for (size_t i = first; i < r->count; i++) {
		const struct rec_slot *s = recorder_sample(r, i);
		double t = (double)s->mono_us / 1e6 - t0, u = (double)s->usage;

		st += t;
		su += u;
		stt += t * t;
		stu += t * u;
	}
	if (n * stt - st * st <= 0)
		return -1;
	slope = (n * stu - st * su) / (n * stt - st * st);
	if (slope <= 0)
		return -1;
	return (double)(last->limit - last->usage) / slope;
}

int recorder_note_snapshot(struct recorder *r, uint64_t t_us, uint64_t mono_us,
			   const char *reason, const char *dir, uint64_t usage,
			   uint64_t limit)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "t_ms", json_object_new_uint64(t_us / 1000));
	json_object_object_add(o, "reason", json_object_new_string(reason));
	json_object_object_add(o, "dir", json_object_new_string(dir));
	json_object_object_add(o, "usage", json_object_new_uint64(usage));
	json_object_object_add(o, "limit", json_object_new_uint64(limit));
	json_object_array_add(r->snapshots, o);
	r->last_snapshot_mono_us = mono_us;
	r->any_snapshot = true;
	return 0;
}

int recorder_note_snapshot_end(struct recorder *r, uint64_t t_us,
			       bool after_kill)
{
	size_t n = json_object_array_length(r->snapshots);
	struct json_object *o =
		n ? json_object_array_get_idx(r->snapshots, n - 1) : NULL;

	if (!o)
		return -ENOENT;
	json_object_object_add(o, "completed_ms",
			       json_object_new_uint64(t_us / 1000));
	json_object_object_add(o, "after_kill",
			       json_object_new_boolean(after_kill));
	return 0;
}

int recorder_note_jvm(struct recorder *r, struct json_object *facts)
{
	if (!facts)
		return -ENOMEM;
	return json_object_array_add(r->jvms, facts) < 0 ? -ENOMEM : 0;
}

int recorder_note_event(struct recorder *r, uint64_t t_us, const char *kind,
			int pid, const char *text)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "t_ms", json_object_new_uint64(t_us / 1000));
	json_object_object_add(o, "kind", json_object_new_string(kind));
	json_object_object_add(o, "pid", json_object_new_int(pid));
	json_object_object_add(o, "text", json_object_new_string(text));
	json_object_array_add(r->events, o);
	return 0;
}

int recorder_note_trim(struct recorder *r, uint64_t t_us, int pid,
		       const char *command, uint64_t rss_before,
		       uint64_t rss_after)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "t_ms", json_object_new_uint64(t_us / 1000));
	json_object_object_add(o, "pid", json_object_new_int(pid));
	json_object_object_add(o, "command", json_object_new_string(command));
	json_object_object_add(o, "rss_before",
			       json_object_new_uint64(rss_before));
	json_object_object_add(o, "rss_after",
			       json_object_new_uint64(rss_after));
	json_object_array_add(r->trims, o);
	return 0;
}

static struct json_object *proc_sample_json(const struct rec_proc_sample *p)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "pid", json_object_new_int(p->pid));
	json_object_object_add(o, "rss_kb", json_object_new_uint64(p->rss_kb));
	json_object_object_add(o, "anon_kb",
			       json_object_new_uint64(p->anon_kb));
	json_object_object_add(o, "file_kb",
			       json_object_new_uint64(p->file_kb));
	json_object_object_add(o, "shmem_kb",
			       json_object_new_uint64(p->shmem_kb));
	json_object_object_add(o, "swap_kb",
			       json_object_new_uint64(p->swap_kb));
	json_object_object_add(o, "threads", json_object_new_int(p->threads));
	return o;
}

static struct json_object *sample_json(const struct rec_slot *s,
				       const struct rec_procs *p)
{
	struct json_object *o = json_object_new_object();
	struct json_object *procs = json_object_new_array();

	json_object_object_add(o, "t_ms",
			       json_object_new_uint64(s->t_us / 1000));
	json_object_object_add(o, "usage", json_object_new_uint64(s->usage));
	json_object_object_add(o, "limit", json_object_new_uint64(s->limit));
	for (size_t i = 0; i < p->n; i++)
		json_object_array_add(procs, proc_sample_json(&p->v[i]));
	json_object_object_add(o, "procs", procs);
	return o;
}

static struct json_object *proc_json(const struct rec_proc *p)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "pid", json_object_new_int(p->pid));
	json_object_object_add(o, "name", json_object_new_string(p->name));
	json_object_object_add(o, "cmdline",
			       json_object_new_string(p->cmdline));
	json_object_object_add(o, "first_ms",
			       json_object_new_uint64(p->first_us / 1000));
	json_object_object_add(o, "last_ms",
			       json_object_new_uint64(p->last_us / 1000));
	json_object_object_add(
		o, "end_ms",
		p->end_us ? json_object_new_uint64(p->end_us / 1000) : NULL);
	return o;
}

static struct json_object *samples_json(const struct recorder *r)
{
	struct json_object *a = json_object_new_array();
	struct rec_procs p = {0};

	for (size_t i = 0; a && i < r->count; i++) {
		if (sample_procs(r, r->seq_first + i, &p) < 0) {
			json_object_put(a);
			a = NULL;
			break;
		}
		json_object_array_add(a,
				      sample_json(recorder_sample(r, i), &p));
	}
	free(p.v);
	return a;
}

struct json_object *recorder_timeline_json(const struct recorder *r,
					   const char *cgroup,
					   unsigned interval_ms)
{
	struct json_object *o = json_object_new_object();
	struct json_object *samples = samples_json(r);
	struct json_object *procs = json_object_new_array();

	if (!o || !samples || !procs) {
		json_object_put(o);
		json_object_put(samples);
		json_object_put(procs);
		return NULL;
	}
	json_object_object_add(
		o, "schema", json_object_new_string("oomlens.io/timeline/v1"));
	json_object_object_add(o, "cgroup",
			       cgroup ? json_object_new_string(cgroup) : NULL);
	json_object_object_add(o, "interval_ms",
			       json_object_new_uint64(interval_ms));
	for (size_t i = 0; i < r->n_procs; i++)
		json_object_array_add(procs, proc_json(&r->procs[i]));
	json_object_object_add(o, "samples", samples);
	json_object_object_add(o, "processes", procs);
	json_object_object_add(o, "snapshots", json_object_get(r->snapshots));
	json_object_object_add(o, "trims", json_object_get(r->trims));
	json_object_object_add(o, "jvms", json_object_get(r->jvms));
	json_object_object_add(o, "events", json_object_get(r->events));
	return o;
}

/* ---- timeline.json streamed: the same bytes as json-c prints the
 * object above, one element at a time. */

#define TL_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

enum {
	PART_HEAD,
	PART_SAMPLES,
	PART_PROCS,
	PART_SNAPSHOTS,
	PART_TRIMS,
	PART_JVMS,
	PART_EVENTS,
	PART_DONE,
};

/* What closes each section and opens the next. */
static const char *const part_end[PART_DONE] = {
	[PART_SAMPLES] = "],\"processes\":[",
	[PART_PROCS] = "],\"snapshots\":[",
	[PART_SNAPSHOTS] = "],\"trims\":[",
	[PART_TRIMS] = "],\"jvms\":[",
	[PART_JVMS] = "],\"events\":[",
	[PART_EVENTS] = "]}",
};

void rec_cursor_init(struct rec_cursor *c, const char *cgroup,
		     unsigned interval_ms)
{
	*c = (struct rec_cursor){.cgroup = cgroup, .interval_ms = interval_ms};
}

void rec_cursor_release(struct rec_cursor *c)
{
	free(c->procs.v);
	*c = (struct rec_cursor){0};
}

/* Appends o as json-c prints it, and drops o. */
static int add_json_put(struct strbuf *out, struct json_object *o)
{
	const char *t;
	size_t len;
	int q;

	if (!o)
		return -ENOMEM;
	t = json_object_to_json_string_length(o, TL_FLAGS, &len);
	q = t ? strbuf_add(out, t, len) : -ENOMEM;
	json_object_put(o);
	return q;
}

/* Appends e, an element of one of the recorder's arrays, as json-c prints
 * it: through an array of its own, because json-c keeps the text it
 * printed for an object in that object (its printbuf) until the object is
 * freed; printed directly, every element would keep a copy of its text
 * for the recorder's life. The wrapper's goes with the wrapper. */
static int add_json_elem(struct strbuf *out, struct json_object *e)
{
	struct json_object *w = json_object_new_array();
	const char *t;
	size_t len;
	int q;

	if (!w)
		return -ENOMEM;
	if (json_object_array_add(w, json_object_get(e)) < 0) {
		json_object_put(e);
		json_object_put(w);
		return -ENOMEM;
	}
	t = json_object_to_json_string_length(w, TL_FLAGS, &len);
	q = t && len >= 2 ? strbuf_add(out, t + 1, len - 2) : -ENOMEM;
	json_object_put(w);
	return q;
}

#define PUT_LIT(e, lit) \
	(memcpy((e), (lit), sizeof(lit) - 1), (e) + sizeof(lit) - 1)

static char *put_u64(char *e, uint64_t v)
{
	return e + fmt_u64(e, v);
}

/* As json-c prints an int (PRId64). */
static char *put_int(char *e, int v)
{
	if (v >= 0)
		return put_u64(e, (uint64_t)v);
	*e++ = '-';
	return put_u64(e, 0 - (uint64_t)(int64_t)v);
}

/* One process of a sample, as json-c prints proc_sample_json(). */
static int add_proc_sample(struct strbuf *out, const struct rec_proc_sample *p,
			   bool comma)
{
	char b[256], *e = b; /* 7 keys, 69 bytes, and 7 numbers of 20 */

	if (comma)
		*e++ = ',';
	e = put_int(PUT_LIT(e, "{\"pid\":"), p->pid);
	e = put_u64(PUT_LIT(e, ",\"rss_kb\":"), p->rss_kb);
	e = put_u64(PUT_LIT(e, ",\"anon_kb\":"), p->anon_kb);
	e = put_u64(PUT_LIT(e, ",\"file_kb\":"), p->file_kb);
	e = put_u64(PUT_LIT(e, ",\"shmem_kb\":"), p->shmem_kb);
	e = put_u64(PUT_LIT(e, ",\"swap_kb\":"), p->swap_kb);
	e = put_int(PUT_LIT(e, ",\"threads\":"), p->threads);
	*e++ = '}';
	return strbuf_add(out, b, (size_t)(e - b));
}

/* One sample, as json-c prints sample_json(). */
static int add_sample(struct strbuf *out, const struct rec_slot *s,
		      const struct rec_procs *p, bool comma)
{
	char b[128], *e = b;
	int q;

	if (comma)
		*e++ = ',';
	e = put_u64(PUT_LIT(e, "{\"t_ms\":"), s->t_us / 1000);
	e = put_u64(PUT_LIT(e, ",\"usage\":"), s->usage);
	e = put_u64(PUT_LIT(e, ",\"limit\":"), s->limit);
	e = PUT_LIT(e, ",\"procs\":[");
	q = strbuf_add(out, b, (size_t)(e - b));
	for (size_t i = 0; q >= 0 && i < p->n; i++)
		q = add_proc_sample(out, &p->v[i], i > 0);
	return q < 0 ? q : strbuf_add(out, "]}", 2);
}

static int add_head(const struct rec_cursor *c, struct strbuf *out)
{
	char b[64], *e = b;
	int q;

	q = strbuf_adds(out, "{\"schema\":\"oomlens.io/timeline/v1\","
			     "\"cgroup\":");
	if (q >= 0)
		q = c->cgroup ? add_json_put(out,
					     json_object_new_string(c->cgroup))
			      : strbuf_adds(out, "null");
	e = put_u64(PUT_LIT(e, ",\"interval_ms\":"), c->interval_ms);
	e = PUT_LIT(e, ",\"samples\":[");
	return q < 0 ? q : strbuf_add(out, b, (size_t)(e - b));
}

/* The first process whose serial is at least serial (procs are in serial
 * order: added at the end, removed in place), NULL when none. */
static const struct rec_proc *proc_from(const struct recorder *r,
					uint64_t serial)
{
	size_t lo = 0, hi = r->n_procs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->procs[mid].serial < serial)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n_procs ? &r->procs[lo] : NULL;
}

static struct json_object *part_array(const struct recorder *r, unsigned part)
{
	switch (part) {
	case PART_SNAPSHOTS:
		return r->snapshots;
	case PART_TRIMS:
		return r->trims;
	case PART_JVMS:
		return r->jvms;
	default:
		return r->events;
	}
}

/* The next element of the current section (a sample, a process, an entry
 * of the json-c arrays), or the section's end. */
static int next_piece(const struct recorder *r, struct rec_cursor *c,
		      struct strbuf *out)
{
	const struct rec_proc *p;
	struct json_object *a;
	int q;

	switch (c->part) {
	case PART_HEAD:
		q = add_head(c, out);
		c->part = PART_SAMPLES;
		return q;
	case PART_SAMPLES:
		if (c->seq < r->seq_first) /* dropped before its turn */
			c->seq = r->seq_first;
		if (c->seq - r->seq_first >= r->count)
			break;
		q = sample_procs(r, c->seq, &c->procs);
		if (q >= 0)
			q = add_sample(out, slot_of(r, c->seq), &c->procs,
				       c->any);
		c->seq++;
		c->any = true;
		return q;
	case PART_PROCS:
		p = proc_from(r, c->serial);
		if (!p)
			break;
		if (c->any && (q = strbuf_addch(out, ',')) < 0)
			return q;
		c->serial = p->serial + 1;
		c->any = true;
		return add_json_put(out, proc_json(p));
	default:
		a = part_array(r, c->part);
		if (c->idx >= json_object_array_length(a))
			break;
		if (c->any && (q = strbuf_addch(out, ',')) < 0)
			return q;
		c->any = true;
		return add_json_elem(out,
				     json_object_array_get_idx(a, c->idx++));
	}
	q = strbuf_adds(out, part_end[c->part]);
	c->part++;
	c->any = false;
	c->idx = 0;
	return q;
}

int recorder_timeline_next(const struct recorder *r, struct rec_cursor *c,
			   struct strbuf *out, size_t want)
{
	while (c->part != PART_DONE && out->len < want) {
		size_t mark = out->len;
		int q = next_piece(r, c, out);

		if (q < 0) {
			strbuf_truncate(out, mark);
			return q;
		}
	}
	return c->part != PART_DONE;
}

int recorder_timeline_write(const struct recorder *r, const char *cgroup,
			    unsigned interval_ms, struct strbuf *out)
{
	struct rec_cursor c;
	int q;

	rec_cursor_init(&c, cgroup, interval_ms);
	do
		q = recorder_timeline_next(r, &c, out, SIZE_MAX);
	while (q > 0);
	rec_cursor_release(&c);
	return q;
}
