/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "base/fileio.h"

bool fileio_walk_only;

/* What every open of a pod's file adds: never follow the last component,
 * never block on a FIFO or a device, never become a controlling tty. */
#define UNTRUSTED_FLAGS (O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)

int read_fd_max(int fd, size_t max, struct strbuf *sb)
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

/* -ELOOP when dirfd/name is a symlink (O_NOFOLLOW|O_DIRECTORY on one gives
 * ENOTDIR, which would hide the planted link), else err. */
static int why_not_dir(int dirfd, const char *name, int err)
{
	struct stat st;

	if (err == ENOTDIR &&
	    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		return -ELOOP;
	return -err;
}

/* openat2 with no symlinks and nothing outside dirfd; -ENOSYS where the
 * kernel (< 5.6) or a seccomp filter lacks it. */
static int open_beneath(int dirfd, const char *path, int flags, unsigned mode)
{
	struct open_how how = {
		.flags = (uint64_t)flags,
		.mode = flags & O_CREAT ? mode : 0,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH |
			   RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	if (fileio_walk_only)
		return -ENOSYS;
	fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd >= 0)
		return (int)fd;
	if (errno == ENOSYS || errno == EPERM || errno == E2BIG)
		return -ENOSYS;
	return -errno;
}

/* The fallback: one component at a time, each an O_NOFOLLOW directory. */
static int open_walk(int dirfd, char *path, int flags, unsigned mode)
{
	_cleanup_close_ int cur = -1;
	char *comp = path, *slash;
	int fd;

	while ((slash = strchr(comp, '/'))) {
		*slash = '\0';
		if (comp[0] && !streq(comp, ".")) {
			fd = openat(cur >= 0 ? cur : dirfd, comp,
				    O_PATH | O_DIRECTORY | O_NOFOLLOW |
					    O_CLOEXEC);
			if (fd < 0)
				return why_not_dir(cur >= 0 ? cur : dirfd, comp,
						   errno);
			closep(&cur);
			cur = fd;
		}
		comp = slash + 1;
	}
	fd = openat(cur >= 0 ? cur : dirfd, comp[0] ? comp : ".", flags, mode);
	if (fd < 0)
		return flags & O_DIRECTORY ? why_not_dir(cur >= 0 ? cur : dirfd,
							 comp, errno)
					   : -errno;
	return fd;
}

/* No absolute path, no "..": a pod's path names something below dirfd. */
static bool path_beneath(const char *path)
{
	const char *p = path;

	if (!path[0] || path[0] == '/')
		return false;
	while (p) {
		if (startswith(p, "..") && (p[2] == '/' || p[2] == '\0'))
			return false;
		p = strchr(p, '/');
		if (p)
			p++;
	}
	return true;
}

static int open_nosymlinks(int dirfd, const char *path, int flags,
			   unsigned mode)
{
	_cleanup_free_ char *copy = NULL;
	int fd;

	if (!path_beneath(path))
		return -EXDEV;
	fd = open_beneath(dirfd, path, flags, mode);
	if (fd == -ENOTDIR)
		return why_not_dir(dirfd, path, ENOTDIR);
	if (fd != -ENOSYS)
		return fd;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	return open_walk(dirfd, copy, flags, mode);
}

int open_untrusted_at(int dirfd, const char *path, int flags)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	/* O_PATH takes no other flags (openat2 says EINVAL). */
	fd = open_nosymlinks(dirfd, path,
			     flags | (flags & O_PATH ? O_NOFOLLOW | O_CLOEXEC
						     : UNTRUSTED_FLAGS),
			     0);
	if (fd < 0)
		return fd;
	if (flags & (O_DIRECTORY | O_PATH))
		return TAKE_FD(fd);
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	return TAKE_FD(fd);
}

/* read_fd with a deadline between chunks: a regular file never polls as
 * "not ready", so the clock is all there is against a slow filesystem. */
static int read_fd_deadline(int fd, size_t max, uint64_t deadline_us,
			    struct strbuf *sb)
{
	size_t start = sb->len;

	for (;;) {
		size_t room = max - (sb->len - start);
		size_t step = room < 65536 ? room : 65536;
		int r;

		if (deadline_us != UINT64_MAX &&
		    now_monotonic_us() >= deadline_us)
			return -ETIME;
		if (room == 0 || step == room)
			return read_fd_max(fd, room, sb);
		r = strbuf_grow(sb, step);
		if (r < 0)
			return r;
		r = (int)read(fd, sb->buf + sb->len, step);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno == EAGAIN ? -ETIME : -errno;
		if (r == 0)
			return 0;
		sb->len += (size_t)r;
		sb->buf[sb->len] = '\0';
	}
}

int read_untrusted_at(int dirfd, const char *path, size_t max,
		      uint64_t deadline_us, struct strbuf *sb)
{
	_cleanup_close_ int fd = open_untrusted_at(dirfd, path, O_RDONLY);

	if (fd < 0)
		return fd;
	return read_fd_deadline(fd, max, deadline_us, sb);
}

static int read_file_flags(int dirfd, const char *path, int flags, size_t max,
			   struct strbuf *sb)
{
	_cleanup_close_ int fd = -1;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | flags);
	if (fd < 0)
		return -errno;
	return read_fd_max(fd, max, sb);
}

int read_file_at(int dirfd, const char *path, size_t max, struct strbuf *sb)
{
	return read_file_flags(dirfd, path, 0, max, sb);
}

bool is_regular_at(int dirfd, const char *path)
{
	struct stat st;

	return fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISREG(st.st_mode);
}

int read_file_at_nofollow(int dirfd, const char *path, size_t max,
			  struct strbuf *sb)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	fd = openat(dirfd, path, O_RDONLY | UNTRUSTED_FLAGS);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	return read_fd_max(fd, max, sb);
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

/* Opens the directory of path: below dirfd without symlinks (a pod may share
 * it), or as given when absolute (the operator's own configuration). */
static int dir_of(int dirfd, const char *path, char **ret_base)
{
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *dir = NULL, *base = NULL;
	int fd;

	base = strdup(slash ? slash + 1 : path);
	if (!base)
		return -ENOMEM;
	if (!base[0] || streq(base, ".") || streq(base, ".."))
		return -EINVAL;
	if (!slash) {
		fd = dirfd == AT_FDCWD
			     ? open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
			     : fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
		fd = fd < 0 ? -errno : fd;
	} else if (path[0] == '/') {
		dir = strndup(path, (size_t)(slash - path));
		if (!dir)
			return -ENOMEM;
		fd = openat(dirfd, dir[0] ? dir : "/",
			    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		fd = fd < 0 ? -errno : fd;
	} else {
		dir = strndup(path, (size_t)(slash - path));
		if (!dir)
			return -ENOMEM;
		fd = open_nosymlinks(
			dirfd, dir,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
	}
	if (fd < 0)
		return fd;
	*ret_base = TAKE_PTR(base);
	return fd;
}

/* Creates ".<base>.tmp.<random>" exclusively: a name planted in advance (a
 * symlink to a root-only file, a FIFO) is never opened, only skipped. */
static int create_temp(int dfd, const char *base, unsigned mode, char *ret,
		       size_t size)
{
	for (int attempt = 0; attempt < 16; attempt++) {
		uint64_t rnd;
		int n, fd;

		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
			rnd = now_monotonic_us() ^ ((uint64_t)getpid() << 32) ^
			      (uint64_t)attempt;
		n = snprintf(ret, size, ".%s.tmp.%016llx", base,
			     (unsigned long long)rnd);
		if (n < 0 || (size_t)n >= size)
			return -ENAMETOOLONG;
		fd = openat(dfd, ret,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				    O_CLOEXEC | O_NOCTTY,
			    mode);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int write_file_atomic_fill_at(int dirfd, const char *path, unsigned mode,
			      int (*fill)(int fd, void *arg), void *arg)
{
	_cleanup_free_ char *base = NULL;
	_cleanup_close_ int dfd = -1, fd = -1;
	char tmp[4096];
	int r;

	dfd = dir_of(dirfd, path, &base);
	if (dfd < 0)
		return dfd;
	fd = create_temp(dfd, base, mode, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	r = fill(fd, arg);
	if (r >= 0 && fsync(fd) < 0)
		r = -errno;
	/* rename replaces a symlink at base, it never writes through it. */
	if (r >= 0 && renameat(dfd, tmp, dfd, base) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(dfd, tmp, 0);
		return r;
	}
	(void)fsync(dfd);
	return 0;
}

struct whole {
	const void *data;
	size_t len;
};

static int write_whole(int fd, void *arg)
{
	const struct whole *w = arg;

	return write_all(fd, w->data, w->len);
}

int write_file_atomic_at(int dirfd, const char *path, const void *data,
			 size_t len, unsigned mode)
{
	struct whole w = {.data = data, .len = len};

	return write_file_atomic_fill_at(dirfd, path, mode, write_whole, &w);
}

/* mkdir -p of an absolute path: the operator's, symlinks followed. */
static int mkdir_p_abs(const char *path, unsigned mode)
{
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1;; s++) {
		char c = *s;

		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (mkdirat(AT_FDCWD, p, mode) < 0 && errno != EEXIST)
			return -errno;
		*s = c;
		if (c == '\0')
			break;
	}
	return 0;
}

int mkdir_p_open_at(int dirfd, const char *path, unsigned mode)
{
	_cleanup_free_ char *p = NULL;
	_cleanup_close_ int cur = -1;
	char *comp, *next;

	if (!path_beneath(path))
		return -EXDEV;
	p = strdup(path);
	if (!p)
		return -ENOMEM;
	for (comp = p; comp; comp = next) {
		int at = cur >= 0 ? cur : dirfd, fd;

		next = strchr(comp, '/');
		if (next)
			*next++ = '\0';
		if (!comp[0] || streq(comp, "."))
			continue;
		if (mkdirat(at, comp, mode) < 0 && errno != EEXIST)
			return -errno;
		/* An existing name must be a real directory, not a link. */
		fd = openat(at, comp,
			    O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return why_not_dir(at, comp, errno);
		closep(&cur);
		cur = fd;
	}
	if (cur < 0) /* "." alone */
		cur = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	return cur < 0 ? -errno : TAKE_FD(cur);
}

int mkdir_p_at(int dirfd, const char *path, unsigned mode)
{
	int fd;

	if (path[0] == '/')
		return mkdir_p_abs(path, mode);
	fd = mkdir_p_open_at(dirfd, path, mode);
	if (fd < 0)
		return fd;
	close(fd);
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

int opendir_at(int dirfd, const char *path, DIR **ret)
{
	int fd = openat(dirfd, path,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		int r = -errno;

		close(fd);
		return r;
	}
	*ret = d;
	return 0;
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
