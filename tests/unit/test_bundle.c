/* SPDX-License-Identifier: Apache-2.0 */
#include <archive.h>
#include <archive_entry.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <zlib.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forensics/bundle.h"
#include "base/fileio.h"
#include "base/jget.h"
#include "base/strbuf.h"

static char tmpdir[] = "/tmp/oomlens-test-bundle-XXXXXX";
static int dfd = -1;

static void setup(void)
{
	cr_assert_not_null(mkdtemp(tmpdir));
	dfd = open(tmpdir, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(dfd, 0);
}

static void teardown(void)
{
	rm_rf_at(AT_FDCWD, tmpdir);
	close(dfd);
}

struct seen {
	int n;
	char names[64][128];
	char manifest[8192];
	char oom[64];
};

static int collect(const char *name, const char *data, size_t len, void *ud)
{
	struct seen *s = ud;

	if (s->n < 64)
		snprintf(s->names[s->n++], 128, "%s", name);
	if (strstr(name, "/manifest.json"))
		snprintf(s->manifest, sizeof(s->manifest), "%.*s", (int)len,
			 data);
	if (strstr(name, "/kernel/oom.txt"))
		snprintf(s->oom, sizeof(s->oom), "%.*s", (int)len, data);
	return 0;
}

TestSuite(bundle, .init = setup, .fini = teardown);

Test(bundle, round_trip_with_manifest_first)
{
	struct bundle *b;
	struct seen s = {0};
	struct json_object *m, *files, *v;

	cr_assert_eq(bundle_new("k-1", &b), 0);
	json_object_object_add(bundle_manifest(b), "pod",
			       json_object_new_string("web-1"));
	cr_assert_eq(bundle_add(b, "kernel/oom.txt", "Killed process 7", 16,
				BUNDLE_ESSENTIAL),
		     0);
	cr_assert_eq(bundle_add(b, "cgroup/memory.stat", "cache 0\n", 8,
				BUNDLE_HIGH),
		     0);
	cr_assert_gt(bundle_write(b, dfd, "k-1.tar.gz", 0), 0);
	bundle_free(b);

	cr_assert_eq(bundle_read(dfd, "k-1.tar.gz", collect, &s), 0);
	cr_assert_eq(s.n, 3);
	cr_assert_str_eq(s.names[0], "k-1/manifest.json");
	cr_assert_str_eq(s.oom, "Killed process 7");
	m = json_tokener_parse(s.manifest);
	cr_assert_not_null(m);
	cr_assert(json_object_object_get_ex(m, "schema", &v));
	cr_assert_str_eq(json_object_get_string(v), BUNDLE_SCHEMA);
	cr_assert(json_object_object_get_ex(m, "pod", &v));
	cr_assert_str_eq(json_object_get_string(v), "web-1");
	cr_assert(json_object_object_get_ex(m, "files", &files));
	cr_assert_eq(json_object_array_length(files), 2);
	json_object_put(m);
}

/* Security review (issue 26): members were 0644, so `tar x` of a bundle
 * made world-readable command lines; the archive and its members are
 * 0640 like every file oomlens writes. */
Test(bundle, archive_and_members_are_0640)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	struct bundle *b;
	struct stat st;
	int n = 0;

	cr_assert_eq(bundle_new("m-1", &b), 0);
	cr_assert_eq(bundle_add(b, "cmdline.txt", "app --x", 7, BUNDLE_HIGH),
		     0);
	cr_assert_gt(bundle_write(b, dfd, "m-1.tar.gz", 0), 0);
	bundle_free(b);
	cr_assert_eq(fstatat(dfd, "m-1.tar.gz", &st, 0), 0);
	cr_assert_eq(st.st_mode & 07777, 0640);
	archive_read_support_filter_gzip(a);
	archive_read_support_format_tar(a);
	cr_assert_eq(archive_read_open_fd(
			     a, openat(dfd, "m-1.tar.gz", O_RDONLY | O_CLOEXEC),
			     4096),
		     ARCHIVE_OK);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		cr_assert_eq(archive_entry_perm(e), 0640, "%s mode %o",
			     archive_entry_pathname(e), archive_entry_perm(e));
		n++;
	}
	cr_assert_eq(n, 2);
	archive_read_free(a);
}

Test(bundle, refuses_hostile_ids_and_paths)
{
	struct bundle *b;

	cr_assert_eq(bundle_new("../x", &b), -EINVAL);
	cr_assert_eq(bundle_new("", &b), -EINVAL);
	cr_assert_eq(bundle_new("ok", &b), 0);
	cr_assert_eq(bundle_add(b, "../etc/passwd", "x", 1, BUNDLE_LOW),
		     -EINVAL);
	cr_assert_eq(bundle_add(b, "/abs", "x", 1, BUNDLE_LOW), -EINVAL);
	cr_assert_eq(bundle_add(b, "a//b", "x", 1, BUNDLE_LOW), -EINVAL);
	cr_assert_eq(bundle_add(b, "a/./b", "x", 1, BUNDLE_LOW), -EINVAL);
	cr_assert_eq(bundle_add(b, "a/b", "x", 1, BUNDLE_LOW), 0);
	bundle_free(b);
}

static void fill_random(char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (char)(seed >> 16);
	}
}

Test(bundle, fits_the_cap_by_dropping_least_important)
{
	struct bundle *b;
	struct seen s = {0};
	size_t big = 400u * 1024u;
	char *noise = malloc(big);
	long size;

	fill_random(noise, big, 1);
	cr_assert_eq(bundle_new("cap", &b), 0);
	cr_assert_eq(
		bundle_add(b, "kernel/oom.txt", "report", 6, BUNDLE_ESSENTIAL),
		0);
	cr_assert_eq(bundle_add(b, "timeline.json", noise, big, BUNDLE_HIGH),
		     0);
	fill_random(noise, big, 2);
	cr_assert_eq(
		bundle_add(b, "processes/1/pmap.txt", noise, big, BUNDLE_LOW),
		0);
	fill_random(noise, big, 3);
	cr_assert_eq(
		bundle_add(b, "processes/1/status", noise, big, BUNDLE_NORMAL),
		0);
	size = bundle_write(b, dfd, "cap.tar.gz", 600u * 1024u);
	cr_assert_gt(size, 0);
	cr_assert_leq(size, 600 * 1024);
	bundle_free(b);
	cr_assert_eq(bundle_read(dfd, "cap.tar.gz", collect, &s), 0);
	/* random data does not compress: only one 400 KiB file fits, the
	 * HIGH one; LOW and NORMAL are dropped and listed. */
	cr_assert_eq(s.n, 3);
	cr_assert(strstr(s.manifest, "\"processes/1/pmap.txt\""));
	cr_assert(strstr(s.manifest, "dropped to fit"));
	cr_assert_str_eq(s.names[2], "cap/timeline.json");
	free(noise);
}

Test(bundle, essential_too_big_is_an_error)
{
	struct bundle *b;
	size_t big = 200u * 1024u;
	char *noise = malloc(big);

	fill_random(noise, big, 9);
	cr_assert_eq(bundle_new("e", &b), 0);
	cr_assert_eq(
		bundle_add(b, "kernel/oom.txt", noise, big, BUNDLE_ESSENTIAL),
		0);
	cr_assert_eq(bundle_write(b, dfd, "e.tar.gz", 64u * 1024u), -E2BIG);
	bundle_free(b);
	free(noise);
}

Test(bundle, truncated_archive_is_reported)
{
	struct bundle *b;
	struct seen s = {0};
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	cr_assert_eq(bundle_new("t", &b), 0);
	cr_assert_eq(bundle_add(b, "a.txt", "hello", 5, BUNDLE_HIGH), 0);
	cr_assert_gt(bundle_write(b, dfd, "t.tar.gz", 0), 0);
	bundle_free(b);
	strbuf_init(&sb, 0);
	cr_assert_eq(read_file_at(dfd, "t.tar.gz", 1 << 20, &sb), 0);
	cr_assert_eq(write_file_atomic_at(dfd, "cut.tar.gz", sb.buf, sb.len / 2,
					  0600),
		     0);
	cr_assert_lt(bundle_read(dfd, "cut.tar.gz", collect, &s), 0);
}

/* ---- hostile archives, built at test time with libarchive ---- */

struct hostile {
	const char *name;
	unsigned type;	  /* AE_IF* */
	size_t size;	  /* bytes of zeros written (header size for regular) */
	const char *link; /* symlink target or hardlink source */
	char fill;	  /* the byte the data is made of (0: zeros) */
};

/* Writes dfd/file as a gzip'd pax tar of the given entries; text (NULL:
 * none) gives a regular entry its data, h's size long. */
static void write_entries(const char *file, const struct hostile *h,
			  const char *const *text, size_t n)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	static char bytes[65536];
	int fd = openat(dfd, file, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	cr_assert_geq(fd, 0);
	cr_assert_eq(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
	cr_assert_eq(archive_write_add_filter_gzip(a), ARCHIVE_OK);
	cr_assert_eq(archive_write_open_fd(a, fd), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++) {
		archive_entry_clear(e);
		archive_entry_set_pathname(e, h[i].name);
		archive_entry_set_filetype(e, h[i].type);
		archive_entry_set_perm(e, 0644);
		if (h[i].type == AE_IFLNK)
			archive_entry_set_symlink(e, h[i].link);
		else if (h[i].link)
			archive_entry_set_hardlink(e, h[i].link);
		if (h[i].type == AE_IFREG && !h[i].link)
			archive_entry_set_size(e, (la_int64_t)h[i].size);
		if (h[i].type == AE_IFCHR)
			archive_entry_set_rdev(e, makedev(1, 3));
		cr_assert_eq(archive_write_header(a, e), ARCHIVE_OK, "%s",
			     archive_error_string(a));
		memset(bytes, h[i].fill, sizeof(bytes));
		if (text)
			cr_assert_eq(archive_write_data(a, text[i], h[i].size),
				     (la_ssize_t)h[i].size);
		for (size_t off = 0; !text && h[i].type == AE_IFREG &&
				     !h[i].link && off < h[i].size;
		     off += sizeof(bytes)) {
			size_t k = h[i].size - off < sizeof(bytes)
					   ? h[i].size - off
					   : sizeof(bytes);
			cr_assert_eq(archive_write_data(a, bytes, k),
				     (la_ssize_t)k);
		}
	}
	cr_assert_eq(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	archive_entry_free(e);
	close(fd);
}

static void write_hostile(const char *file, const struct hostile *h, size_t n)
{
	write_entries(file, h, NULL, n);
}

static int count_cb(const char *name, const char *data, size_t len, void *ud)
{
	(void)name, (void)data, (void)len;
	(*(int *)ud)++;
	return 0;
}

static int load_err(const char *file)
{
	struct bundle *b = NULL;
	int r = bundle_load(dfd, file, &b);

	bundle_free(b);
	return r;
}

Test(bundle, refuses_dotdot_absolute_and_second_top_dir)
{
	struct hostile dotdot[] = {
		{"x/manifest.json", AE_IFREG, 2, NULL, 0},
		{"x/../../etc/cron.d/evil", AE_IFREG, 4, NULL, 0}};
	struct hostile abs[] = {{"/etc/passwd", AE_IFREG, 4, NULL, 0}};
	struct hostile two[] = {{"x/a", AE_IFREG, 1, NULL, 0},
				{"y/b", AE_IFREG, 1, NULL, 0}};
	struct hostile dot[] = {{"x/./a", AE_IFREG, 1, NULL, 0}};
	struct hostile bare[] = {{"..", AE_IFREG, 1, NULL, 0}};
	int n = 0;

	write_hostile("dotdot.tgz", dotdot, 2);
	write_hostile("abs.tgz", abs, 1);
	write_hostile("two.tgz", two, 2);
	write_hostile("dot.tgz", dot, 1);
	write_hostile("bare.tgz", bare, 1);
	cr_assert_eq(load_err("dotdot.tgz"), -EXDEV);
	cr_assert_eq(load_err("abs.tgz"), -EXDEV);
	cr_assert_eq(load_err("two.tgz"), -EXDEV);
	cr_assert_eq(load_err("dot.tgz"), -EXDEV);
	cr_assert_eq(load_err("bare.tgz"), -EXDEV);
	/* the callback saw the first, good entry only */
	cr_assert_eq(bundle_read(dfd, "dotdot.tgz", count_cb, &n), -EXDEV);
	cr_assert_eq(n, 1);
}

Test(bundle, refuses_links_devices_and_fifos)
{
	struct hostile sym[] = {{"x/a", AE_IFLNK, 0, "/etc/shadow", 0}};
	struct hostile hard[] = {{"x/a", AE_IFREG, 1, NULL, 0},
				 {"x/b", AE_IFREG, 0, "x/a", 0}};
	struct hostile chr[] = {{"x/null", AE_IFCHR, 0, NULL, 0}};
	struct hostile fifo[] = {{"x/fifo", AE_IFIFO, 0, NULL, 0}};
	struct hostile dir[] = {{"x/", AE_IFDIR, 0, NULL, 0},
				{"x/sub/", AE_IFDIR, 0, NULL, 0},
				{"x/sub/a", AE_IFREG, 3, NULL, 0}};
	struct bundle *b;

	write_hostile("sym.tgz", sym, 1);
	write_hostile("hard.tgz", hard, 2);
	write_hostile("chr.tgz", chr, 1);
	write_hostile("fifo.tgz", fifo, 1);
	write_hostile("dir.tgz", dir, 3);
	cr_assert_eq(load_err("sym.tgz"), -ELOOP);
	cr_assert_eq(load_err("hard.tgz"), -ELOOP);
	cr_assert_eq(load_err("chr.tgz"), -EPERM);
	cr_assert_eq(load_err("fifo.tgz"), -EPERM);
	/* directories are harmless: skipped, their files kept */
	cr_assert_eq(bundle_load(dfd, "dir.tgz", &b), 0);
	cr_assert_str_eq(bundle_id(b), "x");
	cr_assert(bundle_has(b, "sub/a"));
	bundle_free(b);
	cr_assert(strstr(bundle_strerror(-ELOOP), "symlink"));
	cr_assert(strstr(bundle_strerror(-EXDEV), "outside"));
}

Test(bundle, refuses_an_entry_over_the_cap_from_its_header)
{
	/* 40 MiB of zeros: ~40 KiB gzip'd. The header's size is over the
	 * entry cap, so nothing of it is inflated into memory. */
	struct hostile big[] = {
		{"x/a", AE_IFREG, BUNDLE_READ_MAX_ENTRY + (8u << 20), NULL, 0}};
	int n = 0;

	write_hostile("big.tgz", big, 1);
	cr_assert_eq(bundle_read(dfd, "big.tgz", count_cb, &n), -EFBIG);
	cr_assert_eq(n, 0);
}

Test(bundle, refuses_a_bomb_by_its_inflate_ratio)
{
	/* 24 entries of 4 MiB zeros: each under the entry cap, together
	 * 96 MiB from ~100 KiB, far over ratio × size (and the total cap). */
	struct hostile bomb[24];
	char names[24][16];
	struct stat st;
	uint64_t allowed;
	int n = 0;

	for (int i = 0; i < 24; i++) {
		snprintf(names[i], sizeof(names[i]), "x/f%d", i);
		bomb[i] =
			(struct hostile){names[i], AE_IFREG, 4u << 20, NULL, 0};
	}
	write_hostile("bomb.tgz", bomb, 24);
	cr_assert_eq(bundle_read(dfd, "bomb.tgz", count_cb, &n), -EFBIG);
	/* only what ratio × size (or the floor) allows was inflated */
	cr_assert_eq(fstatat(dfd, "bomb.tgz", &st, 0), 0);
	allowed = (uint64_t)st.st_size * BUNDLE_READ_MAX_RATIO;
	if (allowed < BUNDLE_READ_RATIO_FLOOR)
		allowed = BUNDLE_READ_RATIO_FLOOR;
	cr_assert_lt(n, 24);
	cr_assert_leq((uint64_t)n * (4u << 20), allowed);
	cr_assert_gt((uint64_t)(n + 1) * (4u << 20), allowed);
}

Test(bundle, refuses_too_many_entries)
{
	struct hostile *many =
		calloc(BUNDLE_READ_MAX_ENTRIES + 1, sizeof(*many));
	char(*names)[16] = calloc(BUNDLE_READ_MAX_ENTRIES + 1, 16);
	int n = 0;

	for (size_t i = 0; i <= BUNDLE_READ_MAX_ENTRIES; i++) {
		snprintf(names[i], 16, "x/%zu", i);
		many[i] = (struct hostile){names[i], AE_IFREG, 0, NULL, 0};
	}
	write_hostile("many.tgz", many, BUNDLE_READ_MAX_ENTRIES + 1);
	cr_assert_eq(bundle_read(dfd, "many.tgz", count_cb, &n), -EMLINK);
	cr_assert_eq(n, (int)BUNDLE_READ_MAX_ENTRIES);
	free(many);
	free(names);
}

/* Rewrites the size field of the first tar header of a gzip'd archive
 * (and its checksum), so that the header lies about its data. */
static void lie_about_size(const char *in, const char *out, uint64_t size)
{
	_cleanup_strbuf_ struct strbuf gz = STRBUF_INIT;
	unsigned char tar[8192], outbuf[8192];
	z_stream z = {0};
	unsigned sum = 0;
	size_t tar_len;

	strbuf_init(&gz, 1 << 20);
	cr_assert_eq(read_file_at(dfd, in, 1 << 20, &gz), 0);
	cr_assert_eq(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)gz.buf;
	z.avail_in = (uInt)gz.len;
	z.next_out = tar;
	z.avail_out = sizeof(tar);
	cr_assert_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
	tar_len = z.total_out;
	inflateEnd(&z);
	snprintf((char *)tar + 124, 12, "%011llo", (unsigned long long)size);
	memset(tar + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += tar[i];
	snprintf((char *)tar + 148, 8, "%06o", sum);
	memset(&z, 0, sizeof(z));
	cr_assert_eq(
		deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY),
		Z_OK);
	z.next_in = tar;
	z.avail_in = (uInt)tar_len;
	z.next_out = outbuf;
	z.avail_out = sizeof(outbuf);
	cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	cr_assert_eq(write_file_atomic_at(dfd, out, outbuf, z.total_out, 0600),
		     0);
	deflateEnd(&z);
}

Test(bundle, refuses_a_header_that_lies_about_its_size)
{
	struct hostile two[] = {{"x/a", AE_IFREG, 1000, NULL, 'A'},
				{"x/b", AE_IFREG, 10, NULL, 'B'}};
	struct bundle *b;

	/* ustar only here: pax_restricted writes plain ustar headers for
	 * these names, so the first header is the file's own. */
	write_hostile("two.tgz", two, 2);
	cr_assert_eq(bundle_load(dfd, "two.tgz", &b), 0);
	bundle_free(b);
	/* bigger than the stream: cut short */
	lie_about_size("two.tgz", "long.tgz", 3u << 20);
	cr_assert_eq(load_err("long.tgz"), -EBADMSG);
	/* smaller: the rest of the data is read as headers, which fail */
	lie_about_size("two.tgz", "short.tgz", 10);
	cr_assert_eq(load_err("short.tgz"), -EBADMSG);
}

Test(bundle, refuses_what_is_not_a_regular_gzip_file)
{
	cr_assert_eq(mkfifoat(dfd, "fifo.tgz", 0600), 0);
	cr_assert_eq(load_err("fifo.tgz"), -EBADMSG);
	cr_assert_eq(write_file_atomic_at(dfd, "plain.txt", "hello", 5, 0600),
		     0);
	cr_assert_eq(load_err("plain.txt"), -EBADMSG);
}

/* ---- the index and one-pass fitting ---- */

Test(bundle, index_finds_every_file_among_many)
{
	struct bundle *b;
	char path[32];
	size_t len;

	cr_assert_eq(bundle_new("idx", &b), 0);
	for (int i = 0; i < 50000; i++) {
		snprintf(path, sizeof(path), "processes/%d/status", i);
		cr_assert_eq(
			bundle_add(b, path, path, strlen(path), BUNDLE_LOW), 0);
	}
	/* replacing keeps one entry */
	cr_assert_eq(bundle_add(b, "processes/7/status", "new", 3, BUNDLE_LOW),
		     0);
	for (int i = 0; i < 50000; i++) {
		const char *d;

		snprintf(path, sizeof(path), "processes/%d/status", i);
		d = bundle_get(b, path, &len);
		cr_assert_not_null(d, "%s", path);
		if (i != 7)
			cr_assert_str_eq(d, path);
	}
	cr_assert_str_eq(bundle_get(b, "processes/7/status", NULL), "new");
	cr_assert_null(bundle_get(b, "processes/50000/status", NULL));
	bundle_free(b);
}

struct fit_seen {
	int n;
	struct json_object *manifest;
};

static int fit_collect(const char *name, const char *data, size_t len, void *ud)
{
	struct fit_seen *s = ud;

	s->n++;
	if (strstr(name, "/manifest.json"))
		s->manifest = json_tokener_parse(data);
	(void)len;
	return 0;
}

/* A spool-like bundle of 200 files of incompressible bytes (4 KiB, 8 KiB
 * by priority): 1.2 MiB that must fit 900 KiB. */
Test(bundle, two_hundred_files_fit_in_at_most_two_passes)
{
	struct bundle *b;
	struct fit_seen s = {0};
	struct json_object *trunc, *files;
	char path[64], buf[8192];
	long size;

	cr_assert_eq(bundle_new("fit", &b), 0);
	cr_assert_eq(
		bundle_add(b, "kernel/oom.txt", "report", 6, BUNDLE_ESSENTIAL),
		0);
	for (int i = 0; i < 200; i++) {
		enum bundle_prio p = i % 2 ? BUNDLE_LOW : BUNDLE_NORMAL;
		size_t len = p == BUNDLE_LOW ? 8192 : 4096;

		fill_random(buf, len, (unsigned)i + 100);
		snprintf(path, sizeof(path), "processes/%d/%s", i,
			 p == BUNDLE_LOW ? "pmap.txt" : "status");
		cr_assert_eq(bundle_add(b, path, buf, len, p), 0);
	}
	size = bundle_write(b, dfd, "fit.tar.gz", 0);
	cr_assert_gt(size, 0);
	cr_assert_leq(size, (long)BUNDLE_MAX_BYTES);
	cr_assert_leq(bundle_write_passes(b), 2);
	/* the estimate is close: not more than ~10% of the cap wasted */
	cr_assert_geq(size, (long)BUNDLE_MAX_BYTES * 9 / 10);
	bundle_free(b);

	cr_assert_eq(bundle_read(dfd, "fit.tar.gz", fit_collect, &s), 0);
	cr_assert_not_null(s.manifest);
	cr_assert(json_object_object_get_ex(s.manifest, "truncated", &trunc));
	cr_assert(json_object_object_get_ex(s.manifest, "files", &files));
	cr_assert_gt(json_object_array_length(trunc), 0);
	/* every kept file is listed and every dropped one is LOW (pmap):
	 * 100 NORMAL files (400 KiB) all fit beside ~60 pmaps */
	cr_assert_eq((int)json_object_array_length(files), s.n - 1);
	cr_assert_eq(json_object_array_length(files) +
			     json_object_array_length(trunc),
		     201);
	for (size_t i = 0; i < json_object_array_length(trunc); i++) {
		struct json_object *p;

		json_object_object_get_ex(json_object_array_get_idx(trunc, i),
					  "path", &p);
		cr_assert(strstr(json_object_get_string(p), "pmap.txt"), "%s",
			  json_object_get_string(p));
	}
	json_object_put(s.manifest);
}

Test(bundle, one_pass_when_it_fits)
{
	struct bundle *b;

	cr_assert_eq(bundle_new("one", &b), 0);
	cr_assert_eq(bundle_add(b, "a.txt", "hello", 5, BUNDLE_HIGH), 0);
	cr_assert_gt(bundle_write(b, dfd, "one.tar.gz", 0), 0);
	cr_assert_eq(bundle_write_passes(b), 1);
	bundle_free(b);
}

/* A pod's upload is read within its own cap: 1.5 MiB of data (random: it
 * does not compress, no ratio cap) passes 2 MiB and is refused at 1 MiB,
 * and bundle_read_max never allows more than bundle_read() does. */
Test(bundle, read_max_caps_what_an_archive_inflates_to)
{
	size_t big = 1536u * 1024u;
	char *noise = malloc(big);
	struct bundle *b;
	struct seen s = {0};

	cr_assert_not_null(noise);
	fill_random(noise, big, 7);
	cr_assert_eq(bundle_new("capped", &b), 0);
	cr_assert_eq(bundle_add(b, "timeline.json", noise, big, BUNDLE_HIGH),
		     0);
	cr_assert_gt(bundle_write(b, dfd, "capped.tar.gz", 4u << 20), 0);
	bundle_free(b);
	free(noise);
	cr_assert_eq(
		bundle_read_max(dfd, "capped.tar.gz", 2u << 20, collect, &s),
		0);
	cr_assert_eq(s.n, 2); /* timeline.json and manifest.json */
	memset(&s, 0, sizeof(s));
	cr_assert_eq(
		bundle_read_max(dfd, "capped.tar.gz", 1u << 20, collect, &s),
		-EFBIG);
	cr_assert_eq(
		bundle_read_max(dfd, "capped.tar.gz", UINT64_MAX, collect, &s),
		0);
}

/* A JSON text whose tree would pass BUNDLE_JSON_MAX_TREE is not parsed
 * (NULL, as for a text that is not JSON); one just under it is. */
Test(bundle, get_json_refuses_a_tree_over_its_budget)
{
	size_t n = 300u * 1024u, len;
	char *text = malloc(3 * n + 2);
	struct json_object *o;
	struct bundle *b;

	cr_assert_not_null(text);
	/* n empty arrays: ~160 bytes of tree each (jget.h) */
	len = 0;
	text[len++] = '[';
	for (size_t i = 0; i < n; i++) {
		memcpy(text + len, i ? ",[]" : "[]", i ? 3 : 2);
		len += i ? 3 : 2;
	}
	text[len++] = ']';
	cr_assert_eq(bundle_new("trees", &b), 0);
	cr_assert_eq(bundle_add(b, "big.json", text, len, BUNDLE_HIGH), 0);
	/* under: a third of the arrays */
	len = 1 + 2 + 3 * (n / 3 - 1);
	text[len++] = ']';
	cr_assert_eq(bundle_add(b, "small.json", text, len, BUNDLE_HIGH), 0);
	cr_assert_gt(jget_tree_cost(bundle_get(b, "big.json", NULL), 3 * n + 1),
		     BUNDLE_JSON_MAX_TREE);
	cr_assert_null(bundle_get_json(b, "big.json"));
	cr_assert_null(bundle_get_json(b, "big.json")); /* said once */
	cr_assert_eq(json_object_array_length(bundle_truncated(b)), 1);
	cr_assert(strstr(json_object_to_json_string(bundle_truncated(b)),
			 "kept, not parsed"));
	o = bundle_get_json(b, "small.json");
	cr_assert_not_null(o);
	cr_assert_eq(json_object_array_length(o), n / 3);
	json_object_put(o);
	bundle_free(b);
	free(text);
}

struct noise_file {
	const char *path;
	enum bundle_prio prio;
};

#define NOISE_CHUNK (60u * 1024u)

/* A bundle id of a one-byte kernel/oom.txt and n files of NOISE_CHUNK
 * random bytes each (seeded seed + i), at their priorities. */
static struct bundle *noise_bundle(const char *id, const struct noise_file *f,
				   size_t n, unsigned seed)
{
	struct bundle *b;
	char *noise = malloc(NOISE_CHUNK);

	cr_assert_not_null(noise);
	cr_assert_eq(bundle_new(id, &b), 0);
	cr_assert_eq(bundle_add(b, "kernel/oom.txt", "r", 1, BUNDLE_ESSENTIAL),
		     0);
	for (size_t i = 0; i < n; i++) {
		fill_random(noise, NOISE_CHUNK, seed + (unsigned)i);
		cr_assert_eq(
			bundle_add(b, f[i].path, noise, NOISE_CHUNK, f[i].prio),
			0);
	}
	free(noise);
	return b;
}

/* The default budget's order (docs/manifest.md): the timeline outlives
 * the victim's files, the victim's outlive every other process's, whose
 * maps go first; bundle_fit() decides it before the write and lists it. */
static const struct noise_file victim_first[] = {
	{"timeline.json", BUNDLE_HIGH},
	{"processes/7/pmap.txt", BUNDLE_LOW},
	{"processes/7/status", BUNDLE_NORMAL},
	{"processes/9/pmap.txt", BUNDLE_LOW},
	{"processes/9/status", BUNDLE_NORMAL},
};
#define N_VICTIM_FIRST (sizeof(victim_first) / sizeof(victim_first[0]))

Test(bundle, fits_the_budget_in_priority_order_victim_first)
{
	struct bundle *b =
		noise_bundle("prio", victim_first, N_VICTIM_FIRST, 20);
	struct seen s = {0};
	struct json_object *t;

	/* pid 7 is the victim: both its files raised, pid 9's untouched,
	 * a prefix that is another pid's not matched */
	cr_assert_eq(bundle_raise_prio(b, "processes/7/", BUNDLE_VICTIM), 2);
	cr_assert_eq(bundle_raise_prio(b, "processes/7/", BUNDLE_LOW), 0);
	/* three 60 KiB random files fit in 200 KiB, not four */
	cr_assert_eq(bundle_fit(b, 200u * 1024u), 2);
	t = bundle_truncated(b);
	cr_assert_eq(json_object_array_length(t), 2);
	cr_assert_str_eq(jget_str(NULL, jget_idx(t, 0), "path"),
			 "processes/9/pmap.txt");
	cr_assert_str_eq(jget_str(NULL, jget_idx(t, 1), "path"),
			 "processes/9/status");
	/* the write keeps to the plan: nothing more dropped */
	cr_assert_gt(bundle_write(b, dfd, "prio.tar.gz", 200u * 1024u), 0);
	cr_assert_eq(json_object_array_length(bundle_truncated(b)), 2);
	bundle_free(b);
	cr_assert_eq(bundle_read(dfd, "prio.tar.gz", collect, &s), 0);
	cr_assert_eq(s.n, 5); /* manifest, kernel, timeline, pid 7's two */
	cr_assert(strstr(s.manifest, "\"processes/9/status\""));
	cr_assert_str_eq(s.names[3], "prio/processes/7/pmap.txt");
	cr_assert_str_eq(s.names[4], "prio/processes/7/status");
}

Test(bundle, fit_within_the_budget_drops_nothing)
{
	struct bundle *b;

	cr_assert_eq(bundle_new("small", &b), 0);
	cr_assert_eq(bundle_add(b, "processes/1/pmap.txt", "x", 1, BUNDLE_LOW),
		     0);
	cr_assert_eq(bundle_fit(b, BUNDLE_MIN_BYTES), 0);
	cr_assert_eq(json_object_array_length(bundle_truncated(b)), 0);
	bundle_free(b);
}

/* A bundle saved unfinished and loaded back is the same bundle: its
 * files, priorities, the manifest as filled so far, a dropped file and the
 * truncated notes; fitted after the load it drops what it would have
 * dropped without the save. */
Test(bundle, unfinished_round_trip_keeps_priorities_manifest_and_notes)
{
	struct bundle *b =
		noise_bundle("case", victim_first, N_VICTIM_FIRST, 40);
	struct bundle *back;
	struct seen s = {0};
	size_t len = 0;
	char *noise = malloc(NOISE_CHUNK);
	const char *got;
	struct json_object *t;

	json_object_object_add(bundle_manifest(b), "killed_at_ms",
			       json_object_new_uint64(1765000000123ull));
	cr_assert_eq(bundle_note_truncated(b, "spool/", "spool unreadable"), 0);
	/* a fit before the save: pid 7's pmap dropped (the first LOW), noted */
	cr_assert_eq(bundle_fit(b, 290u * 1024u), 1);
	cr_assert_gt(bundle_save_unfinished(b, dfd, "case.tar.gz"), 0);
	cr_assert_eq(bundle_load_unfinished(dfd, "case.tar.gz", &back), 0);
	cr_assert_str_eq(bundle_id(back), "case");
	cr_assert_eq(jget_u64_or0(NULL, bundle_manifest(back), "killed_at_ms"),
		     1765000000123ull);
	t = bundle_truncated(back);
	cr_assert_eq(json_object_array_length(t), 2);
	cr_assert_str_eq(jget_str(NULL, jget_idx(t, 0), "path"), "spool/");
	cr_assert_str_eq(jget_str(NULL, jget_idx(t, 1), "path"),
			 "processes/7/pmap.txt");
	got = bundle_get(back, "processes/7/status", &len);
	cr_assert_not_null(got);
	cr_assert_eq(len, NOISE_CHUNK);
	fill_random(noise, NOISE_CHUNK, 42);
	cr_assert_eq(memcmp(got, noise, NOISE_CHUNK), 0);
	/* the priorities came back (loaded all alike, pid 7 would not be
	 * raised, and the fit would drop the timeline first): the same fit
	 * on both drops pid 9's pmap, then its status */
	cr_assert_eq(bundle_raise_prio(b, "processes/7/", BUNDLE_VICTIM), 2);
	cr_assert_eq(bundle_raise_prio(back, "processes/7/", BUNDLE_VICTIM), 2);
	cr_assert_eq(bundle_fit(b, 150u * 1024u), 2);
	cr_assert_eq(bundle_fit(back, 150u * 1024u), 2);
	t = bundle_truncated(back);
	cr_assert_str_eq(jget_str(NULL, jget_idx(t, 2), "path"),
			 "processes/9/pmap.txt");
	cr_assert_str_eq(jget_str(NULL, jget_idx(t, 3), "path"),
			 "processes/9/status");
	cr_assert_gt(bundle_write(back, dfd, "done.tar.gz", 150u * 1024u), 0);
	bundle_free(b);
	bundle_free(back);
	/* the finished bundle holds no trace of the saved state */
	cr_assert_eq(bundle_read(dfd, "done.tar.gz", collect, &s), 0);
	cr_assert_eq(s.n, 4); /* manifest, kernel, timeline, pid 7's status */
	for (int i = 0; i < s.n; i++)
		cr_assert_null(strstr(s.names[i], "unfinished"), "%s",
			       s.names[i]);
	cr_assert(strstr(s.manifest, "\"killed_at_ms\": 1765000000123"));
	free(noise);
}

/* What bundle_load_unfinished() refuses: a bundle that is not one (no
 * state first), and a state whose files do not match the entries. */
Test(bundle, unfinished_load_refuses_a_bundle_and_a_state_that_lies)
{
	struct bundle *b, *back = NULL;
	struct json_object *st;
	char state[512];

	cr_assert_eq(bundle_new("x", &b), 0);
	cr_assert_eq(bundle_add(b, "kernel/oom.txt", "r", 1, BUNDLE_ESSENTIAL),
		     0);
	cr_assert_gt(bundle_write(b, dfd, "x.tar.gz", 0), 0);
	cr_assert_eq(bundle_load_unfinished(dfd, "x.tar.gz", &back), -EBADMSG);
	cr_assert_null(back);
	bundle_free(b);
	static const char *const lies[] = {
		/* a file the state does not list */
		"{\"manifest\":{},\"truncated\":[],\"mtime\":1,\"files\":[]}",
		/* another name */
		"{\"manifest\":{},\"truncated\":[],\"mtime\":1,"
		"\"files\":[[\"kernel/other\",0,false]]}",
		/* a priority out of range, one of the wrong type */
		"{\"manifest\":{},\"truncated\":[],\"mtime\":1,"
		"\"files\":[[\"kernel/oom.txt\",9,false]]}",
		"{\"manifest\":{},\"truncated\":[],\"mtime\":1,"
		"\"files\":[[\"kernel/oom.txt\",\"0\",false]]}",
		/* a manifest that is no object, a note that is no object */
		"{\"manifest\":[],\"truncated\":[],\"mtime\":1,"
		"\"files\":[[\"kernel/oom.txt\",0,false]]}",
		"{\"manifest\":{},\"truncated\":[1],\"mtime\":1,"
		"\"files\":[[\"kernel/oom.txt\",0,false]]}",
		/* a file listed that is not in the archive */
		"{\"manifest\":{},\"truncated\":[],\"mtime\":1,"
		"\"files\":[[\"kernel/oom.txt\",0,false],[\"a\",0,false]]}",
	};
	for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		const struct hostile entries[] = {
			{"x/.unfinished.json", AE_IFREG, strlen(lies[i]), NULL,
			 0},
			{"x/kernel/oom.txt", AE_IFREG, 1, NULL, 0},
		};
		const char *const text[] = {lies[i], "r"};

		st = json_tokener_parse(lies[i]);
		cr_assert_not_null(st, "%zu", i);
		json_object_put(st);
		snprintf(state, sizeof(state), "lie%zu.tar.gz", i);
		write_entries(state, entries, text, 2);
		cr_assert_eq(bundle_load_unfinished(dfd, state, &back),
			     -EBADMSG, "%s", lies[i]);
	}
}
