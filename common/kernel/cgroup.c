/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup: detection of the memory hierarchy, pure parsers of its files, and
 * readers relative to the hierarchy's root fd. The watcher is in
 * cgroup_watch.c. */
#include <fcntl.h>
#include <sys/stat.h>

#include "cgroup_internal.h"
#include "kernel/cgroup.h"
#include "base/fileio.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "base/util.h"

/* v1 prints PAGE_COUNTER_MAX * PAGE_SIZE (9223372036854771712 on x86_64)
 * for "no limit"; the exact value depends on the page size, so anything
 * this large counts as unlimited. */
#define CGROUP_V1_UNLIMITED (UINT64_C(1) << 62)
#define CGROUP_VALUE_MAX 4096
#define CGROUP_STAT_MAX (256u << 10)
#define CGROUP_STAT_ENTRIES_MAX 1024
#define CGROUP_DUMP_MAX (256u << 10)

/* --- paths ------------------------------------------------------------- */

int cgroup_relpath(const char *path, char *buf, size_t size)
{
	size_t len;
	const char *c;

	if (!path || path[0] != '/')
		return -EINVAL;
	len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (len == 1)
		return strlcpy_safe(buf, ".", size) < size ? 0 : -ENAMETOOLONG;
	/* Every component must be a plain name: no "", ".", "..". */
	for (c = path; c < path + len;) {
		const char *n =
			memchr(c + 1, '/', (size_t)(path + len - c - 1));
		size_t clen = (size_t)((n ? n : path + len) - c - 1);

		if (clen == 0 || (clen == 1 && c[1] == '.') ||
		    (clen == 2 && c[1] == '.' && c[2] == '.'))
			return -EINVAL;
		c = n ? n : path + len;
	}
	if (len - 1 >= size)
		return -ENAMETOOLONG;
	memcpy(buf, path + 1, len - 1);
	buf[len - 1] = '\0';
	return 0;
}

int cgroup_open_dir(const struct cgroup_fs *fs, const char *path)
{
	char rel[4096];
	int fd, r;

	if (!fs || fs->mem_fd < 0)
		return -EBADF;
	r = cgroup_relpath(path, rel, sizeof(rel));
	if (r < 0)
		return r;
	fd = openat(fs->mem_fd, rel,
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

bool cgroup_path_within(const char *path, const char *subtree)
{
	size_t n;

	if (!path || !subtree)
		return false;
	n = strlen(subtree);
	while (n > 1 && subtree[n - 1] == '/')
		n--;
	if (n == 1 && subtree[0] == '/')
		return path[0] == '/';
	if (strncmp(path, subtree, n) != 0)
		return false;
	return path[n] == '\0' || (path[n] == '/');
}

/* --- detection ----------------------------------------------------------- */

static bool has_word(const char *s, const char *word)
{
	size_t wl = strlen(word);

	while (*s) {
		size_t l = strcspn(s, " \t\n");

		if (l == wl && memcmp(s, word, wl) == 0)
			return true;
		s += l;
		s += strspn(s, " \t\n");
	}
	return false;
}

/* dirfd/sub is a v2 hierarchy with the memory controller enabled. */
static int open_v2(int dirfd, const char *sub)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_close_ int fd = -1;

	strbuf_init(&sb, 4096);
	fd = openat(dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (read_file_at(fd, "cgroup.controllers", 4096, &sb) < 0 ||
	    !has_word(sb.buf, "memory"))
		return -ENOENT;
	return TAKE_FD(fd);
}

static int open_v1(int dirfd)
{
	_cleanup_close_ int fd = -1;

	fd = openat(dirfd, "memory", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (faccessat(fd, "memory.limit_in_bytes", F_OK, 0) < 0 &&
	    faccessat(fd, "memory.oom_control", F_OK, 0) < 0)
		return -ENOENT;
	return TAKE_FD(fd);
}

int cgroup_fs_open(const struct host *h, struct cgroup_fs *ret)
{
	int fd;

	if (!h || h->cgroup_fd < 0)
		return -ENOENT;
	/* Pure v2 first: there "memory" may be an ordinary child cgroup. */
	fd = open_v2(h->cgroup_fd, ".");
	if (fd >= 0) {
		*ret = (struct cgroup_fs){.mode = CGROUP_V2, .mem_fd = fd};
		return 0;
	}
	fd = open_v1(h->cgroup_fd);
	if (fd >= 0) {
		*ret = (struct cgroup_fs){.mode = CGROUP_V1, .mem_fd = fd};
		return 0;
	}
	/* Hybrid with the memory controller on the unified side. */
	fd = open_v2(h->cgroup_fd, "unified");
	if (fd >= 0) {
		*ret = (struct cgroup_fs){.mode = CGROUP_V2, .mem_fd = fd};
		return 0;
	}
	return -ENOENT;
}

void cgroup_fs_close(struct cgroup_fs *fs)
{
	if (!fs)
		return;
	closep(&fs->mem_fd);
	fs->mem_fd = -1;
	fs->mode = CGROUP_NONE;
}

/* --- pure parsers -------------------------------------------------------- */

/* Splits the next "key value" line off [*p, end). Empty lines are skipped.
 * Returns 1 with the key and value set, 0 at the end, -EBADMSG for a line
 * that is not "<key> <u64>". */
static int next_kv(const char **p, const char *end, const char **ret_key,
		   size_t *ret_klen, uint64_t *ret_val)
{
	const char *line, *eol, *sp;

	while (*p < end && **p == '\n')
		(*p)++;
	if (*p >= end)
		return 0;
	line = *p;
	eol = memchr(line, '\n', (size_t)(end - line));
	if (!eol)
		eol = end;
	*p = eol < end ? eol + 1 : end;
	sp = memchr(line, ' ', (size_t)(eol - line));
	if (!sp || sp == line || memchr(line, '\0', (size_t)(eol - line)))
		return -EBADMSG;
	if (parse_u64_n(sp + 1, (size_t)(eol - sp - 1), ret_val) < 0)
		return -EBADMSG;
	*ret_key = line;
	*ret_klen = (size_t)(sp - line);
	return 1;
}

static bool key_is(const char *k, size_t klen, const char *name)
{
	return strlen(name) == klen && memcmp(k, name, klen) == 0;
}

int cgroup_parse_events(const char *buf, size_t len, struct cgroup_events *ret)
{
	struct cgroup_events ev = {0};
	const char *p = buf, *end, *k;
	size_t kl;
	uint64_t v;
	int r, known = 0;

	if (!buf)
		return -EBADMSG;
	end = buf + len;
	while ((r = next_kv(&p, end, &k, &kl, &v)) > 0) {
		uint64_t *slot = NULL;

		if (key_is(k, kl, "low"))
			slot = &ev.low;
		else if (key_is(k, kl, "high"))
			slot = &ev.high;
		else if (key_is(k, kl, "max"))
			slot = &ev.max;
		else if (key_is(k, kl, "oom"))
			slot = &ev.oom;
		else if (key_is(k, kl, "oom_kill"))
			slot = &ev.oom_kill, ev.has_oom_kill = true;
		else if (key_is(k, kl, "oom_group_kill"))
			slot = &ev.oom_group_kill;
		if (slot) {
			*slot = v;
			known++;
		}
	}
	/* Newer kernels add keys (sock_throttled): ignored, but a file with
	 * none of ours is not memory.events. */
	if (r < 0 || known == 0)
		return -EBADMSG;
	*ret = ev;
	return 0;
}

int cgroup_parse_oom_control(const char *buf, size_t len,
			     struct cgroup_events *ret)
{
	struct cgroup_events ev = {0};
	const char *p = buf, *end, *k;
	size_t kl;
	uint64_t v;
	int r;
	bool seen_under = false;

	if (!buf)
		return -EBADMSG;
	end = buf + len;
	while ((r = next_kv(&p, end, &k, &kl, &v)) > 0) {
		if (key_is(k, kl, "under_oom")) {
			ev.under_oom = v != 0;
			seen_under = true;
		} else if (key_is(k, kl, "oom_kill_disable")) {
			ev.oom_kill_disable = v != 0;
		} else if (key_is(k, kl, "oom_kill")) {
			ev.oom_kill = v;
			ev.has_oom_kill = true;
		}
	}
	if (r < 0 || !seen_under)
		return -EBADMSG;
	*ret = ev;
	return 0;
}

int cgroup_parse_stat(const char *buf, size_t len, struct cgroup_stat *ret)
{
	const char *p = buf, *end, *k;
	struct cgroup_stat s = {0};
	size_t kl, alloc = 0;
	uint64_t v;
	int r;

	if (!buf)
		return -EBADMSG;
	end = buf + len;
	while ((r = next_kv(&p, end, &k, &kl, &v)) > 0) {
		if (kl >= sizeof(s.e[0].name))
			continue; /* no kernel key is this long; keep the rest
				   */
		if (s.n == CGROUP_STAT_ENTRIES_MAX) {
			r = -EBADMSG;
			break;
		}
		if (s.n == alloc) {
			size_t na = alloc ? alloc * 2 : 64;
			void *ne = realloc(s.e, na * sizeof(*s.e));

			if (!ne) {
				r = -ENOMEM;
				break;
			}
			s.e = ne;
			alloc = na;
		}
		memcpy(s.e[s.n].name, k, kl);
		s.e[s.n].name[kl] = '\0';
		s.e[s.n++].value = v;
	}
	if (r < 0 || s.n == 0) {
		free(s.e);
		return r < 0 ? r : -EBADMSG;
	}
	*ret = s;
	return 0;
}

void cgroup_parse_value(const char *buf, size_t len, enum cgroup_mode mode,
			struct cgroup_value *ret)
{
	uint64_t v;
	bool unlimited = false;

	*ret = (struct cgroup_value){.state = CGV_BAD};
	if (!buf || len == 0 || memchr(buf, '\0', len))
		return;
	if (parse_cgroup_value(buf, len, &v, &unlimited) < 0)
		return;
	if (unlimited || (mode == CGROUP_V1 && v >= CGROUP_V1_UNLIMITED)) {
		ret->state = CGV_UNLIMITED;
		return;
	}
	ret->state = CGV_OK;
	ret->v = v;
}

void cgroup_stat_release(struct cgroup_stat *s)
{
	if (!s)
		return;
	free(s->e);
	s->e = NULL;
	s->n = 0;
}

void cgroup_state_release(struct cgroup_state *s)
{
	if (!s)
		return;
	cgroup_stat_release(&s->stat);
}

bool cgroup_stat_get(const struct cgroup_stat *s, const char *name,
		     uint64_t *ret)
{
	for (size_t i = 0; s && i < s->n; i++) {
		if (streq(s->e[i].name, name)) {
			*ret = s->e[i].value;
			return true;
		}
	}
	return false;
}

/* --- readers ------------------------------------------------------------- */

/* Reads dirfd/name into sb. Missing files (and files the kernel refuses
 * to show) give -ENOENT. */
static int read_small(int dirfd, const char *name, size_t max,
		      struct strbuf *sb)
{
	int r = read_file_at_nofollow(dirfd, name, max, sb);

	if (r == -EOPNOTSUPP || r == -ENOTSUP)
		return -ENOENT;
	return r;
}

static void read_value(int dirfd, const char *name, enum cgroup_mode mode,
		       struct cgroup_value *ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_init(&sb, CGROUP_VALUE_MAX);
	r = read_small(dirfd, name, CGROUP_VALUE_MAX, &sb);
	if (r < 0) {
		*ret = (struct cgroup_value){.state = r == -ENOENT ? CGV_ABSENT
								   : CGV_BAD};
		return;
	}
	cgroup_parse_value(sb.buf, sb.len, mode, ret);
}

static int read_events_file(int dirfd, const char *name, bool v1,
			    struct cgroup_events *ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_init(&sb, CGROUP_VALUE_MAX);
	r = read_small(dirfd, name, CGROUP_VALUE_MAX, &sb);
	if (r < 0)
		return r;
	return v1 ? cgroup_parse_oom_control(sb.buf, sb.len, ret)
		  : cgroup_parse_events(sb.buf, sb.len, ret);
}

static int read_stat_file(int dirfd, struct cgroup_stat *ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_init(&sb, CGROUP_STAT_MAX);
	r = read_small(dirfd, "memory.stat", CGROUP_STAT_MAX, &sb);
	if (r < 0)
		return r;
	return cgroup_parse_stat(sb.buf, sb.len, ret);
}

const char *cgroup_oom_kill_file(int dirfd, enum cgroup_mode mode)
{
	if (mode == CGROUP_V1)
		return "memory.oom_control";
	/* .local counts only this cgroup's own kills, like v1's oom_kill;
	 * memory.events also counts every descendant's. */
	if (faccessat(dirfd, "memory.events.local", F_OK,
		      AT_SYMLINK_NOFOLLOW) == 0)
		return "memory.events.local";
	return "memory.events";
}

int cgroup_read_oom_kill(int dirfd, enum cgroup_mode mode, uint64_t *ret)
{
	struct cgroup_events ev;
	int r;

	r = read_events_file(dirfd, cgroup_oom_kill_file(dirfd, mode),
			     mode == CGROUP_V1, &ev);
	if (r < 0)
		return r;
	if (!ev.has_oom_kill)
		return -EOPNOTSUPP;
	*ret = ev.oom_kill;
	return 0;
}

static void read_state_v1(int dfd, struct cgroup_state *s)
{
	struct cgroup_value memsw;

	read_value(dfd, "memory.usage_in_bytes", CGROUP_V1, &s->usage);
	read_value(dfd, "memory.limit_in_bytes", CGROUP_V1, &s->limit);
	read_value(dfd, "memory.max_usage_in_bytes", CGROUP_V1, &s->peak);
	read_value(dfd, "memory.failcnt", CGROUP_V1, &s->failcnt);
	read_value(dfd, "memory.memsw.usage_in_bytes", CGROUP_V1, &memsw);
	/* v1 has no swap counter of its own: memsw = memory + swap. */
	if (memsw.state == CGV_OK && s->usage.state == CGV_OK)
		s->swap = (struct cgroup_value){
			.state = CGV_OK,
			.v = memsw.v > s->usage.v ? memsw.v - s->usage.v : 0};
	else
		s->swap.state = memsw.state == CGV_OK ? CGV_BAD : memsw.state;
	read_events_file(dfd, "memory.oom_control", true, &s->events);
}

static void read_state_v2(int dfd, struct cgroup_state *s)
{
	struct cgroup_value group;

	read_value(dfd, "memory.current", CGROUP_V2, &s->usage);
	read_value(dfd, "memory.max", CGROUP_V2, &s->limit);
	read_value(dfd, "memory.peak", CGROUP_V2, &s->peak);
	read_value(dfd, "memory.swap.current", CGROUP_V2, &s->swap);
	s->failcnt.state = CGV_ABSENT;
	read_events_file(dfd, "memory.events", false, &s->events);
	s->has_events_local = read_events_file(dfd, "memory.events.local",
					       false, &s->events_local) == 0;
	read_value(dfd, "memory.oom.group", CGROUP_V2, &group);
	s->oom_group = group.state == CGV_OK && group.v == 1;
}

int cgroup_read_state(const struct cgroup_fs *fs, const char *path,
		      struct cgroup_state *ret)
{
	struct cgroup_state s = {0};
	_cleanup_close_ int dfd = -1;
	int r;

	dfd = cgroup_open_dir(fs, path);
	if (dfd < 0)
		return dfd;
	if (fs->mode == CGROUP_V1)
		read_state_v1(dfd, &s);
	else
		read_state_v2(dfd, &s);
	r = read_stat_file(dfd, &s.stat);
	/* Removed while we read: the open dir fd shows no files any more. */
	if (s.usage.state == CGV_ABSENT && r == -ENOENT) {
		_cleanup_close_ int again = cgroup_open_dir(fs, path);

		if (again == -ENOENT)
			return -ENOENT;
	}
	*ret = s;
	return 0;
}

int cgroup_read_events(const struct cgroup_fs *fs, const char *path,
		       struct cgroup_events *ret)
{
	_cleanup_close_ int dfd = -1;

	dfd = cgroup_open_dir(fs, path);
	if (dfd < 0)
		return dfd;
	if (fs->mode == CGROUP_V1)
		return read_events_file(dfd, "memory.oom_control", true, ret);
	return read_events_file(dfd, "memory.events", false, ret);
}

int cgroup_read_file(const struct cgroup_fs *fs, const char *path,
		     const char *name, size_t max, struct strbuf *sb)
{
	_cleanup_close_ int dfd = cgroup_open_dir(fs, path);

	return dfd < 0 ? dfd : read_small(dfd, name, max, sb);
}

/* --- raw dump for bundles ------------------------------------------------ */

static const char *const dump_v1[] = {
	"memory.stat",
	"memory.oom_control",
	"memory.usage_in_bytes",
	"memory.limit_in_bytes",
	"memory.max_usage_in_bytes",
	"memory.failcnt",
	"memory.soft_limit_in_bytes",
	"memory.memsw.usage_in_bytes",
	"memory.memsw.limit_in_bytes",
	"memory.memsw.max_usage_in_bytes",
	"memory.memsw.failcnt",
	"memory.kmem.usage_in_bytes",
	"memory.kmem.max_usage_in_bytes",
	"memory.kmem.failcnt",
	"memory.swappiness",
	"memory.use_hierarchy",
	"memory.numa_stat",
	"cgroup.procs",
	NULL,
};

static const char *const dump_v2[] = {
	"memory.stat",		"memory.events",
	"memory.events.local",	"memory.current",
	"memory.max",		"memory.high",
	"memory.low",		"memory.min",
	"memory.peak",		"memory.oom.group",
	"memory.swap.current",	"memory.swap.max",
	"memory.swap.peak",	"memory.swap.events",
	"memory.zswap.current", "memory.zswap.max",
	"memory.pressure",	"memory.numa_stat",
	"cgroup.procs",		NULL,
};

int cgroup_dump_files(const struct cgroup_fs *fs, const char *path,
		      int (*fn)(const char *name, const char *data, size_t len,
				void *userdata),
		      void *userdata)
{
	const char *const *names =
		fs && fs->mode == CGROUP_V1 ? dump_v1 : dump_v2;
	_cleanup_close_ int dfd = -1;
	int n = 0;

	dfd = cgroup_open_dir(fs, path);
	if (dfd < 0)
		return dfd;
	for (; *names; names++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		int r;

		strbuf_init(&sb, CGROUP_DUMP_MAX);
		r = read_small(dfd, *names, CGROUP_DUMP_MAX, &sb);
		/* A file that cannot be read is left out; one that is too
		 * big is kept cut at CGROUP_DUMP_MAX. */
		if (r < 0 && r != -E2BIG)
			continue;
		r = fn(*names, sb.buf, sb.len, userdata);
		if (r < 0)
			return r;
		n++;
	}
	return n;
}

size_t cgroup_parse_procs(const char *buf, size_t len, int *pids, size_t *n,
			  size_t max)
{
	const char *p = buf, *end = buf + len;
	size_t added = 0;

	while (p < end && *n < max) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		uint64_t v;
		bool dup = false;

		eol = eol ? eol : end;
		if (parse_u64_n(p, (size_t)(eol - p), &v) == 0 && v > 0 &&
		    v <= INT32_MAX) {
			for (size_t i = 0; i < *n && !dup; i++)
				dup = pids[i] == (int)v;
			if (!dup) {
				pids[(*n)++] = (int)v;
				added++;
			}
		}
		p = eol + 1;
	}
	return added;
}
