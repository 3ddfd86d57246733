/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-sidecar class-histogram PID: the top classes of a JVM's heap by
 * bytes (GC.class_histogram), taken as run takes it before a kill: its
 * walk bounded by --max-pause-ms from the heap's used size, its pause
 * measured (wall time, and the JVM's safepoint time). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>

#include "commands.h"
#include "base/host.h"
#include "base/parse.h"
#include "base/term.h"
#include "base/util.h"
#include "inspect/jvm.h"

static void histo_usage(FILE *f)
{
	fprintf(f,
		"usage: oomlens-sidecar class-histogram [--json] "
		"[--max-pause-ms %u] [--host-root DIR] PID\n"
		"Runs GC.class_histogram in the JVM PID (a full collection "
		"and a walk of the heap, the application stopped) unless its "
		"estimate\nfrom the heap's used size exceeds --max-pause-ms, "
		"and prints the %d largest classes by bytes and the pause.\n"
		"Exit status: 0 taken, 1 not taken (the reason is printed), "
		"2 usage.\n",
		JVM_HISTO_BUDGET_MS_DEFAULT, JVM_HISTO_TOP);
}

/* The JVM's strings go through term_sanitize (they are cleaned already:
 * this is the sidecar's rule for whatever a JVM wrote). */
static void print_clean(const char *s)
{
	_cleanup_strbuf_ struct strbuf c = STRBUF_INIT;

	strbuf_init(&c, 4 * strlen(s) + 1);
	if (term_sanitize(s, strlen(s), TERM_QUESTION, &c) == 0)
		fputs(c.buf, stdout);
}

static void print_text(int pid, const struct jvm_histo_take *t)
{
	const struct jvm_histo *h = &t->h;

	printf("%d: GC.class_histogram, heap used %" PRIu64
	       " MiB, estimate %" PRIu64 " ms of %" PRIu64 " ms allowed\n",
	       pid, t->heap_used >> 20, t->estimate_ms, t->budget_ms);
	printf("wall %.1f ms", (double)t->wall_us / 1000.0);
	if (t->have_pause)
		printf(", the JVM's safepoints %.1f ms (%" PRIu64 ")",
		       (double)t->pause_us / 1000.0, t->safepoints);
	printf("; %" PRIu64 " classes, %" PRIu64 " bytes in %" PRIu64
	       " instances%s\n",
	       h->n_classes, h->total_bytes, h->total_instances,
	       h->total_known ? "" : " (reply cut: totals of what was read)");
	printf("%4s %14s %14s %6s  %s\n", "#", "instances", "bytes", "%",
	       "class");
	for (size_t i = 0; i < h->n; i++) {
		char disp[JVM_HISTO_NAME_MAX + 8];

		jvm_class_display_name(h->top[i].name, disp, sizeof(disp));
		printf("%4zu %14" PRIu64 " %14" PRIu64 " %5.1f%%  ", i + 1,
		       h->top[i].instances, h->top[i].bytes,
		       h->total_bytes ? 100.0 * (double)h->top[i].bytes /
						(double)h->total_bytes
				      : 0.0);
		print_clean(disp);
		if (!streq(disp, h->top[i].name)) {
			fputs(" (", stdout);
			print_clean(h->top[i].name);
			fputs(")", stdout);
		}
		putchar('\n');
	}
}

static int parse_args(int argc, char **argv, struct jvm_histo_opts *o,
		      bool *json, int *pid)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"max-pause-ms", required_argument, NULL, 'm'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'j')
			*json = true;
		else if (c != 'm' || parse_uint(optarg, &o->budget_ms) < 0 ||
			 o->budget_ms == 0 || o->budget_ms > 600000)
			return c == 'h' ? 1 : -EINVAL;
	}
	if (argc - optind != 1 || parse_int(argv[optind], pid) < 0 || *pid <= 0)
		return -EINVAL;
	return 0;
}

int cmd_class_histogram(int argc, char **argv, const struct cli_globals *g)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct jvm_histo_opts o = {.budget_what = "allowed (--max-pause-ms)"};
	struct jvm_histo_take *t = calloc(1, sizeof(*t));
	bool json = false;
	struct host h;
	int pid = 0, r;

	r = t ? parse_args(argc, argv, &o, &json, &pid) : -ENOMEM;
	if (r != 0) {
		free(t);
		histo_usage(r > 0 ? stdout : stderr);
		return r > 0 ? 0 : 2;
	}
	r = host_open(g->host_root, &h);
	if (r == 0) {
		r = jvm_histo_take(&h, pid, &o, t);
		host_close(&h);
	}
	if (r < 0) {
		fprintf(stderr, "oomlens-sidecar: class-histogram %d: %s\n",
			pid, jvm_strerror(r));
		free(t);
		return 1;
	}
	strbuf_init(&sb, 1u << 20);
	if (json && jvm_histo_take_to_json(t, pid, now_realtime_us() / 1000,
					   "class-histogram", &sb) == 0)
		printf("%s\n", sb.buf);
	else if (!json && t->taken)
		print_text(pid, t);
	if (!t->taken)
		fprintf(stderr,
			"oomlens-sidecar: class-histogram %d: not "
			"taken: %s\n",
			pid, t->why);
	r = t->taken ? 0 : 1;
	free(t);
	return r;
}
