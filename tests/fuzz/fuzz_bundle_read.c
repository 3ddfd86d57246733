/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the bundle archive reader (bundle_load: `show` on a
 * bundle from anywhere, an OOMBundle's data): the input is the tar, which
 * the harness gzips (level 1) so that mutations reach the tar headers and
 * not only the deflate stream; it goes through a memfd, reopened by its
 * /proc/self/fd name as bundle_load opens a path. A bundle that loads is
 * rendered as text and HTML. Invariants: only the documented errors, and a
 * loaded bundle never holds more than the caps allow. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "forensics/bundle.h"
#include "forensics/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* data gzip'd into *ret (malloc'd); its length, 0 on failure. */
static size_t gzip(const uint8_t *data, size_t size, uint8_t **ret)
{
	z_stream zs = {0};
	size_t cap;
	uint8_t *out;

	if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY))
		return 0;
	cap = deflateBound(&zs, size) + 32;
	out = malloc(cap);
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)size;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	if (!out || deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&zs);
		free(out);
		return 0;
	}
	deflateEnd(&zs);
	*ret = out;
	return cap - zs.avail_out;
}

static int count(const char *path, const char *d, size_t len, void *ud)
{
	size_t *total = ud;

	(void)path;
	(void)d;
	if (len > BUNDLE_READ_MAX_ENTRY)
		abort();
	*total += len;
	return 0;
}

static void check_loaded(struct bundle *b)
{
	struct strbuf out;
	size_t total = 0;

	if (bundle_foreach(b, count, &total) < 0 ||
	    total > BUNDLE_READ_MAX_TOTAL)
		abort();
	strbuf_init(&out, 64u << 20);
	report_render_text(b, false, &out);
	strbuf_reset(&out);
	report_render_html(b, &out);
	strbuf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct bundle *b = NULL;
	uint8_t *gz = NULL;
	size_t n;
	int r;

	if (fd < 0) {
		fd = memfd_create("fuzz-bundle", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	n = gzip(data, size, &gz);
	if (!n || ftruncate(fd, 0) < 0 || pwrite(fd, gz, n, 0) != (ssize_t)n)
		abort();
	free(gz);
	r = bundle_load(AT_FDCWD, path, &b);
	if (r == 0) {
		check_loaded(b);
		bundle_free(b);
	} else if (r != -EBADMSG && r != -EXDEV && r != -ELOOP && r != -EPERM &&
		   r != -EFBIG && r != -EMLINK && r != -EINVAL &&
		   r != -ENAMETOOLONG) {
		abort();
	}
	return 0;
}
