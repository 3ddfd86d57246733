/* SPDX-License-Identifier: Apache-2.0 */
/* The JVM part of a heavy snapshot (jvm/ below a process directory) and
 * the trim test. Only cheap commands: never VM.info, which grows the target
 * by megabytes next to an OOM. */
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <sys/stat.h>

#include "base/bundle_paths.h"
#include "jvm_internal.h"
#include "base/fileio.h"
#include "kernel/procfs.h"

#define SNAP_REPLY_TIMEOUT_MS 10000u

int jvm_read_rss(const struct host *h, int pid, uint64_t *ret)
{
	_cleanup_close_ int fd = host_open_pid(h, pid);
	struct proc_status st;
	int r;

	if (fd < 0)
		return fd;
	r = procfs_read_status(fd, &st);
	if (r < 0)
		return r;
	if (!st.has_mm)
		return -ESRCH;
	*ret = st.vm_rss_kb * 1024;
	return 0;
}

static bool unknown_command(const struct jvm_reply *rep)
{
	return rep->status != 0 ||
	       strstr(rep->text.buf, "Unknown diagnostic command");
}

static void first_line(const char *s, char *ret, size_t size)
{
	size_t n = strcspn(s, "\n");

	if (n >= size)
		n = size - 1;
	memcpy(ret, s, n);
	ret[n] = '\0';
}

/* Runs the trim command on an attached JVM, falling back to the JDK 17
 * early-update name. */
static int trim_attached(struct jvm_target *t, struct jvm_trim_result *res)
{
	static const char *const names[] = {"System.trim_native_heap",
					    "VM.trim_libc_heap"};
	int r = -JVM_E_NO_COMMAND;

	for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
		struct jvm_reply rep = {0};

		r = jvm_jcmd(t, names[k], &rep);
		if (r < 0)
			return r;
		if (unknown_command(&rep)) {
			first_line(rep.text.buf, res->output,
				   sizeof(res->output));
			jvm_reply_release(&rep);
			r = -JVM_E_NO_COMMAND;
			continue;
		}
		strlcpy_safe(res->command, names[k], sizeof(res->command));
		first_line(rep.text.buf, res->output, sizeof(res->output));
		jvm_reply_release(&rep);
		return 0;
	}
	return r;
}

int jvm_trim(const struct host *h, int pid, const struct jvm_attach_opts *o,
	     struct jvm_trim_result *ret)
{
	struct jvm_trim_result res = {0};
	struct jvm_target t;
	uint64_t t0;
	int r;

	r = jvm_attach(h, pid, o, &t);
	if (r < 0)
		return r;
	r = jvm_read_rss(h, pid, &res.rss_before);
	if (r < 0)
		return r;
	t0 = now_monotonic_us();
	r = trim_attached(&t, &res);
	if (r < 0)
		return r;
	res.duration_us = now_monotonic_us() - t0;
	r = jvm_read_rss(h, pid, &res.rss_after);
	if (r < 0)
		return r;
	*ret = res;
	return 0;
}

/* {"error": <jvm_strerror(r)>, "errno": -r} */
static struct json_object *error_json(int r)
{
	struct json_object *o = json_object_new_object();

	if (o) {
		json_object_object_add(o, "error",
				       json_object_new_string(jvm_strerror(r)));
		json_object_object_add(o, "errno", json_object_new_int(-r));
	}
	return o;
}

int jvm_trim_snapshot(const struct host *h, int pid, int out_dirfd,
		      const struct jvm_attach_opts *o,
		      struct jvm_trim_result *ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct jvm_trim_result res;
	int r;

	strbuf_init(&sb, 64u << 10);
	r = jvm_trim(h, pid, o, &res);
	if (r == -JVM_E_NOT_JVM || r == -ESRCH || r == -EACCES)
		return r; /* nothing to say about a JVM */
	if (r < 0)
		jvm_json_append(error_json(r), &sb);
	else
		jvm_trim_to_json(&res, &sb);
	strbuf_addch(&sb, '\n');
	if (mkdir_p_at(out_dirfd, BP_JVM_DIR, MODE_PRIVATE_DIR) == 0)
		write_file_atomic_at(out_dirfd, BP_JVM_TRIM, sb.buf, sb.len,
				     MODE_PRIVATE_FILE);
	if (r == 0 && ret)
		*ret = res;
	return r;
}

enum snap_kind { SNAP_NMT, SNAP_HEAP, SNAP_MALLOC, SNAP_FLAGS };

struct snap_cmd {
	const char *cmdline, *raw_name, *json_name;
	enum snap_kind kind;
};

/* Cheap first: a JVM near its limit may stop answering part way. */
static const struct snap_cmd snap_cmds[] = {
	{"GC.heap_info", BP_JVM_HEAP_INFO, BP_JVM_HEAP_INFO_JSON, SNAP_HEAP},
	{"VM.flags", BP_JVM_FLAGS, BP_JVM_FLAGS_JSON, SNAP_FLAGS},
	{"VM.native_memory summary", BP_JVM_NMT, BP_JVM_NMT_JSON, SNAP_NMT},
	{"System.native_heap_info", BP_JVM_NATIVE_HEAP, BP_JVM_NATIVE_HEAP_JSON,
	 SNAP_MALLOC},
};

/* Parses a reply into JSON; a parse failure becomes {"error": ...}. */
static int snap_parse(enum snap_kind kind, const struct strbuf *text,
		      struct strbuf *json)
{
	union {
		struct jvm_nmt nmt;
		struct jvm_heap_info heap;
		struct jvm_malloc_info mi;
		struct jvm_flags flags;
	} *u = calloc(1, sizeof(*u));
	int r;

	if (!u)
		return -ENOMEM;
	if (kind == SNAP_NMT) {
		r = jvm_parse_nmt(text->buf, text->len, &u->nmt);
		if (r == 0)
			r = jvm_nmt_to_json(&u->nmt, json);
	} else if (kind == SNAP_HEAP) {
		r = jvm_parse_heap_info(text->buf, text->len, &u->heap);
		if (r == 0)
			r = jvm_heap_info_to_json(&u->heap, json);
	} else if (kind == SNAP_FLAGS) {
		r = jvm_parse_flags(text->buf, text->len, &u->flags);
		if (r == 0)
			r = jvm_flags_to_json(&u->flags, json);
	} else {
		r = jvm_parse_malloc_info(text->buf, text->len, &u->mi);
		if (r == 0)
			r = jvm_malloc_info_to_json(&u->mi, json);
	}
	free(u);
	if (r < 0) {
		struct json_object *o = json_object_new_object();
		char why[128];

		snprintf(why, sizeof(why), "unparsable reply (%s)",
			 strerror(-r));
		if (o)
			json_object_object_add(o, "error",
					       json_object_new_string(why));
		strbuf_reset(json);
		r = jvm_json_append(o, json);
	}
	return r < 0 ? r : strbuf_addch(json, '\n');
}

/* One command: raw reply + JSON, and its entry in attach.json. */
static int snap_one(struct jvm_target *t, int out_dirfd,
		    const struct snap_cmd *c, struct json_object *cmds)
{
	_cleanup_strbuf_ struct strbuf json = STRBUF_INIT;
	struct jvm_reply rep = {0};
	struct json_object *e = json_object_new_object();
	int r;

	if (!e)
		return -ENOMEM;
	json_object_array_add(cmds, e);
	strbuf_init(&json, 1u << 20);
	r = jvm_jcmd(t, c->cmdline, &rep);
	json_object_object_add(e, "command",
			       json_object_new_string(c->cmdline));
	if (r < 0) {
		json_object_object_add(e, "error",
				       json_object_new_string(jvm_strerror(r)));
		return r;
	}
	json_object_object_add(e, "status", json_object_new_int(rep.status));
	json_object_object_add(e, "bytes",
			       json_object_new_uint64(rep.text.len));
	json_object_object_add(e, "truncated",
			       json_object_new_boolean(rep.truncated));
	if (unknown_command(&rep)) {
		jvm_reply_release(&rep);
		return -JVM_E_NO_COMMAND;
	}
	r = write_file_atomic_at(out_dirfd, c->raw_name, rep.text.buf,
				 rep.text.len, MODE_PRIVATE_FILE);
	if (r == 0)
		r = snap_parse(c->kind, &rep.text, &json);
	if (r == 0)
		r = write_file_atomic_at(out_dirfd, c->json_name, json.buf,
					 json.len, MODE_PRIVATE_FILE);
	jvm_reply_release(&rep);
	return r;
}

/* attach.json: what the attach gave, and (when attached) an empty
 * "commands" array returned in *ret_cmds for snap_one() to fill. */
static struct json_object *snap_attach_json(const struct jvm_target *t,
					    int attach_r,
					    struct json_object **ret_cmds)
{
	struct json_object *o = json_object_new_object();

	*ret_cmds = NULL;
	if (!o)
		return NULL;
	json_object_object_add(o, "attached",
			       json_object_new_boolean(attach_r == 0));
	if (attach_r < 0) {
		json_object_object_add(
			o, "error",
			json_object_new_string(jvm_strerror(attach_r)));
		json_object_object_add(o, "errno",
				       json_object_new_int(-attach_r));
		return o;
	}
	json_object_object_add(o, "pid", json_object_new_int(t->info.pid));
	json_object_object_add(o, "nspid", json_object_new_int(t->info.nspid));
	json_object_object_add(o, "uid", json_object_new_uint64(t->info.uid));
	json_object_object_add(o, "protocol", json_object_new_int(t->protocol));
	*ret_cmds = json_object_new_array();
	json_object_object_add(o, "commands", *ret_cmds);
	return o;
}

int jvm_snapshot(const struct host *h, int pid, int out_dirfd,
		 const struct jvm_snapshot_opts *o)
{
	struct jvm_attach_opts ao = o ? o->attach : (struct jvm_attach_opts){0};
	_cleanup_strbuf_ struct strbuf log = STRBUF_INIT;
	struct jvm_target t;
	struct json_object *attach, *cmds;
	int r, rm, answered = 0;

	memset(&t, 0, sizeof(t));
	strbuf_init(&log, 64u << 10);
	if (!ao.reply_timeout_ms)
		ao.reply_timeout_ms = SNAP_REPLY_TIMEOUT_MS;
	r = jvm_attach(h, pid, &ao, &t);
	/* Not a JVM, gone, or unreadable (the snapshot records that). */
	if (r == -JVM_E_NOT_JVM || r == -ESRCH || r == -EACCES)
		return r;
	rm = mkdir_p_at(out_dirfd, BP_JVM_DIR, MODE_PRIVATE_DIR);
	if (rm < 0)
		return rm;
	attach = snap_attach_json(&t, r, &cmds);
	for (size_t k = 0; r == 0 && cmds && k < ARRAY_SIZE(snap_cmds); k++) {
		uint64_t now = now_monotonic_us(),
			 dl = o ? o->deadline_mono_us : 0;
		int rk;

		if (dl && now + 20000 >= dl) {
			struct json_object *e = json_object_new_object();

			json_object_object_add(
				e, "command",
				json_object_new_string(snap_cmds[k].cmdline));
			json_object_object_add(
				e, "error", json_object_new_string("deadline"));
			json_object_array_add(cmds, e);
			break;
		}
		if (dl && (dl - now) / 1000 < t.opts.reply_timeout_ms)
			t.opts.reply_timeout_ms = (unsigned)((dl - now) / 1000);
		rk = snap_one(&t, out_dirfd, &snap_cmds[k], cmds);

		if (rk == 0)
			answered++;
		/* A JVM gone or hung: do not try the next commands. */
		if (rk == -ESRCH || rk == -JVM_E_TIMEOUT)
			break;
	}
	if (jvm_json_append(attach, &log) == 0 && strbuf_addch(&log, '\n') == 0)
		write_file_atomic_at(out_dirfd, BP_JVM_ATTACH, log.buf, log.len,
				     MODE_PRIVATE_FILE);
	if (r < 0)
		return r;
	return answered ? 0 : -JVM_E_PROTO;
}
