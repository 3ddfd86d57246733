/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-sidecar jcmd PID COMMAND [ARGS...]: a drop-in for the JDK's
 * `jcmd PID COMMAND...` that needs no JDK in the pod: the attach protocol
 * in C, 2-4 ms and 1.7-1.8 MiB instead of 0.5-0.65 s and 46 MiB (make
 * bench, docs/build.md). */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "base/fileio.h"
#include "base/host.h"
#include "inspect/jvm.h"
#include "base/parse.h"
#include "base/term.h"
#include "base/util.h"

static void jcmd_usage(FILE *f)
{
	fprintf(f, "usage: oomlens-sidecar jcmd [--timeout MS] [--max-reply "
		   "BYTES] "
		   "[--host-root DIR] PID COMMAND [ARGS...]\n"
		   "Runs a diagnostic command in the JVM PID and prints its "
		   "output like jcmd.\n"
		   "Exit status: 0 ok, 1 the JVM or the attach failed, 2 "
		   "usage.\n");
}

/* Joins argv[from..] with spaces, as jcmd does. */
static int join_args(int argc, char **argv, int from, struct strbuf *sb)
{
	int r = 0;

	for (int i = from; r == 0 && i < argc; i++) {
		if (i > from)
			r = strbuf_addch(sb, ' ');
		if (r == 0)
			r = strbuf_adds(sb, argv[i]);
	}
	return r;
}

/* The JVM's reply is the target's to write: printed through term_sanitize
 * (a fake JVM's escape sequences shown as "\x1b", never obeyed). */
static void print_reply(const struct strbuf *text)
{
	_cleanup_strbuf_ struct strbuf clean = STRBUF_INIT;

	strbuf_init(&clean, 4 * text->len + 1);
	if (term_sanitize(text->buf, text->len, TERM_KEEP_NL | TERM_KEEP_TAB,
			  &clean) < 0)
		return;
	write_all(STDOUT_FILENO, clean.buf, clean.len);
}

static int run_jcmd(const struct host *h, int pid, const char *cmdline,
		    const struct jvm_attach_opts *o)
{
	struct jvm_target t;
	struct jvm_reply rep;
	int r;

	r = jvm_attach(h, pid, o, &t);
	if (r < 0) {
		fprintf(stderr, "oomlens-sidecar: jcmd %d: %s\n", pid,
			jvm_strerror(r));
		return 1;
	}
	r = jvm_jcmd(&t, cmdline, &rep);
	if (r < 0) {
		fprintf(stderr, "oomlens-sidecar: jcmd %d '%s': %s\n", pid,
			cmdline, jvm_strerror(r));
		return 1;
	}
	printf("%d:\n", pid);
	fflush(stdout);
	print_reply(&rep.text);
	if (rep.truncated)
		fprintf(stderr,
			"oomlens-sidecar: reply truncated at %zu bytes\n",
			rep.text.len);
	r = rep.status == 0 && !rep.truncated ? 0 : 1;
	jvm_reply_release(&rep);
	return r;
}

int cmd_jcmd(int argc, char **argv, const struct cli_globals *g)
{
	static const struct option opts[] = {
		{"timeout", required_argument, NULL, 't'},
		{"max-reply", required_argument, NULL, 'm'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	_cleanup_strbuf_ struct strbuf cmdline = STRBUF_INIT;
	struct jvm_attach_opts o = {0};
	const char *root = g->host_root;
	uint64_t max;
	struct host h;
	int c, pid, r;

	strbuf_init(&cmdline, 64u << 10);
	/* "+": options end at PID, the rest belongs to the JVM command. */
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c == 't' && parse_uint(optarg, &o.timeout_ms) == 0 &&
		    o.timeout_ms > 0)
			continue;
		if (c == 'm' && parse_size(optarg, &max) == 0 && max > 0 &&
		    max <= (1ull << 30)) {
			o.reply_max = (size_t)max;
			continue;
		}
		jcmd_usage(c == 'h' ? stdout : stderr);
		return c == 'h' ? 0 : 2;
	}
	if (argc - optind < 2 || parse_int(argv[optind], &pid) < 0 ||
	    pid <= 0 || join_args(argc, argv, optind + 1, &cmdline) < 0) {
		jcmd_usage(stderr);
		return 2;
	}
	r = host_open(root, &h);
	if (r < 0) {
		fprintf(stderr, "oomlens-sidecar: host root '%s': %s\n", root,
			strerror(-r));
		return 1;
	}
	r = run_jcmd(&h, pid, cmdline.buf, &o);
	host_close(&h);
	return r;
}
