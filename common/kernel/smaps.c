/* SPDX-License-Identifier: Apache-2.0 */
/* smaps: streaming parser and the pmap -X table. Classification and arena
 * analysis live in smaps_class.c. */
#include <fcntl.h>
#include <inttypes.h>

#include "base/parse.h"
#include "kernel/procfs_access.h"
#include "kernel/smaps.h"
#include "base/util.h"

#define LINE_MAX_BYTES (SMAPS_NAME_MAX + 128)

static const char *const known_names[_SMAPS_F_MAX] = {
	[SMAPS_F_SIZE] = "Size",
	[SMAPS_F_RSS] = "Rss",
	[SMAPS_F_PSS] = "Pss",
	[SMAPS_F_SHARED_CLEAN] = "Shared_Clean",
	[SMAPS_F_SHARED_DIRTY] = "Shared_Dirty",
	[SMAPS_F_PRIVATE_CLEAN] = "Private_Clean",
	[SMAPS_F_PRIVATE_DIRTY] = "Private_Dirty",
	[SMAPS_F_ANONYMOUS] = "Anonymous",
	[SMAPS_F_SWAP] = "Swap",
	[SMAPS_F_LOCKED] = "Locked",
	[SMAPS_F_PSS_ANON] = "Pss_Anon",
	[SMAPS_F_PSS_FILE] = "Pss_File",
	[SMAPS_F_PSS_SHMEM] = "Pss_Shmem",
};

/* Per-mapping values are staged here until the mapping is complete. */
struct smaps_stage {
	uint64_t cur[SMAPS_MAX_FIELDS];
	bool open;    /* a mapping header was seen and not yet committed */
	bool cutting; /* the current line is too long: drop until '\n' */
};

void smaps_init(struct smaps *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < _SMAPS_F_MAX; i++)
		s->idx[i] = -1;
	strbuf_init(&s->line, LINE_MAX_BYTES);
}

void smaps_release(struct smaps *s)
{
	for (size_t i = 0; i < s->n_fields; i++)
		free(s->fields[i]);
	for (size_t i = 0; i < s->n; i++)
		free(s->m[i].name);
	free(s->m);
	free(s->vals);
	free(s->stage);
	strbuf_release(&s->line);
	smaps_init(s);
}

void smaps_set_sink(struct smaps *s,
		    int (*sink)(const struct smaps *s,
				const struct smaps_mapping *m, void *ud),
		    void *ud)
{
	s->sink = sink;
	s->sink_ud = ud;
}

static struct smaps_stage *stage_of(struct smaps *s)
{
	if (!s->stage)
		s->stage = calloc(1, sizeof(struct smaps_stage));
	return s->stage;
}

/* The open mapping, complete, to the sink; then it is dropped. */
static int hand_on(struct smaps *s)
{
	struct smaps_mapping *m = &s->m[s->n - 1];
	int r;

	m->v = s->n_fields ? s->stage->cur : NULL;
	r = s->sink(s, m, s->sink_ud);
	free(m->name);
	s->n--;
	return r;
}

/* Copies the staged values of the open mapping into the value table (or
 * hands it to the sink). The first commit fixes the field list (the
 * stride). */
static int commit(struct smaps *s)
{
	struct smaps_stage *st = s->stage;
	size_t need;

	if (!st || !st->open)
		return 0;
	st->open = false;
	if (s->n_seen == 1) {
		for (size_t f = 0; f < _SMAPS_F_MAX; f++)
			for (size_t i = 0; i < s->n_fields; i++)
				if (streq(s->fields[i], known_names[f]))
					s->idx[f] = (int)i;
	}
	if (s->sink)
		return hand_on(s);
	if (s->n_fields == 0)
		return 0;
	need = s->n * s->n_fields;
	if (need > s->vals_alloc) {
		size_t na = s->vals_alloc ? s->vals_alloc * 2 : 64 * 32;
		uint64_t *nv;

		while (na < need)
			na *= 2;
		nv = realloc(s->vals, na * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->vals = nv;
		s->vals_alloc = na;
	}
	memcpy(s->vals + (s->n - 1) * s->n_fields, st->cur,
	       s->n_fields * sizeof(uint64_t));
	return 0;
}

static int parse_header(const char *p, size_t len, struct smaps_mapping *m)
{
	const char *e = p + len, *q = p;
	uint64_t maj, min;

	if (scan_hex_u64(&q, &m->start) < 0 || *q++ != '-' ||
	    scan_hex_u64(&q, &m->end) < 0 || *q++ != ' ')
		return -EBADMSG;
	if (e - q < 5 || q[4] != ' ')
		return -EBADMSG;
	memcpy(m->perms, q, 4);
	m->perms[4] = '\0';
	q += 5;
	if (scan_hex_u64(&q, &m->offset) < 0 || *q++ != ' ' ||
	    scan_hex_u64(&q, &maj) < 0 || *q++ != ':' ||
	    scan_hex_u64(&q, &min) < 0 || *q++ != ' ' ||
	    scan_u64(&q, &m->inode) < 0)
		return -EBADMSG;
	if (q < e && *q != ' ')
		return -EBADMSG;
	if (m->end < m->start || maj > UINT32_MAX || min > UINT32_MAX)
		return -EBADMSG;
	m->dev_major = (unsigned)maj;
	m->dev_minor = (unsigned)min;
	while (q < e && *q == ' ')
		q++;
	m->name = strndup(q, (size_t)(e - q));
	return m->name ? 0 : -ENOMEM;
}

static int add_mapping(struct smaps *s, const char *p, size_t len)
{
	struct smaps_stage *st = stage_of(s);
	struct smaps_mapping m = {0};
	int r;

	if (!st)
		return -ENOMEM;
	r = parse_header(p, len, &m);
	if (r == -EBADMSG) {
		s->n_malformed++;
		return 0;
	}
	if (r < 0)
		return r;
	r = commit(s);
	if (r < 0) {
		free(m.name);
		return r;
	}
	if (s->n == s->alloc) {
		size_t na = s->alloc ? s->alloc * 2 : 64;
		struct smaps_mapping *nm = realloc(s->m, na * sizeof(*nm));

		if (!nm) {
			free(m.name);
			return -ENOMEM;
		}
		s->m = nm;
		s->alloc = na;
	}
	s->m[s->n++] = m;
	s->n_seen++;
	memset(st->cur, 0, sizeof(st->cur));
	st->open = true;
	s->field_pos = 0;
	return 0;
}

static int field_index(struct smaps *s, const char *name, size_t nlen)
{
	size_t k = s->field_pos;

	if (k < s->n_fields && strlen(s->fields[k]) == nlen &&
	    memcmp(s->fields[k], name, nlen) == 0)
		return (int)k;
	for (k = 0; k < s->n_fields; k++)
		if (strlen(s->fields[k]) == nlen &&
		    memcmp(s->fields[k], name, nlen) == 0)
			return (int)k;
	/* New names are learnt from the first mapping only. */
	if (s->n_seen != 1 || s->n_fields == SMAPS_MAX_FIELDS)
		return -ENOENT;
	s->fields[s->n_fields] = strndup(name, nlen);
	if (!s->fields[s->n_fields])
		return -ENOMEM;
	return (int)s->n_fields++;
}

static int add_field(struct smaps *s, const char *p, size_t len)
{
	const char *colon = memchr(p, ':', len), *q;
	struct smaps_stage *st = s->stage;
	uint64_t v;
	int k;

	if (!colon || !st || !st->open) {
		s->n_malformed++;
		return 0;
	}
	q = colon + 1;
	while (q < p + len && *q == ' ')
		q++;
	/* VmFlags is the one non-numeric field; it is not in the table. */
	if (q >= p + len || scan_u64(&q, &v) < 0) {
		if ((size_t)(colon - p) != 7 || memcmp(p, "VmFlags", 7) != 0)
			s->n_malformed++;
		return 0;
	}
	k = field_index(s, p, (size_t)(colon - p));
	if (k == -ENOMEM)
		return k;
	if (k < 0)
		return 0;
	st->cur[k] = v;
	s->field_pos = (size_t)k + 1;
	return 0;
}

static int process_line(struct smaps *s, const char *p, size_t len)
{
	unsigned char c = len ? (unsigned char)p[0] : 0;

	if (c >= 'A' && c <= 'Z')
		return add_field(s, p, len);
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))
		return add_mapping(s, p, len);
	s->n_malformed++;
	return 0;
}

int smaps_feed(struct smaps *s, const char *buf, size_t len)
{
	struct smaps_stage *st = stage_of(s);
	const char *p = buf, *e = buf + len;
	int r;

	if (!st)
		return -ENOMEM;
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(e - p);

		if (st->cutting || s->line.len) {
			/* Continuation of a line split across chunks. */
			if (!st->cutting && strbuf_add(&s->line, p, n) < 0)
				st->cutting = true;
		} else if (!nl) {
			if (strbuf_add(&s->line, p, n) < 0)
				st->cutting = true;
		} else {
			/* Whole line inside the chunk: no copy. The '\n'
			 * after it stops the number scanners. */
			r = process_line(s, p, n);
			if (r < 0)
				return r;
		}
		if (!nl)
			break;
		if (st->cutting || s->line.len) {
			r = process_line(s, s->line.buf, s->line.len);
			strbuf_reset(&s->line);
			st->cutting = false;
			if (r < 0)
				return r;
		}
		p = nl + 1;
	}
	return 0;
}

int smaps_finish(struct smaps *s)
{
	int r = 0;

	if (s->line.len) {
		r = process_line(s, s->line.buf, s->line.len);
		strbuf_reset(&s->line);
	}
	if (r >= 0)
		r = commit(s);
	if (r < 0)
		return r;
	for (size_t i = 0; i < s->n; i++)
		s->m[i].v = s->vals ? s->vals + i * s->n_fields : NULL;
	return 0;
}

int smaps_parse(const char *buf, size_t len, struct smaps *ret)
{
	int r = smaps_feed(ret, buf, len);

	if (r >= 0)
		r = smaps_finish(ret);
	if (r >= 0 && ret->n_seen == 0)
		r = -EBADMSG;
	if (r < 0)
		smaps_release(ret);
	return r;
}

/* After EOF: a live process with mappings never has an empty smaps, so an
 * empty (or unopenable) second read means it exited while we read and the
 * table may be cut short. */
static bool vanished(int dirfd, const char *path)
{
	_cleanup_close_ int fd = -1;
	char c[64];
	ssize_t n;

	fd = procfs_open_at(dirfd, path, O_RDONLY | O_NOCTTY);
	if (fd < 0)
		return true;
	do
		n = read(fd, c, sizeof(c));
	while (n < 0 && errno == EINTR);
	return n <= 0;
}

int smaps_read_at(int dirfd, const char *path, struct smaps *ret)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	int r = 0, q;

	fd = procfs_open_at(dirfd, path, O_RDONLY | O_NOCTTY);
	if (fd < 0)
		return fd == -ENOENT ? -ESRCH : fd;
	buf = malloc(65536);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf, 65536);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		q = smaps_feed(ret, buf, (size_t)n);
		if (q < 0) {
			smaps_release(ret);
			return q;
		}
	}
	q = smaps_finish(ret);
	if (q < 0 || (r < 0 && ret->n_seen == 0)) {
		smaps_release(ret);
		return q < 0 ? q : r;
	}
	if (r < 0 || vanished(dirfd, path))
		ret->truncated = true;
	if (ret->n_seen == 0 && ret->truncated) {
		smaps_release(ret);
		return -ESRCH;
	}
	return 0;
}

uint64_t smaps_get(const struct smaps *s, size_t i, enum smaps_field f)
{
	int k = s->idx[f];

	if (k < 0 || i >= s->n || !s->m[i].v)
		return 0;
	return s->m[i].v[k];
}
