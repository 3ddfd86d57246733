/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/parse.h"
#include "base/util.h"
#include "pod_parse.h"

/* n hex digits of s as a number, or -1. */
static long hexn(const char *s, size_t avail, size_t n)
{
	long v = 0;

	if (avail < n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int d = parse_hex_digit(s[i]);

		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

static size_t utf8_put(uint32_t c, char *b)
{
	if (c < 0x80) {
		b[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		b[0] = (char)(0xc0 | (c >> 6));
		b[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		b[0] = (char)(0xe0 | (c >> 12));
		b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	b[0] = (char)(0xf0 | (c >> 18));
	b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	b[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* One escape after the backslash at s[0]; appends to b. Returns the
 * bytes consumed or -1. */
static long unescape(const char *s, size_t avail, char *b, size_t *bn)
{
	static const char simple[] = "a\ab\bf\fn\nr\rt\tv\v\\\\\"\"''";
	long v;

	if (avail < 1)
		return -1;
	for (size_t i = 0; simple[i]; i += 2)
		if (s[0] == simple[i]) {
			b[(*bn)++] = simple[i + 1];
			return 1;
		}
	if (s[0] == 'x' && (v = hexn(s + 1, avail - 1, 2)) >= 0) {
		b[(*bn)++] = (char)v;
		return 3;
	}
	if ((s[0] == 'u' && (v = hexn(s + 1, avail - 1, 4)) >= 0) ||
	    (s[0] == 'U' && (v = hexn(s + 1, avail - 1, 8)) >= 0)) {
		if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
			return -1;
		*bn += utf8_put((uint32_t)v, b + *bn);
		return s[0] == 'u' ? 5 : 9;
	}
	if (avail >= 3 && s[0] >= '0' && s[0] <= '3' && s[1] >= '0' &&
	    s[1] <= '7' && s[2] >= '0' && s[2] <= '7') {
		b[(*bn)++] = (char)((s[0] - '0') * 64 + (s[1] - '0') * 8 +
				    (s[2] - '0'));
		return 3;
	}
	return -1;
}

int pod_unquote(const char *s, size_t len, char *out, size_t size)
{
	size_t i = 1, n = 0;

	if (len < 2 || s[0] != '"' || s[len - 1] != '"')
		return -EBADMSG;
	while (i < len - 1) {
		char b[4];
		size_t bn = 0;
		long used = 1;

		if (s[i] == '\\')
			used = 1 + unescape(s + i + 1, len - 1 - i - 1, b, &bn);
		else if (s[i] == '"' || s[i] == '\n')
			return -EBADMSG;
		else
			b[bn++] = s[i];
		if (used <= 0)
			return -EBADMSG;
		for (size_t k = 0; k < bn; k++)
			if (!b[k])
				return -EBADMSG;
		if (n + bn >= size)
			return -E2BIG;
		memcpy(out + n, b, bn);
		n += bn;
		i += (size_t)used;
	}
	out[n] = '\0';
	return (int)n;
}

static void note_bad(struct pod_annotations *ret, const char *line, size_t n)
{
	if (!ret->bad_lines++)
		snprintf(ret->first_bad, sizeof(ret->first_bad), "%.*s",
			 (int)(n < 100 ? n : 100), line);
}

int pod_parse_annotations(const char *buf, size_t len,
			  struct pod_annotations *ret)
{
	size_t pos = 0;

	memset(ret, 0, sizeof(*ret));
	while (pos < len) {
		const char *line = buf + pos,
			   *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		const char *eq = memchr(line, '=', n);
		struct pod_annotation *a = &ret->a[ret->n];
		size_t kl = eq ? (size_t)(eq - line) : 0;

		pos += n + 1;
		if (n == 0)
			continue;
		if (!eq || kl == 0 || kl >= sizeof(a->key)) {
			note_bad(ret, line, n);
			continue;
		}
		if (kl < 11 || memcmp(line, "oomlens.io/", 11) != 0)
			continue; /* not ours: not even unquoted */
		if (ret->n == POD_ANN_MAX ||
		    pod_unquote(eq + 1, n - kl - 1, a->value,
				sizeof(a->value)) < 0) {
			note_bad(ret, line, n);
			continue;
		}
		memcpy(a->key, line, kl);
		a->key[kl] = '\0';
		ret->n++;
	}
	return 0;
}

const char *pod_annotation(const struct pod_annotations *a, const char *key)
{
	for (size_t i = 0; i < a->n; i++)
		if (streq(a->a[i].key, key))
			return a->a[i].value;
	return NULL;
}

static void add_error(struct pod_settings *s, const char *key, const char *v,
		      const char *why)
{
	size_t n = strlen(s->errors);

	snprintf(s->errors + n, sizeof(s->errors) - n, "%s%s=\"%.40s\": %s",
		 n ? "; " : "", key, v, why);
}

static int parse_containers(const char *v, struct pod_settings *s)
{
	size_t n = 0;

	while (*v) {
		const char *end = strchr(v, ',');
		size_t l = end ? (size_t)(end - v) : strlen(v);
		const char *b = v;

		while (l && *b == ' ')
			b++, l--;
		while (l && b[l - 1] == ' ')
			l--;
		if (!dns_label_ok(b, l) || n == POD_MAX_CONTAINERS)
			return -EINVAL;
		memcpy(s->containers[n], b, l);
		s->containers[n++][l] = '\0';
		v = end ? end + 1 : v + strlen(v);
	}
	if (!n)
		return -EINVAL;
	s->n_containers = n;
	return 0;
}

/* oomlens.io/jvm-histogram ("true"/"false") and its pause bound (ms,
 * 1-600000). Returns the number of bad values. */
static unsigned histogram_settings(const struct pod_annotations *a,
				   struct pod_settings *s)
{
	unsigned bad = 0, ms;
	const char *v;

	if ((v = pod_annotation(a, "oomlens.io/jvm-histogram"))) {
		if (streq(v, "true") || streq(v, "false"))
			s->jvm_histogram = streq(v, "true");
		else {
			add_error(s, "oomlens.io/jvm-histogram", v,
				  "expected true or false");
			bad++;
		}
	}
	if ((v = pod_annotation(a, "oomlens.io/jvm-histogram-max-pause-ms"))) {
		if (parse_uint(v, &ms) == 0 && ms >= 1 && ms <= 600000)
			s->jvm_histogram_max_pause_ms = ms;
		else {
			add_error(s, "oomlens.io/jvm-histogram-max-pause-ms", v,
				  "expected milliseconds, 1-600000");
			bad++;
		}
	}
	return bad;
}

unsigned pod_settings_from(const struct pod_annotations *a,
			   struct pod_settings *ret)
{
	struct pod_settings s = {.jvm = true, .trim = POD_TRIM_OFF};
	unsigned bad = 0;
	const char *v;

	(void)rec_thresholds_parse("80,90,95", &s.th);
	if ((v = pod_annotation(a, "oomlens.io/thresholds")) &&
	    rec_thresholds_parse(v, &s.th) < 0) {
		(void)rec_thresholds_parse("80,90,95", &s.th);
		add_error(&s, "oomlens.io/thresholds", v,
			  "expected ascending percentages 1-100, e.g. "
			  "80,90,95");
		bad++;
	}
	if ((v = pod_annotation(a, "oomlens.io/jvm"))) {
		if (streq(v, "auto") || streq(v, "off"))
			s.jvm = streq(v, "auto");
		else {
			add_error(&s, "oomlens.io/jvm", v,
				  "expected auto or off");
			bad++;
		}
	}
	if ((v = pod_annotation(a, "oomlens.io/trim"))) {
		if (streq(v, "off") || streq(v, "test") ||
		    streq(v, "on-pressure"))
			s.trim = streq(v, "off")    ? POD_TRIM_OFF
				 : streq(v, "test") ? POD_TRIM_TEST
						    : POD_TRIM_ON_PRESSURE;
		else {
			add_error(&s, "oomlens.io/trim", v,
				  "expected off, test or on-pressure");
			bad++;
		}
	}
	bad += histogram_settings(a, &s);
	if ((v = pod_annotation(a, "oomlens.io/containers")) &&
	    parse_containers(v, &s) < 0) {
		s.n_containers = 0;
		add_error(&s, "oomlens.io/containers", v,
			  "expected a comma list of container names");
		bad++;
	}
	v = pod_annotation(a, "oomlens.io/capture");
	s.capture_off = v && streq(v, "false");
	*ret = s;
	return bad;
}

bool pod_container_selected(const struct pod_settings *s, const char *name)
{
	if (!s->n_containers)
		return true;
	for (size_t i = 0; i < s->n_containers; i++)
		if (streq(s->containers[i], name))
			return true;
	return false;
}

/* The memory line's path (v1), else the unified one's (v2). */
static bool memory_path(const char *buf, size_t len, const char **ret,
			size_t *ret_len)
{
	const char *v2 = NULL;
	size_t v2_len = 0, pos = 0;

	while (pos < len) {
		const char *l = buf + pos, *nl = memchr(l, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - l) : len - pos;
		const char *c1 = memchr(l, ':', n);
		const char *c2 =
			c1 ? memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - l))
			   : NULL;
		size_t cl = c2 ? (size_t)(c2 - c1 - 1) : 0;

		pos += n + 1;
		if (!c2)
			continue;
		if (cl == 0 && n - (size_t)(c2 + 1 - l) > 0) {
			v2 = c2 + 1;
			v2_len = n - (size_t)(c2 + 1 - l);
			continue;
		}
		for (const char *p = c1 + 1; p < c2;) {
			const char *comma = memchr(p, ',', (size_t)(c2 - p));
			const char *e = comma ? comma : c2;

			if (e - p == 6 && memcmp(p, "memory", 6) == 0) {
				*ret = c2 + 1;
				*ret_len = n - (size_t)(c2 + 1 - l);
				return true;
			}
			p = e + 1;
		}
	}
	*ret = v2;
	*ret_len = v2_len;
	return v2 != NULL;
}

/* "<prefix><id>[.scope]" → id, for each runtime's prefix. */
static void undecorate(const char **s, size_t *n)
{
	static const char *const prefixes[] = {"cri-containerd-", "crio-",
					       "docker-", "libpod-", NULL};

	if (*n > 6 && memcmp(*s + *n - 6, ".scope", 6) == 0)
		*n -= 6;
	for (size_t i = 0; prefixes[i]; i++) {
		size_t pl = strlen(prefixes[i]);

		if (*n > pl && memcmp(*s, prefixes[i], pl) == 0) {
			*s += pl;
			*n -= pl;
			return;
		}
	}
}

/* "pod<uid>" or "kubepods[-qos]-pod<uid_>.slice" → uid with '-'. */
static bool pod_uid_of(const char *c, size_t n, char *uid, size_t size)
{
	const char *p = NULL;
	size_t l = 0;

	if (n > 3 && memcmp(c, "pod", 3) == 0) {
		p = c + 3;
		l = n - 3;
	} else if (n > 15 && memcmp(c, "kubepods", 8) == 0 &&
		   memcmp(c + n - 6, ".slice", 6) == 0) {
		/* the last "-pod" before ".slice" */
		for (size_t i = n - 6; i >= 4 + 8 && !p; i--)
			if (memcmp(c + i - 4, "-pod", 4) == 0) {
				p = c + i;
				l = n - 6 - i;
			}
	}
	if (!p || l == 0 || l >= size)
		return false;
	for (size_t i = 0; i < l; i++)
		uid[i] = p[i] == '_' ? '-' : p[i];
	uid[l] = '\0';
	return true;
}

int pod_parse_proc_cgroup(const char *buf, size_t len, char *id, size_t id_size,
			  char *pod_uid, size_t uid_size, char *path,
			  size_t path_size)
{
	const char *p, *comps[64];
	size_t pl, lens[64], n = 0;

	if (!memory_path(buf, len, &p, &pl) || pl == 0 || p[0] != '/' ||
	    pl >= path_size)
		return -ENOENT;
	for (size_t i = 1; i < pl && n < 64;) {
		const char *s = memchr(p + i, '/', pl - i);
		size_t e = s ? (size_t)(s - p) : pl;

		if (e > i) {
			comps[n] = p + i;
			lens[n++] = e - i;
		}
		i = e + 1;
	}
	if (!n)
		return -ENOENT; /* the root: no container */
	/* crun puts the processes in a "container" leaf of the scope */
	if (n >= 2 && lens[n - 1] == 9 &&
	    memcmp(comps[n - 1], "container", 9) == 0)
		n--;
	{
		const char *c = comps[n - 1];
		size_t cl = lens[n - 1];

		undecorate(&c, &cl);
		if (cl == 0 || cl >= id_size)
			return -ENOENT;
		memcpy(id, c, cl);
		id[cl] = '\0';
	}
	pod_uid[0] = '\0';
	for (size_t i = 0; i + 1 < n; i++)
		if (pod_uid_of(comps[i], lens[i], pod_uid, uid_size))
			break;
	memcpy(path, p, pl);
	path[pl] = '\0';
	return 0;
}

void pod_limit_env_name(const char *container, char *out, size_t size)
{
	size_t n = strlcpy_safe(out, "OOMLENS_LIMIT_", size);

	for (; *container && n + 1 < size; container++) {
		char c = *container;

		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		else if (c == '-' || c == '.')
			c = '_';
		out[n++] = c;
	}
	out[n < size ? n : size - 1] = '\0';
}
