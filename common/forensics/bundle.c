/* SPDX-License-Identifier: Apache-2.0 */
/* Bundle: files in memory → ustar → gzip, fitted to a size cap. */
#include <dirent.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

#include "forensics/bundle.h"
#include "base/fileio.h"
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
};

struct bundle {
	char *id;
	struct bundle_file *files;
	size_t n, cap;
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

static struct bundle_file *find_file(const struct bundle *b, const char *path)
{
	for (size_t i = 0; i < b->n; i++)
		if (streq(b->files[i].path, path))
			return &b->files[i];
	return NULL;
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
		b->n++;
	}
	f->data = copy;
	f->len = len;
	f->prio = prio;
	f->dropped = false;
	return 0;
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

int bundle_note_truncated(struct bundle *b, const char *path, const char *why)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "reason", json_object_new_string(why));
	json_object_array_add(b->truncated, o);
	return 0;
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

	/* data is NUL-terminated by bundle_add() */
	return f ? json_tokener_parse(f->data) : NULL;
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

/* ---- ustar + gzip ---- */

static void tar_octal(char *field, size_t width, uint64_t v)
{
	/* width-1 octal digits and a NUL, zero padded. */
	field[width - 1] = '\0';
	for (size_t i = width - 1; i-- > 0;) {
		field[i] = (char)('0' + (v & 7));
		v >>= 3;
	}
}

static int tar_header(char hdr[512], const char *name, uint64_t size,
		      uint64_t mtime, char type)
{
	size_t n = strlen(name);
	unsigned sum = 0;

	memset(hdr, 0, 512);
	if (n <= 100) {
		memcpy(hdr, name, n);
	} else {
		/* Split at a '/' so that prefix ≤ 155 and name ≤ 100. */
		const char *split = NULL;

		for (const char *p = name; *p; p++)
			if (*p == '/' && (size_t)(p - name) <= 155 &&
			    n - (size_t)(p - name) - 1 <= 100)
				split = p;
		if (!split)
			return -ENAMETOOLONG;
		memcpy(hdr + 345, name, (size_t)(split - name));
		memcpy(hdr, split + 1, n - (size_t)(split - name) - 1);
	}
	tar_octal(hdr + 100, 8, type == '5' ? 0755 : 0644);
	tar_octal(hdr + 108, 8, 0);
	tar_octal(hdr + 116, 8, 0);
	tar_octal(hdr + 124, 12, size);
	tar_octal(hdr + 136, 12, mtime);
	memset(hdr + 148, ' ', 8);
	hdr[156] = type;
	memcpy(hdr + 257, "ustar", 6);
	memcpy(hdr + 263, "00", 2);
	memcpy(hdr + 265, "root", 4);
	memcpy(hdr + 297, "root", 4);
	for (int i = 0; i < 512; i++)
		sum += (unsigned char)hdr[i];
	tar_octal(hdr + 148, 7, sum);
	hdr[155] = ' ';
	return 0;
}

static int tar_add(struct strbuf *tar, const char *id, const char *path,
		   const char *data, size_t len, uint64_t mtime)
{
	static const char zeros[512];
	_cleanup_strbuf_ struct strbuf name = STRBUF_INIT;
	char hdr[512];
	int r;

	strbuf_init(&name, 512);
	r = strbuf_addf(&name, "%s/%s", id, path);
	if (r < 0)
		return r;
	r = tar_header(hdr, name.buf, len, mtime, '0');
	if (r < 0)
		return r;
	r = strbuf_add(tar, hdr, 512);
	if (r >= 0)
		r = strbuf_add(tar, data, len);
	if (r >= 0 && len % 512)
		r = strbuf_add(tar, zeros, 512 - len % 512);
	return r;
}

static int gzip_buf(const char *in, size_t len, struct strbuf *out)
{
	z_stream z = {0};
	int r;

	if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	r = strbuf_grow(out, deflateBound(&z, len));
	if (r < 0) {
		deflateEnd(&z);
		return r;
	}
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out->buf + out->len;
	z.avail_out = (uInt)(out->alloc - out->len - 1);
	r = deflate(&z, Z_FINISH);
	if (r == Z_STREAM_END)
		out->len += z.total_out;
	deflateEnd(&z);
	return r == Z_STREAM_END ? 0 : -EIO;
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

/* Builds the whole archive (manifest first) into out. */
static int serialize(struct bundle *b, struct strbuf *out)
{
	_cleanup_strbuf_ struct strbuf tar = STRBUF_INIT;
	static const char zeros[1024];
	const char *man;
	size_t man_len;
	int r;

	strbuf_init(&tar, 256u << 20);
	json_object_object_add(b->manifest, "schema",
			       json_object_new_string(BUNDLE_SCHEMA));
	json_object_object_add(b->manifest, "id",
			       json_object_new_string(b->id));
	json_object_object_add(b->manifest, "files", files_json(b));
	json_object_object_add(b->manifest, "truncated",
			       json_object_get(b->truncated));
	man = json_object_to_json_string_length(
		b->manifest,
		JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			JSON_C_TO_STRING_NOSLASHESCAPE,
		&man_len);
	r = tar_add(&tar, b->id, "manifest.json", man, man_len, b->mtime);
	for (size_t i = 0; r >= 0 && i < b->n; i++) {
		const struct bundle_file *f = &b->files[i];

		if (f->dropped || streq(f->path, "manifest.json"))
			continue;
		r = tar_add(&tar, b->id, f->path, f->data, f->len, b->mtime);
	}
	if (r >= 0)
		r = strbuf_add(&tar, zeros, sizeof(zeros));
	if (r < 0)
		return r;
	strbuf_reset(out);
	return gzip_buf(tar.buf, tar.len, out);
}

/* Drops the least important, largest file still in; false if none left. */
static bool drop_one(struct bundle *b)
{
	struct bundle_file *pick = NULL;

	for (size_t i = 0; i < b->n; i++) {
		struct bundle_file *f = &b->files[i];

		if (f->dropped || f->prio == BUNDLE_ESSENTIAL)
			continue;
		if (!pick || f->prio > pick->prio ||
		    (f->prio == pick->prio && f->len > pick->len))
			pick = f;
	}
	if (!pick)
		return false;
	pick->dropped = true;
	bundle_note_truncated(b, pick->path,
			      "dropped to fit the bundle size cap");
	return true;
}

long bundle_write(struct bundle *b, int dirfd, const char *path,
		  size_t max_bytes)
{
	_cleanup_strbuf_ struct strbuf gz = STRBUF_INIT;
	int r;

	if (!max_bytes)
		max_bytes = BUNDLE_MAX_BYTES;
	strbuf_init(&gz, 512u << 20);
	for (;;) {
		r = serialize(b, &gz);
		if (r < 0)
			return r;
		if (gz.len <= max_bytes)
			break;
		if (!drop_one(b))
			return -E2BIG;
	}
	r = write_file_atomic_at(dirfd, path, gz.buf, gz.len, 0640);
	return r < 0 ? r : (long)gz.len;
}

/* ---- reading ---- */

static int gunzip_file(int dirfd, const char *path, struct strbuf *out)
{
	_cleanup_strbuf_ struct strbuf in = STRBUF_INIT;
	z_stream z = {0};
	int r, zr = Z_OK;

	strbuf_init(&in, 512u << 20);
	r = read_file_at(dirfd, path, 512u << 20, &in);
	if (r < 0)
		return r;
	if (inflateInit2(&z, 15 + 32) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)in.buf;
	z.avail_in = (uInt)in.len;
	while (zr != Z_STREAM_END) {
		r = strbuf_grow(out, 1u << 20);
		if (r < 0)
			break;
		z.next_out = (Bytef *)out->buf + out->len;
		z.avail_out = 1u << 20;
		zr = inflate(&z, Z_NO_FLUSH);
		out->len = z.total_out;
		out->buf[out->len] = '\0';
		if (zr != Z_OK && zr != Z_STREAM_END) {
			r = -EBADMSG;
			break;
		}
	}
	inflateEnd(&z);
	return r < 0 ? r : 0;
}

static int tar_field_u64(const char *f, size_t width, uint64_t *ret)
{
	uint64_t v = 0;
	size_t i = 0;

	while (i < width && f[i] == ' ')
		i++;
	for (; i < width && f[i] >= '0' && f[i] <= '7'; i++)
		v = v * 8 + (uint64_t)(f[i] - '0');
	*ret = v;
	return 0;
}

int bundle_read(int dirfd, const char *path,
		int (*fn)(const char *name, const char *data, size_t len,
			  void *userdata),
		void *userdata)
{
	_cleanup_strbuf_ struct strbuf tar = STRBUF_INIT;
	size_t off = 0;
	int r;

	strbuf_init(&tar, 1u << 30);
	r = gunzip_file(dirfd, path, &tar);
	if (r < 0)
		return r;
	while (off + 512 <= tar.len) {
		const char *h = tar.buf + off;
		char name[260] = "";
		uint64_t size;

		if (h[0] == '\0')
			return 0; /* end-of-archive block */
		if (memcmp(h + 257, "ustar", 5) != 0)
			return -EBADMSG;
		tar_field_u64(h + 124, 12, &size);
		if (h[345])
			snprintf(name, sizeof(name), "%.155s/%.100s", h + 345,
				 h);
		else
			snprintf(name, sizeof(name), "%.100s", h);
		off += 512;
		if (size > tar.len - off)
			return -EBADMSG;
		if (h[156] == '0' || h[156] == '\0') {
			r = fn(name, tar.buf + off, (size_t)size, userdata);
			if (r < 0)
				return r;
		}
		off += (size + 511) / 512 * 512;
	}
	return -EBADMSG; /* no end-of-archive block: cut short */
}

struct load_ctx {
	struct bundle *b;
	int err;
};

static int load_one(const char *name, const char *data, size_t len, void *ud)
{
	struct load_ctx *c = ud;
	const char *slash = strchr(name, '/');
	char id[129];
	int r;

	if (!slash || (size_t)(slash - name) >= sizeof(id))
		return -EBADMSG;
	if (!c->b) {
		snprintf(id, sizeof(id), "%.*s", (int)(slash - name), name);
		r = bundle_new(id, &c->b);
		if (r < 0)
			return r;
	} else if (strncmp(name, c->b->id, strlen(c->b->id)) != 0) {
		return -EBADMSG; /* one bundle per archive */
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
