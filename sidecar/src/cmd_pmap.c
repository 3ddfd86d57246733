/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-sidecar pmap PID [--json]: the pmap -X table of one process, for
 * pods that have no procps. */
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>

#include "commands.h"
#include "base/fileio.h"
#include "base/host.h"
#include "base/log.h"
#include "base/parse.h"
#include "base/term.h"
#include "kernel/procfs.h"
#include "kernel/smaps.h"
#include "base/util.h"

static void pmap_usage(FILE *f)
{
	fprintf(f, "usage: oomlens-sidecar pmap PID [--json] "
		   "[--host-root DIR] [--no-redact]\n"
		   "Prints the memory map of PID like procps 'pmap -X' "
		   "(totals in KB), or as JSON.\n");
}

/* Mapped file names are anyone's: a control byte becomes '?' (as procps
 * prints names in plain pmap; its -X passes them raw), so normal names
 * stay byte-identical to procps and JSON stays valid. */
static int write_sanitized(const struct strbuf *out)
{
	_cleanup_strbuf_ struct strbuf clean = STRBUF_INIT;
	int r;

	strbuf_init(&clean, out->len + 1);
	r = term_sanitize(out->buf, out->len, TERM_KEEP_NL | TERM_QUESTION,
			  &clean);
	return r < 0 ? r : write_all(STDOUT_FILENO, clean.buf, clean.len);
}

/* A chunk of the table (whole lines: a name's bytes never straddle two),
 * sanitised and written, then dropped. */
static int flush_table(struct strbuf *out, void *ud)
{
	int r = write_sanitized(out);

	(void)ud;
	strbuf_reset(out);
	return r;
}

/* The table from the compact rows (smaps_read_pmap_at()), written a chunk
 * at a time: held is ~35 bytes a mapping, not the whole struct smaps. */
static int print_table(int fd, int pid, const char *cmdline, struct strbuf *out)
{
	struct smaps_pmap t;
	int r;

	smaps_pmap_init(&t);
	r = smaps_read_pmap_at(fd, "smaps", &t);
	if (r < 0)
		return r;
	r = smaps_pmap_render_each(&t, pid, cmdline, out, flush_table, NULL);
	if (t.truncated)
		log_warn("pid %d exited while its smaps was read: output is "
			 "partial",
			 pid);
	smaps_pmap_release(&t);
	return r;
}

static int print_json(int fd, int pid, struct strbuf *out)
{
	struct json_object *o;
	struct smaps s;
	int r;

	smaps_init(&s);
	r = smaps_read_at(fd, "smaps", &s);
	if (r < 0)
		return r;
	o = smaps_to_json(&s, pid);
	r = o ? strbuf_adds(out, json_object_to_json_string_ext(
					 o, JSON_C_TO_STRING_PRETTY))
	      : -ENOMEM;
	if (r >= 0)
		r = strbuf_addch(out, '\n');
	json_object_put(o);
	if (r >= 0)
		r = write_sanitized(out);
	if (s.truncated)
		log_warn("pid %d exited while its smaps was read: output is "
			 "partial",
			 pid);
	smaps_release(&s);
	return r;
}

static int print_pmap(const struct host *h, int pid, bool json, bool redact)
{
	_cleanup_close_ int fd = host_open_pid(h, pid);
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	int r;

	strbuf_init(&cmd, 128u << 10);
	strbuf_init(&out, STRBUF_DEFAULT_MAX);
	if (fd < 0)
		return fd;
	r = procfs_read_cmdline(fd, redact, &cmd);
	if (r < 0 && r != -E2BIG)
		return r;
	return json ? print_json(fd, pid, &out)
		    : print_table(fd, pid, cmd.buf, &out);
}

int cmd_pmap(int argc, char **argv, const struct cli_globals *g)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"no-redact", no_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *root = g->host_root;
	bool json = false, redact = true;
	struct host h;
	int c, pid, r;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'n':
			redact = false;
			break;
		case 'h':
			pmap_usage(stdout);
			return 0;
		default:
			pmap_usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1 || parse_int(argv[optind], &pid) < 0 ||
	    pid <= 0) {
		pmap_usage(stderr);
		return 2;
	}
	r = host_open(root, &h);
	if (r < 0) {
		log_error("cannot open host root \"%s\": %s", root,
			  strerror(-r));
		return 1;
	}
	r = print_pmap(&h, pid, json, redact);
	host_close(&h);
	if (r < 0) {
		log_error("pmap of pid %d failed: %s", pid, strerror(-r));
		return 1;
	}
	return 0;
}
