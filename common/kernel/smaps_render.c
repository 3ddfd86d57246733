/* SPDX-License-Identifier: Apache-2.0 */
/* The smaps table as procps `pmap -X` prints it, and as JSON.
 *
 * pmap -X layout (procps-ng 3.3–4.0): every numeric smaps field except
 * the ones it calls unimportant, right-aligned columns one space apart,
 * each as wide as max(header, digits of the column total); the mapping
 * column is the basename of the first 127 bytes of the name; a footer of
 * '=' rules and totals ending in "KB ". */
#include <inttypes.h>
#include <json-c/json.h>

#include "kernel/smaps.h"
#include "base/util.h"

#define PMAP_NAME_MAX 127 /* pmap reads the name with %127[^\n] */

static bool pmap_hidden(const char *name)
{
	static const char *const hidden[] = {
		"AnonHugePages", "KernelPageSize", "MMUPageSize",
		"Shared_Dirty",	 "Private_Dirty",  "Shared_Clean",
		"Private_Clean", "VmFlags",
	};

	for (size_t i = 0; i < ARRAY_SIZE(hidden); i++)
		if (streq(name, hidden[i]))
			return true;
	return strlen(name) > 31; /* pmap reads names with %31[^:] */
}

/* Appends " " (when lead) and str right-aligned in width. */
static int add_col(struct strbuf *sb, bool lead, const char *str, size_t len,
		   size_t width)
{
	char pad[64];
	size_t np = width > len ? width - len : 0;
	int r = 0;

	if (lead)
		r = strbuf_addch(sb, ' ');
	while (r >= 0 && np) {
		size_t k = np < sizeof(pad) ? np : sizeof(pad);

		memset(pad, ' ', k);
		r = strbuf_add(sb, pad, k);
		np -= k;
	}
	return r < 0 ? r : strbuf_add(sb, str, len);
}

static size_t max_sz(size_t a, size_t b)
{
	return a > b ? a : b;
}

/* Digits of v in base (16 or 10), at least min: the length of its
 * "%0<min>x" or "%<min>u". */
static size_t n_digits(uint64_t v, unsigned base, size_t min)
{
	size_t n = 1;

	while (v >= base) {
		v /= base;
		n++;
	}
	return max_sz(n, min);
}

/* Packs v at b, 7 bits a byte, low first: at most 10 bytes. Returns the
 * bytes written. */
static size_t put_varint(char *b, uint64_t v)
{
	size_t n = 0;

	do {
		b[n] = (char)(v & 0x7f);
		v >>= 7;
		if (v)
			b[n] |= (char)0x80;
		n++;
	} while (v);
	return n;
}

/* A varint put_varint() wrote at *p, below e; 0 past e. */
static uint64_t get_varint(const char **p, const char *e)
{
	uint64_t v = 0;

	for (unsigned shift = 0; *p < e && shift < 64; shift += 7) {
		unsigned char c = (unsigned char)*(*p)++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			break;
	}
	return v;
}

void smaps_pmap_init(struct smaps_pmap *t)
{
	memset(t, 0, sizeof(*t));
	strbuf_init(&t->rows, STRBUF_DEFAULT_MAX);
}

void smaps_pmap_release(struct smaps_pmap *t)
{
	for (size_t k = 0; k < t->n_shown; k++)
		free(t->fields[k]);
	strbuf_release(&t->rows);
	smaps_pmap_init(t);
}

/* The shown columns, from the first row's struct smaps. */
static int take_columns(struct smaps_pmap *t, const struct smaps *s)
{
	for (size_t k = 0; k < t->n_shown; k++)
		free(t->fields[k]);
	t->n_shown = 0;
	for (size_t f = 0; f < s->n_fields; f++) {
		if (pmap_hidden(s->fields[f]))
			continue;
		t->fields[t->n_shown] = strdup(s->fields[f]);
		if (!t->fields[t->n_shown])
			return -ENOMEM;
		t->col[t->n_shown++] = f;
	}
	return 0;
}

/* One row: start, offset, major, minor, inode, the 4 perm bytes, the
 * shown name's length and bytes, then the shown values; appended whole or
 * not at all. */
#define ROW_MAX (6 * 10 + 4 + PMAP_NAME_MAX + SMAPS_MAX_FIELDS * 10)

static int put_row(struct smaps_pmap *t, const struct smaps_mapping *m,
		   const char *base, size_t base_len)
{
	char b[ROW_MAX];
	size_t n = 0;

	n += put_varint(b + n, m->start);
	n += put_varint(b + n, m->offset);
	n += put_varint(b + n, m->dev_major);
	n += put_varint(b + n, m->dev_minor);
	n += put_varint(b + n, m->inode);
	memcpy(b + n, m->perms, 4);
	n += 4;
	n += put_varint(b + n, base_len);
	memcpy(b + n, base, base_len);
	n += base_len;
	for (size_t k = 0; k < t->n_shown; k++)
		n += put_varint(b + n, m->v ? m->v[t->col[k]] : 0);
	return strbuf_add(&t->rows, b, n);
}

int smaps_pmap_add(struct smaps_pmap *t, const struct smaps *s,
		   const struct smaps_mapping *m)
{
	char name[PMAP_NAME_MAX + 1];
	const char *base;
	int r;

	if (t->n == 0) {
		r = take_columns(t, s);
		if (r < 0)
			return r;
	}
	strlcpy_safe(name, m->name, sizeof(name));
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	r = put_row(t, m, base, strlen(base));
	if (r < 0)
		return r;
	t->w_addr = max_sz(t->w_addr, n_digits(m->start, 16, 8));
	t->w_off = max_sz(t->w_off, n_digits(m->offset, 16, 8));
	t->w_dev = max_sz(t->w_dev, n_digits(m->dev_major, 16, 2) + 1 +
					    n_digits(m->dev_minor, 16, 2));
	t->w_ino = max_sz(t->w_ino, n_digits(m->inode, 10, 1));
	for (size_t k = 0; k < t->n_shown && m->v; k++)
		t->total[k] += m->v[t->col[k]];
	t->n++;
	return 0;
}

static int pmap_sink(const struct smaps *s, const struct smaps_mapping *m,
		     void *ud)
{
	return smaps_pmap_add(ud, s, m);
}

int smaps_read_pmap_at(int dirfd, const char *path, struct smaps_pmap *ret)
{
	struct smaps s;
	int r;

	smaps_init(&s);
	smaps_set_sink(&s, pmap_sink, ret);
	r = smaps_read_at(dirfd, path, &s);
	if (r >= 0)
		ret->truncated = s.truncated;
	else
		smaps_pmap_release(ret);
	smaps_release(&s);
	return r;
}

/* A row as put_row() packed it. */
struct pmap_row {
	uint64_t start, offset, maj, min, inode;
	char perms[5];
	const char *name;
	size_t name_len;
	uint64_t v[SMAPS_MAX_FIELDS];
};

static void get_row(const struct smaps_pmap *t, const char **p,
		    struct pmap_row *row)
{
	const char *e = t->rows.buf + t->rows.len;
	size_t k;

	row->start = get_varint(p, e);
	row->offset = get_varint(p, e);
	row->maj = get_varint(p, e);
	row->min = get_varint(p, e);
	row->inode = get_varint(p, e);
	k = (size_t)(e - *p) < 4 ? (size_t)(e - *p) : 4;
	memset(row->perms, 0, sizeof(row->perms));
	memcpy(row->perms, *p, k);
	*p += k;
	row->name_len = get_varint(p, e);
	if (row->name_len > (size_t)(e - *p))
		row->name_len = (size_t)(e - *p);
	row->name = *p;
	*p += row->name_len;
	for (k = 0; k < t->n_shown; k++)
		row->v[k] = get_varint(p, e);
}

struct pmap_layout {
	size_t w_addr, w_off, w_dev, w_ino;
	size_t w[SMAPS_MAX_FIELDS];
};

static void measure(const struct smaps_pmap *t, struct pmap_layout *l)
{
	l->w_addr = max_sz(t->w_addr, strlen("Address"));
	l->w_off = max_sz(t->w_off, strlen("Offset"));
	l->w_dev = max_sz(t->w_dev, strlen("Device"));
	l->w_ino = max_sz(t->w_ino, strlen("Inode"));
	for (size_t k = 0; k < t->n_shown; k++)
		l->w[k] = max_sz(strlen(t->fields[k]),
				 n_digits(t->total[k], 10, 1));
}

static int render_header(const struct smaps_pmap *t,
			 const struct pmap_layout *l, struct strbuf *out)
{
	int r = add_col(out, false, "Address", 7, l->w_addr);

	r = r < 0 ? r : add_col(out, true, "Perm", 4, 4);
	r = r < 0 ? r : add_col(out, true, "Offset", 6, l->w_off);
	r = r < 0 ? r : add_col(out, true, "Device", 6, l->w_dev);
	r = r < 0 ? r : add_col(out, true, "Inode", 5, l->w_ino);
	for (size_t k = 0; r >= 0 && k < t->n_shown; k++)
		r = add_col(out, true, t->fields[k], strlen(t->fields[k]),
			    l->w[k]);
	return r < 0 ? r : strbuf_adds(out, " Mapping\n");
}

/* A row is built in a fixed buffer and appended once: per column strbuf
 * calls were a fifth of pmap's time on 5,000 mappings. Its widest: five
 * fixed columns (<= 21 each), 48 fields of <= 31 (a longer name is
 * hidden), the 127-byte name. */
struct pmap_line {
	char b[2048];
	size_t n;
};

/* " " (when lead) and str right-aligned in width; false when it would
 * not fit (never, by the bounds above). */
static bool line_col(struct pmap_line *ln, bool lead, const char *str,
		     size_t len, size_t width)
{
	size_t np = width > len ? width - len : 0;

	if (lead + np + len > sizeof(ln->b) - ln->n)
		return false;
	if (lead)
		ln->b[ln->n++] = ' ';
	memset(ln->b + ln->n, ' ', np);
	memcpy(ln->b + ln->n + np, str, len);
	ln->n += np + len;
	return true;
}

static int render_row(const struct smaps_pmap *t, const struct pmap_row *m,
		      const struct pmap_layout *l, struct pmap_line *ln,
		      struct strbuf *out)
{
	char b[48];
	bool ok;
	int n;

	ln->n = 0;
	n = snprintf(b, sizeof(b), "%08" PRIx64, m->start);
	ok = line_col(ln, false, b, (size_t)n, l->w_addr);
	ok = ok && line_col(ln, true, m->perms, strlen(m->perms), 4);
	n = snprintf(b, sizeof(b), "%08" PRIx64, m->offset);
	ok = ok && line_col(ln, true, b, (size_t)n, l->w_off);
	n = snprintf(b, sizeof(b), "%02" PRIx64 ":%02" PRIx64, m->maj, m->min);
	ok = ok && line_col(ln, true, b, (size_t)n, l->w_dev);
	ok = ok && line_col(ln, true, b, fmt_u64(b, m->inode), l->w_ino);
	for (size_t k = 0; ok && k < t->n_shown; k++)
		ok = line_col(ln, true, b, fmt_u64(b, m->v[k]), l->w[k]);
	ok = ok && line_col(ln, true, m->name, m->name_len, 0);
	ok = ok && line_col(ln, false, "\n", 1, 0);
	return ok ? strbuf_add(out, ln->b, ln->n) : -E2BIG;
}

static int render_footer(const struct smaps_pmap *t,
			 const struct pmap_layout *l, struct strbuf *out)
{
	size_t gap =
		l->w_addr + 1 + 5 + l->w_off + 1 + l->w_dev + 1 + l->w_ino + 1;
	char b[48];
	int r = add_col(out, false, "", 0, gap);

	for (size_t k = 0; r >= 0 && k < t->n_shown; k++) {
		for (size_t i = 0; r >= 0 && i < l->w[k]; i++)
			r = strbuf_addch(out, '=');
		r = r < 0 ? r : strbuf_addch(out, ' ');
	}
	r = r < 0 ? r : strbuf_addch(out, '\n');
	r = r < 0 ? r : add_col(out, false, "", 0, gap);
	for (size_t k = 0; r >= 0 && k < t->n_shown; k++) {
		r = add_col(out, false, b, fmt_u64(b, t->total[k]), l->w[k]);
		r = r < 0 ? r : strbuf_addch(out, ' ');
	}
	return r < 0 ? r : strbuf_adds(out, "KB \n");
}

int smaps_pmap_render_each(const struct smaps_pmap *t, int pid,
			   const char *cmdline, struct strbuf *out,
			   int (*flush)(struct strbuf *out, void *ud), void *ud)
{
	_cleanup_free_ struct pmap_row *row = NULL;
	_cleanup_free_ struct pmap_line *ln = NULL;
	struct pmap_layout l;
	const char *p = t->rows.buf;
	int r = strbuf_addf(out, "%d:   %s\n", pid, cmdline ? cmdline : "");

	if (r < 0 || t->n == 0)
		goto out;
	row = malloc(sizeof(*row));
	ln = malloc(sizeof(*ln));
	if (!row || !ln)
		return -ENOMEM;
	measure(t, &l);
	r = render_header(t, &l, out);
	for (size_t i = 0; r >= 0 && i < t->n; i++) {
		get_row(t, &p, row);
		r = render_row(t, row, &l, ln, out);
		if (r >= 0 && flush && out->len >= SMAPS_RENDER_CHUNK)
			r = flush(out, ud);
	}
	if (r >= 0 && t->n_shown)
		r = render_footer(t, &l, out);
out:
	if (r >= 0 && flush && out->len)
		r = flush(out, ud);
	return r;
}

int smaps_render_pmap_each(const struct smaps *s, int pid, const char *cmdline,
			   struct strbuf *out,
			   int (*flush)(struct strbuf *out, void *ud), void *ud)
{
	struct smaps_pmap t;
	int r = 0;

	smaps_pmap_init(&t);
	for (size_t i = 0; r >= 0 && i < s->n; i++)
		r = smaps_pmap_add(&t, s, &s->m[i]);
	if (r >= 0)
		r = smaps_pmap_render_each(&t, pid, cmdline, out, flush, ud);
	smaps_pmap_release(&t);
	return r;
}

int smaps_render_pmap(const struct smaps *s, int pid, const char *cmdline,
		      struct strbuf *out)
{
	return smaps_render_pmap_each(s, pid, cmdline, out, NULL, NULL);
}

static struct json_object *mapping_json(const struct smaps *s, size_t i)
{
	const struct smaps_mapping *m = &s->m[i];
	struct json_object *o = json_object_new_object();
	char b[48];

	if (!o)
		return NULL;
	snprintf(b, sizeof(b), "%08" PRIx64, m->start);
	json_object_object_add(o, "address", json_object_new_string(b));
	snprintf(b, sizeof(b), "%08" PRIx64, m->end);
	json_object_object_add(o, "end", json_object_new_string(b));
	json_object_object_add(o, "perm", json_object_new_string(m->perms));
	snprintf(b, sizeof(b), "%08" PRIx64, m->offset);
	json_object_object_add(o, "offset", json_object_new_string(b));
	snprintf(b, sizeof(b), "%02x:%02x", m->dev_major, m->dev_minor);
	json_object_object_add(o, "device", json_object_new_string(b));
	json_object_object_add(o, "inode", json_object_new_uint64(m->inode));
	json_object_object_add(o, "mapping", json_object_new_string(m->name));
	for (size_t f = 0; f < s->n_fields && m->v; f++)
		json_object_object_add(o, s->fields[f],
				       json_object_new_uint64(m->v[f]));
	return o;
}

struct json_object *smaps_to_json(const struct smaps *s, int pid)
{
	struct json_object *o = json_object_new_object();
	struct json_object *fields = json_object_new_array();
	struct json_object *maps = json_object_new_array();
	struct json_object *totals = json_object_new_object();

	if (!o || !fields || !maps || !totals) {
		json_object_put(o);
		json_object_put(fields);
		json_object_put(maps);
		json_object_put(totals);
		return NULL;
	}
	json_object_object_add(o, "pid", json_object_new_int(pid));
	for (size_t f = 0; f < s->n_fields; f++) {
		uint64_t t = 0;

		for (size_t i = 0; i < s->n; i++)
			t += s->m[i].v ? s->m[i].v[f] : 0;
		json_object_array_add(fields,
				      json_object_new_string(s->fields[f]));
		json_object_object_add(totals, s->fields[f],
				       json_object_new_uint64(t));
	}
	for (size_t i = 0; i < s->n; i++)
		json_object_array_add(maps, mapping_json(s, i));
	json_object_object_add(o, "fields", fields);
	json_object_object_add(o, "mappings", maps);
	json_object_object_add(o, "totals", totals);
	json_object_object_add(o, "truncated",
			       json_object_new_boolean(s->truncated));
	return o;
}
