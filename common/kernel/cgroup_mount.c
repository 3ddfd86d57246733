/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup_mount: the memory hierarchy's mount root from mountinfo, and the
 * one place where kernel, namespace and mount paths are translated. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "kernel/cgroup_mount.h"
#include "base/fileio.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "base/util.h"

#define MOUNTINFO_MAX (4u << 20)
#define MOUNTINFO_FIELDS 10

/* --- path helpers -------------------------------------------------------- */

/* Copies [s, s+n) into buf as a path without trailing slashes ("/" stays). */
static int copy_path(const char *s, size_t n, char *buf, size_t size)
{
	while (n > 1 && s[n - 1] == '/')
		n--;
	if (n == 0 || s[0] != '/')
		return -EINVAL;
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
}

/* base + rest, where rest is "" or starts with '/'. */
static int join(const char *base, const char *rest, char *buf, size_t size)
{
	char tmp[CGROUP_MOUNT_PATH_MAX * 2];
	int n;

	if (!*rest)
		return copy_path(base, strlen(base), buf, size);
	n = snprintf(tmp, sizeof(tmp), "%s%s", streq(base, "/") ? "" : base,
		     rest);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	return copy_path(tmp, (size_t)n, buf, size);
}

/* path below base → the part after base ("" for base itself), or NULL. */
static const char *below(const char *path, const char *base)
{
	if (!cgroup_path_within(path, base))
		return NULL;
	return streq(base, "/") ? path : path + strlen(base);
}

/* Leading "/.." components of a namespace-frame path. */
static size_t ups(const char *p)
{
	size_t n = 0;

	while (p[0] == '/' && p[1] == '.' && p[2] == '.' &&
	       (p[3] == '/' || p[3] == '\0')) {
		n++;
		p += 3;
	}
	return n;
}

/* --- mountinfo ----------------------------------------------------------- */

/* Undoes mountinfo's octal escapes ("\040" for a space) in place. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

struct mi_line {
	int id;
	char *root, *point, *fstype, *super;
};

/* Splits one NUL-terminated line in place at spaces. False when
 * malformed. */
static bool split_line(char *line, struct mi_line *ret)
{
	char *f[MOUNTINFO_FIELDS + 32];
	size_t n = 0, dash = 0;
	uint64_t id;

	for (char *p = line; *p && n < ARRAY_SIZE(f);) {
		char *sp = strchr(p, ' ');

		if (sp)
			*sp = '\0';
		if (*p) {
			if (!dash && n >= 6 && streq(p, "-"))
				dash = n;
			f[n++] = p;
		}
		if (!sp)
			break;
		p = sp + 1;
	}
	/* id parent maj:min root point options [optional...] - type src super
	 */
	if (!dash || n < dash + 4 || parse_u64(f[0], &id) < 0 || id > INT32_MAX)
		return false;
	unescape(f[3]);
	unescape(f[4]);
	*ret = (struct mi_line){.id = (int)id,
				.root = f[3],
				.point = f[4],
				.fstype = f[dash + 1],
				.super = f[dash + 3]};
	return true;
}

static bool has_option(const char *opts, const char *name)
{
	size_t l = strlen(name);

	for (const char *p = opts; p;) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);

		if (n == l && memcmp(p, name, l) == 0)
			return true;
		p = c ? c + 1 : NULL;
	}
	return false;
}

static bool is_hierarchy(const struct mi_line *l, enum cgroup_mode mode)
{
	if (mode == CGROUP_V2)
		return streq(l->fstype, "cgroup2");
	return streq(l->fstype, "cgroup") && has_option(l->super, "memory");
}

/* Length of mount point when it is a prefix of path, else -1. */
static ssize_t point_match(const char *point, const char *path)
{
	size_t n = strlen(point);

	if (streq(point, "/"))
		return 1;
	if (strncmp(path, point, n) != 0 || (path[n] && path[n] != '/'))
		return -1;
	return (ssize_t)n;
}

struct mi_best {
	char root[CGROUP_MOUNT_PATH_MAX];
	char rest[CGROUP_MOUNT_PATH_MAX];
	ssize_t len; /* matched mount point length, -1 none */
	int r;	     /* 0 found, -EMEDIUMTYPE, -ENAMETOOLONG */
};

static void consider(const struct mi_line *l,
		     const struct cgroup_mount_query *q, struct mi_best *b)
{
	ssize_t m;
	const char *rest;

	if (q->mnt_id >= 0 && l->id != q->mnt_id)
		return;
	if (!is_hierarchy(l, q->mode)) {
		if (q->mnt_id >= 0)
			b->r = -EMEDIUMTYPE, b->len = 0;
		return;
	}
	m = point_match(l->point, q->path);
	if (m < 0 || m < b->len)
		return;
	rest = streq(l->point, "/") ? q->path : q->path + m;
	b->len = m;
	b->r = strlcpy_safe(b->root, l->root, sizeof(b->root)) <
				       sizeof(b->root) &&
			       strlcpy_safe(b->rest,
					    streq(rest, "/") ? "" : rest,
					    sizeof(b->rest)) < sizeof(b->rest)
		       ? 0
		       : -ENAMETOOLONG;
}

int cgroup_parse_mountinfo(const char *buf, size_t len,
			   const struct cgroup_mount_query *q, char *ret,
			   size_t size)
{
	struct mi_best b = {.len = -1, .r = -ENOENT};
	const char *p, *end;

	if (!buf || !q || !q->path || q->path[0] != '/')
		return -EINVAL;
	p = buf;
	end = buf + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		char line[4 * CGROUP_MOUNT_PATH_MAX];
		size_t n = (size_t)((eol ? eol : end) - p);
		struct mi_line l;

		/* Lines longer than this are overlay mounts with long
		 * option strings, never a cgroup mount we could use. */
		if (n < sizeof(line) && !memchr(p, '\0', n)) {
			memcpy(line, p, n);
			line[n] = '\0';
			if (split_line(line, &l))
				consider(&l, q, &b);
		}
		p = eol ? eol + 1 : end;
	}
	if (b.r < 0)
		return b.r;
	return join(b.root, b.rest, ret, size);
}

/* --- what is known ------------------------------------------------------- */

void cgroup_mount_resolve(const char *ns_root, bool is_root, int init_ns,
			  struct cgroup_mount *ret)
{
	struct cgroup_mount m = {.is_root = is_root, .init_ns = init_ns};
	bool dots = ns_root && ups(ns_root) > 0;

	strlcpy_safe(m.ns_base, ns_root ? ns_root : "/", sizeof(m.ns_base));
	if (is_root) {
		/* The root's kernel path is "/" in every namespace. */
		m.state = CGROUP_BASE_KNOWN;
		strlcpy_safe(m.base, "/", sizeof(m.base));
	} else if (!ns_root) {
		m.state = CGROUP_BASE_ASSUMED;
		strlcpy_safe(m.base, "/", sizeof(m.base));
	} else if (init_ns == 1 && !dots) {
		m.state = CGROUP_BASE_KNOWN;
		strlcpy_safe(m.base, ns_root, sizeof(m.base));
	} else if (init_ns == -1 && !dots && !streq(ns_root, "/")) {
		/* Unknown namespace: taken as the initial one. A mount of
		 * "/" that is not the hierarchy root proves the contrary. */
		m.state = CGROUP_BASE_KNOWN;
		strlcpy_safe(m.base, ns_root, sizeof(m.base));
	} else {
		m.state = CGROUP_BASE_HIDDEN;
	}
	*ret = m;
}

/* Only the root of a hierarchy has release_agent (v1); only the cgroups
 * below it have cgroup.type (v2). */
static bool dir_is_root(const struct cgroup_fs *fs)
{
	if (fs->mode == CGROUP_V1)
		return faccessat(fs->mem_fd, "release_agent", F_OK,
				 AT_SYMLINK_NOFOLLOW) == 0;
	return faccessat(fs->mem_fd, "cgroup.type", F_OK, AT_SYMLINK_NOFOLLOW) <
		       0 &&
	       errno == ENOENT;
}

/* 1 when the reader is in the initial cgroup namespace, 0 not, -1 unknown. */
static int read_init_ns(int proc_fd)
{
	char link[64] = "";
	ssize_t n =
		readlinkat(proc_fd, "self/ns/cgroup", link, sizeof(link) - 1);
	const char *p = link + strlen("cgroup:[");
	uint64_t ino;

	if (n <= 0 || strncmp(link, "cgroup:[", 8) != 0)
		return -1;
	link[n] = '\0';
	if (scan_u64(&p, &ino) < 0 || *p != ']')
		return -1;
	return ino == CGROUP_INIT_NS_INO;
}

/* The mount id of fd from self/fdinfo, -1 unknown. */
static int read_mnt_id(int proc_fd, int fd)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char name[48];
	const char *p;
	uint64_t id;

	strbuf_init(&sb, 4096);
	snprintf(name, sizeof(name), "self/fdinfo/%d", fd);
	if (read_file_at(proc_fd, name, 4096, &sb) < 0)
		return -1;
	p = strstr(sb.buf, "\nmnt_id:");
	if (!p)
		return -1;
	p += strlen("\nmnt_id:");
	p += strspn(p, " \t");
	if (scan_u64(&p, &id) < 0 || id > INT32_MAX)
		return -1;
	return (int)id;
}

/* Our directory's mount-frame root from self/mountinfo, into ret. */
static int read_ns_root(int proc_fd, const struct cgroup_fs *fs, char *ret,
			size_t size)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char name[48], path[CGROUP_MOUNT_PATH_MAX * 2];
	struct cgroup_mount_query q = {.mode = fs->mode, .path = path};
	ssize_t n;
	int r;

	snprintf(name, sizeof(name), "self/fd/%d", fs->mem_fd);
	n = readlinkat(proc_fd, name, path, sizeof(path) - 1);
	if (n <= 0 || (size_t)n >= sizeof(path) - 1 || path[0] != '/')
		return -ENOENT;
	path[n] = '\0';
	q.mnt_id = read_mnt_id(proc_fd, fs->mem_fd);
	strbuf_init(&sb, MOUNTINFO_MAX);
	r = read_file_at(proc_fd, "self/mountinfo", MOUNTINFO_MAX, &sb);
	if (r < 0)
		return r;
	return cgroup_parse_mountinfo(sb.buf, sb.len, &q, ret, size);
}

int cgroup_mount_read(const struct host *h, const struct cgroup_fs *fs,
		      struct cgroup_mount *ret)
{
	char root[CGROUP_MOUNT_PATH_MAX];
	bool found = false;
	int init_ns = -1;

	if (!h || !fs || fs->mem_fd < 0)
		return -EBADF;
	if (h->proc_fd >= 0) {
		found = read_ns_root(h->proc_fd, fs, root, sizeof(root)) == 0;
		init_ns = read_init_ns(h->proc_fd);
	}
	cgroup_mount_resolve(found ? root : NULL, dir_is_root(fs), init_ns,
			     ret);
	return 0;
}

/* --- translation --------------------------------------------------------- */

int cgroup_mount_from_kernel(const struct cgroup_mount *m, const char *path,
			     char *buf, size_t size)
{
	const char *rest;

	if (!path || path[0] != '/')
		return -EINVAL;
	if (m->state == CGROUP_BASE_HIDDEN)
		return -ENXIO;
	rest = below(path, m->base);
	if (!rest)
		return -EXDEV;
	return join("/", rest, buf, size);
}

int cgroup_mount_to_kernel(const struct cgroup_mount *m, const char *path,
			   char *buf, size_t size)
{
	if (!path || path[0] != '/')
		return -EINVAL;
	if (m->state == CGROUP_BASE_HIDDEN)
		return -ENXIO;
	return join(m->base, streq(path, "/") ? "" : path, buf, size);
}

int cgroup_mount_from_ns(const struct cgroup_mount *m, const char *path,
			 char *buf, size_t size)
{
	const char *rest;

	if (!path || path[0] != '/')
		return -EINVAL;
	rest = ups(path) == ups(m->ns_base) ? below(path, m->ns_base) : NULL;
	if (rest)
		return join("/", rest, buf, size);
	/* The kernel prints the shortest path through the two cgroups'
	 * common ancestor. A mount with names after its "/.." is entered
	 * only through those names: from the same height (decided above) or
	 * not at all. A mount that is an ancestor of our namespace's root
	 * ("/", "/../..") holds every path with as many "/.." or fewer, but
	 * with fewer the names in between are those of that root: unknown. */
	if (streq(m->ns_base + 3 * ups(m->ns_base), "") &&
	    ups(path) < ups(m->ns_base))
		return -ENXIO;
	return -EXDEV;
}
