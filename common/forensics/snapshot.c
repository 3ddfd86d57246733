/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <json-c/json.h>
#include <sys/stat.h>

#include "base/bundle_paths.h"
#include "base/fileio.h"
#include "inspect/jvm.h"
#include "kernel/procfs.h"
#include "kernel/procfs_access.h"
#include "inspect/ptcall.h"
#include "kernel/smaps.h"
#include "forensics/snapshot.h"
#include "base/util.h"

#define RAW_MAX (256u << 10)

struct snap_ctx {
	int pid_fd, dir_fd;
	struct json_object *files, *errors;
	bool truncated;
};

static void note_error(struct snap_ctx *c, const char *what, int r)
{
	struct json_object *e = json_object_new_object();

	json_object_object_add(e, "file", json_object_new_string(what));
	json_object_object_add(e, "error",
			       json_object_new_string(strerror(-r)));
	json_object_array_add(c->errors, e);
	c->truncated = true;
}

static int put_file(struct snap_ctx *c, const char *name, const char *data,
		    size_t len)
{
	int r = write_file_atomic_at(c->dir_fd, name, data, len,
				     MODE_PRIVATE_FILE);

	if (r < 0)
		return r;
	json_object_array_add(c->files, json_object_new_string(name));
	return 0;
}

static int put_json(struct snap_ctx *c, const char *name, struct json_object *o)
{
	const char *s;
	int r;

	if (!o)
		return -ENOMEM;
	s = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	r = s ? put_file(c, name, s, strlen(s)) : -ENOMEM;
	json_object_put(o);
	return r;
}

/* Copies a /proc/<pid> file as is; a vanished process is noted, not an
 * error. Returns 0 or a write error. */
static int copy_raw(struct snap_ctx *c, const char *src, const char *dst,
		    struct strbuf *keep)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_init(&sb, RAW_MAX + 1);
	r = procfs_read_at(c->pid_fd, src, 0, RAW_MAX, &sb);
	if (r < 0 && r != -E2BIG)
		note_error(c, src, r == -ENOENT ? -ESRCH : r);
	if (sb.len == 0)
		return 0;
	r = put_file(c, dst, sb.buf, sb.len);
	if (r >= 0 && keep)
		r = strbuf_add(keep, sb.buf, sb.len);
	return r;
}

static int snap_status(struct snap_ctx *c, struct snapshot_result *res)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct proc_status st;
	int r;

	strbuf_init(&sb, RAW_MAX + 1);
	r = copy_raw(c, "status", "status", &sb);
	if (r < 0)
		return r;
	if (procfs_parse_status(sb.buf, sb.len, &st) == 0) {
		res->rss_kb = st.vm_rss_kb;
		strlcpy_safe(res->name, st.name, sizeof(res->name));
	}
	return 0;
}

static int snap_cmdline(struct snap_ctx *c, const struct snapshot_opts *o,
			struct strbuf *cmdline)
{
	int r = procfs_read_cmdline(c->pid_fd, !o->no_redact, cmdline);

	if (r < 0 && r != -E2BIG) {
		note_error(c, "cmdline", r);
		return 0;
	}
	return put_file(c, BP_P_CMDLINE, cmdline->buf, cmdline->len);
}

static int snap_smaps(struct snap_ctx *c, int pid, const struct strbuf *cmd,
		      const struct snapshot_opts *o,
		      struct snapshot_result *res)
{
	_cleanup_strbuf_ struct strbuf table = STRBUF_INIT;
	struct smaps s;
	struct smaps_summary sum = {0};
	int r;

	strbuf_init(&table, STRBUF_DEFAULT_MAX);
	smaps_init(&s);
	r = smaps_read_at(c->pid_fd, "smaps", &s);
	if (r < 0) {
		note_error(c, "smaps", r);
		res->smaps_err = r;
		return 0;
	}
	if (s.truncated)
		note_error(c, "smaps", -ESRCH);
	r = smaps_render_pmap(&s, pid, cmd->buf, &table);
	if (r >= 0)
		r = put_file(c, BP_P_PMAP, table.buf, table.len);
	if (r >= 0 && o->pmap_json)
		r = put_json(c, BP_P_PMAP_JSON, smaps_to_json(&s, pid));
	if (r >= 0)
		r = smaps_classify(&s, &sum);
	if (r >= 0) {
		res->n_mappings = s.n;
		res->n_arena_heaps = sum.n_arena_heaps;
		res->heap_rss_kb = sum.heap_rss_kb;
		res->arena_rss_kb = sum.arena_rss_kb;
		r = put_json(c, BP_P_CLASSES, smaps_summary_classes_json(&sum));
		if (r >= 0)
			r = put_json(c, BP_P_ARENAS,
				     smaps_summary_arenas_json(&sum));
		smaps_summary_release(&sum);
	}
	smaps_release(&s);
	return r;
}

static int snap_meta(struct snap_ctx *c, const struct snapshot_result *res)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "pid", json_object_new_int(res->pid));
	json_object_object_add(o, "name", json_object_new_string(res->name));
	json_object_object_add(o, "time_us",
			       json_object_new_uint64(now_realtime_us()));
	json_object_object_add(o, "rss_kb",
			       json_object_new_uint64(res->rss_kb));
	json_object_object_add(o, "truncated",
			       json_object_new_boolean(c->truncated));
	json_object_object_add(o, "files", json_object_get(c->files));
	json_object_object_add(o, "errors", json_object_get(c->errors));
	return put_json(c, BP_P_SNAPSHOT, o);
}

static int snap_all(struct snap_ctx *c, const struct host *h, int pid,
		    const struct snapshot_opts *o, struct snapshot_result *res)
{
	_cleanup_strbuf_ struct strbuf cmdline = STRBUF_INIT;
	int r;

	strbuf_init(&cmdline, 128u << 10);
	r = snap_status(c, res);
	if (r >= 0)
		r = snap_cmdline(c, o, &cmdline);
	if (r >= 0)
		r = copy_raw(c, "cgroup", "cgroup", NULL);
	if (r >= 0)
		r = copy_raw(c, "smaps_rollup", "smaps_rollup", NULL);
	if (r >= 0)
		r = snap_smaps(c, pid, &cmdline, o, res);
	/* JVM outputs (jvm/): a JVM that cannot be attached is not a failed
	 * snapshot; jvm/attach.json records why. */
	if (r >= 0 && !o->skip_jvm)
		(void)jvm_snapshot(h, pid, c->dir_fd, NULL);
	/* allocator.json (mallinfo2 + malloc_info via ptrace), opt-in: a
	 * refused probe writes its reason there, never fails the snapshot. */
	if (r >= 0 && o->allocator_probe &&
	    ptcall_write_allocator_json(h->proc_fd, pid, c->dir_fd, 0) == 0)
		json_object_array_add(c->files,
				      json_object_new_string(BP_P_ALLOCATOR));
	if (r >= 0)
		r = snap_meta(c, res);
	return r;
}

int snapshot_process(const struct host *h, int pid, int out_dirfd,
		     const struct snapshot_opts *o, struct snapshot_result *ret)
{
	static const struct snapshot_opts defaults = {0};
	struct snapshot_result res = {.pid = pid};
	struct snap_ctx c = {.pid_fd = -1, .dir_fd = -1};
	char name[32];
	int r;

	if (!o)
		o = &defaults;
	c.pid_fd = host_open_pid(h, pid);
	if (c.pid_fd < 0)
		return c.pid_fd;
	snprintf(name, sizeof(name), "%d", pid);
	if (mkdirat(out_dirfd, name, MODE_PRIVATE_DIR) < 0 && errno != EEXIST) {
		r = -errno;
		goto out;
	}
	c.dir_fd = openat(out_dirfd, name,
			  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c.dir_fd < 0) {
		r = -errno;
		goto out;
	}
	c.files = json_object_new_array();
	c.errors = json_object_new_array();
	r = c.files && c.errors ? snap_all(&c, h, pid, o, &res) : -ENOMEM;
	res.truncated = c.truncated;
	if (r >= 0 && ret)
		*ret = res;
out:
	json_object_put(c.files);
	json_object_put(c.errors);
	closep(&c.pid_fd);
	closep(&c.dir_fd);
	return r;
}
