/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>

#include "forensics/bundle.h"
#include "base/fileio.h"
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
