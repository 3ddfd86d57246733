/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-agent show BUNDLE.tar.gz [--html]: the bundle's verdict, evidence
 * and ledger in a terminal (colour only on a tty), or its report.html. */
#include <fcntl.h>
#include <stdio.h>

#include "commands.h"
#include "forensics/bundle.h"
#include "forensics/report.h"
#include "base/strbuf.h"

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
	fwrite(out.buf, 1, out.len, stdout);
	return 0;
}
