/* SPDX-License-Identifier: Apache-2.0 */
/* kubectl oomlens show / get / open: fetch a report's OOMBundle, check it
 * (size against .spec.size, sha256 against .spec.sha256), then print its
 * summary, save it, or extract it. The archive is the pod's data and is
 * treated as hostile: it is read with bundle_read() (one top directory, no
 * "..", no links or devices, size and inflate caps) and checked whole
 * before a single file is written. */
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

#include <openssl/sha.h>

#include "cli.h"
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

static int check_sha256(const struct kube_oombundle *b)
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	char hex[2 * SHA256_DIGEST_LENGTH + 1];

	SHA256(b->data, b->size, md);
	for (size_t i = 0; i < sizeof(md); i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
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

	r = kube_oomreport_get(c->client, c->ns, name, &f->report, &err);
	if (r == 0 && f->report->bundle && *f->report->bundle)
		bname = f->report->bundle;
	else if (r < 0 && r != -ENOENT)
		return cli_fail("get oomreport", r, &err);
	r = kube_oombundle_get(c->client, c->ns, bname, &f->bundle, &err);
	if (r == -EBADMSG) {
		fprintf(stderr,
			"kubectl-oomlens: bundle %s: data is not base64 or "
			"its size disagrees with .spec.size: refused\n",
			bname);
		return EXIT_BADBUNDLE;
	}
	if (r < 0)
		return cli_fail("get oombundle", r, &err);
	r = check_sha256(f->bundle);
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

	if (c->o.argc != 2) {
		fprintf(stderr, "usage: kubectl oomlens show REPORT [-n NS]\n");
		return EXIT_USAGE;
	}
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

struct extract {
	int dirfd;
	char id[128];
};

/* One file of the archive under the target directory: its directories
 * made without following symlinks, the file created without following one
 * (a planted link in DIR is refused, never written through). */
static int extract_one(const char *name, const char *data, size_t len, void *ud)
{
	struct extract *x = ud;
	const char *slash = strrchr(name, '/');
	char dir[4096];
	int fd, r;

	if (!x->id[0] && strchr(name, '/'))
		snprintf(x->id, sizeof(x->id), "%.*s",
			 (int)(strchr(name, '/') - name), name);
	if (name[0] == '/' || strstr(name, "..") ||
	    (size_t)snprintf(dir, sizeof(dir), "%s", name) >= sizeof(dir))
		return -EXDEV;
	if (slash) {
		dir[slash - name] = '\0';
		r = mkdir_p_at(x->dirfd, dir, 0755);
		if (r < 0)
			return r;
	}
	fd = openat(x->dirfd, name,
		    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		    0644);
	if (fd < 0)
		return -errno;
	r = write_all(fd, data, len);
	close(fd);
	return r;
}

static int extract_to(const struct fetched *f, const char *dir,
		      struct extract *x)
{
	int r = mkdir_p_at(AT_FDCWD, dir, 0755);

	if (r < 0)
		return cli_fail(dir, r, NULL);
	x->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (x->dirfd < 0)
		return cli_fail(dir, -errno, NULL);
	r = bundle_read(AT_FDCWD, f->path, extract_one, x);
	close(x->dirfd);
	if (r < 0) {
		fprintf(stderr, "kubectl-oomlens: extract to %s: %s\n", dir,
			r == -EXDEV || r == -ELOOP ? bundle_strerror(r)
						   : strerror(-r));
		return r == -EXDEV || r == -ELOOP ? EXIT_BADBUNDLE : EXIT_FAIL;
	}
	return 0;
}

int cmd_get(struct ctx *c)
{
	struct fetched f = {0};
	struct extract x = {0};
	char def[300];
	const char *file = c->o.output;
	int rc, r;

	if (c->o.argc != 2) {
		fprintf(stderr, "usage: kubectl oomlens get REPORT [-n NS] "
				"[-o FILE] [--extract DIR]\n");
		return EXIT_USAGE;
	}
	rc = fetch(c, c->o.argv[1], &f);
	if (rc == 0 && c->o.extract) {
		rc = extract_to(&f, c->o.extract, &x);
		if (rc == 0)
			fprintf(stderr, "extracted %s/%s\n", c->o.extract,
				x.id);
	}
	if (rc == 0 && (file || !c->o.extract)) {
		if (!file) {
			snprintf(def, sizeof(def), "%s.tar.gz", c->o.argv[1]);
			file = def;
		}
		if (streq(file, "-"))
			r = write_all(STDOUT_FILENO, f.bundle->data,
				      f.bundle->size);
		else
			r = write_file_atomic_at(AT_FDCWD, file, f.bundle->data,
						 f.bundle->size, 0644);
		if (r < 0)
			rc = cli_fail(file, r, NULL);
		else if (!streq(file, "-"))
			fprintf(stderr, "wrote %s (%zu bytes, sha256 %s)\n",
				file, f.bundle->size, f.bundle->sha256);
	}
	fetched_release(&f);
	return rc;
}

/* report.html from the bundle, or rendered from its files when it has
 * none (a sidecar's snapshot bundle). */
static int ensure_html(const struct fetched *f, const char *html)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct bundle *b;
	int r;

	if (access(html, F_OK) == 0)
		return 0;
	r = bundle_load(AT_FDCWD, f->path, &b);
	if (r < 0)
		return r;
	strbuf_init(&out, 64u << 20);
	r = report_render_html(b, &out);
	bundle_free(b);
	if (r < 0)
		return r;
	return write_file_atomic_at(AT_FDCWD, html, out.buf, out.len, 0644);
}

int cmd_open(struct ctx *c)
{
	struct fetched f = {0};
	struct extract x = {0};
	char dir[256], html[512];
	const char *tmp = getenv("TMPDIR");
	const char *disp = getenv("DISPLAY"), *way = getenv("WAYLAND_DISPLAY");
	int rc;

	if (c->o.argc != 2) {
		fprintf(stderr, "usage: kubectl oomlens open REPORT [-n NS]\n");
		return EXIT_USAGE;
	}
	rc = fetch(c, c->o.argv[1], &f);
	snprintf(dir, sizeof(dir), "%s/oomlens-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (rc == 0 && !mkdtemp(dir))
		rc = cli_fail("temp dir", -errno, NULL);
	if (rc == 0)
		rc = extract_to(&f, dir, &x);
	snprintf(html, sizeof(html), "%s/%s/report.html", dir, x.id);
	if (rc == 0 && ensure_html(&f, html) < 0)
		rc = cli_fail("report.html", -EBADMSG, NULL);
	fetched_release(&f);
	if (rc)
		return rc;
	printf("%s\n", html);
	if ((disp && *disp) || (way && *way)) {
		char *argv[] = {(char *)"xdg-open", html, NULL};
		pid_t pid;
		int st;

		if (posix_spawnp(&pid, "xdg-open", NULL, NULL, argv, environ) ==
			    0 &&
		    waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		    WEXITSTATUS(st) == 0)
			return EXIT_OK;
		fprintf(stderr, "kubectl-oomlens: xdg-open failed; open the "
				"path above in a browser\n");
	} else {
		fprintf(stderr,
			"no display: open the path above in a browser\n");
	}
	return EXIT_OK;
}
