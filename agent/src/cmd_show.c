/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-agent show BUNDLE.tar.gz [--html]: the bundle's verdict, evidence
 * and ledger in a terminal (colour only on a tty), or its report.html. */
#include <fcntl.h>
#include <stdio.h>

#include "commands.h"
#include "forensics/bundle.h"
#include "forensics/report.h"
#include "base/strbuf.h"
#include "base/term.h"

/* The bundle's strings (a victim's comm, cmdline, file names) are the
 * pod's: the text goes through term_sanitize, keeping only the report's own
 * colours; HTML escapes markup already and is checked only for a tty. */
static int print_sanitized(const struct strbuf *out, bool html)
{
	_cleanup_strbuf_ struct strbuf clean = STRBUF_INIT;
	unsigned flags = TERM_KEEP_NL | TERM_KEEP_TAB;

	if (html && !isatty(STDOUT_FILENO)) {
		fwrite(out->buf, 1, out->len, stdout);
		return 0;
	}
	strbuf_init(&clean, 4 * out->len + 1);
	if (term_sanitize(out->buf, out->len,
			  flags | (html ? TERM_QUESTION : TERM_KEEP_SGR),
			  &clean) < 0) {
		fprintf(stderr, "show: %s\n", strerror(ENOMEM));
		return 1;
	}
	fwrite(clean.buf, 1, clean.len, stdout);
	return 0;
}

int cmd_show(int argc, char **argv, const struct cli_globals *g)
{
	struct bundle *b;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	const char *path = NULL;
	bool html = false;
	int r;

	(void)g; /* no host access: a bundle is a file */
	for (int i = 1; i < argc; i++) {
		if (streq(argv[i], "--html"))
			html = true;
		else if (streq(argv[i], "--help") || streq(argv[i], "-h")) {
			printf("usage: oomlens-agent show BUNDLE.tar.gz "
			       "[--html]\n");
			return 0;
		} else if (!path)
			path = argv[i];
		else
			path = NULL, i = argc;
	}
	if (!path) {
		fprintf(stderr,
			"usage: oomlens-agent show BUNDLE.tar.gz [--html]\n");
		return 2;
	}
	r = bundle_load(AT_FDCWD, path, &b);
	if (r < 0) {
		/* bundle_load() refused a hostile archive before inflating it
		 * past its caps; say which rule it broke. */
		fprintf(stderr, "show: cannot read bundle '%s': %s\n", path,
			bundle_strerror(r));
		return 1;
	}
	strbuf_init(&out, 64u << 20);
	r = html ? report_render_html(b, &out)
		 : report_render_text(b, isatty(STDOUT_FILENO), &out);
	bundle_free(b);
	if (r < 0) {
		fprintf(stderr, "show: %s\n", strerror(-r));
		return 1;
	}
	return print_sanitized(&out, html);
}
