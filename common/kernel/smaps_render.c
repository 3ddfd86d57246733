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

static size_t fmt_u64(char *buf, uint64_t v)
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
	return n;
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

struct pmap_layout {
	size_t w_addr, w_off, w_dev, w_ino;
	size_t w[SMAPS_MAX_FIELDS];
	uint64_t total[SMAPS_MAX_FIELDS];
	bool shown[SMAPS_MAX_FIELDS];
	size_t n_shown;
};

static size_t max_sz(size_t a, size_t b)
{
	return a > b ? a : b;
}

static void measure(const struct smaps *s, struct pmap_layout *l)
{
	char b[48];

	memset(l, 0, sizeof(*l));
	for (size_t i = 0; i < s->n; i++) {
		const struct smaps_mapping *m = &s->m[i];

		l->w_addr = max_sz(
			l->w_addr,
			(size_t)snprintf(b, sizeof(b), "%08" PRIx64, m->start));
		l->w_off = max_sz(l->w_off,
				  (size_t)snprintf(b, sizeof(b), "%08" PRIx64,
						   m->offset));
		l->w_dev = max_sz(l->w_dev,
				  (size_t)snprintf(b, sizeof(b), "%02x:%02x",
						   m->dev_major, m->dev_minor));
		l->w_ino = max_sz(l->w_ino, fmt_u64(b, m->inode));
		for (size_t f = 0; f < s->n_fields && m->v; f++)
			l->total[f] += m->v[f];
	}
	l->w_addr = max_sz(l->w_addr, strlen("Address"));
	l->w_off = max_sz(l->w_off, strlen("Offset"));
	l->w_dev = max_sz(l->w_dev, strlen("Device"));
	l->w_ino = max_sz(l->w_ino, strlen("Inode"));
	for (size_t f = 0; f < s->n_fields; f++) {
		l->shown[f] = !pmap_hidden(s->fields[f]);
		l->n_shown += l->shown[f];
		l->w[f] = max_sz(strlen(s->fields[f]), fmt_u64(b, l->total[f]));
	}
}

static int render_header(const struct smaps *s, const struct pmap_layout *l,
			 struct strbuf *out)
{
	int r = add_col(out, false, "Address", 7, l->w_addr);

	r = r < 0 ? r : add_col(out, true, "Perm", 4, 4);
	r = r < 0 ? r : add_col(out, true, "Offset", 6, l->w_off);
	r = r < 0 ? r : add_col(out, true, "Device", 6, l->w_dev);
	r = r < 0 ? r : add_col(out, true, "Inode", 5, l->w_ino);
	for (size_t f = 0; r >= 0 && f < s->n_fields; f++)
		if (l->shown[f])
			r = add_col(out, true, s->fields[f],
				    strlen(s->fields[f]), l->w[f]);
	return r < 0 ? r : strbuf_adds(out, " Mapping\n");
}

static int render_row(const struct smaps *s, size_t i,
		      const struct pmap_layout *l, struct strbuf *out)
{
	const struct smaps_mapping *m = &s->m[i];
	char b[48], name[PMAP_NAME_MAX + 1];
	const char *base;
	int n, r;

	n = snprintf(b, sizeof(b), "%08" PRIx64, m->start);
	r = add_col(out, false, b, (size_t)n, l->w_addr);
	r = r < 0 ? r : add_col(out, true, m->perms, strlen(m->perms), 4);
	n = snprintf(b, sizeof(b), "%08" PRIx64, m->offset);
	r = r < 0 ? r : add_col(out, true, b, (size_t)n, l->w_off);
	n = snprintf(b, sizeof(b), "%02x:%02x", m->dev_major, m->dev_minor);
	r = r < 0 ? r : add_col(out, true, b, (size_t)n, l->w_dev);
	r = r < 0 ? r : add_col(out, true, b, fmt_u64(b, m->inode), l->w_ino);
	for (size_t f = 0; r >= 0 && f < s->n_fields; f++)
		if (l->shown[f])
			r = add_col(out, true, b,
				    fmt_u64(b, m->v ? m->v[f] : 0), l->w[f]);
	strlcpy_safe(name, m->name, sizeof(name));
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	r = r < 0 ? r : strbuf_addch(out, ' ');
	r = r < 0 ? r : strbuf_adds(out, base);
	return r < 0 ? r : strbuf_addch(out, '\n');
}

static int render_footer(const struct smaps *s, const struct pmap_layout *l,
			 struct strbuf *out)
{
	size_t gap =
		l->w_addr + 1 + 5 + l->w_off + 1 + l->w_dev + 1 + l->w_ino + 1;
	char b[48];
	int r = add_col(out, false, "", 0, gap);

	for (size_t f = 0; r >= 0 && f < s->n_fields; f++) {
		if (!l->shown[f])
			continue;
		for (size_t k = 0; r >= 0 && k < l->w[f]; k++)
			r = strbuf_addch(out, '=');
		r = r < 0 ? r : strbuf_addch(out, ' ');
	}
	r = r < 0 ? r : strbuf_addch(out, '\n');
	r = r < 0 ? r : add_col(out, false, "", 0, gap);
	for (size_t f = 0; r >= 0 && f < s->n_fields; f++) {
		if (!l->shown[f])
			continue;
		r = add_col(out, false, b, fmt_u64(b, l->total[f]), l->w[f]);
		r = r < 0 ? r : strbuf_addch(out, ' ');
	}
	return r < 0 ? r : strbuf_adds(out, "KB \n");
}

int smaps_render_pmap_each(const struct smaps *s, int pid, const char *cmdline,
			   struct strbuf *out,
			   int (*flush)(struct strbuf *out, void *ud), void *ud)
{
	_cleanup_free_ struct pmap_layout *l = NULL;
	int r = strbuf_addf(out, "%d:   %s\n", pid, cmdline ? cmdline : "");

	if (r < 0 || s->n == 0)
		goto out;
	l = malloc(sizeof(*l));
	if (!l)
		return -ENOMEM;
	measure(s, l);
	r = render_header(s, l, out);
	for (size_t i = 0; r >= 0 && i < s->n; i++) {
		r = render_row(s, i, l, out);
		if (r >= 0 && flush && out->len >= SMAPS_RENDER_CHUNK)
			r = flush(out, ud);
	}
	if (r >= 0 && l->n_shown)
		r = render_footer(s, l, out);
out:
	if (r >= 0 && flush && out->len)
		r = flush(out, ud);
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
