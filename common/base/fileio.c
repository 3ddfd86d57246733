/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "base/fileio.h"

static int read_fd(int fd, size_t max, struct strbuf *sb)
{
	size_t start = sb->len;

	for (;;) {
		size_t room = max - (sb->len - start);
		size_t chunk = room < 65536 ? room : 65536;
		ssize_t n;
		int r;

		if (room == 0) {
			char c;
			/* Probe one byte to tell "exactly max" from "more". */
			n = read(fd, &c, 1);
			return n > 0 ? -E2BIG : 0;
		}
		r = strbuf_grow(sb, chunk);
		if (r < 0)
			return r;
		n = read(fd, sb->buf + sb->len, chunk);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return 0;
		sb->len += (size_t)n;
		sb->buf[sb->len] = '\0';
	}
}

static int read_file_flags(int dirfd, const char *path, int flags, size_t max,
			   struct strbuf *sb)
{
	_cleanup_close_ int fd = -1;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | flags);
	if (fd < 0)
		return -errno;
	return read_fd(fd, max, sb);
}

int read_file_at(int dirfd, const char *path, size_t max, struct strbuf *sb)
{
	return read_file_flags(dirfd, path, 0, max, sb);
}

int read_file_at_nofollow(int dirfd, const char *path, size_t max,
			  struct strbuf *sb)
{
	return read_file_flags(dirfd, path, O_NOFOLLOW, max, sb);
}

int read_line_at(int dirfd, const char *path, struct strbuf *sb)
{
	int r = read_file_at(dirfd, path, 4096, sb);

	if (r < 0)
		return r;
	while (sb->len && sb->buf[sb->len - 1] == '\n')
		sb->buf[--sb->len] = '\0';
	return 0;
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int dir_of(int dirfd, const char *path, char **ret_base)
{
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *dir = NULL;
	int fd;

	if (!slash) {
		fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
		*ret_base = strdup(path);
	} else {
		dir = strndup(path, (size_t)(slash - path));
		if (!dir)
			return -ENOMEM;
		fd = openat(dirfd, dir[0] ? dir : "/",
			    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		*ret_base = strdup(slash + 1);
	}
	if (fd < 0) {
		int r = -errno;
		free(*ret_base);
		*ret_base = NULL;
		return r;
	}
	if (!*ret_base) {
		close(fd);
		return -ENOMEM;
	}
	return fd;
}

int write_file_atomic_at(int dirfd, const char *path, const void *data,
			 size_t len, unsigned mode)
{
	_cleanup_free_ char *base = NULL;
	_cleanup_close_ int dfd = -1, fd = -1;
	char tmp[4096];
	int r, n;

	dfd = dir_of(dirfd, path, &base);
	if (dfd < 0)
		return dfd;
	n = snprintf(tmp, sizeof(tmp), ".%s.tmp.%d", base, (int)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	r = write_all(fd, data, len);
	if (r >= 0 && fsync(fd) < 0)
		r = -errno;
	if (r >= 0 && renameat(dfd, tmp, dfd, base) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(dfd, tmp, 0);
		return r;
	}
	(void)fsync(dfd);
	return 0;
}

int mkdir_p_at(int dirfd, const char *path, unsigned mode)
{
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1;; s++) {
		char c = *s;

		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (mkdirat(dirfd, p, mode) < 0 && errno != EEXIST)
			return -errno;
		*s = c;
		if (c == '\0')
			break;
	}
	return 0;
}

static int rm_rf_children(int fd)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			continue;
		if (errno == EISDIR || errno == EPERM) {
			int sub = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						 O_CLOEXEC);
			if (sub >= 0) {
				int q = rm_rf_children(sub);
				if (q < 0 && r == 0)
					r = q;
			}
			if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) < 0 &&
			    r == 0)
				r = -errno;
		} else if (r == 0 && errno != ENOENT) {
			r = -errno;
		}
	}
	closedir(d);
	return r;
}

int rm_rf_at(int dirfd, const char *path)
{
	int fd, r;

	if (unlinkat(dirfd, path, 0) == 0 || errno == ENOENT)
		return 0;
	fd = openat(dirfd, path,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	r = rm_rf_children(fd);
	if (unlinkat(dirfd, path, AT_REMOVEDIR) < 0 && errno != ENOENT && !r)
		r = -errno;
	return r;
}
