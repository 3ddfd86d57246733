/* SPDX-License-Identifier: Apache-2.0 */
/* rtproc: environ keys, cmdline arguments, exe and library names, knob
 * values, the host's memory, resource limits and a heap's largest
 * mappings, shared by the runtimes' parsers. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "forensics/runtimes/rtproc.h"
#include "base/parse.h"
#include "base/util.h"
#include "kernel/smaps.h"

int rtproc_environ_get(const char *buf, size_t len, const char *key,
		       const char **ret_val, size_t *ret_len)
{
	size_t klen = key ? strlen(key) : 0, pos = 0;
	const char *e;
	size_t elen;

	if (!klen || memchr(key, '=', klen))
		return -ENOENT;
	while (rtproc_arg_next(buf, len, &pos, &e, &elen))
		if (elen > klen && e[klen] == '=' && !memcmp(e, key, klen)) {
			*ret_val = e + klen + 1;
			*ret_len = elen - klen - 1;
			return 0;
		}
	return -ENOENT;
}

bool rtproc_arg_next(const char *buf, size_t len, size_t *pos, const char **ret,
		     size_t *ret_len)
{
	const char *nul;
	size_t n;

	if (!buf || *pos >= len)
		return false;
	nul = memchr(buf + *pos, '\0', len - *pos);
	n = nul ? (size_t)(nul - (buf + *pos)) : len - *pos;
	*ret = buf + *pos;
	*ret_len = n;
	*pos += n + 1;
	return true;
}

bool rtproc_eq(const char *s, size_t n, const char *t)
{
	return strlen(t) == n && memcmp(s, t, n) == 0;
}

void rtproc_basename(const char *path, char *ret, size_t size)
{
	static const char deleted[] = " (deleted)";
	const char *b = path ? strrchr(path, '/') : NULL;
	size_t n;

	if (!size)
		return;
	b = b ? b + 1 : (path ? path : "");
	n = strlen(b);
	if (n >= sizeof(deleted) - 1 &&
	    !strcmp(b + n - (sizeof(deleted) - 1), deleted))
		n -= sizeof(deleted) - 1;
	if (n >= size)
		n = size - 1;
	memcpy(ret, b, n);
	ret[n] = '\0';
}

/* After the prefix, a library's name has only versions and ".so":
 * "libnode.so" + ".108", "libpython3." + "11.so.1.0". */
static bool version_tail(const char *p)
{
	while (*p) {
		if (startswith(p, "so"))
			p += 2;
		else if ((*p >= '0' && *p <= '9') || *p == '.')
			p++;
		else
			return false;
	}
	return true;
}

long rtproc_maps_find_lib(const struct smaps *s, const char *prefix)
{
	size_t plen = strlen(prefix);
	char b[256];

	for (size_t i = 0; i < s->n; i++) {
		if (s->m[i].name[0] != '/')
			continue;
		rtproc_basename(s->m[i].name, b, sizeof(b));
		if (startswith(b, prefix) && version_tail(b + plen))
			return (long)i;
	}
	return -1;
}

int rtproc_classify_each(const struct smaps *s, rtproc_mapping_fn fn, void *ctx)
{
	struct smaps_summary sum;
	int r = smaps_classify(s, &sum);

	if (r < 0)
		return r;
	for (size_t i = 0; i < s->n; i++)
		fn(s, i, sum.class_of[i], smaps_get(s, i, SMAPS_F_RSS), ctx);
	smaps_summary_release(&sum);
	return 0;
}

bool rtproc_is_file_class(int cls)
{
	return cls == SMAPS_C_FILE_CODE || cls == SMAPS_C_FILE_DATA ||
	       cls == SMAPS_C_SHMEM;
}

bool rtproc_is_anon(const struct smaps *s, size_t i)
{
	const struct smaps_mapping *m = &s->m[i];

	return m->inode == 0 && m->perms[3] == 'p' &&
	       (m->name[0] == '\0' || startswith(m->name, "[anon:"));
}

int rtproc_parse_u64(const char *s, size_t n, int base, uint64_t *ret)
{
	char tmp[32];

	if (base == 16 && n > 2 && s[0] == '0' &&
	    (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		n -= 2;
	}
	if (!n || n >= sizeof(tmp) || (base != 10 && base != 16))
		return -EINVAL;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	return parse_u64_base(tmp, base, ret);
}

void rtproc_ranges_add(struct rtproc_ranges *r, uint64_t start, uint64_t end,
		       uint64_t rss_kb)
{
	size_t low = 0;

	if (r->n < RTPROC_MAX_RANGES) {
		r->r[r->n++] = (struct rtproc_range){start, end, rss_kb};
		return;
	}
	for (size_t i = 1; i < r->n; i++)
		if (r->r[i].rss_kb < r->r[low].rss_kb)
			low = i;
	if (rss_kb > r->r[low].rss_kb)
		r->r[low] = (struct rtproc_range){start, end, rss_kb};
}

/* The line of buf starting with name (at a line's start), its rest in
 * *ret_rest and *ret_n. */
static bool find_line(const char *buf, size_t len, const char *name,
		      const char **ret_rest, size_t *ret_n)
{
	size_t nl = strlen(name), pos = 0;

	while (pos < len) {
		const char *l = buf + pos, *e = memchr(l, '\n', len - pos);
		size_t n = e ? (size_t)(e - l) : len - pos;

		pos += n + 1;
		if (n >= nl && !memcmp(l, name, nl)) {
			*ret_rest = l + nl;
			*ret_n = n - nl;
			return true;
		}
	}
	return false;
}

/* The first blank-separated word of s (n bytes), skipping leading ones. */
static const char *word(const char *s, size_t n, size_t *ret_len)
{
	size_t i = 0, k;

	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	for (k = i; k < n && s[k] != ' ' && s[k] != '\t'; k++)
		;
	*ret_len = k - i;
	return s + i;
}

int rtproc_parse_meminfo(const char *buf, size_t len, uint64_t *ret)
{
	const char *rest, *w, *unit;
	size_t n, wn, un;
	uint64_t kb;

	if (!buf || !find_line(buf, len, "MemTotal:", &rest, &n))
		return -ENOENT;
	w = word(rest, n, &wn);
	unit = word(w + wn, n - (size_t)(w + wn - rest), &un);
	if (rtproc_parse_u64(w, wn, 10, &kb) < 0 || kb > UINT64_MAX / 1024 ||
	    !rtproc_eq(unit, un, "kB"))
		return -EBADMSG;
	*ret = kb * 1024;
	return 0;
}

int rtproc_parse_limit(const char *buf, size_t len, const char *name,
		       uint64_t *ret)
{
	const char *rest, *w;
	size_t n, wn;
	uint64_t v;

	/* the kernel pads the name to its column (%-25s): two blanks at
	 * least, so that "Max address" is not "Max address space" */
	if (!buf || !name || !name[0] ||
	    !find_line(buf, len, name, &rest, &n) || n < 2 || rest[0] != ' ' ||
	    rest[1] != ' ')
		return -ENOENT;
	w = word(rest, n, &wn);
	if (rtproc_eq(w, wn, "unlimited")) {
		*ret = UINT64_MAX;
		return 0;
	}
	if (rtproc_parse_u64(w, wn, 10, &v) < 0)
		return -EBADMSG;
	*ret = v;
	return 0;
}

_printf_(3, 0) static void add_line(char (*lines)[RTPROC_LINE], size_t *n,
				    const char *fmt, va_list ap)
{
	if (*n >= RTPROC_MAX_LINES)
		return;
	vsnprintf(lines[*n], RTPROC_LINE, fmt, ap);
	(*n)++;
}

void rtproc_evidence(struct rtproc_verdict *v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_line(v->evidence, &v->n_evidence, fmt, ap);
	va_end(ap);
}

void rtproc_remedy(struct rtproc_verdict *v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_line(v->remedies, &v->n_remedies, fmt, ap);
	va_end(ap);
}
