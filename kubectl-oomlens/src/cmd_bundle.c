/* SPDX-License-Identifier: Apache-2.0 */
/* kubectl oomlens show / get / open: fetch a report's OOMBundle, check it
 * (size against .spec.size, sha256 against .spec.sha256), then print its
 * summary, save it, or extract it. The archive is the pod's data and is
 * treated as hostile: it is read with bundle_read() (one top directory, no
 * "..", no links or devices, size and inflate caps) and checked whole
 * before a single file is written. Nothing in it decides where files go
 * (they go into a fresh DIR/<report>, never its own top directory, and
 * over nothing) or what HTML is shown (open renders its own page from the
 * bundle's data; the bundle's report.html is never opened). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plugin.h"
#include "base/fileio.h"
#include "base/strbuf.h"
#include "base/term.h"
#include "base/util.h"
#include "forensics/bundle.h"
#include "forensics/report.h"

extern char **environ;

struct fetched {
	struct kube_oomreport *report; /* NULL when a bundle was named */
	struct kube_oombundle *bundle;
	char path[256]; /* the archive in a temp file */
};

static void fetched_release(struct fetched *f)
{
	if (f->path[0])
		unlink(f->path);
	kube_oomreport_free(f->report);
	kube_oombundle_free(f->bundle);
}

static int read_nothing(const char *name, const char *data, size_t len,
			void *ud)
{
	(void)name, (void)data, (void)len, (void)ud;
	return 0;
}

/* The data against the report's bundleSHA256 and bundleSize (the agent
 * wrote those; the bundle's own spec is whoever created the object), and
 * against its own spec.sha256. A report without them (hand-made, or from
 * an older agent) is said so, and the bundle checked against itself. */
static int check_sha256(const struct kube_oomreport *r,
			const struct kube_oombundle *b)
{
	char hex[65];

	kube_sha256_hex(b->data, b->size, hex);
	if (r && r->bundle_sha256 &&
	    (strcmp(hex, r->bundle_sha256) != 0 ||
	     (r->bundle_size > 0 && (size_t)r->bundle_size != b->size))) {
		fprintf(stderr,
			"kubectl-oomlens: bundle %s: sha256 %s (%zu bytes), "
			"report %s says %s (%lld bytes): not the agent's "
			"bundle, refused\n",
			b->name, hex, b->size, r->name, r->bundle_sha256,
			(long long)r->bundle_size);
		return EXIT_BADBUNDLE;
	}
	if (r && !r->bundle_sha256)
		fprintf(stderr,
			"kubectl-oomlens: report %s gives no bundleSHA256: "
			"bundle %s checked against its own sha256 only\n",
			r->name, b->name);
	if (!b->sha256 || strcasecmp(hex, b->sha256) != 0) {
		fprintf(stderr,
			"kubectl-oomlens: bundle %s: sha256 %s, the object "
			"says %s: refused\n",
			b->name, hex, b->sha256 ? b->sha256 : "nothing");
		return EXIT_BADBUNDLE;
	}
	return 0;
}

/* The report's bundle (or, when no report has that name, the bundle of
 * that name: snap-<pod>), checked, in a temp file. */
static int fetch(struct ctx *c, const char *name, struct fetched *f)
{
	struct kube_error err = {0};
	const char *bname = name;
	const char *tmp = getenv("TMPDIR");
	int r, fd;

	struct kube_error report_err = {0};
	bool no_report;

	r = kube_oomreport_get(c->client, c->ns, name, &f->report, &report_err);
	no_report = r == -ENOENT;
	if (r == 0 && f->report->bundle && *f->report->bundle)
		bname = f->report->bundle;
	else if (r < 0 && r != -ENOENT) {
		r = cli_fail("get oomreport", r, &report_err);
		plugin_hint_crds(&report_err);
		return r;
	}
	/* no report of that name: perhaps a bundle (snap-<pod>) */
	r = kube_oombundle_get(c->client, c->ns, bname, &f->bundle, &err);
	if (r == -ENOENT && no_report) { /* the name typed was a report's */
		r = cli_fail("get oomreport", r, &report_err);
		plugin_hint_crds(&report_err);
		return r;
	}
	if (r == -EBADMSG) {
		fprintf(stderr,
			"kubectl-oomlens: bundle %s: data is not base64 or "
			"its size disagrees with .spec.size: refused\n",
			bname);
		return EXIT_BADBUNDLE;
	}
	if (r < 0) {
		r = cli_fail("get oombundle", r, &err);
		if (r == EXIT_NOTFOUND) /* said of the report typed */
			fprintf(stderr,
				"kubectl-oomlens: report %s names the "
				"OOMBundle "
				"%s, which namespace %s does not hold\n",
				name, bname, c->ns);
		return r;
	}
	r = check_sha256(f->report, f->bundle);
	if (r)
		return r;
	snprintf(f->path, sizeof(f->path), "%s/kubectl-oomlens-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(f->path);
	if (fd < 0) {
		f->path[0] = '\0';
		return cli_fail("temp file", -errno, NULL);
	}
	r = write_all(fd, f->bundle->data, f->bundle->size);
	close(fd);
	if (r < 0)
		return cli_fail("temp file", r, NULL);
	/* whole-archive check first: nothing is written for a hostile one */
	r = bundle_read(AT_FDCWD, f->path, read_nothing, NULL);
	if (r < 0) {
		fprintf(stderr, "kubectl-oomlens: bundle %s refused: %s\n",
			bname, bundle_strerror(r));
		return EXIT_BADBUNDLE;
	}
	return 0;
}

/* The kernel's own words about the victim (report_render_text gives the
 * parsed figures; a reader checks them against the raw line). */
static int kernel_lines(const struct bundle *b, struct strbuf *out)
{
	size_t len, i = 0;
	const char *raw = bundle_get(b, "kernel/oom.txt", &len);
	int r = 0;

	while (raw && i < len && r >= 0) {
		const char *nl = memchr(raw + i, '\n', len - i);
		size_t n = (nl ? (size_t)(nl - raw) : len) - i;

		if (memmem(raw + i, n, "Killed process", 14) ||
		    memmem(raw + i, n, "oom-kill:", 9)) {
			if (out->len == 0 || !strstr(out->buf, "\nkernel\n"))
				r = strbuf_adds(out, "\nkernel\n");
			if (r >= 0)
				r = strbuf_addf(out, "  %.*s\n", (int)n,
						raw + i);
		}
		i += n + 1;
	}
	return r < 0 ? r : 0;
}

int cmd_show(struct ctx *c)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf clean = STRBUF_INIT;
	struct fetched f = {0};
	struct bundle *b = NULL;
	bool tty = isatty(STDOUT_FILENO);
	int rc, r;

	rc = fetch(c, c->o.argv[1], &f);
	if (rc == 0 && (r = bundle_load(AT_FDCWD, f.path, &b)) < 0) {
		fprintf(stderr, "kubectl-oomlens: bundle: %s\n",
			bundle_strerror(r));
		rc = EXIT_BADBUNDLE;
	}
	fetched_release(&f);
	if (rc)
		return rc;
	strbuf_init(&out, 64u << 20);
	r = report_render_text(b, tty, &out);
	if (r >= 0)
		r = kernel_lines(b, &out);
	bundle_free(b);
	strbuf_init(&clean, 4 * out.len + 1);
	if (r < 0 || term_sanitize(out.buf ?: "", out.len,
				   TERM_KEEP_NL | TERM_KEEP_TAB | TERM_KEEP_SGR,
				   &clean) < 0) {
		fprintf(stderr, "kubectl-oomlens: show: %s\n",
			strerror(r < 0 ? -r : ENOMEM));
		return r == -EBADMSG ? EXIT_BADBUNDLE : EXIT_FAIL;
	}
	fwrite(clean.buf, 1, clean.len, stdout);
	return EXIT_OK;
}

/* Where a report is extracted: a fresh directory <name> made in the
 * directory the user named, never the archive's own top directory. */
struct extract {
	int parent;	  /* the user's DIR */
	int dirfd;	  /* DIR/<name>, made by us */
	bool created;	  /* so a failure removes it, and only it */
	const char *skip; /* a member left out (open writes its own), or NULL */
	char name[129];
};

#define EXTRACT_INIT                      \
	{                                 \
		.parent = -1, .dirfd = -1 \
	}

/* REPORT as typed: [A-Za-z0-9._-] kept, anything else '_', a leading '.'
 * made '_' (never ".", ".." or a hidden name like ".ssh"), 128 bytes at
 * most; "report" when nothing is left. */
static void report_dirname(const char *report, char *ret, size_t size)
{
	size_t n = 0;

	for (const char *p = report; *p && n + 1 < size && n < 128; p++) {
		char ch = *p;

		if (!isalnum((unsigned char)ch) && ch != '.' && ch != '_' &&
		    ch != '-')
			ch = '_';
		ret[n] = n == 0 && ch == '.' ? '_' : ch;
		n++;
	}
	ret[n] = '\0';
	if (n == 0)
		snprintf(ret, size, "report");
}

/* DIR (the user's path, made when absent, resolved as given) and in it
 * DIR/<report>, made exclusively and opened without following a link. An
 * existing DIR/<report> (a directory, file or symlink) is refused. Returns
 * 0 or an exit code, having said why. */
static int extract_open(struct extract *x, const char *dir, const char *report)
{
	int r = mkdir_p_at(AT_FDCWD, dir, MODE_PRIVATE_DIR);

	report_dirname(report, x->name, sizeof(x->name));
	if (r < 0)
		return cli_fail(dir, r, NULL);
	x->parent = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (x->parent < 0)
		return cli_fail(dir, -errno, NULL);
	if (mkdirat(x->parent, x->name, MODE_PRIVATE_DIR) < 0) {
		r = errno;
		fprintf(stderr, "kubectl-oomlens: extract to %s/%s: %s%s\n",
			dir, x->name, strerror(r),
			r == EEXIST ? ": refusing to write over it" : "");
		return EXIT_FAIL;
	}
	x->created = true;
	x->dirfd = openat(x->parent, x->name,
			  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (x->dirfd < 0)
		return cli_fail(x->name, -errno, NULL);
	return 0;
}

/* Closes; unless keep, removes the directory extract_open() made. */
static void extract_close(struct extract *x, bool keep)
{
	if (x->dirfd >= 0)
		close(x->dirfd);
	if (x->created && !keep)
		(void)rm_rf_at(x->parent, x->name);
	if (x->parent >= 0)
		close(x->parent);
	x->dirfd = x->parent = -1;
}

/* name, new (O_EXCL|O_NOFOLLOW: nothing is written over or through
 * anything) in dirfd, holding data. Returns 0 or -errno. */
static int create_file_at(int dirfd, const char *name, const void *data,
			  size_t len)
{
	int fd = openat(dirfd, name,
			O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			MODE_PRIVATE_FILE);
	int r;

	if (fd < 0)
		return -errno;
	r = write_all(fd, data, len);
	close(fd);
	return r;
}

/* One file of the archive: its name below the archive's top directory
 * (which is dropped, never used) kept. bundle_read() checked the name
 * (no "", "." or ".." component); its directories are made and opened by
 * one walk that refuses a link or a file on the way (mkdir_p_open_at),
 * and the file is created new in the last of them. */
static int extract_one(const char *name, const char *data, size_t len, void *ud)
{
	struct extract *x = ud;
	const char *rel = strchr(name, '/');
	_cleanup_close_ int dfd = -1;
	char path[512], *base;

	if (!rel ||
	    (size_t)snprintf(path, sizeof(path), "%s", rel + 1) >= sizeof(path))
		return -EXDEV;
	if (x->skip && streq(path, x->skip))
		return 0;
	base = strrchr(path, '/');
	if (base) {
		*base++ = '\0';
		dfd = mkdir_p_open_at(x->dirfd, path, MODE_PRIVATE_DIR);
		if (dfd < 0)
			return dfd;
	} else {
		base = path;
	}
	return create_file_at(dfd >= 0 ? dfd : x->dirfd, base, data, len);
}

/* The archive's files into x's fresh directory. Returns 0 or an exit
 * code, having said why: a name that clashes (twice, a file where a
 * directory goes) or escapes is the bundle's fault. */
static int extract_to(const struct fetched *f, const char *dir,
		      struct extract *x)
{
	int r = bundle_read(AT_FDCWD, f->path, extract_one, x);
	bool hostile = r == -EXDEV || r == -ELOOP || r == -EEXIST ||
		       r == -ENOTDIR || r == -EISDIR;

	if (r >= 0)
		return 0;
	fprintf(stderr, "kubectl-oomlens: extract to %s/%s: %s\n", dir, x->name,
		r == -EEXIST || r == -ENOTDIR || r == -EISDIR
			? "refused: the bundle names a file twice, or a "
			  "file where a directory goes"
		: hostile ? bundle_strerror(r)
			  : strerror(-r));
	return hostile ? EXIT_BADBUNDLE : EXIT_FAIL;
}

static int write_bundle_file(const struct fetched *f, const char *file)
{
	int r;

	if (streq(file, "-"))
		r = write_all(STDOUT_FILENO, f->bundle->data, f->bundle->size);
	else
		r = write_file_atomic_at(AT_FDCWD, file, f->bundle->data,
					 f->bundle->size, MODE_PRIVATE_FILE);
	if (r < 0)
		return cli_fail(file, r, NULL);
	if (!streq(file, "-"))
		fprintf(stderr, "wrote %s (%zu bytes, sha256 %s)\n", file,
			f->bundle->size, f->bundle->sha256);
	return 0;
}

static int write_html(const struct fetched *f, int dirfd);

/* download REPORT [FILE|-] [--extract DIR]: the file unless only
 * --extract is given. An extracted bundle gets our page as report.html,
 * as open does, never the pod's. */
int cmd_download(struct ctx *c)
{
	struct fetched f = {0};
	struct extract x = EXTRACT_INIT;
	char def[300];
	const char *file = c->o.argc > 2 ? c->o.argv[2] : NULL;
	int rc;

	rc = fetch(c, c->o.argv[1], &f);
	if (rc == 0 && c->o.extract) {
		x.skip = "report.html";
		rc = extract_open(&x, c->o.extract, c->o.argv[1]);
		if (rc == 0)
			rc = extract_to(&f, c->o.extract, &x);
		if (rc == 0 && write_html(&f, x.dirfd) < 0)
			rc = cli_fail("report.html", -EBADMSG, NULL);
		extract_close(&x, rc == 0);
		if (rc == 0)
			fprintf(stderr, "extracted %s/%s\n", c->o.extract,
				x.name);
	}
	if (rc == 0 && (file || !c->o.extract)) {
		if (!file) {
			snprintf(def, sizeof(def), "%s.tar.gz", c->o.argv[1]);
			file = def;
		}
		rc = write_bundle_file(&f, file);
	}
	fetched_release(&f);
	return rc;
}

/* report.html rendered by us from the bundle's data (manifest.json,
 * diagnosis.json, ...), escaped, under report.c's CSP (no script): the
 * bundle's own report.html is the pod's HTML and is never shown. Written
 * O_EXCL into the fresh directory. Returns 0 or -errno. */
static int write_html(const struct fetched *f, int dirfd)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct bundle *b;
	int r;

	r = bundle_load(AT_FDCWD, f->path, &b);
	if (r < 0)
		return r;
	strbuf_init(&out, 64u << 20);
	r = report_render_html(b, &out);
	bundle_free(b);
	return r < 0 ? r
		     : create_file_at(dirfd, "report.html", out.buf, out.len);
}

static void show_in_browser(char *html)
{
	const char *disp = getenv("DISPLAY"), *way = getenv("WAYLAND_DISPLAY");
	char *argv[] = {(char *)"xdg-open", html, NULL};
	pid_t pid;
	int st;

	if (!(disp && *disp) && !(way && *way)) {
		fprintf(stderr,
			"no display: open the path above in a browser\n");
		return;
	}
	if (posix_spawnp(&pid, "xdg-open", NULL, NULL, argv, environ) == 0 &&
	    waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0)
		return;
	fprintf(stderr, "kubectl-oomlens: xdg-open failed; open the "
			"path above in a browser\n");
}

int cmd_open(struct ctx *c)
{
	struct fetched f = {0};
	struct extract x = EXTRACT_INIT;
	char dir[256], html[512];
	const char *tmp = getenv("TMPDIR");
	int rc;

	/* the bundle's own report.html is left out: ours takes its name */
	x.skip = "report.html";
	rc = fetch(c, c->o.argv[1], &f);
	snprintf(dir, sizeof(dir), "%s/oomlens-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (rc == 0 && !mkdtemp(dir))
		rc = cli_fail("temp dir", -errno, NULL);
	if (rc == 0 && (rc = extract_open(&x, dir, c->o.argv[1])) == 0)
		rc = extract_to(&f, dir, &x);
	if (rc == 0 && write_html(&f, x.dirfd) < 0)
		rc = cli_fail("report.html", -EBADMSG, NULL);
	extract_close(&x, rc == 0);
	fetched_release(&f);
	if (rc)
		return rc;
	snprintf(html, sizeof(html), "%s/%s/report.html", dir, x.name);
	printf("%s\n", html);
	fflush(stdout);
	show_in_browser(html);
	return EXIT_OK;
}
