/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>
#include "base/log.h"
#include "base/util.h"
#include "obs/metrics.h"

struct series {
	char **values; /* one per label of the family */
	double value;  /* counter, gauge */
	uint64_t counts[METRICS_MAX_BUCKETS + 1]; /* histogram, not cumulative;
						     last is +Inf */
	double sum;
	uint64_t count;
};

struct metric {
	struct metrics *owner;
	char *name, *help;
	enum metric_type type;
	char *labels[METRICS_MAX_LABELS];
	size_t n_labels;
	double buckets[METRICS_MAX_BUCKETS];
	size_t n_buckets;
	struct series **series;
	size_t n_series, cap_series;
	bool warned; /* a refused series was logged */
	struct metric *next;
};

struct metrics {
	pthread_mutex_t lock;
	struct metric *first, *last;
	struct metric *dropped; /* metrics_add_dropped()'s, or NULL */
};

int metrics_new(struct metrics **ret)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->lock, NULL);
	*ret = m;
	return 0;
}

static void series_free(struct series *s, size_t n_labels)
{
	if (!s)
		return;
	for (size_t i = 0; s->values && i < n_labels; i++)
		free(s->values[i]);
	free(s->values);
	free(s);
}

static void family_free(struct metric *f)
{
	for (size_t i = 0; i < f->n_series; i++)
		series_free(f->series[i], f->n_labels);
	for (size_t i = 0; i < f->n_labels; i++)
		free(f->labels[i]);
	free(f->series);
	free(f->name);
	free(f->help);
	free(f);
}

void metrics_free(struct metrics *m)
{
	struct metric *f, *next;

	if (!m)
		return;
	for (f = m->first; f; f = next) {
		next = f->next;
		family_free(f);
	}
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* [a-zA-Z_:][a-zA-Z0-9_:]* (labels: no ':') */
static bool valid_name(const char *s, bool label)
{
	if (!s || !*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++) {
		char c = *s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' ||
		      (!label && c == ':')))
			return false;
	}
	return true;
}

static int family_init(struct metric *f, const char *name, const char *help,
		       const char *const *labels, const double *buckets,
		       size_t n_buckets)
{
	f->name = strdup(name);
	f->help = strdup(help ? help : "");
	if (!f->name || !f->help)
		return -ENOMEM;
	for (size_t i = 0; labels && labels[i]; i++) {
		if (i == METRICS_MAX_LABELS || !valid_name(labels[i], true) ||
		    streq(labels[i], "le"))
			return -EINVAL;
		f->labels[i] = strdup(labels[i]);
		if (!f->labels[i])
			return -ENOMEM;
		f->n_labels = i + 1;
	}
	if (n_buckets > METRICS_MAX_BUCKETS)
		return -EINVAL;
	for (size_t i = 0; i < n_buckets; i++) {
		if (i && !(buckets[i] > buckets[i - 1]))
			return -EINVAL;
		f->buckets[i] = buckets[i];
	}
	f->n_buckets = n_buckets;
	return 0;
}

static int add_series(struct metric *f, const char *const *values,
		      struct series **ret);
static int get_series(struct metric *f, const char *const *values,
		      struct series **ret);

struct metric *metrics_add(struct metrics *m, const char *name,
			   const char *help, enum metric_type type,
			   const char *const *labels, const double *buckets,
			   size_t n_buckets)
{
	struct metric *f;
	struct series *s;

	if (!m || !valid_name(name, false) ||
	    (type == METRIC_HISTOGRAM) != (buckets != NULL || n_buckets > 0))
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->owner = m;
	f->type = type;
	if (family_init(f, name, help, labels, buckets, n_buckets) < 0 ||
	    (f->n_labels == 0 && add_series(f, NULL, &s) < 0)) {
		family_free(f);
		return NULL;
	}
	pthread_mutex_lock(&m->lock);
	/* its count of refused series exists (0) before anything is refused:
	 * counting a drop then needs no memory, and increase() sees the
	 * first one */
	if (m->dropped && f->n_labels &&
	    get_series(m->dropped, (const char *const[]){f->name, NULL}, &s) <
		    0) {
		pthread_mutex_unlock(&m->lock);
		family_free(f);
		return NULL;
	}
	if (m->last)
		m->last->next = f;
	else
		m->first = f;
	m->last = f;
	pthread_mutex_unlock(&m->lock);
	return f;
}

struct metric *metrics_add_dropped(struct metrics *m, const char *name,
				   const char *help)
{
	static const char *const labels[] = {"family", NULL};
	struct metric *f;

	if (!m || m->dropped)
		return NULL;
	f = metrics_add(m, name, help, METRIC_COUNTER, labels, NULL, 0);
	if (f) {
		pthread_mutex_lock(&m->lock);
		m->dropped = f;
		pthread_mutex_unlock(&m->lock);
	}
	return f;
}

static const char *val(const char *const *values, size_t i)
{
	return values && values[i] ? values[i] : "";
}

static struct series *find_series(struct metric *f, const char *const *values,
				  size_t *ret_idx)
{
	for (size_t i = 0; i < f->n_series; i++) {
		struct series *s = f->series[i];
		size_t j = 0;

		while (j < f->n_labels && streq(s->values[j], val(values, j)))
			j++;
		if (j == f->n_labels) {
			if (ret_idx)
				*ret_idx = i;
			return s;
		}
	}
	return NULL;
}

static int add_series(struct metric *f, const char *const *values,
		      struct series **ret)
{
	struct series *s;

	if (f->n_series == METRICS_MAX_SERIES)
		return -ENOSPC;
	if (f->n_series == f->cap_series) {
		size_t cap = f->cap_series ? f->cap_series * 2 : 8;
		struct series **n = realloc(f->series, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		f->series = n;
		f->cap_series = cap;
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->values = calloc(f->n_labels + 1, sizeof(char *)))) {
		free(s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->n_labels; i++)
		if (!(s->values[i] = strdup(val(values, i)))) {
			series_free(s, f->n_labels);
			return -ENOMEM;
		}
	f->series[f->n_series++] = s;
	*ret = s;
	return 0;
}

/* Under the lock: the series of values, made when missing. */
static int get_series(struct metric *f, const char *const *values,
		      struct series **ret)
{
	struct series *s = find_series(f, values, NULL);

	if (s) {
		*ret = s;
		return 0;
	}
	return add_series(f, values, ret);
}

enum op { OP_INC, OP_SET, OP_OBSERVE };

static void apply(struct metric *f, struct series *s, enum op op, double v)
{
	size_t b = 0;

	switch (op) {
	case OP_INC:
		s->value += v;
		break;
	case OP_SET:
		s->value = v;
		break;
	case OP_OBSERVE:
		while (b < f->n_buckets && v > f->buckets[b])
			b++;
		s->counts[b]++;
		s->sum += v;
		s->count++;
		break;
	}
}

/* Under the lock: f could not have the series it was asked for (the cap,
 * out of memory), counted in the registry's dropped family. The count of
 * a family added before that one is made here, and is lost only when that
 * fails too. Returns whether this is f's first refusal, the one logged. */
static bool count_dropped(struct metric *f)
{
	struct metric *d = f->owner->dropped;
	struct series *s;
	bool first = !f->warned;

	if (d && d != f &&
	    get_series(d, (const char *const[]){f->name, NULL}, &s) == 0)
		apply(d, s, OP_INC, 1);
	f->warned = true;
	return first;
}

/* Once a family, not once a drop: a full family refuses every new label
 * set from then on. */
static void log_dropped(const struct metric *f, int r)
{
	if (r == -ENOSPC)
		log_warn("metric %s: %d series, the most a family holds; new "
			 "label sets are not counted from now on, each one "
			 "counted as dropped instead (logged once)",
			 f->name, METRICS_MAX_SERIES);
	else
		log_warn("metric %s: cannot create a series (%s); each one "
			 "not created is counted as dropped (logged once)",
			 f->name, strerror(-r));
}

static int update(struct metric *f, const char *const *values, enum op op,
		  double v)
{
	struct series *s;
	bool warn = false;
	int r;

	if (!f)
		return -EINVAL;
	if ((op == OP_OBSERVE) != (f->type == METRIC_HISTOGRAM) ||
	    (op == OP_SET && f->type != METRIC_GAUGE) ||
	    (op == OP_INC && f->type == METRIC_COUNTER && !(v >= 0)))
		return -EINVAL;
	pthread_mutex_lock(&f->owner->lock);
	r = get_series(f, values, &s);
	if (r == 0)
		apply(f, s, op, v);
	else
		warn = count_dropped(f);
	pthread_mutex_unlock(&f->owner->lock);
	/* outside the lock: the registry's lock is never held across I/O */
	if (warn)
		log_dropped(f, r);
	return r;
}

int metric_inc(struct metric *f, const char *const *values, double by)
{
	return update(f, values, OP_INC, by);
}

int metric_set(struct metric *f, const char *const *values, double v)
{
	return update(f, values, OP_SET, v);
}

int metric_observe(struct metric *f, const char *const *values, double v)
{
	return update(f, values, OP_OBSERVE, v);
}

int metric_remove(struct metric *f, const char *const *values)
{
	struct series *s;
	size_t i;

	if (!f)
		return -EINVAL;
	pthread_mutex_lock(&f->owner->lock);
	s = find_series(f, values, &i);
	if (s) {
		series_free(s, f->n_labels);
		memmove(&f->series[i], &f->series[i + 1],
			(f->n_series - i - 1) * sizeof(*f->series));
		f->n_series--;
	}
	pthread_mutex_unlock(&f->owner->lock);
	return s ? 0 : -ENOENT;
}

int metric_get(struct metric *f, const char *const *values, double *ret)
{
	struct series *s;
	double v = 0;

	if (!f || f->type == METRIC_HISTOGRAM)
		return -EINVAL;
	pthread_mutex_lock(&f->owner->lock);
	s = find_series(f, values, NULL);
	if (s)
		v = s->value;
	pthread_mutex_unlock(&f->owner->lock);
	if (!s)
		return -ENOENT;
	*ret = v;
	return 0;
}

/* ---- rendering ---- */

int metrics_escape_label(struct strbuf *sb, const char *s)
{
	int r = 0;

	for (; *s && r == 0; s++) {
		if (*s == '\\')
			r = strbuf_adds(sb, "\\\\");
		else if (*s == '"')
			r = strbuf_adds(sb, "\\\"");
		else if (*s == '\n')
			r = strbuf_adds(sb, "\\n");
		else
			r = strbuf_addch(sb, *s);
	}
	return r;
}

int metrics_escape_help(struct strbuf *sb, const char *s)
{
	int r = 0;

	for (; *s && r == 0; s++) {
		if (*s == '\\')
			r = strbuf_adds(sb, "\\\\");
		else if (*s == '\n')
			r = strbuf_adds(sb, "\\n");
		else
			r = strbuf_addch(sb, *s);
	}
	return r;
}

int metrics_format_number(struct strbuf *sb, double v)
{
	char buf[40];

	if (isnan(v))
		return strbuf_adds(sb, "NaN");
	if (isinf(v))
		return strbuf_adds(sb, v > 0 ? "+Inf" : "-Inf");
	/* the shortest of %.15g..%.17g that reads back exactly */
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return strbuf_adds(sb, buf);
}

static const char *type_name(enum metric_type t)
{
	return t == METRIC_COUNTER ? "counter"
	       : t == METRIC_GAUGE ? "gauge"
				   : "histogram";
}

/* name{a="x",b="y"[,le="…"]} value\n; le NULL for no le label */
static int render_sample(struct strbuf *sb, const struct metric *f,
			 const struct series *s, const char *suffix,
			 const char *le, double v)
{
	int r = strbuf_addf(sb, "%s%s", f->name, suffix);
	bool any = f->n_labels > 0 || le;

	if (r == 0 && any)
		r = strbuf_addch(sb, '{');
	for (size_t i = 0; r == 0 && i < f->n_labels; i++) {
		r = strbuf_addf(sb, "%s%s=\"", i ? "," : "", f->labels[i]);
		if (r == 0)
			r = metrics_escape_label(sb, s->values[i]);
		if (r == 0)
			r = strbuf_addch(sb, '"');
	}
	if (r == 0 && le)
		r = strbuf_addf(sb, "%sle=\"%s\"", f->n_labels ? "," : "", le);
	if (r == 0 && any)
		r = strbuf_addch(sb, '}');
	if (r == 0)
		r = strbuf_addch(sb, ' ');
	if (r == 0)
		r = metrics_format_number(sb, v);
	return r ? r : strbuf_addch(sb, '\n');
}

static int render_histogram(struct strbuf *sb, const struct metric *f,
			    const struct series *s)
{
	_cleanup_strbuf_ struct strbuf le = STRBUF_INIT;
	uint64_t cum = 0;
	int r = 0;

	strbuf_init(&le, 64);
	for (size_t b = 0; r == 0 && b <= f->n_buckets; b++) {
		cum += s->counts[b];
		strbuf_reset(&le);
		r = b < f->n_buckets ? metrics_format_number(&le, f->buckets[b])
				     : strbuf_adds(&le, "+Inf");
		if (r == 0)
			r = render_sample(sb, f, s, "_bucket", le.buf,
					  (double)cum);
	}
	if (r == 0)
		r = render_sample(sb, f, s, "_sum", NULL, s->sum);
	if (r == 0)
		r = render_sample(sb, f, s, "_count", NULL, (double)s->count);
	return r;
}

static int render_family(struct strbuf *sb, const struct metric *f)
{
	int r = strbuf_addf(sb, "# HELP %s ", f->name);

	if (r == 0)
		r = metrics_escape_help(sb, f->help);
	if (r == 0)
		r = strbuf_addf(sb, "\n# TYPE %s %s\n", f->name,
				type_name(f->type));
	for (size_t i = 0; r == 0 && i < f->n_series; i++)
		r = f->type == METRIC_HISTOGRAM
			    ? render_histogram(sb, f, f->series[i])
			    : render_sample(sb, f, f->series[i], "", NULL,
					    f->series[i]->value);
	return r;
}

int metrics_render(struct metrics *m, struct strbuf *out)
{
	int r = 0;

	pthread_mutex_lock(&m->lock);
	for (struct metric *f = m->first; f && r == 0; f = f->next)
		r = render_family(out, f);
	pthread_mutex_unlock(&m->lock);
	return r;
}
