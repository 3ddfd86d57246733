/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's side of the sidecar spool: find the spool of the killed
 * cgroup and copy its timeline and newest snapshot into the bundle. */
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sys/stat.h>

#include "base/bundle_paths.h"
#include "forensics/bundle.h"
#include "kernel/cgroup.h"
#include "kernel/procfs.h"
#include "base/fileio.h"
#include "base/jget.h"
#include "base/parse.h"
#include "forensics/spool.h"
#include "base/util.h"

#define MANIFEST_MAX (1u << 20)
#define SPOOL_FILE_MAX (8u << 20)
/* Caps on what a pod's spool can make the agent do per kill. */
#define SPOOL_MAX_ENTRIES 4096 /* directory entries looked at, per listing */
#define SPOOL_MAX_FILES 2048   /* files copied into the bundle */
#define SPOOL_MAX_DEPTH 4      /* below processes/ */
#define SPOOL_DEADLINE_US (10u * 1000 * 1000)
#define KUBELET_EMPTY_DIRS "volumes/kubernetes.io~empty-dir"

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

/* The pod UID of a kubelet volume path (".../pods/<uid>/volumes/..."),
 * copied to ret; false when the path names no pod. */
static bool pod_uid_of(const char *path, char *ret, size_t size)
{
	const char *p = path, *u, *e;

	while ((p = strstr(p, "/pods/"))) {
		u = p + strlen("/pods/");
		e = strchrnul(u, '/');
		p = u;
		if (e - u < 8 || (size_t)(e - u) >= size ||
		    !startswith(e, "/volumes/"))
			continue;
		if (strspn(u, "0123456789abcdef-") < (size_t)(e - u))
			continue;
		memcpy(ret, u, (size_t)(e - u));
		ret[e - u] = '\0';
		return true;
	}
	return false;
}

/* True when a component of cgroup names pod uid: "pod<uid>" (cgroupfs
 * driver) or "pod<uid with _>" (systemd: kubepods-…-pod<u_i_d>.slice). */
bool spool_cgroup_in_pod(const char *cgroup, const char *uid)
{
	char tok[2][80];
	size_t n = strlen(uid);

	if (!n || n + 4 > sizeof(tok[0]))
		return false;
	snprintf(tok[0], sizeof(tok[0]), "pod%s", uid);
	snprintf(tok[1], sizeof(tok[1]), "pod%s", uid);
	for (char *c = tok[1]; *c; c++)
		*c = *c == '-' ? '_' : *c;
	for (int i = 0; i < 2; i++)
		for (const char *p = cgroup; (p = strstr(p, tok[i])); p++) {
			char after = p[n + 3];

			if (p > cgroup && (p[-1] == '/' || p[-1] == '-') &&
			    (after == '/' || after == '.' || after == '\0'))
				return true;
		}
	return false;
}

/* json-c on bytes that need not end in NUL; NULL unless one whole
 * object (trailing whitespace allowed). Depth- and cost-bounded: a pod
 * wrote it (780 KB of "{}," is a 200 MB tree). */
static struct json_object *parse_object(const char *buf, size_t len)
{
	struct json_tokener *tok = json_tokener_new_ex(32);
	struct json_object *o = NULL;
	size_t end = 0;

	if (tok && len <= MANIFEST_MAX &&
	    jget_tree_cost(buf, len) <= BUNDLE_JSON_MAX_TREE) {
		o = json_tokener_parse_ex(tok, buf, (int)len);
		end = json_tokener_get_parse_end(tok);
	}
	if (o && (json_tokener_get_error(tok) != json_tokener_success ||
		  !json_object_is_type(o, json_type_object)))
		end = 0, json_object_put(o), o = NULL;
	for (; o && end < len; end++)
		if (!memchr(" \t\r\n", buf[end], 4)) {
			json_object_put(o);
			o = NULL;
		}
	json_tokener_free(tok);
	return o;
}

int spool_parse_manifest(const char *buf, size_t len, char *ret, size_t size)
{
	struct json_object *o = parse_object(buf, len), *cg, *schema;
	const char *s = NULL;
	size_t n = 0;
	int r = -ENOENT;

	if (!o)
		return -EBADMSG;
	if (json_object_object_get_ex(o, "cgroup", &cg) &&
	    json_object_is_type(cg, json_type_string)) {
		s = json_object_get_string(cg);
		n = (size_t)json_object_get_string_len(cg);
	} else if (json_object_object_get_ex(o, "schema", &schema) &&
		   json_object_is_type(schema, json_type_string)) {
		s = ""; /* a pids-only spool */
	}
	/* a NUL inside the string would cut the claim short */
	if (s && strlen(s) == n && n < size) {
		memcpy(ret, s, n + 1);
		r = 0;
	}
	json_object_put(o);
	return r;
}

/* Reads the manifest's "cgroup" (spool_parse_manifest()). */
static int read_manifest_cgroup(int fd, uint64_t deadline, char *ret,
				size_t size)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_init(&sb, MANIFEST_MAX + 1);
	r = read_untrusted_at(fd, SPOOL_MANIFEST, MANIFEST_MAX, deadline, &sb);
	if (r < 0)
		return r;
	return spool_parse_manifest(sb.buf, sb.len, ret, size);
}

struct finder {
	const char *killed;
	size_t best;
	int best_fd; /* the chosen spool, opened where it was found */
	uint64_t deadline;
	size_t n_entries;
	struct spool_info *info;
	struct spool_ignored *ignored;
};

static void scan_kubelet_pod(struct finder *f, int pod_fd, const char *dir);

static void ignore(struct finder *f, const char *full, const char *claim,
		   const char *why)
{
	struct spool_ignored *g = f->ignored;

	if (!g)
		return;
	if (g->n < ARRAY_SIZE(g->dir)) {
		strlcpy_safe(g->dir[g->n], full, sizeof(g->dir[0]));
		snprintf(g->why[g->n], sizeof(g->why[0]),
			 "claims \"%.200s\": %s", claim, why);
	}
	g->n++;
}

/* Attribution by location: a spool under a kubelet pod directory speaks
 * for that pod only, whatever its manifest claims; elsewhere (a directory
 * the operator gave) a claim is believed for the killed cgroup itself or a
 * cgroup below it, never for an ancestor, which would take every kill
 * beneath it. A spool that claims no cgroup (its sidecar could not read
 * the app's and records it by its pids) is its pod's by location alone,
 * the weakest match; elsewhere it speaks for nothing. Returns the match
 * score, 0 for none. */
static size_t located_score(struct finder *f, const char *full,
			    const char *claim)
{
	char uid[64];

	if (!claim[0])
		return pod_uid_of(full, uid, sizeof(uid)) &&
		       spool_cgroup_in_pod(f->killed, uid);
	if (pod_uid_of(full, uid, sizeof(uid))) {
		/* The sidecar's own view through a cgroup namespace ("/",
		 * "/.."-relative) names no pod: the location alone makes it
		 * this pod's. Any other claim must be a cgroup of this pod. */
		bool ns_view =
			streq(claim, "/") || strncmp(claim, "/..", 3) == 0;

		if (!ns_view && !spool_cgroup_in_pod(claim, uid)) {
			ignore(f, full, claim,
			       "not a cgroup of the pod whose volume holds it");
			return 0;
		}
		if (!spool_cgroup_in_pod(f->killed, uid))
			return 0;
		return ns_view ? 1u << 20 : match_score(claim, f->killed);
	}
	if (!streq(claim, f->killed) && cgroup_path_within(f->killed, claim)) {
		ignore(f, full, claim,
		       "an ancestor of the killed cgroup, and its location "
		       "names no pod");
		return 0;
	}
	return match_score(claim, f->killed);
}

/* Looks at parentfd/name (opened without following a symlink). */
static void consider(struct finder *f, int parentfd, const char *name,
		     const char *full)
{
	_cleanup_close_ int fd = -1;
	char cg[4096];
	size_t score;

	if (now_monotonic_us() >= f->deadline)
		return;
	fd = open_untrusted_at(parentfd, name, O_RDONLY | O_DIRECTORY);
	if (fd < 0 || read_manifest_cgroup(fd, f->deadline, cg, sizeof(cg)) < 0)
		return;
	score = located_score(f, full, cg);
	if (score <= f->best)
		return;
	f->best = score;
	closep(&f->best_fd);
	f->best_fd = TAKE_FD(fd);
	strlcpy_safe(f->info->dir, full, sizeof(f->info->dir));
	strlcpy_safe(f->info->cgroup, cg, sizeof(f->info->cgroup));
	f->info->exact = streq(cg, f->killed);
}

/* Every entry of dir_fd, at most SPOOL_MAX_ENTRIES over the whole scan. */
static void scan_children(struct finder *f, int dir_fd, const char *dir,
			  int depth)
{
	int fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		closep(&fd);
		return;
	}
	rewinddir(d);
	while ((de = readdir(d)) && f->n_entries++ < SPOOL_MAX_ENTRIES) {
		_cleanup_close_ int vfd = -1;
		char full[4096];

		if (de->d_name[0] == '.' ||
		    snprintf(full, sizeof(full), "%s/%s", dir, de->d_name) >=
			    (int)sizeof(full))
			continue;
		consider(f, dirfd(d), de->d_name, full);
		/* The kubelet's pods directory: <uid>/volumes/<emptyDirs>. */
		vfd = depth ? -1
			    : open_untrusted_at(dirfd(d), de->d_name,
						O_RDONLY | O_DIRECTORY);
		if (vfd >= 0 && faccessat(vfd, SPOOL_MANIFEST, F_OK,
					  AT_SYMLINK_NOFOLLOW) != 0)
			scan_kubelet_pod(f, vfd, full);
	}
	closedir(d);
}

static void scan_kubelet_pod(struct finder *f, int pod_fd, const char *dir)
{
	_cleanup_close_ int fd = -1;
	char full[4096];

	fd = open_untrusted_at(pod_fd, KUBELET_EMPTY_DIRS,
			       O_RDONLY | O_DIRECTORY);
	if (fd < 0 || snprintf(full, sizeof(full), "%s/%s", dir,
			       KUBELET_EMPTY_DIRS) >= (int)sizeof(full))
		return;
	scan_children(f, fd, full, 1);
}

/* A configured directory is the operator's (opened as given): a spool
 * itself, the parent of spools, or the kubelet's pods directory. */
static void scan_dir(struct finder *f, const char *dir)
{
	_cleanup_close_ int fd = -1;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (faccessat(fd, SPOOL_MANIFEST, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		consider(f, fd, ".", dir);
	else
		scan_children(f, fd, dir, 0);
}

static int find_spool(const char *const *dirs, size_t n_dirs,
		      const char *cgroup_path, struct spool_ignored *ignored,
		      struct spool_info *ret_info, int *ret_fd)
{
	struct spool_info info = {0};
	struct finder f = {.killed = cgroup_path,
			   .best_fd = -1,
			   .deadline = now_monotonic_us() + SPOOL_DEADLINE_US,
			   .info = &info,
			   .ignored = ignored};

	if (ignored)
		ignored->n = 0;
	if (!cgroup_path || !*cgroup_path)
		return -EINVAL;
	for (size_t i = 0; i < n_dirs; i++)
		scan_dir(&f, dirs[i]);
	if (!f.best)
		return -ENOENT;
	*ret_info = info;
	*ret_fd = f.best_fd;
	return 0;
}

int spool_find(const char *const *dirs, size_t n_dirs, const char *cgroup_path,
	       struct spool_ignored *ignored, struct spool_info *ret)
{
	int fd = -1, r;

	r = find_spool(dirs, n_dirs, cgroup_path, ignored, ret, &fd);
	closep(&fd);
	return r;
}

uint64_t spool_parse_snapshot_time(const char *buf, size_t len)
{
	struct json_object *o = parse_object(buf, len);
	uint64_t v = 0;
	bool after = false;

	jget_u64(NULL, o, "t_ms", &v); /* a negative or "12x": 0 */
	/* completed after a kill in its cgroup: never the pre-kill one */
	if (jget_bool(NULL, o, "after_kill", &after) && after)
		v = 0;
	json_object_put(o);
	return v;
}

/* t_ms of snapshots/<name>/snapshot.json; 0 when unreadable or taken
 * after a kill. */
static uint64_t snapshot_time(int snap_fd, const char *name, uint64_t deadline)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char path[300];

	strbuf_init(&sb, MANIFEST_MAX + 1);
	if (snprintf(path, sizeof(path), "%s/" BP_SNAP_META, name) >=
		    (int)sizeof(path) ||
	    read_untrusted_at(snap_fd, path, MANIFEST_MAX, deadline, &sb) < 0)
		return 0;
	return spool_parse_snapshot_time(sb.buf, sb.len);
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
	size_t n = 0, seen = 0;

	if (!d) {
		closep(&fd);
		return 0;
	}
	rewinddir(d); /* the dup shares its offset with snap_fd */
	while ((de = readdir(d)) && n < max && seen++ < SPOOL_MAX_ENTRIES)
		if (de->d_name[0] != '.' && !strstr(de->d_name, ".tmp") &&
		    strlen(de->d_name) < 64 && (names[n] = strdup(de->d_name)))
			n++;
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_name);
	return n;
}

/* Picks the newest complete snapshot not after not_after_ms. */
static void pick_snapshot(int snap_fd, uint64_t not_after_ms, uint64_t deadline,
			  struct spool_info *info)
{
	char *names[256];
	size_t n = spool_list_snapshots(snap_fd, names, ARRAY_SIZE(names));

	for (size_t i = n; i-- > 0;) {
		uint64_t t =
			info->snapshot[0]
				? 0
				: snapshot_time(snap_fd, names[i], deadline);

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
	return streq(name, BP_P_PMAP) || streq(name, BP_P_PMAP_JSON)
		       ? BUNDLE_LOW
		       : BUNDLE_NORMAL;
}

/* What one spool_attach may take from a pod: a deadline, a file count and
 * SPOOL_POD_BUDGET bytes on top of each file's size cap. */
struct copier {
	struct bundle *b;
	uint64_t deadline;
	size_t n_files;
	size_t budget;	/* bytes the pod may still make us read */
	size_t skipped; /* files past the budget, left out unread */
};

#define BUDGET_SPENT "the pod's read budget (SPOOL_POD_BUDGET, 16 MiB) is spent"

/* Adds dirfd/src (a pod's file) as path; absent or refused (a symlink, a
 * FIFO) is 0 and nothing added. Past the budget a file is listed, not
 * read; one the budget cuts is kept as far as it was read. */
static int copy_file(struct copier *c, const char *path, int dirfd,
		     const char *src, size_t max, enum bundle_prio prio)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	bool by_budget = max > c->budget;
	int r;

	if (c->n_files >= SPOOL_MAX_FILES)
		return 0;
	if (c->budget == 0) { /* the first listed, the rest counted */
		if (c->skipped++ == 0)
			bundle_note_truncated(c->b, path,
					      "left out: " BUDGET_SPENT);
		return 0;
	}
	if (by_budget)
		max = c->budget;
	strbuf_init(&sb, max + 1);
	r = read_untrusted_at(dirfd, src, max, c->deadline, &sb);
	if (r < 0 && r != -E2BIG && (sb.len == 0 || r == -ETIME))
		return r == -ENOMEM ? r : 0;
	c->budget -= sb.len < c->budget ? sb.len : c->budget;
	if (r < 0)
		bundle_note_truncated(c->b, path,
				      r != -E2BIG ? "read ended early"
				      : by_budget ? "cut short: " BUDGET_SPENT
						  : "file larger than the cap");
	r = bundle_add(c->b, path, sb.buf, sb.len, prio);
	if (r < 0)
		return r == -EINVAL ? 0 : r;
	c->n_files++;
	return 1;
}

/* Adds the regular files under at/src as prefix/…, never following a
 * symlink, at most SPOOL_MAX_DEPTH deep. Returns files added or -errno. */
static int copy_tree(struct copier *c, const char *prefix, int at,
		     const char *src, int depth, enum bundle_prio prio)
{
	int fd = open_untrusted_at(at, src, O_RDONLY | O_DIRECTORY);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	size_t seen = 0;
	int r = 0, n = 0;

	if (!d) {
		closep(&fd);
		return 0;
	}
	while (r >= 0 && (de = readdir(d)) && seen++ < SPOOL_MAX_ENTRIES) {
		char path[256];

		if (de->d_name[0] == '.' ||
		    snprintf(path, sizeof(path), "%s/%s", prefix, de->d_name) >=
			    (int)sizeof(path))
			continue;
		if (de->d_type == DT_DIR && depth < SPOOL_MAX_DEPTH)
			r = copy_tree(c, path, dirfd(d), de->d_name, depth + 1,
				      prio);
		else if (de->d_type == DT_REG || de->d_type == DT_UNKNOWN)
			r = copy_file(
				c, path, dirfd(d), de->d_name, SPOOL_FILE_MAX,
				prio == BUNDLE_NORMAL ? file_prio(de->d_name)
						      : prio);
		n += r > 0 ? r : 0;
	}
	closedir(d);
	return r < 0 ? r : n;
}

struct jvm_gaps {
	char pids[16][16];
	size_t n;
};

/* True when the text of an attach.json (the pod's: untrusted) says the JVM
 * answered: it attached and, where it lists its commands, one of them has
 * no error. A JVM that attached but stalled at every command (collecting at
 * its limit) answered nothing. */
static bool attach_answered(const char *buf, size_t len)
{
	struct json_object *o = parse_object(buf, len), *cmds;
	bool attached = false, yes;

	yes = jget_bool(NULL, o, "attached", &attached) && attached;
	cmds = yes ? jget(o, "commands") : NULL;
	if (cmds) {
		yes = false;
		for (size_t i = 0; i < jget_len(cmds) && !yes; i++)
			yes = json_object_is_type(jget_idx(cmds, i),
						  json_type_object) &&
			      !jget(jget_idx(cmds, i), "error");
	}
	json_object_put(o);
	return yes;
}

static int find_gap(const char *path, const char *data, size_t len, void *ud)
{
	struct jvm_gaps *g = ud;
	const char *tail = "/" BP_JVM_ATTACH;
	size_t pl = strlen(path), tl = strlen(tail), pre;

	pre = strlen(SPOOL_PROCESSES_DIR) + 1;
	if (g->n == ARRAY_SIZE(g->pids) || pl <= pre + tl ||
	    pl - tl - pre >= sizeof(g->pids[0]) ||
	    !startswith(path, SPOOL_PROCESSES_DIR "/") ||
	    !streq(path + pl - tl, tail) || attach_answered(data, len))
		return 0;
	snprintf(g->pids[g->n++], sizeof(g->pids[0]), "%.*s",
		 (int)(pl - tl - pre), path + pre);
	return 0;
}

/* True when snapshot name holds jvm/ outputs of pid from a JVM that
 * answered. */
static bool jvm_answered(int snap_fd, const char *name, const char *pid,
			 uint64_t deadline)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char path[256];
	int r;

	if (snprintf(path, sizeof(path), "%s/%s/%s/" BP_JVM_ATTACH, name,
		     SPOOL_PROCESSES_DIR, pid) >= (int)sizeof(path))
		return false;
	strbuf_init(&sb, MANIFEST_MAX);
	r = read_untrusted_at(snap_fd, path, MANIFEST_MAX, deadline, &sb);
	return r >= 0 && attach_answered(sb.buf, sb.len);
}

bool spool_snapshot_jvm_answered(int snap_fd, const char *name)
{
	uint64_t deadline = now_monotonic_us() + 1000u * 1000u;
	char path[256];
	int fd;
	DIR *d;
	struct dirent *de;
	size_t seen = 0;
	bool yes = false;

	if (snprintf(path, sizeof(path), "%s/%s", name, SPOOL_PROCESSES_DIR) >=
	    (int)sizeof(path))
		return false;
	fd = open_untrusted_at(snap_fd, path, O_RDONLY | O_DIRECTORY);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		closep(&fd);
		return false;
	}
	while (!yes && (de = readdir(d)) && seen++ < SPOOL_MAX_ENTRIES)
		yes = de->d_name[0] != '.' &&
		      jvm_answered(snap_fd, name, de->d_name, deadline);
	closedir(d);
	return yes;
}

void spool_prune(int snap_fd, size_t keep)
{
	char *names[256];
	size_t n = spool_list_snapshots(snap_fd, names, ARRAY_SIZE(names));
	bool answered = false;

	for (size_t i = n; i-- > 0;) {
		if (i + keep >= n)
			answered = answered || spool_snapshot_jvm_answered(
						       snap_fd, names[i]);
		else if (!answered &&
			 spool_snapshot_jvm_answered(snap_fd, names[i]))
			answered = true; /* spared */
		else
			(void)rm_rf_at(snap_fd, names[i]);
		free(names[i]);
	}
}

/* A JVM at its limit may not answer in time (it is collecting, or
 * stalled): for such a process the newest earlier snapshot where it did
 * gives jvm/, and the bundle says so. Nothing captured is lost. */
static void fill_jvm_gaps(struct copier *c, int snap_fd,
			  const struct spool_info *info)
{
	struct jvm_gaps g = {.n = 0};
	char *names[256];
	size_t n;

	bundle_foreach(c->b, find_gap, &g);
	if (!g.n)
		return;
	n = spool_list_snapshots(snap_fd, names, ARRAY_SIZE(names));
	for (size_t j = 0; j < g.n; j++)
		for (size_t i = n; i-- > 0;) {
			char dst[128], src[256], why[160];

			if (strcmp(names[i], info->snapshot) >= 0 ||
			    !jvm_answered(snap_fd, names[i], g.pids[j],
					  c->deadline))
				continue;
			snprintf(dst, sizeof(dst), "%s/%s/jvm",
				 SPOOL_PROCESSES_DIR, g.pids[j]);
			snprintf(src, sizeof(src), "%s/%s/%s/jvm", names[i],
				 SPOOL_PROCESSES_DIR, g.pids[j]);
			snprintf(why, sizeof(why),
				 "the JVM did not answer at the newest "
				 "snapshot: jvm/ is from %s",
				 names[i]);
			if (copy_tree(c, dst, snap_fd, src, 1, BUNDLE_NORMAL) >
			    0)
				bundle_note_truncated(c->b, dst, why);
			break;
		}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
}

static int attach_snapshot(struct copier *c, int spool_fd,
			   uint64_t not_after_ms, struct spool_info *info)
{
	_cleanup_close_ int snap_fd = -1, one_fd = -1;
	int r;

	/* A symlink here (to another pod's spool) is refused, not followed. */
	snap_fd = open_untrusted_at(spool_fd, SPOOL_SNAPSHOTS_DIR,
				    O_RDONLY | O_DIRECTORY);
	if (snap_fd < 0)
		return 0;
	pick_snapshot(snap_fd, not_after_ms, c->deadline, info);
	if (!info->snapshot[0])
		return 0;
	one_fd = open_untrusted_at(snap_fd, info->snapshot,
				   O_RDONLY | O_DIRECTORY);
	if (one_fd < 0)
		return 0; /* pruned meanwhile: the timeline still helps */
	r = copy_file(c, BP_SPOOL_SNAPSHOT, one_fd, BP_SNAP_META, MANIFEST_MAX,
		      BUNDLE_HIGH);
	if (r >= 0)
		r = copy_tree(c, SPOOL_PROCESSES_DIR, one_fd,
			      SPOOL_PROCESSES_DIR, 0, BUNDLE_NORMAL);
	if (r >= 0)
		fill_jvm_gaps(c, snap_fd, info);
	return r < 0 ? r : 0;
}

int spool_attach(struct bundle *b, const char *const *dirs, size_t n_dirs,
		 const char *cgroup_path, uint64_t not_after_ms,
		 struct spool_ignored *ignored, struct spool_info *ret)
{
	struct spool_info info;
	struct copier c = {.b = b, .budget = SPOOL_POD_BUDGET};
	_cleanup_close_ int fd = -1;
	int r = find_spool(dirs, n_dirs, cgroup_path, ignored, &info, &fd);

	if (r < 0)
		return r;
	c.deadline = now_monotonic_us() + SPOOL_DEADLINE_US;
	r = copy_file(&c, BP_SPOOL_MANIFEST, fd, SPOOL_MANIFEST, MANIFEST_MAX,
		      BUNDLE_HIGH);
	if (r >= 0)
		r = copy_file(&c, SPOOL_TIMELINE, fd, SPOOL_TIMELINE,
			      SPOOL_FILE_MAX, BUNDLE_HIGH);
	if (r >= 0)
		r = attach_snapshot(&c, fd, not_after_ms, &info);
	if (c.skipped > 1) {
		char why[160];

		snprintf(why, sizeof(why), "%zu more files left out: %s",
			 c.skipped - 1, BUDGET_SPENT);
		bundle_note_truncated(b, "spool/", why);
	}
	if (r < 0)
		return r;
	info.n_files = c.n_files;
	if (ret)
		*ret = info;
	return 0;
}

struct victim_scan {
	int pid;
	const char *comm;
	uint64_t rss_kb;
	int best;	    /* the snapshot's pid, -1 none yet */
	uint64_t best_diff; /* |RSS - rss_kb| of best */
	bool exact;	    /* best has the kernel's pid too */
};

static int victim_one(const char *path, const char *data, size_t len, void *ud)
{
	struct victim_scan *v = ud;
	struct proc_status st;
	uint64_t rss, diff, u;
	const char *end;
	int pid;

	/* processes/<pid>/status: the pid from where it was found */
	if (!startswith(path, BP_PROCESSES))
		return 0;
	path += strlen(BP_PROCESSES);
	end = strchr(path, '/');
	if (!end || !streq(end + 1, BP_P_STATUS) ||
	    parse_u64_n(path, (size_t)(end - path), &u) < 0 || !u ||
	    u > INT32_MAX)
		return 0;
	pid = (int)u;
	if (procfs_parse_status(data, len, &st) < 0 || !streq(st.name, v->comm))
		return 0;
	rss = st.rss_anon_kb + st.rss_file_kb + st.rss_shmem_kb;
	diff = rss > v->rss_kb ? rss - v->rss_kb : v->rss_kb - rss;
	if (v->exact)
		return 0;
	if (pid == v->pid || v->best < 0 || diff < v->best_diff) {
		v->best = pid;
		v->best_diff = diff;
		v->exact = pid == v->pid;
	}
	return 0;
}

int spool_victim_pid(const struct bundle *b, int pid, const char *comm,
		     uint64_t rss_kb)
{
	struct victim_scan v = {
		.pid = pid, .comm = comm, .rss_kb = rss_kb, .best = -1};

	if (!comm || !*comm)
		return -1;
	bundle_foreach(b, victim_one, &v);
	return v.best;
}
