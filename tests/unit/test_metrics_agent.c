/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's families as /metrics renders them: oomlens_oom_kills_total
 * carries namespace, pod, container and verdict, label values escaped as
 * the text format 0.0.4 says; standalone kills are labelled by cgroup. */
#include <criterion/criterion.h>
#include <string.h>

#include "base/strbuf.h"
#include "obs/metrics_agent.h"

static char *render(void)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb, 1 << 20);
	cr_assert_eq(agent_metrics_render(&sb), 0);
	return strbuf_detach(&sb, NULL);
}

static void setup(void)
{
	cr_assert_eq(agent_metrics_init(), 0);
}

static void teardown(void)
{
	agent_metrics_free();
}

Test(metrics_agent, kills_by_pod_and_container, .init = setup, .fini = teardown)
{
	char *t;

	agent_metrics_on_capture("shop", "web-7d9f-x2", "app", "java-heap",
				 12000, NULL);
	agent_metrics_on_capture("shop", "web-7d9f-x2", "app", "java-heap", -1,
				 NULL);
	agent_metrics_on_capture("shop", "web-7d9f-x2", "side", "", -1, NULL);
	t = render();
	cr_assert(strstr(t, "oomlens_oom_kills_total{namespace=\"shop\","
			    "pod=\"web-7d9f-x2\",container=\"app\","
			    "verdict=\"java-heap\"} 2\n"),
		  "%s", t);
	cr_assert(strstr(t, "oomlens_oom_kills_total{namespace=\"shop\","
			    "pod=\"web-7d9f-x2\",container=\"side\","
			    "verdict=\"\"} 1\n"),
		  "%s", t);
	/* one latency known: one observation */
	cr_assert(strstr(t, "oomlens_detect_latency_seconds_count 1\n"), "%s",
		  t);
	free(t);
}

Test(metrics_agent, label_values_escaped, .init = setup, .fini = teardown)
{
	char *t;

	agent_metrics_on_capture("n\"s", "p\\od", "c\nx", "v", -1, NULL);
	t = render();
	cr_assert(strstr(t, "oomlens_oom_kills_total{namespace=\"n\\\"s\","
			    "pod=\"p\\\\od\",container=\"c\\nx\","
			    "verdict=\"v\"} 1\n"),
		  "%s", t);
	free(t);
}

Test(metrics_agent, standalone_by_cgroup, .init = setup, .fini = teardown)
{
	char *t;

	agent_metrics_on_capture("", "", "/demo/app", "leak", -1, NULL);
	t = render();
	cr_assert(strstr(t, "oomlens_oom_kills_total{namespace=\"\",pod=\"\","
			    "container=\"/demo/app\",verdict=\"leak\"} 1\n"),
		  "%s", t);
	free(t);
}

Test(metrics_agent, unreported_kills_by_bundled, .init = setup,
     .fini = teardown)
{
	char *t;

	agent_metrics_unreported_kills(true, 1);
	agent_metrics_unreported_kills(false, 1);
	agent_metrics_unreported_kills(false, 3);
	t = render();
	cr_assert(strstr(t, "oomlens_unreported_kills_total{bundled=\"true\"} "
			    "1\n"),
		  "%s", t);
	cr_assert(strstr(t, "oomlens_unreported_kills_total{bundled=\"false\"} "
			    "4\n"),
		  "%s", t);
	free(t);
}
