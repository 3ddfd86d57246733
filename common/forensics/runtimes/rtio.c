/* SPDX-License-Identifier: Apache-2.0 */
/* rtio: a live process's files, environment and executable for the
 * runtimes' sidecar hooks; facts.json, report rows and verdicts for their
 * diagnosis hooks (rtio.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bundle_paths.h"
#include "base/fileio.h"
#include "base/host.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "forensics/bundle.h"
#include "forensics/diagnosis_frame.h"
#include "forensics/runtimes/rtelf.h"
#include "forensics/runtimes/rtio.h"
#include "kernel/procfs_access.h"

#define ENV_MAX (256u << 10) /* /proc/<pid>/environ read at most */
#define MAPS_MAX (16u << 20) /* a JVM's maps are ~200 KiB */
#define MEMINFO_MAX (16u << 10)

/* ---- the live process ---- */

int rtio_read(const struct rt_sight *s, const char *name, size_t max,
	      struct strbuf *sb)
{
	int r;

	strbuf_init(sb, max + 1);
	r = procfs_read_at(s->proc_fd, name, O_NOFOLLOW | O_NONBLOCK, max, sb);
	return r == -E2BIG ? 0 : r;
}

int rtio_maps(const struct rt_sight *s, struct strbuf *own,
	      const struct strbuf **ret)
{
	struct rt_sight_cache *c = s->cache;

	if (!c) {
		*ret = own;
		return rtio_read(s, "maps", MAPS_MAX, own);
	}
	if (!c->maps_read) {
		c->maps_err = rtio_read(s, "maps", MAPS_MAX, &c->maps);
		c->maps_read = true;
	}
	*ret = &c->maps;
	return c->maps_err;
}

int rtio_with_env(const struct rt_sight *s, rtio_env_fn fn, void *ctx)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r = rtio_read(s, "environ", ENV_MAX, &sb);

	if (r < 0) {
		explicit_bzero(sb.buf, sb.len);
		return r;
	}
	r = fn(sb.buf, sb.len, ctx);
	explicit_bzero(sb.buf, sb.len);
	return r;
}

int rtio_exe_open(const struct rt_sight *s, struct rtio_exe *ret)
{
	struct stat st;
	int fd = procfs_open_at(s->proc_fd, "exe", O_RDONLY | O_NONBLOCK);

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	*ret = (struct rtio_exe){fd, (uint64_t)st.st_size};
	return 0;
}

void rtio_exe_close(struct rtio_exe *e)
{
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
}

static ssize_t fd_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
	ssize_t r = pread(*(const int *)ctx, buf, len, (off_t)off);

	return r < 0 ? -errno : r;
}

bool rtio_exe_has_symbol(const void *ctx, const char *name)
{
	const struct rtio_exe *e = ctx;
	int fd = e->fd;

	return rtelf_has_symbol(fd_pread, &fd, e->size, name) == 1;
}

void rtio_exe_path(const struct rt_sight *s, char *buf, size_t size)
{
	ssize_t n = size ? readlinkat(s->proc_fd, "exe", buf, size - 1) : -1;

	if (size)
		buf[n > 0 ? n : 0] = '\0';
}

int rtio_host_mem(const struct rt_sight *s, uint64_t *ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	if (!s->h || s->h->proc_fd < 0)
		return -ENOENT;
	strbuf_init(&sb, MEMINFO_MAX);
	r = read_file_at(s->h->proc_fd, "meminfo", MEMINFO_MAX, &sb);
	if (r < 0 && r != -E2BIG)
		return r;
	return rtproc_parse_meminfo(sb.buf, sb.len, ret);
}

int rtio_write_facts(int pid_dirfd, const char *dir, const char *file,
		     struct json_object *o)
{
	const char *txt =
		json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	int r;

	if (!txt)
		return -ENOMEM;
	r = mkdir_p_at(pid_dirfd, dir, MODE_PRIVATE_DIR);
	if (r == 0)
		r = write_file_atomic_at(pid_dirfd, file, txt, strlen(txt),
					 MODE_PRIVATE_FILE);
	return r;
}

static int by_rss(const void *a, const void *b)
{
	const struct rtproc_range *x = a, *y = b;

	return x->rss_kb < y->rss_kb ? 1 : x->rss_kb > y->rss_kb ? -1 : 0;
}

struct json_object *rtio_ranges_json(const struct rtproc_ranges *r)
{
	struct rtproc_range s[RTPROC_MAX_RANGES];
	struct json_object *a = json_object_new_array();
	size_t n = r->n < RTPROC_MAX_RANGES ? r->n : RTPROC_MAX_RANGES;

	memcpy(s, r->r, n * sizeof(*s));
	qsort(s, n, sizeof(*s), by_rss);
	for (size_t i = 0; a && i < n; i++) {
		struct json_object *e = json_object_new_array();

		json_object_array_add(e, json_object_new_uint64(s[i].start));
		json_object_array_add(e, json_object_new_uint64(s[i].end));
		json_object_array_add(a, e);
	}
	return a;
}

/* ---- a bundle ---- */

struct json_object *rtio_facts(const struct bundle *b, int pid,
			       const char *file, struct jget_notes *n)
{
	char path[128];
	struct json_object *o;

	snprintf(path, sizeof(path), BP_PROC_DIR_FMT "/%s", pid, file);
	jget_where(n, path);
	o = bundle_get_json(b, path);
	if (o && !json_object_is_type(o, json_type_object)) {
		jget_note(n, "not an object: ignored");
		json_object_put(o);
		o = NULL;
	}
	return o;
}

double rtio_age_s(struct jget_notes *n, struct json_object *o, uint64_t kill_ms)
{
	uint64_t t = 0;

	if (!jget_u64(n, o, "t_ms", &t) || !t || !kill_ms)
		return -1;
	return ((double)kill_ms - (double)t) / 1000.0;
}

size_t rtio_procs_load(const struct bundle *b, struct diag_input *in,
		       uint64_t kill_ms, const struct rtio_procs *t,
		       void *items)
{
	size_t k = 0;

	for (size_t i = 0; i < in->n_procs && k < t->max; i++) {
		int pid = in->procs[i].pid;
		struct json_object *o = rtio_facts(b, pid, t->file, &in->notes);
		unsigned char *item = (unsigned char *)items + k * t->size;
		double age;

		if (!o)
			continue;
		memset(item, 0, t->size);
		memcpy(item, &pid, sizeof(pid));
		t->load(&in->notes, o, item);
		age = rtio_age_s(&in->notes, o, kill_ms);
		memcpy(item + t->age_off, &age, sizeof(age));
		json_object_put(o);
		k++;
	}
	jget_where(&in->notes, NULL);
	return k;
}

const void *rtio_procs_find(const void *items, size_t size, size_t n, int pid)
{
	for (size_t i = 0; items && i < n; i++) {
		const unsigned char *item =
			(const unsigned char *)items + i * size;
		int p;

		memcpy(&p, item, sizeof(p));
		if (p == pid)
			return item;
	}
	return NULL;
}

size_t rtio_ranges_load(struct jget_notes *n, struct json_object *o,
			const char *key, struct rtproc_range *ret, size_t max)
{
	struct json_object *a = jget_array(n, o, key);
	size_t k = 0, bad = 0;

	for (size_t i = 0; i < jget_len(a) && k < max; i++) {
		struct json_object *e = jget_idx(a, i);
		uint64_t lo, hi;

		/* json-c keeps a negative number as int64, which reads as
		 * < 0; one above INT64_MAX (an address) reads as INT64_MAX */
		if (!json_object_is_type(e, json_type_array) ||
		    jget_len(e) != 2 ||
		    !json_object_is_type(jget_idx(e, 0), json_type_int) ||
		    !json_object_is_type(jget_idx(e, 1), json_type_int) ||
		    json_object_get_int64(jget_idx(e, 0)) < 0 ||
		    json_object_get_int64(jget_idx(e, 1)) < 0) {
			bad++;
			continue;
		}
		lo = (uint64_t)json_object_get_uint64(jget_idx(e, 0));
		hi = (uint64_t)json_object_get_uint64(jget_idx(e, 1));
		if (lo < hi)
			ret[k++] = (struct rtproc_range){lo, hi, 0};
		else
			bad++;
	}
	if (bad)
		jget_note(n,
			  "\"%s\": %zu entries are not [start, end] "
			  "addresses: ignored",
			  key, bad);
	return k;
}

void rtio_label_ranges(const struct bundle *b, const char *dir,
		       const char *file, const char *key, int pid,
		       struct rt_mapping *rows, size_t n,
		       struct jget_notes *notes, const char *label)
{
	struct rtproc_range r[RTPROC_MAX_RANGES];
	char path[160];
	struct json_object *o;
	size_t k;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	o = bundle_get_json(b, path);
	if (!o)
		return;
	jget_where(notes, path);
	k = rtio_ranges_load(notes, o, key, r, ARRAY_SIZE(r));
	json_object_put(o);
	for (size_t j = 0; j < n; j++)
		for (size_t i = 0; i < k; i++)
			if (rows[j].pid == pid && !rows[j].name[0] &&
			    rows[j].addr >= r[i].start &&
			    rows[j].addr < r[i].end)
				snprintf(rows[j].name, rows[j].name_size, "%s",
					 label);
}

uint64_t rtio_part_of(const struct diagnosis *d, int pid, const char *name)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < d->n_parts; i++)
		if (d->parts[i].pid == pid && streq(d->parts[i].name, name))
			sum = add_sat(sum, d->parts[i].bytes);
	return sum;
}

struct diag_verdict *rtio_verdict(const struct diag_input *in,
				  struct diagnosis *d, enum diag_kind k,
				  const char *detail,
				  const struct rtproc_verdict *rv, int pid,
				  const char *who, double age_s)
{
	struct diag_verdict *v = diag_verdict(d, k, rv->confidence, rv->bytes);
	char age[48] = "";

	strlcpy_safe(v->detail, detail, sizeof(v->detail));
	if (age_s >= 0)
		snprintf(age, sizeof(age), " (smaps, %.1f s before the kill)",
			 age_s);
	EVID(v, "pid %d (%s): %s%s", pid, who, rv->summary, age);
	for (size_t i = 0; i < rv->n_evidence; i++)
		EVID(v, "%s", rv->evidence[i]);
	for (size_t i = 0; i < rv->n_remedies; i++)
		RECO(v, "%s", rv->remedies[i]);
	if (d->limit_bytes != UINT64_MAX)
		RECO(v, "or raise the limit to %s",
		     H(diag_suggested_limit(in, d)));
	return v;
}
