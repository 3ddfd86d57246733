/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's side of the sidecar spool: find the spool of the killed
 * cgroup and copy its timeline and newest snapshot into the bundle. */
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sys/stat.h>

#include "forensics/bundle.h"
#include "kernel/cgroup.h"
#include "base/fileio.h"
#include "forensics/spool.h"
#include "base/util.h"

#define MANIFEST_MAX (1u << 20)
#define SPOOL_FILE_MAX (8u << 20)

bool spool_cgroup_matches(const char *spool_cgroup, const char *killed)
{
	if (!spool_cgroup || !killed || !*spool_cgroup || !*killed)
		return false;
	if (streq(spool_cgroup, killed))
		return true;
	/* The root matches only itself: it would claim every kill. */
	if (streq(spool_cgroup, "/") || streq(killed, "/"))
		return false;
	return cgroup_path_within(killed, spool_cgroup) ||
	       cgroup_path_within(spool_cgroup, killed);
}

/* Score of a spool for a kill: 0 none; exact beats "spool below the
 * killed cgroup" (the kernel blames the pod, the sidecar watches the
 * container) beats "spool above it"; deeper beats shallower. */
static size_t match_score(const char *spool_cgroup, const char *killed)
{
	size_t depth = strlen(spool_cgroup);

	if (!spool_cgroup_matches(spool_cgroup, killed))
		return 0;
	if (streq(spool_cgroup, killed))
		return 3u << 20;
	if (cgroup_path_within(spool_cgroup, killed))
		return (2u << 20) + depth;
	return (1u << 20) + depth;
}

/* Reads dirfd/path/manifest.json's "cgroup"; -ENOENT when not a spool. */
static int read_manifest_cgroup(int dirfd, const char *path, char *ret,
				size_t size)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_close_ int fd = -1;
	struct json_object *o, *cg;
	int r;

	strbuf_init(&sb, MANIFEST_MAX + 1);
	fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = read_file_at_nofollow(fd, SPOOL_MANIFEST, MANIFEST_MAX, &sb);
	if (r < 0)
		return r;
	o = json_tokener_parse(sb.buf);
	if (!o)
		return -EBADMSG;
	r = -ENOENT;
	if (json_object_object_get_ex(o, "cgroup", &cg) &&
	    json_object_is_type(cg, json_type_string)) {
		strlcpy_safe(ret, json_object_get_string(cg), size);
		r = 0;
	} else if (json_object_object_get_ex(o, "schema", NULL)) {
		ret[0] = '\0'; /* a pids-only spool */
		r = 0;
	}
	json_object_put(o);
	return r;
}

struct finder {
	const char *killed;
	size_t best;
	struct spool_info *info;
};

static void consider(struct finder *f, int dirfd, const char *path,
		     const char *full)
{
	char cg[4096];
	size_t score;

	if (read_manifest_cgroup(dirfd, path, cg, sizeof(cg)) < 0)
		return;
	score = match_score(cg, f->killed);
	if (score <= f->best)
		return;
	f->best = score;
	strlcpy_safe(f->info->dir, full, sizeof(f->info->dir));
	strlcpy_safe(f->info->cgroup, cg, sizeof(f->info->cgroup));
	f->info->exact = streq(cg, f->killed);
}

static void scan_dir(struct finder *f, const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *de;

	if (fd < 0)
		return;
	if (faccessat(fd, SPOOL_MANIFEST, F_OK, 0) == 0) {
		consider(f, AT_FDCWD, dir, dir);
		close(fd);
		return;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		char full[4096];

		if (de->d_name[0] == '.')
			continue;
		if (snprintf(full, sizeof(full), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(full))
			continue;
		consider(f, dirfd(d), de->d_name, full);
	}
	closedir(d);
}

int spool_find(const char *const *dirs, size_t n_dirs, const char *cgroup_path,
	       struct spool_info *ret)
{
	struct spool_info info = {0};
	struct finder f = {.killed = cgroup_path, .info = &info};

	if (!cgroup_path || !*cgroup_path)
		return -EINVAL;
	for (size_t i = 0; i < n_dirs; i++)
		scan_dir(&f, dirs[i]);
	if (!f.best)
		return -ENOENT;
	*ret = info;
	return 0;
}

/* t_ms of snapshots/<name>/snapshot.json; 0 when unreadable or taken
 * after a kill. */
static uint64_t snapshot_time(int snap_fd, const char *name)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_close_ int fd = -1;
	struct json_object *o, *t;
	uint64_t v = 0;

	strbuf_init(&sb, MANIFEST_MAX + 1);
	fd = openat(snap_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (read_file_at_nofollow(fd, "snapshot.json", MANIFEST_MAX, &sb) < 0)
		return 0;
	o = json_tokener_parse(sb.buf);
	if (o && json_object_object_get_ex(o, "t_ms", &t))
		v = (uint64_t)json_object_get_int64(t);
	/* completed after a kill in its cgroup: never the pre-kill one */
	if (o && json_object_object_get_ex(o, "after_kill", &t) &&
	    json_object_get_boolean(t))
		v = 0;
	json_object_put(o);
	return v;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t spool_list_snapshots(int snap_fd, char **names, size_t max)
{
	int fd = fcntl(snap_fd, F_DUPFD_CLOEXEC, 3);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	size_t n = 0;

	if (!d) {
		closep(&fd);
		return 0;
	}
	rewinddir(d); /* the dup shares its offset with snap_fd */
	while ((de = readdir(d)) && n < max)
		if (de->d_name[0] != '.' && !strstr(de->d_name, ".tmp") &&
		    (names[n] = strdup(de->d_name)))
			n++;
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_name);
	return n;
}

/* Picks the newest complete snapshot not after not_after_ms. */
static void pick_snapshot(int snap_fd, uint64_t not_after_ms,
			  struct spool_info *info)
{
	char *names[256];
	size_t n = spool_list_snapshots(snap_fd, names, ARRAY_SIZE(names));

	for (size_t i = n; i-- > 0;) {
		uint64_t t = info->snapshot[0]
				     ? 0
				     : snapshot_time(snap_fd, names[i]);

		if (!info->snapshot[0] && t &&
		    (!not_after_ms || t <= not_after_ms)) {
			strlcpy_safe(info->snapshot, names[i],
				     sizeof(info->snapshot));
			info->snapshot_ms = t;
		}
		free(names[i]);
	}
}

static enum bundle_prio file_prio(const char *name)
{
	return streq(name, "pmap.txt") || streq(name, "pmap.json")
		       ? BUNDLE_LOW
		       : BUNDLE_NORMAL;
}

/* Adds processes/<pid>/… of one snapshot. */
static int add_processes(struct bundle *b, int proc_fd, struct spool_info *i)
{
	int fd = fcntl(proc_fd, F_DUPFD_CLOEXEC, 3);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	int r = 0;

	if (!d) {
		closep(&fd);
		return -errno;
	}
	while (r >= 0 && (de = readdir(d))) {
		_cleanup_close_ int pfd = -1;
		DIR *pd;
		struct dirent *fe;

		if (de->d_name[0] == '.')
			continue;
		pfd = openat(dirfd(d), de->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		pd = pfd >= 0 ? fdopendir(TAKE_FD(pfd)) : NULL;
		while (pd && r >= 0 && (fe = readdir(pd))) {
			char path[512];
			struct stat st;

			if (fe->d_name[0] == '.' ||
			    fstatat(dirfd(pd), fe->d_name, &st,
				    AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			if (snprintf(path, sizeof(path), "%s/%.32s/%.200s",
				     SPOOL_PROCESSES_DIR, de->d_name,
				     fe->d_name) >= (int)sizeof(path))
				continue;
			if (S_ISDIR(st.st_mode))
				r = bundle_add_tree_at(b, path, dirfd(pd),
						       fe->d_name,
						       BUNDLE_NORMAL);
			else if (S_ISREG(st.st_mode))
				r = bundle_add_file_at(
					b, path, dirfd(pd), fe->d_name,
					SPOOL_FILE_MAX, file_prio(fe->d_name));
			i->n_files += r >= 0;
		}
		if (pd)
			closedir(pd);
	}
	closedir(d);
	return r;
}

struct jvm_gaps {
	char pids[16][16];
	size_t n;
};

static int find_gap(const char *path, const char *data, size_t len, void *ud)
{
	static const char failed[] = "\"attached\":false";
	struct jvm_gaps *g = ud;
	const char *tail = "/jvm/attach.json";
	size_t pl = strlen(path), tl = strlen(tail), pre;

	pre = strlen(SPOOL_PROCESSES_DIR) + 1;
	if (g->n == ARRAY_SIZE(g->pids) || pl <= pre + tl ||
	    !startswith(path, SPOOL_PROCESSES_DIR "/") ||
	    !streq(path + pl - tl, tail) ||
	    !memmem(data, len, failed, sizeof(failed) - 1))
		return 0;
	snprintf(g->pids[g->n++], sizeof(g->pids[0]), "%.*s",
		 (int)(pl - tl - pre), path + pre);
	return 0;
}

/* True when snapshot name holds jvm/ outputs of pid from a JVM that
 * answered. */
static bool jvm_answered(int snap_fd, const char *name, const char *pid)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char path[256];
	int dfd, r;

	snprintf(path, sizeof(path), "%s/%s/%s/jvm", name, SPOOL_PROCESSES_DIR,
		 pid);
	dfd = openat(snap_fd, path,
		     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return false;
	strbuf_init(&sb, MANIFEST_MAX);
	r = read_file_at_nofollow(dfd, "attach.json", MANIFEST_MAX, &sb);
	close(dfd);
	return r >= 0 && strstr(sb.buf, "\"attached\":true");
}

/* A JVM at its limit may not answer in time (it is collecting, or
 * stalled): for such a process the newest earlier snapshot where it did
 * gives jvm/, and the bundle says so. Nothing captured is lost. */
static void fill_jvm_gaps(struct bundle *b, int snap_fd,
			  const struct spool_info *info)
{
	struct jvm_gaps g = {.n = 0};
	char *names[256];
	size_t n;

	bundle_foreach(b, find_gap, &g);
	if (!g.n)
		return;
	n = spool_list_snapshots(snap_fd, names, ARRAY_SIZE(names));
	for (size_t j = 0; j < g.n; j++)
		for (size_t i = n; i-- > 0;) {
			char dst[128], src[256], why[160];

			if (streq(names[i], info->snapshot) ||
			    strcmp(names[i], info->snapshot) > 0 ||
			    !jvm_answered(snap_fd, names[i], g.pids[j]))
				continue;
			snprintf(dst, sizeof(dst), "%s/%s/jvm",
				 SPOOL_PROCESSES_DIR, g.pids[j]);
			snprintf(src, sizeof(src), "%s/%s/%s/jvm", names[i],
				 SPOOL_PROCESSES_DIR, g.pids[j]);
			snprintf(why, sizeof(why),
				 "the JVM did not answer at the newest "
				 "snapshot: "
				 "jvm/ is from %s",
				 names[i]);
			if (bundle_add_tree_at(b, dst, snap_fd, src,
					       BUNDLE_NORMAL) >= 0)
				bundle_note_truncated(b, dst, why);
			break;
		}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
}

static int attach_snapshot(struct bundle *b, int spool_fd,
			   uint64_t not_after_ms, struct spool_info *info)
{
	_cleanup_close_ int snap_fd = -1, one_fd = -1, proc_fd = -1;
	int r;

	snap_fd = openat(spool_fd, SPOOL_SNAPSHOTS_DIR,
			 O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (snap_fd < 0)
		return 0;
	pick_snapshot(snap_fd, not_after_ms, info);
	if (!info->snapshot[0])
		return 0;
	one_fd = openat(snap_fd, info->snapshot,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (one_fd < 0)
		return 0; /* pruned meanwhile: the timeline still helps */
	r = bundle_add_file_at(b, "spool/snapshot.json", one_fd,
			       "snapshot.json", MANIFEST_MAX, BUNDLE_HIGH);
	info->n_files += r >= 0;
	proc_fd = openat(one_fd, SPOOL_PROCESSES_DIR,
			 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	r = proc_fd < 0 ? 0 : add_processes(b, proc_fd, info);
	if (r >= 0)
		fill_jvm_gaps(b, snap_fd, info);
	return r;
}

int spool_attach(struct bundle *b, const char *const *dirs, size_t n_dirs,
		 const char *cgroup_path, uint64_t not_after_ms,
		 struct spool_info *ret)
{
	struct spool_info info;
	_cleanup_close_ int fd = -1;
	int r = spool_find(dirs, n_dirs, cgroup_path, &info);

	if (r < 0)
		return r;
	fd = open(info.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = bundle_add_file_at(b, "spool/manifest.json", fd, SPOOL_MANIFEST,
			       MANIFEST_MAX, BUNDLE_HIGH);
	info.n_files += r >= 0;
	r = bundle_add_file_at(b, SPOOL_TIMELINE, fd, SPOOL_TIMELINE,
			       SPOOL_FILE_MAX, BUNDLE_HIGH);
	if (r < 0 && r != -ENOENT)
		return r;
	info.n_files += r >= 0;
	r = attach_snapshot(b, fd, not_after_ms, &info);
	if (r < 0)
		return r;
	if (ret)
		*ret = info;
	return 0;
}
