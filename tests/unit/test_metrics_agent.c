/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's families as /metrics renders them: oomlens_oom_kills_total
 * carries namespace, container, verdict and the workload (owner_kind,
 * owner), never a pod's name, label values escaped as the text format
 * 0.0.4 says; standalone kills have only their verdict. A family full at
 * its cap counts what it refuses in oomlens_metrics_series_dropped_total;
 * oomlens_time_to_oom_seconds holds a series only while it is set. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "obs/metrics.h"
#include "obs/metrics_agent.h"

/* the metrics the module under test feeds (NULL: none) */
static struct agent_metrics *M;

static char *render(void)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb, 1 << 22);
	cr_assert_eq(agent_metrics_render(M, &sb), 0);
	return strbuf_detach(&sb, NULL);
}

/* The lines of text starting with prefix, joined (each ends in \n). */
static char *lines_of(const char *text, const char *prefix)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n = strlen(prefix);

	strbuf_init(&sb, 1 << 22);
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);

		if (!strncmp(p, prefix, n))
			cr_assert_eq(strbuf_add(&sb, p, len), 0);
		p += len;
	}
	return strbuf_detach(&sb, NULL);
}

static char *kills(void)
{
	char *t = render(), *k = lines_of(t, "oomlens_oom_kills_total{");

	free(t);
	return k;
}

static void setup(void)
{
	cr_assert_eq(agent_metrics_new(&M), 0);
}

static void teardown(void)
{
	agent_metrics_free(M);
}

/* Two pods of one Deployment (web-7d9f-x2, then its replacement
 * web-7d9f-q8 after a restart): the capture passes their namespace,
 * container and the top of their owner chain, the same for both, so they
 * are one series. */
Test(metrics_agent, kills_of_a_deployments_pods_are_one_series, .init = setup,
     .fini = teardown)
{
	const struct agent_kill_labels l = {.ns = "shop",
					    .container = "app",
					    .verdict = "java-heap",
					    .owner_kind = "Deployment",
					    .owner = "web"};
	char *t;

	agent_metrics_on_capture(M, &l, 12000, NULL); /* web-7d9f-x2 */
	agent_metrics_on_capture(M, &l, -1, NULL);    /* web-7d9f-q8 */
	t = kills();
	cr_assert_str_eq(t, "oomlens_oom_kills_total{namespace=\"shop\","
			    "container=\"app\",verdict=\"java-heap\","
			    "owner_kind=\"Deployment\",owner=\"web\"} 2\n");
	free(t);
	t = render();
	/* one latency known: one observation */
	cr_assert(strstr(t, "oomlens_detect_latency_seconds_count 1\n"), "%s",
		  t);
	free(t);
}

/* Another container, another verdict, another workload, a pod without an
 * owner (counted with owner_kind and owner "", never by its name): each
 * its own series, in the order first seen. */
Test(metrics_agent, kills_by_container_verdict_and_owner, .init = setup,
     .fini = teardown)
{
	char *t;

	agent_metrics_on_capture(
		M,
		&(struct agent_kill_labels){"shop", "app", "java-heap",
					    "Deployment", "web"},
		-1, NULL);
	agent_metrics_on_capture(M,
				 &(struct agent_kill_labels){"shop", "side", "",
							     "Deployment",
							     "web"},
				 -1, NULL);
	agent_metrics_on_capture(
		M,
		&(struct agent_kill_labels){"shop", "app", "java-heap",
					    "StatefulSet", "db"},
		-1, NULL);
	agent_metrics_on_capture(
		M, &(struct agent_kill_labels){"shop", "app", "spike", "", ""},
		-1, NULL);
	agent_metrics_on_capture(
		M,
		&(struct agent_kill_labels){"shop", "app", "spike", NULL, NULL},
		-1, NULL);
	t = kills();
	cr_assert_str_eq(
		t,
		"oomlens_oom_kills_total{namespace=\"shop\",container=\"app\","
		"verdict=\"java-heap\",owner_kind=\"Deployment\","
		"owner=\"web\"} 1\n"
		"oomlens_oom_kills_total{namespace=\"shop\",container=\"side\","
		"verdict=\"\",owner_kind=\"Deployment\",owner=\"web\"} 1\n"
		"oomlens_oom_kills_total{namespace=\"shop\",container=\"app\","
		"verdict=\"java-heap\",owner_kind=\"StatefulSet\","
		"owner=\"db\"} 1\n"
		"oomlens_oom_kills_total{namespace=\"shop\",container=\"app\","
		"verdict=\"spike\",owner_kind=\"\",owner=\"\"} 2\n");
	free(t);
}

Test(metrics_agent, label_values_escaped, .init = setup, .fini = teardown)
{
	char *t;

	agent_metrics_on_capture(
		M,
		&(struct agent_kill_labels){"n\"s", "c\nx", "v", "K", "o\\w"},
		-1, NULL);
	t = kills();
	cr_assert_str_eq(t, "oomlens_oom_kills_total{namespace=\"n\\\"s\","
			    "container=\"c\\nx\",verdict=\"v\","
			    "owner_kind=\"K\",owner=\"o\\\\w\"} 1\n");
	free(t);
}

/* Standalone (and a kill outside a pod): the verdict alone, as the
 * capture passes it; no cgroup path. */
Test(metrics_agent, standalone_by_verdict_only, .init = setup, .fini = teardown)
{
	char *t;

	agent_metrics_on_capture(
		M, &(struct agent_kill_labels){.verdict = "leak"}, -1, NULL);
	t = kills();
	cr_assert_str_eq(t, "oomlens_oom_kills_total{namespace=\"\","
			    "container=\"\",verdict=\"leak\",owner_kind=\"\","
			    "owner=\"\"} 1\n");
	free(t);
}

static const char DROPPED_KILLS[] = "oomlens_metrics_series_dropped_total"
				    "{family=\"oomlens_oom_kills_total\"} ";

/* Every family with labels has its count of dropped series from the
 * start, at 0. */
Test(metrics_agent, dropped_series_counted_from_the_start, .init = setup,
     .fini = teardown)
{
	char *t = render(),
	     *d = lines_of(t, "oomlens_metrics_series_dropped_total{");

	cr_assert_str_eq(d, "oomlens_metrics_series_dropped_total{family=\""
			    "oomlens_oom_kills_total\"} 0\n"
			    "oomlens_metrics_series_dropped_total{family=\""
			    "oomlens_publish_failures_total\"} 0\n"
			    "oomlens_metrics_series_dropped_total{family=\""
			    "oomlens_kmsg_reports_total\"} 0\n"
			    "oomlens_metrics_series_dropped_total{family=\""
			    "oomlens_unreported_kills_total\"} 0\n"
			    "oomlens_metrics_series_dropped_total{family=\""
			    "oomlens_build_info\"} 0\n"
			    "oomlens_metrics_series_dropped_total{family=\""
			    "oomlens_time_to_oom_seconds\"} 0\n");
	free(d);
	free(t);
}

static void kill_of(unsigned i)
{
	char owner[32];

	snprintf(owner, sizeof(owner), "w%u", i);
	agent_metrics_kill(M,
			   &(struct agent_kill_labels){"ns", "app", "spike",
						       "Deployment", owner},
			   -1);
}

/* The kills family full (METRICS_MAX_SERIES workloads): a kill of one
 * more is counted as dropped, not lost without a trace; the kills of
 * workloads already there still count. */
Test(metrics_agent, kills_past_the_cap_are_counted_as_dropped, .init = setup,
     .fini = teardown)
{
	char *t, line[128];

	for (unsigned i = 0; i < METRICS_MAX_SERIES; i++)
		kill_of(i);
	t = render();
	cr_assert(strstr(t, DROPPED_KILLS), "%s", t);
	cr_assert(strstr(strstr(t, DROPPED_KILLS), "} 0\n") ==
		  strstr(t, DROPPED_KILLS) + strlen(DROPPED_KILLS) - 2);
	free(t);
	kill_of(METRICS_MAX_SERIES);
	kill_of(7);
	t = render();
	snprintf(line, sizeof(line), "%s1\n", DROPPED_KILLS);
	cr_assert(strstr(t, line), "%s", line);
	cr_assert(strstr(t, "oomlens_oom_kills_total{namespace=\"ns\","
			    "container=\"app\",verdict=\"spike\","
			    "owner_kind=\"Deployment\",owner=\"w7\"} 2\n"));
	cr_assert_null(strstr(t, "owner=\"w4096\""));
	free(t);
}

/* The forecast's gauge lives while it is set: removed (seconds < 0), its
 * line goes, the other pod's stays, and no count of drops moves. */
Test(metrics_agent, time_to_oom_lives_while_set, .init = setup,
     .fini = teardown)
{
	char *t, *g;

	agent_metrics_time_to_oom(M, "shop", "web-7d9f-x2", "app", 42.5);
	agent_metrics_time_to_oom(M, "shop", "web-7d9f-q8", "app", 30);
	agent_metrics_time_to_oom(M, "shop", "web-7d9f-x2", "app", 40);
	t = render();
	g = lines_of(t, "oomlens_time_to_oom_seconds{");
	cr_assert_str_eq(g, "oomlens_time_to_oom_seconds{namespace=\"shop\","
			    "pod=\"web-7d9f-x2\",container=\"app\"} 40\n"
			    "oomlens_time_to_oom_seconds{namespace=\"shop\","
			    "pod=\"web-7d9f-q8\",container=\"app\"} 30\n");
	free(g);
	free(t);
	agent_metrics_time_to_oom(M, "shop", "web-7d9f-x2", "app", -1);
	t = render();
	g = lines_of(t, "oomlens_time_to_oom_seconds{");
	cr_assert_str_eq(g, "oomlens_time_to_oom_seconds{namespace=\"shop\","
			    "pod=\"web-7d9f-q8\",container=\"app\"} 30\n");
	free(g);
	free(t);
}

/* A gauge per pod stays bounded by the pods forecast at once, not by
 * every pod ever forecast: with the family full, a forecast that ended
 * makes room for the next pod's. */
Test(metrics_agent, time_to_oom_room_comes_back, .init = setup,
     .fini = teardown)
{
	char pod[32], *t;

	for (unsigned i = 0; i < METRICS_MAX_SERIES; i++) {
		snprintf(pod, sizeof(pod), "p%u", i);
		agent_metrics_time_to_oom(M, "ns", pod, "app", 10);
	}
	agent_metrics_time_to_oom(M, "ns", "late", "app", 5);
	agent_metrics_time_to_oom(M, "ns", "p3", "app", -1);
	agent_metrics_time_to_oom(M, "ns", "later", "app", 6);
	t = render();
	cr_assert(strstr(t, "oomlens_time_to_oom_seconds{namespace=\"ns\","
			    "pod=\"later\",container=\"app\"} 6\n"));
	cr_assert_null(strstr(t, "pod=\"late\""));
	cr_assert_null(strstr(t, "pod=\"p3\""));
	cr_assert(strstr(t, "oomlens_metrics_series_dropped_total{family=\""
			    "oomlens_time_to_oom_seconds\"} 1\n"));
	free(t);
}

Test(metrics_agent, unreported_kills_by_bundled, .init = setup,
     .fini = teardown)
{
	char *t;

	agent_metrics_unreported_kills(M, true, 1);
	agent_metrics_unreported_kills(M, false, 1);
	agent_metrics_unreported_kills(M, false, 3);
	t = render();
	cr_assert(strstr(t, "oomlens_unreported_kills_total{bundled=\"true\"} "
			    "1\n"),
		  "%s", t);
	cr_assert(strstr(t, "oomlens_unreported_kills_total{bundled=\"false\"} "
			    "4\n"),
		  "%s", t);
	free(t);
}
