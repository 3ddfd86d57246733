/* SPDX-License-Identifier: Apache-2.0 */
/* /dev/kmsg, read without blocking: one read(2) returns one record. */
#include <fcntl.h>
#include <sys/stat.h>

#include "kernel/kmsg.h"
#include "base/util.h"

/* A record is at most ~1 KiB of text (escaped up to 4x) plus its
 * dictionary; the kernel fails the read with EINVAL if it does not fit. */
#define KMSG_READ_MAX 16384

struct kmsg_reader {
	int fd;
	bool have_after;
	uint64_t after_seq;
	uint64_t malformed;
	char buf[KMSG_READ_MAX];
	struct strbuf scratch;
};

/* Reads one raw record into r->buf. Returns its length, 0 on EAGAIN, or
 * -errno (-EPIPE after an overrun: the next read continues). */
static ssize_t read_one(struct kmsg_reader *r)
{
	for (;;) {
		ssize_t n = read(r->fd, r->buf, sizeof(r->buf) - 1);

		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return 0;
		return -errno;
	}
}

/* A saved sequence number from an earlier boot is above everything now in
 * the buffer: then nothing may be skipped. Reads to the end once to find
 * the newest seq, then rewinds to the oldest record. */
static int check_after(struct kmsg_reader *r)
{
	uint64_t newest = 0;
	bool any = false;
	ssize_t n;

	while ((n = read_one(r)) != 0) {
		struct kmsg_record rec;

		if (n == -EPIPE)
			continue;
		if (n < 0)
			return (int)n;
		if (kmsg_parse_record(r->buf, (size_t)n, &r->scratch, &rec) ==
		    0) {
			newest = rec.seq;
			any = true;
		}
	}
	if (any && newest < r->after_seq)
		r->have_after = false;
	if (lseek(r->fd, 0, SEEK_SET) < 0)
		return -errno;
	return 0;
}

int kmsg_reader_open(int root_fd, bool skip_to_end, bool have_after,
		     uint64_t after_seq, struct kmsg_reader **ret)
{
	struct kmsg_reader *r;
	int ret_err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	strbuf_init(&r->scratch, KMSG_READ_MAX);
	r->have_after = have_after && !skip_to_end;
	r->after_seq = after_seq;
	r->fd = openat(root_fd, "dev/kmsg",
		       O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (r->fd < 0) {
		ret_err = -errno;
		goto fail;
	}
	if (skip_to_end && lseek(r->fd, 0, SEEK_END) < 0) {
		ret_err = -errno;
		goto fail;
	}
	if (r->have_after && (ret_err = check_after(r)) < 0)
		goto fail;
	*ret = r;
	return 0;
fail:
	kmsg_reader_free(r);
	return ret_err;
}

void kmsg_reader_free(struct kmsg_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	strbuf_release(&r->scratch);
	free(r);
}

int kmsg_reader_fd(const struct kmsg_reader *r)
{
	return r->fd;
}

uint64_t kmsg_reader_malformed(const struct kmsg_reader *r)
{
	return r->malformed;
}

int kmsg_reader_next(struct kmsg_reader *r, struct kmsg_record *ret)
{
	for (;;) {
		struct kmsg_record rec;
		ssize_t n = read_one(r);

		if (n <= 0)
			return (int)n;
		r->buf[n] = '\0';
		if (kmsg_parse_record(r->buf, (size_t)n, &r->scratch, &rec) <
		    0) {
			r->malformed++;
			continue;
		}
		if (r->have_after && rec.seq <= r->after_seq)
			continue;
		r->have_after = false; /* seqs only grow from here */
		*ret = rec;
		return 1;
	}
}

int kmsg_clock_probe(int root_fd, char *marker, size_t size,
		     uint64_t *ret_mono_us)
{
	_cleanup_close_ int fd = -1;
	uint64_t t0, t1;
	size_t len;

	fd = openat(root_fd, "dev/kmsg", O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	snprintf(marker, size, "oomlens: clock probe %d %llu", (int)getpid(),
		 (unsigned long long)now_monotonic_us());
	len = strlen(marker);
	t0 = now_monotonic_us();
	/* One write() is one record (dprintf splits it: EINVAL). */
	if (write(fd, marker, len) != (ssize_t)len)
		return errno ? -errno : -EIO;
	t1 = now_monotonic_us();
	*ret_mono_us = (t0 + t1) / 2;
	return 0;
}
