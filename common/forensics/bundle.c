/* SPDX-License-Identifier: Apache-2.0 */
/* Bundle: files in memory (with a hash index by path) → libarchive (pax
 * restricted, i.e. plain ustar headers unless a name needs more) → gzip,
 * fitted to a size cap in one compression pass. Reading back is bounded:
 * every cap is checked before anything is allocated. */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

#include "base/bundle_paths.h"
#include "forensics/bundle.h"
#include "base/fileio.h"
#include "base/jget.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "base/util.h"

#define BUNDLE_FILE_MAX (64u << 20)
#define BUNDLE_TREE_DEPTH 8

struct bundle_file {
	char *path;
	char *data;
	size_t len;
	enum bundle_prio prio;
	bool dropped;
	bool too_costly; /* refused by bundle_get_json(), said once */
	size_t cost; /* estimated compressed bytes in the archive, 0: unknown */
};

struct bundle {
	char *id;
	struct bundle_file *files;
	size_t n, cap;
	size_t *slots;	 /* open addressing: index + 1 into files, 0 empty */
	size_t nslots;	 /* a power of two, at least 2 * n */
	unsigned passes; /* whole-archive compressions by the last write */
	struct json_object *manifest;
	struct json_object *truncated; /* array of {path, reason} */
	uint64_t mtime;
};

static bool valid_id(const char *id)
{
	if (!*id || strlen(id) > 128 || streq(id, ".") || streq(id, ".."))
		return false;
	for (const char *p = id; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && *p != '.' && *p != '_' &&
		    *p != '-')
			return false;
	return true;
}

static bool valid_path(const char *path)
{
	const char *p = path;

	if (!*path || *path == '/' || strlen(path) > 240)
		return false;
	while (*p) {
		const char *e = strchrnul(p, '/');
		size_t n = (size_t)(e - p);

		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p = *e ? e + 1 : e;
	}
	return true;
}

int bundle_new(const char *id, struct bundle **ret)
{
	struct bundle *b;

	if (!valid_id(id))
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->id = strdup(id);
	b->manifest = json_object_new_object();
	b->truncated = json_object_new_array();
	if (!b->id || !b->manifest || !b->truncated) {
		bundle_free(b);
		return -ENOMEM;
	}
	b->mtime = now_realtime_us() / 1000000u;
	/* First in the file; bundle_write() fills them in place. */
	json_object_object_add(b->manifest, "schema",
			       json_object_new_string(BUNDLE_SCHEMA));
	json_object_object_add(b->manifest, "id", json_object_new_string(id));
	*ret = b;
	return 0;
}

void bundle_free(struct bundle *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++) {
		free(b->files[i].path);
		free(b->files[i].data);
	}
	free(b->files);
	free(b->slots);
	json_object_put(b->manifest);
	json_object_put(b->truncated);
	free(b->id);
	free(b);
}

const char *bundle_id(const struct bundle *b)
{
	return b->id;
}

struct json_object *bundle_manifest(struct bundle *b)
{
	return b->manifest;
}

/* FNV-1a: paths are short and trusted to be distinct enough. */
static size_t hash_path(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

static struct bundle_file *find_file(const struct bundle *b, const char *path)
{
	size_t mask = b->nslots - 1;

	if (!b->nslots)
		return NULL;
	for (size_t i = hash_path(path) & mask;; i = (i + 1) & mask) {
		size_t s = b->slots[i];

		if (!s)
			return NULL;
		if (streq(b->files[s - 1].path, path))
			return &b->files[s - 1];
	}
}

static void index_put(size_t *slots, size_t nslots, const char *path,
		      size_t idx)
{
	size_t i = hash_path(path) & (nslots - 1);

	while (slots[i])
		i = (i + 1) & (nslots - 1);
	slots[i] = idx + 1;
}

/* Makes room in the index for one more file (kept at most half full). */
static int index_reserve(struct bundle *b)
{
	size_t ns = b->nslots ? b->nslots : 64;
	size_t *slots;

	if ((b->n + 1) * 2 <= b->nslots)
		return 0;
	while ((b->n + 1) * 2 > ns)
		ns *= 2;
	slots = calloc(ns, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < b->n; i++)
		index_put(slots, ns, b->files[i].path, i);
	free(b->slots);
	b->slots = slots;
	b->nslots = ns;
	return 0;
}

int bundle_add(struct bundle *b, const char *path, const void *data, size_t len,
	       enum bundle_prio prio)
{
	struct bundle_file *f;
	char *copy;

	if (!valid_path(path) || len > BUNDLE_FILE_MAX)
		return -EINVAL;
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	if (len)
		memcpy(copy, data, len);
	copy[len] = '\0';
	f = find_file(b, path);
	if (f) {
		free(f->data);
	} else {
		if (index_reserve(b) < 0) {
			free(copy);
			return -ENOMEM;
		}
		if (b->n == b->cap) {
			size_t nc = b->cap ? b->cap * 2 : 16;
			void *p = realloc(b->files, nc * sizeof(*b->files));

			if (!p) {
				free(copy);
				return -ENOMEM;
			}
			b->files = p;
			b->cap = nc;
		}
		f = &b->files[b->n];
		f->path = strdup(path);
		if (!f->path) {
			free(copy);
			return -ENOMEM;
		}
		index_put(b->slots, b->nslots, path, b->n);
		b->n++;
	}
	f->data = copy;
	f->len = len;
	f->prio = prio;
	f->dropped = false;
	f->too_costly = false;
	f->cost = 0;
	return 0;
}

size_t bundle_raise_prio(struct bundle *b, const char *prefix,
			 enum bundle_prio prio)
{
	size_t n = 0, len = strlen(prefix);

	for (size_t i = 0; i < b->n; i++)
		if (b->files[i].prio > prio &&
		    !strncmp(b->files[i].path, prefix, len)) {
			b->files[i].prio = prio;
			n++;
		}
	return n;
}

int bundle_add_json(struct bundle *b, const char *path, struct json_object *obj,
		    enum bundle_prio prio)
{
	size_t len;
	const char *s = json_object_to_json_string_length(
		obj,
		JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			JSON_C_TO_STRING_NOSLASHESCAPE,
		&len);

	if (!s)
		return -ENOMEM;
	return bundle_add(b, path, s, len, prio);
}

/* {path, reason} onto a bundle's truncated[] (a list the bundle points
 * at: a const bundle's readers may note too). */
static int note(struct json_object *truncated, const char *path,
		const char *why)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "reason", json_object_new_string(why));
	json_object_array_add(truncated, o);
	return 0;
}

int bundle_note_truncated(struct bundle *b, const char *path, const char *why)
{
	return note(b->truncated, path, why);
}

struct json_object *bundle_truncated(const struct bundle *b)
{
	return b->truncated;
}

int bundle_add_file_at(struct bundle *b, const char *path, int dirfd,
		       const char *src, size_t max, enum bundle_prio prio)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_init(&sb, max + 1);
	r = read_file_at_nofollow(dirfd, src, max, &sb);
	if (r == -E2BIG)
		bundle_note_truncated(b, path, "file larger than the cap");
	else if (r < 0 && sb.len == 0)
		return r;
	else if (r < 0)
		bundle_note_truncated(b, path, "read ended early");
	return bundle_add(b, path, sb.buf, sb.len, prio);
}

static int add_tree(struct bundle *b, const char *prefix, int fd, int depth,
		    enum bundle_prio prio)
{
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (depth > BUNDLE_TREE_DEPTH) {
		close(fd);
		return -ELOOP;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while (r >= 0 && (de = readdir(d))) {
		_cleanup_strbuf_ struct strbuf sub = STRBUF_INIT;
		struct stat st;

		strbuf_init(&sub, 1024); /* before any continue: cleanup */
		if (de->d_name[0] == '.')
			continue;
		if (strbuf_addf(&sub, "%s/%s", prefix, de->d_name) < 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			int sfd = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						 O_CLOEXEC);
			if (sfd >= 0)
				r = add_tree(b, sub.buf, sfd, depth + 1, prio);
		} else if (S_ISREG(st.st_mode)) {
			r = bundle_add_file_at(b, sub.buf, dirfd(d), de->d_name,
					       BUNDLE_FILE_MAX, prio);
			if (r == -ENOENT)
				r = 0; /* vanished while we listed: fine */
		}
	}
	closedir(d);
	return r;
}

int bundle_add_tree_at(struct bundle *b, const char *prefix, int dirfd,
		       const char *src, enum bundle_prio prio)
{
	int fd = openat(dirfd, src,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (!valid_path(prefix)) {
		close(fd);
		return -EINVAL;
	}
	return add_tree(b, prefix, fd, 0, prio);
}

bool bundle_has(const struct bundle *b, const char *path)
{
	return find_file(b, path) != NULL;
}

const char *bundle_get(const struct bundle *b, const char *path,
		       size_t *ret_len)
{
	struct bundle_file *f = find_file(b, path);

	if (!f)
		return NULL;
	if (ret_len)
		*ret_len = f->len;
	return f->data;
}

struct json_object *bundle_get_json(const struct bundle *b, const char *path)
{
	struct bundle_file *f = find_file(b, path);
	uint64_t cost;

	if (!f)
		return NULL;
	/* A pod's JSON can ask for a tree a hundred times its size: the
	 * cost is known before a byte is allocated. */
	cost = jget_tree_cost(f->data, f->len);
	if (cost > BUNDLE_JSON_MAX_TREE) {
		char why[160];

		snprintf(why, sizeof(why),
			 "kept, not parsed: its JSON tree would take %llu MiB, "
			 "over BUNDLE_JSON_MAX_TREE (%u MiB)",
			 (unsigned long long)(cost >> 20),
			 BUNDLE_JSON_MAX_TREE >> 20);
		if (!f->too_costly) {
			log_warn("bundle \"%s\": %s: %s", b->id, path, why);
			(void)note(b->truncated, path, why);
		}
		f->too_costly = true;
		return NULL;
	}
	/* data is NUL-terminated by bundle_add() */
	return json_tokener_parse(f->data);
}

int bundle_foreach(const struct bundle *b,
		   int (*fn)(const char *path, const char *data, size_t len,
			     void *userdata),
		   void *userdata)
{
	for (size_t i = 0; i < b->n; i++) {
		int r = fn(b->files[i].path, b->files[i].data, b->files[i].len,
			   userdata);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- writing: pax (ustar headers) + gzip through libarchive ---- */

static la_ssize_t sink_write(struct archive *a, void *ud, const void *buf,
			     size_t len)
{
	int r = strbuf_add(ud, buf, len);

	if (r < 0) {
		archive_set_error(a, -r, "bundle output over its cap");
		return -1;
	}
	return (la_ssize_t)len;
}

static int archive_err(struct archive *a)
{
	int e = archive_errno(a);

	return e > 0 ? -e : -EIO;
}

static int archive_add(struct archive *a, struct archive_entry *e,
		       const char *id, const char *path, const char *data,
		       size_t len, uint64_t mtime)
{
	_cleanup_strbuf_ struct strbuf name = STRBUF_INIT;
	int r;

	strbuf_init(&name, 512);
	r = strbuf_addf(&name, "%s/%s", id, path);
	if (r < 0)
		return r;
	archive_entry_clear(e);
	archive_entry_set_pathname(e, name.buf);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, MODE_PRIVATE_FILE);
	archive_entry_set_size(e, (la_int64_t)len);
	archive_entry_set_mtime(e, (time_t)mtime, 0);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	archive_entry_set_uname(e, "root");
	archive_entry_set_gname(e, "root");
	if (archive_write_header(a, e) != ARCHIVE_OK)
		return archive_err(a);
	if (len && archive_write_data(a, data, len) != (la_ssize_t)len)
		return archive_err(a);
	return 0;
}

static struct json_object *files_json(const struct bundle *b)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; arr && i < b->n; i++) {
		struct json_object *o;

		if (b->files[i].dropped)
			continue;
		o = json_object_new_object();
		json_object_object_add(
			o, "path", json_object_new_string(b->files[i].path));
		json_object_object_add(
			o, "size",
			json_object_new_int64((int64_t)b->files[i].len));
		json_object_array_add(arr, o);
	}
	return arr;
}

/* Refreshes the manifest's generated fields and returns its text (owned by
 * the manifest object, valid until it changes). */
static const char *manifest_text(struct bundle *b, size_t *ret_len)
{
	json_object_object_add(b->manifest, "schema",
			       json_object_new_string(BUNDLE_SCHEMA));
	json_object_object_add(b->manifest, "id",
			       json_object_new_string(b->id));
	json_object_object_add(b->manifest, "files", files_json(b));
	json_object_object_add(b->manifest, "truncated",
			       json_object_get(b->truncated));
	return json_object_to_json_string_length(
		b->manifest,
		JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			JSON_C_TO_STRING_NOSLASHESCAPE,
		ret_len);
}

static struct archive *archive_writer(struct strbuf *out)
{
	struct archive *a = archive_write_new();

	if (!a)
		return NULL;
	/* pax restricted: a plain ustar header unless a name needs more;
	 * no gzip timestamp, so equal inputs give equal archives. */
	if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_add_filter_gzip(a) != ARCHIVE_OK ||
	    archive_write_set_filter_option(a, "gzip", "compression-level",
					    "9") != ARCHIVE_OK ||
	    archive_write_set_filter_option(a, "gzip", "timestamp", NULL) !=
		    ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
	    archive_write_open2(a, out, NULL, sink_write, NULL, NULL) !=
		    ARCHIVE_OK) {
		archive_write_free(a);
		return NULL;
	}
	return a;
}

/* Builds an archive into out: the entry first (text) then b's files,
 * every one (all) or those kept, a file named as first left out. */
static int archive_build(struct bundle *b, struct strbuf *out,
			 const char *first, const char *text, size_t len,
			 bool all)
{
	struct archive_entry *e = archive_entry_new();
	struct archive *a = archive_writer(out);
	int r = -ENOMEM;

	if (!a || !e || !text)
		goto out;
	r = archive_add(a, e, b->id, first, text, len, b->mtime);
	for (size_t i = 0; r >= 0 && i < b->n; i++) {
		const struct bundle_file *f = &b->files[i];

		if ((f->dropped && !all) || streq(f->path, first))
			continue;
		r = archive_add(a, e, b->id, f->path, f->data, f->len,
				b->mtime);
	}
	if (r >= 0 && archive_write_close(a) != ARCHIVE_OK)
		r = archive_err(a);
out:
	if (a)
		archive_write_free(a);
	archive_entry_free(e);
	return r;
}

/* Builds the whole archive (manifest first) into out: one compression
 * pass, counted in b->passes. */
static int serialize(struct bundle *b, struct strbuf *out)
{
	const char *man;
	size_t man_len = 0;

	strbuf_reset(out);
	man = manifest_text(b, &man_len);
	if (man)
		b->passes++;
	return archive_build(b, out, BP_MANIFEST, man, man_len, false);
}

/* ---- fitting: decide what to drop from per-file sizes ---- */

/* Bytes a tar header costs in the compressed stream, at most: the name
 * as if incompressible plus the octal fields; the zero padding of the
 * header and the data compresses to a few bytes. */
#define TAR_ENTRY_COST(b, f) (96 + strlen((b)->id) + strlen((f)->path))

/* Raw deflate size of data at the default level: a little above what the
 * archive's level 9 over the same bytes gives, and a file compressed alone
 * cannot use its neighbours, so the sum over files is conservative. */
static size_t deflated_size(z_stream *z, const char *data, size_t len)
{
	unsigned char scratch[16384];
	int zr;

	/* len ≤ BUNDLE_FILE_MAX (files) or a manifest: fits a uInt */
	deflateReset(z);
	z->next_in = (Bytef *)(uintptr_t)data;
	z->avail_in = (uInt)len;
	do {
		z->next_out = scratch;
		z->avail_out = sizeof(scratch);
		zr = deflate(z, Z_FINISH);
	} while (zr == Z_OK);
	return (size_t)z->total_out;
}

static size_t file_cost(const struct bundle *b, struct bundle_file *f,
			z_stream *z)
{
	if (!f->cost)
		f->cost = deflated_size(z, f->data, f->len) +
			  TAR_ENTRY_COST(b, f);
	return f->cost;
}

static size_t manifest_cost(struct bundle *b, z_stream *z)
{
	size_t len;
	const char *man = manifest_text(b, &len);

	return man ? deflated_size(z, man, len) + 128 : SIZE_MAX / 4;
}

/* Upper bound of the uncompressed tar: when it fits, nothing needs
 * measuring (gzip adds ~5 bytes per 16 KiB to incompressible data). */
static size_t raw_size(struct bundle *b)
{
	size_t man_len = 0, sum = 1024 + 10240;

	manifest_text(b, &man_len);
	sum += 1024 + man_len;
	for (size_t i = 0; i < b->n; i++)
		if (!b->files[i].dropped)
			sum += 1024 + b->files[i].len;
	return sum + sum / 1000 + 64;
}

/* The drop order: least important first, then largest, then the earlier
 * added (the rule the fitter always had). */
static int drop_order(const void *pa, const void *pb, void *files)
{
	const struct bundle_file *x =
		(const struct bundle_file *)files + *(const size_t *)pa;
	const struct bundle_file *y =
		(const struct bundle_file *)files + *(const size_t *)pb;

	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

/* Drops files in drop order until the estimate fits budget. Returns the
 * number dropped (≥ 0) or -ENOMEM; *ret_est is the final estimate. */
static int fit_plan(struct bundle *b, size_t budget, z_stream *z,
		    size_t *ret_est)
{
	_cleanup_free_ size_t *order = malloc((b->n + 1) * sizeof(size_t));
	size_t sum = 0, n_order = 0, man;
	int dropped = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < b->n; i++) {
		struct bundle_file *f = &b->files[i];

		if (f->dropped)
			continue;
		sum += file_cost(b, f, z);
		if (f->prio != BUNDLE_ESSENTIAL)
			order[n_order++] = i;
	}
	qsort_r(order, n_order, sizeof(*order), drop_order, b->files);
	man = sum <= budget ? manifest_cost(b, z) : 0;
	for (size_t k = 0; k < n_order && (sum > budget || sum + man > budget);
	     k++) {
		struct bundle_file *f = &b->files[order[k]];

		f->dropped = true;
		sum -= f->cost;
		dropped++;
		bundle_note_truncated(b, f->path,
				      "dropped to fit the bundle size cap");
		man = sum <= budget ? manifest_cost(b, z) : 0;
	}
	*ret_est = sum + (man ? man : manifest_cost(b, z));
	return dropped;
}

int bundle_fit(struct bundle *b, size_t max_bytes)
{
	z_stream z = {0};
	size_t est = 0;
	int r;

	if (!max_bytes)
		max_bytes = BUNDLE_MAX_BYTES;
	if (raw_size(b) <= max_bytes)
		return 0;
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	r = fit_plan(b, max_bytes, &z, &est);
	deflateEnd(&z);
	return r;
}

unsigned bundle_write_passes(const struct bundle *b)
{
	return b->passes;
}

/* Fits b into max_bytes: at most two compressions of the archive, the
 * second only when the estimate from the per-file sizes was short. */
static int fit_and_serialize(struct bundle *b, size_t max_bytes,
			     struct strbuf *gz)
{
	z_stream z = {0};
	size_t est = 0;
	int r, dropped;

	if (raw_size(b) <= max_bytes)
		return serialize(b, gz);
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	r = fit_plan(b, max_bytes, &z, &est);
	if (r >= 0)
		r = serialize(b, gz);
	if (r >= 0 && gz->len > max_bytes && est > 0) {
		/* The estimate was short by gz->len / est: scale the budget
		 * by that, with a margin, and compress once more. */
		size_t budget = (size_t)((double)max_bytes * (double)est /
					 (double)gz->len * 0.97);

		dropped = fit_plan(b, budget, &z, &est);
		r = dropped < 0 ? dropped : dropped > 0 ? serialize(b, gz) : 0;
	}
	deflateEnd(&z);
	if (r >= 0 && gz->len > max_bytes)
		r = -E2BIG;
	return r;
}

long bundle_write(struct bundle *b, int dirfd, const char *path,
		  size_t max_bytes)
{
	_cleanup_strbuf_ struct strbuf gz = STRBUF_INIT;
	int r;

	if (!max_bytes)
		max_bytes = BUNDLE_MAX_BYTES;
	strbuf_init(&gz, 512u << 20);
	b->passes = 0;
	r = fit_and_serialize(b, max_bytes, &gz);
	if (r < 0)
		return r;
	r = write_file_atomic_at(dirfd, path, gz.buf, gz.len, 0640);
	return r < 0 ? r : (long)gz.len;
}

/* ---- reading: bounded, every cap checked before allocating ---- */

struct reader {
	struct archive *a;
	uint64_t allowed; /* inflated file bytes this archive may hold */
	uint64_t total;	  /* inflated file bytes so far */
	size_t entries;
	char id[129]; /* the top directory, from the first entry */
	int (*fn)(const char *name, const char *data, size_t len, void *ud);
	void *userdata;
};

/* name is "<id>/<path>" (dirs may end in '/'): the id the same for every
 * entry, the path relative without "." or "..". */
static int check_name(struct reader *rd, const char *name, bool dir)
{
	const char *slash = strchr(name, '/');
	char id[129], rest[256];
	size_t n = slash ? (size_t)(slash - name) : strlen(name);
	size_t rn;

	if (n == 0 || n >= sizeof(id))
		return -EXDEV;
	memcpy(id, name, n);
	id[n] = '\0';
	if (!valid_id(id))
		return -EXDEV;
	if (!rd->id[0])
		memcpy(rd->id, id, n + 1);
	else if (!streq(rd->id, id))
		return -EXDEV;
	if (!slash || !slash[1])
		return dir ? 0 : -EXDEV;
	rn = strlen(slash + 1);
	if (rn >= sizeof(rest))
		return -EXDEV;
	memcpy(rest, slash + 1, rn + 1);
	if (dir && rest[rn - 1] == '/')
		rest[rn - 1] = '\0';
	return valid_path(rest) ? 0 : -EXDEV;
}

/* Reads the current entry's data, counting bytes: the header's size is
 * checked first, but a header can lie, so the count is checked too. */
static int read_entry(struct reader *rd, struct archive_entry *e,
		      struct strbuf *data)
{
	uint64_t cap = BUNDLE_READ_MAX_ENTRY;
	char chunk[16384];
	la_ssize_t n;

	if (rd->allowed - rd->total < cap)
		cap = rd->allowed - rd->total;
	if (archive_entry_size_is_set(e)) {
		la_int64_t sz = archive_entry_size(e);

		if (sz < 0)
			return -EBADMSG;
		if ((uint64_t)sz > cap)
			return -EFBIG;
		cap = (uint64_t)sz;
	}
	strbuf_init(data, cap ? (size_t)cap : 1);
	while ((n = archive_read_data(rd->a, chunk, sizeof(chunk))) > 0)
		if (strbuf_add(data, chunk, (size_t)n) < 0)
			return -EFBIG;
	if (n < 0)
		return -EBADMSG;
	if (data->len > cap)
		return -EFBIG;
	rd->total += data->len;
	return 0;
}

static int read_one(struct reader *rd, struct archive_entry *e)
{
	_cleanup_strbuf_ struct strbuf data = STRBUF_INIT;
	const char *name = archive_entry_pathname(e);
	mode_t type = archive_entry_filetype(e);
	int r;

	if (++rd->entries > BUNDLE_READ_MAX_ENTRIES)
		return -EMLINK;
	/* Headers, padding and skipped data count too: a bomb of empty
	 * entries or huge pax headers inflates the stream without files. */
	if ((uint64_t)archive_filter_bytes(rd->a, 0) >
	    rd->allowed + (uint64_t)rd->entries * 2048u + 65536u)
		return -EFBIG;
	if (!name)
		return -EBADMSG;
	if (archive_entry_hardlink(e) || type == AE_IFLNK)
		return -ELOOP;
	if (type != AE_IFREG && type != AE_IFDIR)
		return -EPERM;
	r = check_name(rd, name, type == AE_IFDIR);
	if (r < 0 || type == AE_IFDIR)
		return r;
	r = read_entry(rd, e, &data);
	if (r < 0)
		return r;
	return rd->fn(name, data.buf, data.len, rd->userdata);
}

static int open_archive(int dirfd, const char *path, uint64_t max_total,
			struct reader *rd)
{
	struct stat st;
	int fd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	uint64_t allowed;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EBADMSG;
	}
	if ((uint64_t)st.st_size > BUNDLE_READ_MAX_ARCHIVE) {
		close(fd);
		return -EFBIG;
	}
	allowed = (uint64_t)st.st_size * BUNDLE_READ_MAX_RATIO;
	if (allowed < BUNDLE_READ_RATIO_FLOOR)
		allowed = BUNDLE_READ_RATIO_FLOOR;
	rd->allowed = allowed < max_total ? allowed : max_total;
	rd->a = archive_read_new();
	if (!rd->a || archive_read_support_filter_gzip(rd->a) != ARCHIVE_OK ||
	    archive_read_support_format_tar(rd->a) != ARCHIVE_OK) {
		close(fd);
		return -ENOMEM;
	}
	if (archive_read_open_fd(rd->a, fd, 65536) != ARCHIVE_OK) {
		close(fd);
		return -EBADMSG;
	}
	return fd;
}

int bundle_read(int dirfd, const char *path,
		int (*fn)(const char *name, const char *data, size_t len,
			  void *userdata),
		void *userdata)
{
	return bundle_read_max(dirfd, path, BUNDLE_READ_MAX_TOTAL, fn,
			       userdata);
}

int bundle_read_max(int dirfd, const char *path, uint64_t max_total,
		    int (*fn)(const char *name, const char *data, size_t len,
			      void *userdata),
		    void *userdata)
{
	struct reader rd = {.fn = fn, .userdata = userdata};
	struct archive_entry *e;
	int fd, r;

	if (max_total > BUNDLE_READ_MAX_TOTAL)
		max_total = BUNDLE_READ_MAX_TOTAL;
	fd = open_archive(dirfd, path, max_total, &rd);
	if (fd < 0) {
		archive_read_free(rd.a);
		return fd;
	}
	for (;;) {
		r = archive_read_next_header(rd.a, &e);
		if (r == ARCHIVE_EOF) {
			r = rd.entries ? 0 : -EBADMSG;
			break;
		}
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			r = -EBADMSG;
			break;
		}
		if (archive_filter_code(rd.a, 0) != ARCHIVE_FILTER_GZIP) {
			r = -EBADMSG; /* a bundle is always gzip'd */
			break;
		}
		r = read_one(&rd, e);
		if (r < 0)
			break;
	}
	archive_read_free(rd.a);
	close(fd);
	return r;
}

const char *bundle_strerror(int r)
{
	switch (r) {
	case -EBADMSG:
		return "not an oomlens bundle (tar.gz), or damaged";
	case -EXDEV:
		return "refused: an entry lies outside the bundle directory "
		       "(absolute, \"..\" or another top directory)";
	case -ELOOP:
		return "refused: the bundle holds a symlink or hardlink";
	case -EPERM:
		return "refused: the bundle holds a device, FIFO or socket";
	case -EFBIG:
		return "refused: the bundle inflates beyond its size caps "
		       "(entry, total or inflate ratio)";
	case -EMLINK:
		return "refused: the bundle holds too many entries";
	default:
		return strerror(-r);
	}
}

struct load_ctx {
	struct bundle *b;
};

static int load_one(const char *name, const char *data, size_t len, void *ud)
{
	struct load_ctx *c = ud;
	const char *slash = strchr(name, '/');
	char id[129];
	int r;

	/* bundle_read() checked the name: "<id>/<valid path>", one id */
	if (!slash || (size_t)(slash - name) >= sizeof(id))
		return -EBADMSG;
	if (!c->b) {
		memcpy(id, name, (size_t)(slash - name));
		id[slash - name] = '\0';
		r = bundle_new(id, &c->b);
		if (r < 0)
			return r;
	}
	return bundle_add(c->b, slash + 1, data, len, BUNDLE_HIGH);
}

int bundle_load(int dirfd, const char *path, struct bundle **ret)
{
	struct load_ctx c = {0};
	int r = bundle_read(dirfd, path, load_one, &c);

	if (r >= 0 && !c.b)
		r = -EBADMSG;
	if (r < 0) {
		bundle_free(c.b);
		return r;
	}
	*ret = c.b;
	return 0;
}

/* ---- a bundle in progress, saved whole for a later process ---- */

#define UNFINISHED_STATE ".unfinished.json"

/* [path, prio, dropped] of every file, in order. */
static struct json_object *unfinished_files(const struct bundle *b)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; arr && i < b->n; i++) {
		struct json_object *f = json_object_new_array();

		json_object_array_add(f,
				      json_object_new_string(b->files[i].path));
		json_object_array_add(f, json_object_new_int(b->files[i].prio));
		json_object_array_add(
			f, json_object_new_boolean(b->files[i].dropped));
		json_object_array_add(arr, f);
	}
	return arr;
}

static int unfinished_serialize(struct bundle *b, struct strbuf *out)
{
	struct json_object *st = json_object_new_object();
	const char *text = NULL;
	size_t len = 0;
	int r;

	if (st) {
		json_object_object_add(st, "manifest",
				       json_object_get(b->manifest));
		json_object_object_add(st, "truncated",
				       json_object_get(b->truncated));
		json_object_object_add(st, "mtime",
				       json_object_new_uint64(b->mtime));
		json_object_object_add(st, "files", unfinished_files(b));
		text = json_object_to_json_string_length(
			st, JSON_C_TO_STRING_PLAIN, &len);
	}
	r = archive_build(b, out, UNFINISHED_STATE, text, len, true);
	json_object_put(st);
	return r;
}

long bundle_save_unfinished(struct bundle *b, int dirfd, const char *path)
{
	_cleanup_strbuf_ struct strbuf gz = STRBUF_INIT;
	size_t raw = 0;
	int r;

	for (size_t i = 0; i < b->n; i++)
		raw += 1024 + b->files[i].len;
	/* what bundle_load_unfinished() could not read back is not saved */
	if (raw > BUNDLE_READ_MAX_TOTAL / 2)
		return -EFBIG;
	strbuf_init(&gz, BUNDLE_READ_MAX_ARCHIVE);
	r = unfinished_serialize(b, &gz);
	if (r >= 0)
		r = write_file_atomic_at(dirfd, path, gz.buf, gz.len, 0600);
	return r < 0 ? r : (long)gz.len;
}

struct unfinished_ctx {
	struct bundle *b;
	struct json_object *files; /* the state's [path, prio, dropped] */
	size_t next;		   /* the entry expected next */
};

/* The state entry: the bundle made from it, its types checked. */
static int unfinished_state(struct unfinished_ctx *c, const char *id,
			    const char *data, size_t len)
{
	struct json_object *st = json_tokener_parse(data), *man, *tr, *files;
	uint64_t mtime;
	int r = -EBADMSG;

	if (strlen(data) != len || !json_object_is_type(st, json_type_object))
		goto out;
	man = jget_obj(NULL, st, "manifest");
	tr = jget_array(NULL, st, "truncated");
	files = jget_array(NULL, st, "files");
	if (!man || !tr || !files || !jget_u64(NULL, st, "mtime", &mtime))
		goto out;
	for (size_t i = 0; i < jget_len(tr); i++)
		if (!json_object_is_type(jget_idx(tr, i), json_type_object))
			goto out;
	r = bundle_new(id, &c->b);
	if (r < 0)
		goto out;
	json_object_put(c->b->manifest);
	c->b->manifest = json_object_get(man);
	json_object_put(c->b->truncated);
	c->b->truncated = json_object_get(tr);
	c->b->mtime = mtime;
	c->files = json_object_get(files);
out:
	json_object_put(st);
	return r;
}

static int unfinished_one(const char *name, const char *data, size_t len,
			  void *ud)
{
	struct unfinished_ctx *c = ud;
	const char *slash = strchr(name, '/'), *path;
	struct json_object *f;
	char id[129];
	int prio = -1;
	bool dropped = false;

	/* bundle_read() checked the name: "<id>/<valid path>", one id */
	if (!slash || (size_t)(slash - name) >= sizeof(id))
		return -EBADMSG;
	if (!c->b) {
		memcpy(id, name, (size_t)(slash - name));
		id[slash - name] = '\0';
		return streq(slash + 1, UNFINISHED_STATE)
			       ? unfinished_state(c, id, data, len)
			       : -EBADMSG;
	}
	f = jget_idx(c->files, c->next++);
	path = jget_idx_str(NULL, f, 0);
	if (jget_len(f) != 3 || !path || !streq(path, slash + 1) ||
	    !json_object_is_type(jget_idx(f, 1), json_type_int) ||
	    !json_object_is_type(jget_idx(f, 2), json_type_boolean))
		return -EBADMSG;
	prio = json_object_get_int(jget_idx(f, 1));
	dropped = json_object_get_boolean(jget_idx(f, 2));
	if (prio < BUNDLE_ESSENTIAL || prio > BUNDLE_LOW)
		return -EBADMSG;
	if (bundle_add(c->b, path, data, len, (enum bundle_prio)prio) < 0)
		return -ENOMEM;
	find_file(c->b, path)->dropped = dropped;
	return 0;
}

int bundle_load_unfinished(int dirfd, const char *path, struct bundle **ret)
{
	struct unfinished_ctx c = {0};
	int r = bundle_read(dirfd, path, unfinished_one, &c);

	if (r >= 0 && (!c.b || c.next != jget_len(c.files)))
		r = -EBADMSG;
	json_object_put(c.files);
	if (r < 0) {
		bundle_free(c.b);
		return r;
	}
	*ret = c.b;
	return 0;
}
