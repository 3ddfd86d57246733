/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-agent parse-kmsg [--host-root DIR] [FILE|-]: prints one JSON
 * object per OOM report found in FILE (raw /dev/kmsg records or pasted
 * dmesg, journalctl or syslog text), stdin, or the host's /dev/kmsg ring
 * buffer read to its current end. Exit 0, 1 on I/O error, 2 on usage. */
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>

#include "commands.h"
#include "base/fileio.h"
#include "base/host.h"
#include "kernel/kmsg.h"
#include "base/log.h"
#include "base/util.h"

#define INPUT_MAX (256u << 20)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: oomlens-agent parse-kmsg [--host-root DIR] [FILE|-]\n"
		"\n"
		"Prints one JSON object per kernel OOM report, one per line.\n"
		"FILE holds raw /dev/kmsg records or pasted log text: dmesg\n"
		"[-T], journalctl -k [-o short-precise|short-monotonic|\n"
		"short-iso], syslog kern.log/messages ('-': stdin);\n"
		"without FILE the host's /dev/kmsg ring buffer is read to its\n"
		"current end (needs CAP_SYSLOG).\n");
}

static int print_report(struct oom_report *r, void *userdata)
{
	struct json_object *o = oom_report_to_json(r);
	const char *s;

	(void)userdata;
	if (!o)
		return -ENOMEM;
	s = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (fputs(s, stdout) == EOF || fputc('\n', stdout) == EOF) {
		json_object_put(o);
		return -EIO;
	}
	json_object_put(o);
	return 0;
}

static int parse_input(const char *path)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_init(&sb, INPUT_MAX);
	r = read_file_at(AT_FDCWD, streq(path, "-") ? "/dev/stdin" : path,
			 INPUT_MAX, &sb);
	if (r < 0) {
		log_error("cannot read \"%s\": %s", path, strerror(-r));
		return r;
	}
	r = kmsg_parse_buffer(sb.buf, sb.len, print_report, NULL);
	if (r < 0)
		log_error("parsing \"%s\": %s", path, strerror(-r));
	return r;
}

/* Feeds the ring buffer as it is now; stops at the first EAGAIN. */
static int parse_ring(const char *root)
{
	struct kmsg_reader *rd = NULL;
	struct kmsg_assembler *a = NULL;
	struct kmsg_record rec;
	struct host h;
	int r;

	r = host_open(root, &h);
	if (r < 0) {
		log_error("cannot open host root \"%s\": %s", root,
			  strerror(-r));
		return r;
	}
	r = kmsg_reader_open(h.root_fd, false, false, 0, &rd);
	if (r < 0) {
		log_error("cannot open \"%s/dev/kmsg\": %s", root,
			  strerror(-r));
		goto out;
	}
	a = kmsg_assembler_new();
	r = a ? 0 : -ENOMEM;
	while (r >= 0 && (r = kmsg_reader_next(rd, &rec)) != 0) {
		if (r == -EPIPE) {
			log_warn("kmsg overrun: records were lost, continuing");
			r = 0;
			continue;
		}
		if (r > 0)
			r = kmsg_assembler_feed(a, &rec);
	}
	if (r >= 0)
		(void)kmsg_assembler_flush(a, true);
	for (struct oom_report rep; r >= 0 && kmsg_assembler_pop(a, &rep);) {
		r = print_report(&rep, NULL);
		oom_report_release(&rep);
	}
	if (r < 0)
		log_error("reading \"%s/dev/kmsg\": %s", root, strerror(-r));
out:
	kmsg_assembler_free(a);
	kmsg_reader_free(rd);
	host_close(&h);
	return r;
}

int cmd_parse_kmsg(int argc, char **argv, const struct cli_globals *g)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'}, {0}};
	const char *root = g->host_root;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind > 1) {
		usage(stderr);
		return 2;
	}
	r = optind < argc ? parse_input(argv[optind]) : parse_ring(root);
	if (r >= 0 && fflush(stdout) != 0)
		r = -EIO;
	return r < 0 ? 1 : 0;
}
