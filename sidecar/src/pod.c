/* SPDX-License-Identifier: Apache-2.0 */
/* The sidecar in a pod: who the pod is (Downward API env), what it asks
 * for (the annotations file), which processes are the app's (the shared
 * PID namespace) and where their container's memory cgroup is. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/host.h"
#include "base/log.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "forensics/capture.h"
#include "kernel/cgroup.h"
#include "kernel/procfs_access.h"
#include "pod.h"
#include "pod_parse.h"
#include "pod_upload.h"

#define MAX_APPS 256

struct app_proc {
	int pid;
	char id[128];		 /* container ID */
	char name[POD_NAME_MAX]; /* OOMLENS_CONTAINER of its env, else id[:12]
				  */
};

struct pod {
	const char *name, *ns, *uid, *node;
	const char *ann_path;
	struct timespec ann_mtime;
	bool ann_seen;
	struct pod_settings set;
	char container[POD_NAME_MAX];
	char root[4096];   /* cfg->host_root: /proc/<pid>/root of the app */
	char cgroup[1024]; /* cfg->cgroup: the app container's */
	struct pod_upload *upload; /* NULL: no uploads */
};

bool pod_mode(const struct run_cfg *c)
{
	return c->pod != NULL;
}

int pod_args(struct run_cfg *c)
{
	if (c->cgroup || c->n_pids) {
		fprintf(stderr, "run: in a pod (no --standalone) the pod says "
				"what to watch: --pid and --cgroup are for "
				"--standalone\n");
		return -EINVAL;
	}
	if (!c->spool)
		c->spool = POD_DEFAULT_SPOOL;
	c->pod = calloc(1, sizeof(*c->pod));
	return c->pod ? 0 : -ENOMEM;
}

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

/* OOMLENS_POD_SECURITY: the level the injector shaped the sidecar for. */
static void read_pod_security(struct run_cfg *c)
{
	const char *v = getenv("OOMLENS_POD_SECURITY");
	int r = capture_parse_pod_security(v, &c->pod_security);

	if (r == -EINVAL)
		log_warn("OOMLENS_POD_SECURITY=\"%.32s\": expected privileged, "
			 "baseline or restricted, ignoring",
			 v);
}

static int read_env(struct pod *p)
{
	p->name = env_or("POD_NAME", NULL);
	p->ns = env_or("POD_NAMESPACE", NULL);
	p->uid = env_or("POD_UID", NULL);
	p->node = env_or("NODE_NAME", "");
	p->ann_path = env_or("OOMLENS_ANNOTATIONS", POD_DEFAULT_ANNOTATIONS);
	if (p->name && p->ns && p->uid)
		return 0;
	log_error("pod mode needs the Downward API env: %s%s%s(fieldRef "
		  "metadata.name, metadata.namespace, metadata.uid); or run "
		  "with --standalone",
		  p->name ? "" : "POD_NAME ", p->ns ? "" : "POD_NAMESPACE ",
		  p->uid ? "" : "POD_UID ");
	return -EINVAL;
}

/* Applies the annotations file (absent: the defaults). */
static void load_annotations(struct run_cfg *c)
{
	struct pod *p = c->pod;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct pod_annotations *a = calloc(1, sizeof(*a));
	struct stat stt;
	int r;

	if (!a)
		return;
	strbuf_init(&sb, 1u << 20);
	if (stat(p->ann_path, &stt) == 0) {
		p->ann_mtime = stt.st_mtim;
		p->ann_seen = true;
	}
	r = read_file_at(AT_FDCWD, p->ann_path, 256u << 10, &sb);
	if (r < 0 && r != -ENOENT)
		log_warn("annotations \"%s\": %s, using the defaults",
			 p->ann_path, strerror(-r));
	pod_parse_annotations(sb.buf, sb.len, a);
	if (a->bad_lines)
		log_warn("annotations \"%s\": %u malformed line(s), the first: "
			 "\"%s\", ignoring",
			 p->ann_path, a->bad_lines, a->first_bad);
	if (pod_settings_from(a, &p->set))
		log_warn("pod %s/%s: bad annotation values, defaults used: %s",
			 p->ns, p->name, p->set.errors);
	free(a);
	c->th = p->set.th;
	c->trim = p->set.trim == POD_TRIM_TEST		? RUN_TRIM_TEST
		  : p->set.trim == POD_TRIM_ON_PRESSURE ? RUN_TRIM_ON_PRESSURE
							: RUN_TRIM_OFF;
	c->jvm_histogram = p->set.jvm_histogram;
	c->jvm_histogram_max_pause_ms = p->set.jvm_histogram_max_pause_ms;
	c->histogram_knob = "oomlens.io/jvm-histogram-max-pause-ms";
	if (p->set.capture_off)
		log_warn("pod %s/%s has oomlens.io/capture=\"false\": "
			 "recording anyway (remove the sidecar to stop)",
			 p->ns, p->name);
}

void pod_tick(struct run_state *st)
{
	struct pod *p = st->cfg->pod;
	struct stat stt;

	if (!p || stat(p->ann_path, &stt) < 0)
		return;
	if (p->ann_seen && stt.st_mtim.tv_sec == p->ann_mtime.tv_sec &&
	    stt.st_mtim.tv_nsec == p->ann_mtime.tv_nsec)
		return;
	log_info("annotations \"%s\" changed: reloading", p->ann_path);
	load_annotations(st->cfg);
}

/* The container of pid, from its /proc/<pid>/cgroup. */
static int container_of(int root_fd, int pid, char *id, size_t size)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char p[64], uid[64], path[1024];
	int r;

	snprintf(p, sizeof(p), "proc/%d/cgroup", pid);
	strbuf_init(&sb, 65536);
	r = read_file_at(root_fd, p, 65535, &sb);
	if (r < 0)
		return r;
	return pod_parse_proc_cgroup(sb.buf, sb.len, id, size, uid, sizeof(uid),
				     path, sizeof(path));
}

static int open_pid_dir(int root_fd, int pid)
{
	char p[64];
	int fd;

	snprintf(p, sizeof(p), "proc/%d", pid);
	fd = openat(root_fd, p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* OOMLENS_CONTAINER=<name> from the process's environment (the injector
 * sets it in every app container); false when unreadable or absent. */
static bool name_from_env(int root_fd, int pid, char *name, size_t size)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	static const char key[] = "OOMLENS_CONTAINER=";
	_cleanup_close_ int pfd = open_pid_dir(root_fd, pid);

	strbuf_init(&sb, 1u << 20);
	if (pfd < 0 || procfs_read_at(pfd, "environ", 0, 1u << 20, &sb) < 0)
		return false;
	for (size_t i = 0; i < sb.len; i += strlen(sb.buf + i) + 1)
		if (startswith(sb.buf + i, key) &&
		    sb.buf[i + sizeof(key) - 1]) {
			strlcpy_safe(name, sb.buf + i + sizeof(key) - 1, size);
			return true;
		}
	return false;
}

/* Every process but ours, PID 1 and those of our own container. */
static size_t scan_apps(int root_fd, const char *self_id, struct app_proc *out,
			size_t max)
{
	struct dirent *e;
	size_t n = 0;
	int pid;
	DIR *d;

	if (opendir_at(root_fd, "proc", &d) < 0)
		return 0;
	while ((e = readdir(d)) && n < max) {
		struct app_proc *a = &out[n];

		if (parse_int(e->d_name, &pid) < 0 || pid <= 1 ||
		    pid == getpid() ||
		    container_of(root_fd, pid, a->id, sizeof(a->id)) < 0 ||
		    streq(a->id, self_id))
			continue;
		a->pid = pid;
		if (!name_from_env(root_fd, pid, a->name, sizeof(a->name)))
			snprintf(a->name, sizeof(a->name), "%.12s", a->id);
		n++;
	}
	closedir(d);
	return n;
}

/* PID 1 is the pod's pause process when the namespace is shared. */
static bool pid1_is_pause(int root_fd, char *what, size_t size)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *base;

	strbuf_init(&sb, 4096);
	if (getpid() == 1 ||
	    read_file_at(root_fd, "proc/1/cmdline", 4095, &sb) < 0 || !sb.len) {
		strlcpy_safe(what, getpid() == 1 ? "this sidecar" : "unknown",
			     size);
		return false;
	}
	base = strrchr(sb.buf, '/');
	base = base ? base + 1 : sb.buf;
	strlcpy_safe(what, sb.buf, size);
	return streq(base, "pause") || streq(base, "catatonit");
}

static void no_shared_pidns(const char *why)
{
	fprintf(stderr,
		"oomlens-sidecar: %s: the pod does not share one process "
		"namespace.\nAdd to the pod spec:\n\n  spec:\n"
		"    shareProcessNamespace: true\n\n(the oomlens injector "
		"adds it to pods annotated oomlens.io/capture: \"true\")\n",
		why);
	exit(2);
}

/* Whether the memory cgroup at path of fs holds pid. */
static bool cgroup_holds(const struct cgroup_fs *fs, const char *path, int pid)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int pids[RUN_MAX_PIDS];
	size_t n = 0;
	char p[1100];

	snprintf(p, sizeof(p), "%s/cgroup.procs",
		 streq(path, "/") ? "." : path + 1);
	strbuf_init(&sb, 1u << 20);
	if (read_file_at(fs->mem_fd, p, 1u << 20, &sb) < 0)
		return false;
	cgroup_parse_procs(sb.buf, sb.len, pids, &n, RUN_MAX_PIDS);
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/* /proc/<pid>/root of the app: ptrace-mode access (procfs_access.h);
 * why, for the manifest, when refused. */
static int open_app_root(struct run_cfg *c, int root_fd, int pid)
{
	_cleanup_close_ int pfd = open_pid_dir(root_fd, pid);
	char why[CAPTURE_WHY_MAX];
	int fd;

	if (pfd < 0)
		return pfd;
	fd = procfs_open_at(pfd, "root", O_RDONLY | O_DIRECTORY);
	if (fd == -EACCES || fd == -EPERM)
		snprintf(c->cgroup_why, sizeof(c->cgroup_why),
			 "/proc/%d/root: %s; recorded by its pids (RSS from "
			 "/proc/<pid>/status), the limit from the Downward API",
			 pid, procfs_explain_denied(pfd, why, sizeof(why)));
	return fd;
}

/* The app container's cgroup as its own root sees it: its own subtree at
 * the mount's root (v1 bind mount, v2 cgroup namespace), else the whole
 * hierarchy with the container at the path /proc/<pid>/cgroup names. */
static bool use_cgroup(struct run_cfg *c, const char *host_root, int pid,
		       int root_fd)
{
	struct pod *pd = c->pod;
	char *path = pd->cgroup;
	const size_t path_size = sizeof(pd->cgroup);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct host h;
	struct cgroup_fs fs;
	char id[128], uid[64], p[64];
	bool ok = false;
	int fd;

	snprintf(pd->root, sizeof(pd->root), "%s/proc/%d/root",
		 streq(host_root, "/") ? "" : host_root, pid);
	fd = open_app_root(c, root_fd, pid);
	if (fd < 0 || host_adopt(fd, pd->root, &h) < 0)
		return false;
	if (cgroup_fs_open(&h, &fs) == 0) {
		snprintf(p, sizeof(p), "proc/%d/cgroup", pid);
		strbuf_init(&sb, 65536);
		if (cgroup_holds(&fs, "/", pid)) {
			strlcpy_safe(path, "/", path_size);
			ok = true;
		} else if (read_file_at(root_fd, p, 65535, &sb) >= 0 &&
			   pod_parse_proc_cgroup(sb.buf, sb.len, id, sizeof(id),
						 uid, sizeof(uid), path,
						 path_size) == 0 &&
			   cgroup_holds(&fs, path, pid)) {
			ok = true;
		}
		cgroup_fs_close(&fs);
	} else {
		snprintf(c->cgroup_why, sizeof(c->cgroup_why),
			 "no memory cgroup hierarchy under /proc/%d/root; "
			 "recorded by its pids",
			 pid);
	}
	if (ok) {
		c->host_root = pd->root;
		c->cgroup = path;
		/* the run opens it again as this root: kept, not by path */
		c->host_root_fd = fcntl(h.root_fd, F_DUPFD_CLOEXEC, 3);
	}
	host_close(&h);
	return ok;
}

/* No readable cgroup: the container's pids, the Downward API limit. */
static void use_pids(struct run_cfg *c, const struct app_proc *apps, size_t n,
		     const char *id)
{
	const struct pod *p = c->pod;
	char env[128];
	const char *v;
	uint64_t limit;

	for (size_t i = 0; i < n && c->n_pids < RUN_MAX_PIDS; i++)
		if (streq(apps[i].id, id))
			c->pids[c->n_pids++] = apps[i].pid;
	pod_limit_env_name(p->container, env, sizeof(env));
	v = getenv(env);
	if (v && parse_u64(v, &limit) == 0 && limit > 0) {
		c->limit = limit;
		return;
	}
	log_warn("container \"%s\": no readable memory cgroup and no %s "
		 "(Downward API limits.memory): thresholds cannot fire",
		 p->container, env);
}

/* The app container to record: the first selected one seen, the lowest
 * pid in it. */
static const struct app_proc *pick(const struct pod *p,
				   const struct app_proc *apps, size_t n)
{
	const struct app_proc *best = NULL;

	for (size_t i = 0; i < n; i++) {
		if (!pod_container_selected(&p->set, apps[i].name))
			continue;
		if (!best || (streq(best->id, apps[i].id)
				      ? apps[i].pid < best->pid
				      : strcmp(apps[i].name, best->name) < 0))
			best = &apps[i];
	}
	return best;
}

static void log_others(const struct pod *p, const struct app_proc *apps,
		       size_t n, const struct app_proc *chosen)
{
	for (size_t i = 0; i < n; i++)
		if (!streq(apps[i].id, chosen->id) &&
		    pod_container_selected(&p->set, apps[i].name)) {
			log_warn("container \"%s\" is not recorded: one "
				 "sidecar records one container (\"%s\"); "
				 "name it in oomlens.io/containers",
				 apps[i].name, chosen->name);
			return;
		}
}

/* Waits for the app's processes (the containers start together). */
static size_t wait_apps(const struct pod *p, int root_fd, const char *self_id,
			struct app_proc *apps, const struct app_proc **ret)
{
	size_t n = 0;

	for (int i = 0; i <= POD_WAIT_APP_S * 4; i++) {
		n = scan_apps(root_fd, self_id, apps, MAX_APPS);
		*ret = pick(p, apps, n);
		if (*ret)
			break;
		usleep(250000);
	}
	return n;
}

int pod_setup(struct run_cfg *c, const struct cli_globals *g)
{
	struct pod *p = c->pod;
	const char *host_root = g->host_root ? g->host_root : "/";
	_cleanup_free_ struct app_proc *apps = NULL;
	const struct app_proc *chosen = NULL;
	char what[256], self_id[128] = "", msg[400];
	struct host h;
	size_t n;
	int r;

	r = read_env(p);
	if (r < 0)
		return r;
	read_pod_security(c);
	load_annotations(c);
	r = host_open(host_root, &h);
	apps = calloc(MAX_APPS, sizeof(*apps));
	if (r < 0 || !apps) {
		log_error("cannot open \"%s\": %s", host_root,
			  strerror(r < 0 ? -r : ENOMEM));
		return r < 0 ? r : -ENOMEM;
	}
	if (!pid1_is_pause(h.root_fd, what, sizeof(what))) {
		snprintf(msg, sizeof(msg),
			 "PID 1 is \"%s\", not the pause "
			 "process",
			 what);
		no_shared_pidns(msg);
	}
	(void)container_of(h.root_fd, getpid(), self_id, sizeof(self_id));
	n = wait_apps(p, h.root_fd, self_id, apps, &chosen);
	if (!chosen) {
		host_close(&h);
		if (n == 0)
			no_shared_pidns("no other container's process is "
					"visible");
		log_error("pod %s/%s: no running container matches "
			  "oomlens.io/containers",
			  p->ns, p->name);
		return -ENOENT;
	}
	strlcpy_safe(p->container, chosen->name, sizeof(p->container));
	log_others(p, apps, n, chosen);
	if (!use_cgroup(c, host_root, chosen->pid, h.root_fd))
		use_pids(c, apps, n, chosen->id);
	log_info("pod %s/%s (uid %s, node \"%s\"): recording container "
		 "\"%s\" (%.12s) %s%s",
		 p->ns, p->name, p->uid, p->node, p->container, chosen->id,
		 c->cgroup ? "through its cgroup under " : "by its pids",
		 c->cgroup ? c->host_root : "");
	host_close(&h);
	if (c->cgroup) {
		struct pod_upload_info ui = {
			.ns = p->ns,
			.pod = p->name,
			.uid = p->uid,
			.node = p->node,
			.container = p->container,
			.spool = c->spool,
			.cgroup = c->cgroup,
		};

		return pod_upload_start(&ui, g, &p->upload);
	}
	log_warn("recording by pids: the agent reads the spool through the "
		 "node; no OOMBundle upload");
	return 0;
}

void pod_on_snapshot(struct run_state *st)
{
	if (st->cfg->pod)
		pod_upload_request(st->cfg->pod->upload);
}

void pod_stop(struct run_cfg *c)
{
	struct pod *p = c->pod;

	if (!p)
		return;
	pod_upload_stop(p->upload);
	if (c->host_root == p->root)
		c->host_root = NULL;
	if (c->cgroup == p->cgroup)
		c->cgroup = NULL;
	free(p);
	c->pod = NULL;
}
