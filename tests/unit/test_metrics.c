/* SPDX-License-Identifier: Apache-2.0 */
/* The Prometheus registry against the exact text exposition format 0.0.4:
 * HELP/TYPE lines, label and HELP escaping, histogram buckets (cumulative,
 * +Inf) with _sum and _count, series removal and the series cap, and the
 * count of the series a full family refused (logged once a family). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "obs/metrics.h"

static char *render(struct metrics *m)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb, 1 << 20);
	cr_assert_eq(metrics_render(m, &sb), 0);
	return strbuf_detach(&sb, NULL);
}

Test(metrics, counter_without_labels_starts_at_zero)
{
	struct metrics *m;
	struct metric *c;
	char *t;

	cr_assert_eq(metrics_new(&m), 0);
	c = metrics_add(m, "oomlens_trims_total", "Trims seen.", METRIC_COUNTER,
			NULL, NULL, 0);
	cr_assert_not_null(c);
	t = render(m);
	cr_assert_str_eq(t, "# HELP oomlens_trims_total Trims seen.\n"
			    "# TYPE oomlens_trims_total counter\n"
			    "oomlens_trims_total 0\n");
	free(t);
	cr_assert_eq(metric_inc(c, NULL, 2), 0);
	cr_assert_eq(metric_inc(c, NULL, 1), 0);
	cr_assert_eq(metric_inc(c, NULL, -1), -EINVAL);
	cr_assert_eq(metric_set(c, NULL, 5), -EINVAL);
	t = render(m);
	cr_assert_str_eq(t, "# HELP oomlens_trims_total Trims seen.\n"
			    "# TYPE oomlens_trims_total counter\n"
			    "oomlens_trims_total 3\n");
	free(t);
	metrics_free(m);
}

Test(metrics, labels_are_escaped)
{
	struct metrics *m;
	const char *const labels[] = {"namespace", "pod", NULL};
	const char *const v1[] = {"a\\b", "say \"hi\"\nbye", NULL};
	const char *const v2[] = {"ns", NULL, NULL};
	struct metric *c;
	char *t;

	cr_assert_eq(metrics_new(&m), 0);
	c = metrics_add(m, "k_total", "Line one\nback\\slash \"q\"",
			METRIC_COUNTER, labels, NULL, 0);
	cr_assert_not_null(c);
	cr_assert_eq(metric_inc(c, v1, 1), 0);
	cr_assert_eq(metric_inc(c, v2, 1.5), 0);
	cr_assert_eq(metric_inc(c, v1, 1), 0);
	t = render(m);
	cr_assert_str_eq(
		t,
		"# HELP k_total Line one\\nback\\\\slash \"q\"\n"
		"# TYPE k_total counter\n"
		"k_total{namespace=\"a\\\\b\",pod=\"say \\\"hi\\\"\\nbye\"} 2\n"
		"k_total{namespace=\"ns\",pod=\"\"} 1.5\n");
	free(t);
	metrics_free(m);
}

Test(metrics, histogram_buckets_sum_count)
{
	struct metrics *m;
	const double b[] = {0.005, 0.1, 1};
	const char *const labels[] = {"reason", NULL};
	const char *const v[] = {"x", NULL};
	struct metric *h;
	char *t;

	cr_assert_eq(metrics_new(&m), 0);
	h = metrics_add(m, "lat_seconds", "Latency.", METRIC_HISTOGRAM, NULL, b,
			3);
	cr_assert_not_null(h);
	cr_assert_eq(metric_observe(h, NULL, 0.005), 0); /* le is inclusive */
	cr_assert_eq(metric_observe(h, NULL, 0.05), 0);
	cr_assert_eq(metric_observe(h, NULL, 2.5), 0);
	cr_assert_eq(metric_inc(h, NULL, 1), -EINVAL);
	t = render(m);
	cr_assert_str_eq(t, "# HELP lat_seconds Latency.\n"
			    "# TYPE lat_seconds histogram\n"
			    "lat_seconds_bucket{le=\"0.005\"} 1\n"
			    "lat_seconds_bucket{le=\"0.1\"} 2\n"
			    "lat_seconds_bucket{le=\"1\"} 2\n"
			    "lat_seconds_bucket{le=\"+Inf\"} 3\n"
			    "lat_seconds_sum 2.555\n"
			    "lat_seconds_count 3\n");
	free(t);
	metrics_free(m);

	cr_assert_eq(metrics_new(&m), 0);
	h = metrics_add(m, "l2", "L.", METRIC_HISTOGRAM, labels, b, 1);
	cr_assert_eq(metric_observe(h, v, 0.25), 0);
	t = render(m);
	cr_assert_str_eq(t, "# HELP l2 L.\n"
			    "# TYPE l2 histogram\n"
			    "l2_bucket{reason=\"x\",le=\"0.005\"} 0\n"
			    "l2_bucket{reason=\"x\",le=\"+Inf\"} 1\n"
			    "l2_sum{reason=\"x\"} 0.25\n"
			    "l2_count{reason=\"x\"} 1\n");
	free(t);
	metrics_free(m);
}

Test(metrics, gauge_set_remove_get)
{
	struct metrics *m;
	const char *const labels[] = {"pod", NULL};
	const char *const a[] = {"a", NULL}, *const b[] = {"b", NULL};
	struct metric *g;
	double v = 0;
	char *t;

	cr_assert_eq(metrics_new(&m), 0);
	g = metrics_add(m, "g", "G.", METRIC_GAUGE, labels, NULL, 0);
	t = render(m);
	cr_assert_str_eq(t, "# HELP g G.\n# TYPE g gauge\n");
	free(t);
	cr_assert_eq(metric_set(g, a, 12.5), 0);
	cr_assert_eq(metric_set(g, b, -3), 0);
	cr_assert_eq(metric_set(g, a, 1e21), 0);
	cr_assert_eq(metric_get(g, a, &v), 0);
	cr_assert_eq(v, 1e21);
	cr_assert_eq(metric_remove(g, b), 0);
	cr_assert_eq(metric_remove(g, b), -ENOENT);
	cr_assert_eq(metric_get(g, b, &v), -ENOENT);
	t = render(m);
	cr_assert_str_eq(t,
			 "# HELP g G.\n# TYPE g gauge\ng{pod=\"a\"} 1e+21\n");
	free(t);
	metrics_free(m);
}

Test(metrics, numbers)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb, 256);
	metrics_format_number(&sb, 0.1);
	strbuf_addch(&sb, ' ');
	metrics_format_number(&sb, 1.0 / 3);
	strbuf_addch(&sb, ' ');
	metrics_format_number(&sb, INFINITY);
	strbuf_addch(&sb, ' ');
	metrics_format_number(&sb, -INFINITY);
	strbuf_addch(&sb, ' ');
	metrics_format_number(&sb, NAN);
	strbuf_addch(&sb, ' ');
	metrics_format_number(&sb, 123456789012.0);
	cr_assert_str_eq(sb.buf, "0.1 0.3333333333333333 +Inf -Inf NaN "
				 "123456789012");
	strbuf_release(&sb);
}

Test(metrics, bad_registrations)
{
	struct metrics *m;
	const char *const le[] = {"le", NULL};
	const char *const bad[] = {"a-b", NULL};
	const double down[] = {1, 0.5};

	cr_assert_eq(metrics_new(&m), 0);
	cr_assert_null(metrics_add(m, "9x", "", METRIC_GAUGE, NULL, NULL, 0));
	cr_assert_null(metrics_add(m, "x y", "", METRIC_GAUGE, NULL, NULL, 0));
	cr_assert_null(metrics_add(m, "x", "", METRIC_GAUGE, le, NULL, 0));
	cr_assert_null(metrics_add(m, "x", "", METRIC_GAUGE, bad, NULL, 0));
	cr_assert_null(
		metrics_add(m, "x", "", METRIC_HISTOGRAM, NULL, down, 2));
	cr_assert_null(
		metrics_add(m, "x", "", METRIC_HISTOGRAM, NULL, NULL, 0));
	cr_assert_null(metrics_add(m, "x", "", METRIC_GAUGE, NULL, down, 1));
	metrics_free(m);
}

/* Fills family f (labels {"i"}) with METRICS_MAX_SERIES series. */
static void fill(struct metric *f, bool gauge)
{
	char name[16];
	const char *v[] = {name, NULL};

	for (int i = 0; i < METRICS_MAX_SERIES; i++) {
		snprintf(name, sizeof(name), "%d", i);
		cr_assert_eq(gauge ? metric_set(f, v, i) : metric_inc(f, v, 1),
			     0);
	}
}

static double dropped(struct metric *d, const char *family)
{
	const char *const v[] = {family, NULL};
	double n = -1;

	cr_assert_eq(metric_get(d, v, &n), 0, "no dropped series for %s",
		     family);
	return n;
}

Test(metrics, series_cap)
{
	struct metrics *m;
	const char *const labels[] = {"i", NULL};
	const char *const fresh[] = {"new", NULL}, *const seven[] = {"7", NULL};
	struct metric *c;
	double v = 0;

	cr_assert_eq(metrics_new(&m), 0);
	c = metrics_add(m, "c_total", "C.", METRIC_COUNTER, labels, NULL, 0);
	fill(c, false);
	cr_assert_eq(metric_inc(c, fresh, 1), -ENOSPC);
	cr_assert_eq(metric_get(c, fresh, &v), -ENOENT);
	cr_assert_eq(metric_inc(c, seven, 1), 0); /* existing ones count */
	cr_assert_eq(metric_get(c, seven, &v), 0);
	cr_assert_eq(v, 2);
	metrics_free(m);
}

/* The dropped family has a series (0) for each family with labels added
 * after it, from the start; none for a family without labels (it cannot
 * refuse one), none for itself. */
Test(metrics, dropped_registered_up_front)
{
	struct metrics *m;
	const char *const labels[] = {"i", NULL};
	char *t;

	cr_assert_eq(metrics_new(&m), 0);
	cr_assert_not_null(metrics_add_dropped(m, "d_total", "D."));
	cr_assert_null(metrics_add_dropped(m, "d2_total", "D."));
	cr_assert_not_null(
		metrics_add(m, "u", "U.", METRIC_GAUGE, NULL, NULL, 0));
	cr_assert_not_null(metrics_add(m, "c_total", "C.", METRIC_COUNTER,
				       labels, NULL, 0));
	t = render(m);
	cr_assert_str_eq(t, "# HELP d_total D.\n"
			    "# TYPE d_total counter\n"
			    "d_total{family=\"c_total\"} 0\n"
			    "# HELP u U.\n"
			    "# TYPE u gauge\n"
			    "u 0\n"
			    "# HELP c_total C.\n"
			    "# TYPE c_total counter\n");
	free(t);
	metrics_free(m);
}

/* Runs fn with stderr into a file; returns what was written. */
static char *stderr_of(void (*fn)(void *), void *ud)
{
	char *buf = calloc(1, 65536);
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	cr_assert(buf && f && saved >= 0);
	fflush(stderr);
	cr_assert_geq(dup2(fileno(f), STDERR_FILENO), 0);
	fn(ud);
	fflush(stderr);
	cr_assert_geq(dup2(saved, STDERR_FILENO), 0);
	close(saved);
	rewind(f);
	n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void refuse_three(void *ud)
{
	struct metric *c = ud;
	const char *const a[] = {"a", NULL}, *const b[] = {"b", NULL};

	cr_assert_eq(metric_inc(c, a, 1), -ENOSPC);
	cr_assert_eq(metric_inc(c, b, 1), -ENOSPC);
	cr_assert_eq(metric_inc(c, a, 1), -ENOSPC);
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Every refused series counted, in its family's series; the refusal
 * logged once a family, not once a drop. */
Test(metrics, dropped_counted_and_logged_once)
{
	struct metrics *m;
	const char *const labels[] = {"i", NULL};
	const char *const seven[] = {"7", NULL};
	struct metric *d, *c, *g;
	char *t, *err;

	cr_assert_eq(metrics_new(&m), 0);
	d = metrics_add_dropped(m, "oomlens_metrics_series_dropped_total", "");
	c = metrics_add(m, "c_total", "C.", METRIC_COUNTER, labels, NULL, 0);
	g = metrics_add(m, "g", "G.", METRIC_GAUGE, labels, NULL, 0);
	cr_assert(d && c && g);
	fill(c, false);
	cr_assert_eq(dropped(d, "c_total"), 0);
	err = stderr_of(refuse_three, c);
	cr_assert_eq(count_of(err, "metric c_total: 4096 series"), 1, "%s",
		     err);
	cr_assert_eq(count_of(err, "level=warn"), 1, "%s", err);
	free(err);
	cr_assert_eq(dropped(d, "c_total"), 3);
	cr_assert_eq(dropped(d, "g"), 0);
	cr_assert_eq(metric_inc(c, seven, 1), 0); /* no drop */
	cr_assert_eq(dropped(d, "c_total"), 3);
	t = render(m);
	cr_assert(strstr(t, "oomlens_metrics_series_dropped_total"
			    "{family=\"c_total\"} 3\n"),
		  "%s", t);
	cr_assert(strstr(t, "oomlens_metrics_series_dropped_total"
			    "{family=\"g\"} 0\n"),
		  "%s", t);
	free(t);
	metrics_free(m);
}

/* A gauge whose series are removed when their value goes holds room for
 * new ones: a full family refuses, one removal lets the next in. */
Test(metrics, removal_frees_room)
{
	struct metrics *m;
	const char *const labels[] = {"i", NULL};
	const char *const fresh[] = {"new", NULL}, *const five[] = {"5", NULL};
	struct metric *d, *g;
	double v = 0;

	cr_assert_eq(metrics_new(&m), 0);
	d = metrics_add_dropped(m, "d_total", "");
	g = metrics_add(m, "g", "G.", METRIC_GAUGE, labels, NULL, 0);
	fill(g, true);
	cr_assert_eq(metric_set(g, fresh, 1), -ENOSPC);
	cr_assert_eq(dropped(d, "g"), 1);
	cr_assert_eq(metric_remove(g, five), 0);
	cr_assert_eq(metric_set(g, fresh, 42), 0);
	cr_assert_eq(metric_get(g, fresh, &v), 0);
	cr_assert_eq(v, 42);
	cr_assert_eq(dropped(d, "g"), 1);
	metrics_free(m);
}
