/* SPDX-License-Identifier: Apache-2.0 */
/* Pure parsers for jcmd replies: NMT summary, GC.heap_info, malloc_info XML.
 * Each works on one line at a time, copied into a bounded local buffer, so
 * inputs need not be NUL-terminated and overlong lines are cut, not read
 * past. */
#include <ctype.h>
#include <stddef.h>

#include "inspect/jvm.h"
#include "base/parse.h"

#define LINE_MAX_LEN 512

struct line_iter {
	const char *p, *end;
	char line[LINE_MAX_LEN];
};

/* Copies the next line (without '\n', cut at LINE_MAX_LEN - 1). */
static bool next_line(struct line_iter *it)
{
	const char *nl;
	size_t n;

	if (it->p >= it->end)
		return false;
	nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
	if (!nl)
		nl = it->end;
	n = (size_t)(nl - it->p);
	if (n >= sizeof(it->line))
		n = sizeof(it->line) - 1;
	memcpy(it->line, it->p, n);
	it->line[n] = '\0';
	/* A NUL inside a line ends it: the rest is not text. */
	it->p = nl + 1;
	return true;
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	return s;
}

static void rstrip(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

/* "123KB", "12K", "3MB", "7B", "5" (no unit: bytes) → bytes. */
/* Finds key (e.g. "reserved=") in s and scans the size after it. */
static int find_bytes(const char *s, const char *key, uint64_t *ret)
{
	const char *k = strstr(s, key);

	if (!k)
		return -ENOENT;
	k += strlen(key);
	return scan_size(&k, ret);
}

/* Finds key (e.g. "#") and scans a plain count after it. */
static int find_count(const char *s, const char *key, uint64_t *ret)
{
	const char *k = strstr(s, key);

	if (!k)
		return -ENOENT;
	k += strlen(key);
	return scan_u64(&k, ret);
}

static void copy_name(char *dst, size_t size, const char *s, size_t n)
{
	while (n && s[n - 1] == ' ')
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/* ---- NMT summary ---- */

static int nmt_category(struct jvm_nmt *n, const char *s)
{
	struct jvm_nmt_category *c;
	const char *open = strstr(s, " (reserved=");
	uint64_t res, com;

	if (!open || find_bytes(open, "reserved=", &res) < 0 ||
	    find_bytes(open, "committed=", &com) < 0)
		return -EBADMSG;
	/* The blanks before the name may run into " (reserved=" itself
	 * ("-  (reserved=…)"): a category without a name is malformed, and
	 * open - s would wrap. */
	s = skip_ws(s);
	if (s >= open)
		return -EBADMSG;
	if (n->n_categories >= JVM_NMT_MAX_CATEGORIES)
		return 0;
	c = &n->categories[n->n_categories++];
	memset(c, 0, sizeof(*c));
	c->threads = -1;
	copy_name(c->name, sizeof(c->name), s, (size_t)(open - s));
	c->reserved = res;
	c->committed = com;
	return 0;
}

/* One "(...)" detail line of the current category. */
static void nmt_detail(struct jvm_nmt *n, struct jvm_nmt_category *c,
		       const char *s)
{
	uint64_t a, b;

	if (startswith(s, "(malloc=") && find_bytes(s, "malloc=", &a) == 0 &&
	    find_count(s, "#", &b) == 0) {
		c->has_malloc = true;
		c->malloc = a;
		c->malloc_count = b;
	} else if (startswith(s, "(mmap:") &&
		   find_bytes(s, "reserved=", &a) == 0 &&
		   find_bytes(s, "committed=", &b) == 0) {
		c->has_mmap = true;
		c->mmap_reserved = a;
		c->mmap_committed = b;
	} else if (startswith(s, "(arena=") &&
		   find_bytes(s, "arena=", &a) == 0 &&
		   find_count(s, "#", &b) == 0) {
		c->has_arena = true;
		c->arena = a;
		c->arena_count = b;
	} else if (startswith(s, "(stack:") &&
		   find_bytes(s, "reserved=", &a) == 0 &&
		   find_bytes(s, "committed=", &b) == 0) {
		c->has_stack = true;
		c->stack_reserved = a;
		c->stack_committed = b;
	} else if ((startswith(s, "(thread #") ||
		    startswith(s, "(threads #")) &&
		   find_count(s, "#", &a) == 0 && a <= INT64_MAX) {
		c->threads = (int64_t)a;
		if (streq(c->name, "Thread"))
			n->threads = (int64_t)a;
	}
}

/* "Total:", "malloc:" and "mmap:" lines before the first category. */
static int nmt_totals(struct jvm_nmt *n, const char *s, bool *seen_total)
{
	if (startswith(s, "Total:")) {
		if (find_bytes(s, "reserved=", &n->reserved) < 0 ||
		    find_bytes(s, "committed=", &n->committed) < 0)
			return -EBADMSG;
		*seen_total = true;
	} else if (startswith(s, "malloc:")) {
		const char *p = skip_ws(s + strlen("malloc:"));

		if (scan_size(&p, &n->malloc) < 0 ||
		    find_count(p, "#", &n->malloc_count) < 0)
			return -EBADMSG;
	} else if (startswith(s, "mmap:")) {
		if (find_bytes(s, "reserved=", &n->mmap_reserved) < 0 ||
		    find_bytes(s, "committed=", &n->mmap_committed) < 0)
			return -EBADMSG;
	}
	return 0;
}

int jvm_parse_nmt(const char *buf, size_t len, struct jvm_nmt *ret)
{
	struct line_iter it = {.p = buf, .end = buf + len};
	struct jvm_nmt *n;
	bool seen_total = false;
	int r = 0;

	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->threads = -1;
	while (r == 0 && next_line(&it)) {
		const char *s = skip_ws(it.line);

		if (startswith(s, "Native memory tracking is not enabled")) {
			memset(n, 0, sizeof(*n));
			n->threads = -1;
			*ret = *n;
			free(n);
			return 0;
		}
		/* "detail" mode continues with per-site sections: stop. */
		if (seen_total && (startswith(s, "Virtual memory map:") ||
				   startswith(s, "Details:")))
			break;
		if (s[0] == '-' && seen_total)
			r = nmt_category(n, s + 1);
		else if (s[0] == '(' && n->n_categories > 0)
			nmt_detail(n, &n->categories[n->n_categories - 1], s);
		else if (n->n_categories == 0)
			r = nmt_totals(n, s, &seen_total);
	}
	if (r == 0 && !seen_total)
		r = -EBADMSG;
	if (r == 0) {
		n->enabled = true;
		*ret = *n;
	}
	free(n);
	return r;
}

/* ---- GC.heap_info ---- */

/* "[0x..., 0x..., 0x...)": the first and the last address. */
static int heap_bounds(const char *s, uint64_t *ret_lo, uint64_t *ret_hi)
{
	const char *p = strchr(s, '[');
	uint64_t lo = 0, hi = 0, v;
	bool first = true;

	if (!p)
		return -ENOENT;
	p++;
	while (*p) {
		p = skip_ws(p);
		if (p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
			return -EBADMSG;
		p += 2;
		if (scan_hex_u64(&p, &v) < 0)
			return -EBADMSG;
		if (first)
			lo = v;
		hi = v;
		first = false;
		if (*p == ')')
			break;
		if (*p++ != ',')
			return -EBADMSG;
	}
	if (first || hi < lo || *p != ')')
		return -EBADMSG;
	*ret_lo = lo;
	*ret_hi = hi;
	return 0;
}

static const char *collector_of(const char *space)
{
	if (startswith(space, "garbage-first"))
		return "G1";
	if (startswith(space, "def new") || streq(space, "DefNew") ||
	    startswith(space, "tenured") || streq(space, "Tenured"))
		return "Serial";
	if (startswith(space, "PS") || startswith(space, "ParOld"))
		return "Parallel";
	return "unknown";
}

/* "<name>   total [reserved R, committed ]C, used U [ranges)". */
static int heap_space(struct jvm_heap_info *hi, const char *s)
{
	const char *t = strstr(s, " total ");
	struct jvm_heap_space sp = {0};
	const char *p;

	if (!t || t == s)
		return -EBADMSG;
	copy_name(sp.name, sizeof(sp.name), s, (size_t)(t - s));
	p = t + strlen(" total ");
	if (startswith(p, "reserved ")) {
		if (find_bytes(p, "reserved ", &sp.reserved) < 0 ||
		    find_bytes(p, "committed ", &sp.committed) < 0)
			return -EBADMSG;
	} else if (scan_size(&p, &sp.committed) < 0) {
		return -EBADMSG;
	}
	if (find_bytes(p, "used ", &sp.used) < 0)
		return -EBADMSG;
	if (heap_bounds(p, &sp.start, &sp.end) == 0 && sp.reserved == 0)
		sp.reserved = sp.end - sp.start;
	if (hi->n_spaces == 0)
		strlcpy_safe(hi->collector, collector_of(sp.name),
			     sizeof(hi->collector));
	hi->committed += sp.committed;
	hi->used += sp.used;
	hi->reserved += sp.reserved;
	if (hi->n_spaces < JVM_HEAP_MAX_SPACES)
		hi->spaces[hi->n_spaces++] = sp;
	return 0;
}

/* "Metaspace used U, committed C, reserved R" and its "class space". */
static void heap_meta(struct jvm_heap_info *hi, const char *s, bool klass)
{
	uint64_t u, c, r;

	if (find_bytes(s, "used ", &u) < 0 ||
	    find_bytes(s, "committed ", &c) < 0 ||
	    find_bytes(s, "reserved ", &r) < 0)
		return;
	if (klass) {
		hi->class_used = u;
		hi->class_committed = c;
		hi->class_reserved = r;
	} else {
		hi->has_metaspace = true;
		hi->metaspace_used = u;
		hi->metaspace_committed = c;
		hi->metaspace_reserved = r;
	}
}

int jvm_parse_heap_info(const char *buf, size_t len, struct jvm_heap_info *ret)
{
	struct line_iter it = {.p = buf, .end = buf + len};
	struct jvm_heap_info hi = {0};

	while (next_line(&it)) {
		const char *s = skip_ws(it.line);

		rstrip(it.line);
		if (startswith(s, "Metaspace "))
			heap_meta(&hi, s, false);
		else if (startswith(s, "class space "))
			heap_meta(&hi, s, true);
		else if (startswith(s, "region size "))
			find_bytes(s, "region size ", &hi.region_size);
		else if (strstr(s, " total ") && strstr(s, "used ") &&
			 !strstr(s, " space "))
			heap_space(&hi, s);
	}
	if (hi.n_spaces == 0)
		return -EBADMSG;
	*ret = hi;
	return 0;
}

/* ---- malloc_info XML ---- */

/* Value of attribute name="..." in an XML tag line. */
static int xml_attr_u64(const char *s, const char *attr, uint64_t *ret)
{
	char key[24];
	const char *p;
	int r;

	if (snprintf(key, sizeof(key), "%s=\"", attr) >= (int)sizeof(key))
		return -EINVAL;
	p = strstr(s, key);
	if (!p)
		return -ENOENT;
	p += strlen(key);
	r = scan_u64(&p, ret);
	if (r < 0)
		return r;
	return *p == '"' ? 0 : -EBADMSG;
}

struct mi_counts {
	uint64_t free_fast, free_rest, free_count, mmap_count, mmap_bytes;
	uint64_t system_current, system_max;
};

/* <total type=fast|rest|mmap count= size=/>, <system type= size=/>. */
static void mi_line(struct mi_counts *c, const char *s)
{
	uint64_t count = 0, size = 0;
	bool is_total = startswith(s, "<total ");

	if (!is_total && !startswith(s, "<system "))
		return;
	if (xml_attr_u64(s, "size", &size) < 0)
		return;
	if (is_total && xml_attr_u64(s, "count", &count) < 0)
		return;
	if (is_total && strstr(s, "type=\"fast\"")) {
		c->free_fast = size;
		c->free_count += count;
	} else if (is_total && strstr(s, "type=\"rest\"")) {
		c->free_rest = size;
		c->free_count += count;
	} else if (is_total && strstr(s, "type=\"mmap\"")) {
		c->mmap_count = count;
		c->mmap_bytes = size;
	} else if (!is_total && strstr(s, "type=\"current\"")) {
		c->system_current = size;
	} else if (!is_total && strstr(s, "type=\"max\"")) {
		c->system_max = size;
	}
}

static void mi_end_heap(struct jvm_malloc_info *m, int nr,
			const struct mi_counts *c)
{
	struct jvm_malloc_arena *a;

	if (m->n_arenas >= JVM_MALLOC_MAX_ARENAS)
		return;
	a = &m->arenas[m->n_arenas++];
	a->nr = nr;
	a->free_fast = c->free_fast;
	a->free_rest = c->free_rest;
	a->free_count = c->free_count;
	a->system_current = c->system_current;
	a->system_max = c->system_max;
}

int jvm_parse_malloc_info(const char *buf, size_t len,
			  struct jvm_malloc_info *ret)
{
	struct line_iter it = {.p = buf, .end = buf + len};
	struct jvm_malloc_info *m;
	struct mi_counts cur = {0}, tot = {0};
	bool in_heap = false, seen_malloc = false, seen_end = false;
	int nr = -1;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	while (!seen_end && next_line(&it)) {
		const char *s = skip_ws(it.line);
		uint64_t v;

		if (startswith(s, "<malloc ")) {
			seen_malloc = true;
		} else if (startswith(s, "<heap ")) {
			in_heap = true;
			memset(&cur, 0, sizeof(cur));
			nr = xml_attr_u64(s, "nr", &v) == 0 && v < INT32_MAX
				     ? (int)v
				     : -1;
		} else if (startswith(s, "</heap>") && in_heap) {
			mi_end_heap(m, nr, &cur);
			in_heap = false;
		} else if (startswith(s, "</malloc>")) {
			seen_end = true;
		} else if (seen_malloc) {
			mi_line(in_heap ? &cur : &tot, s);
		}
	}
	if (!seen_malloc || !seen_end) {
		free(m);
		return -EBADMSG;
	}
	m->free_fast = tot.free_fast;
	m->free_rest = tot.free_rest;
	m->free_count = tot.free_count;
	m->mmap_count = tot.mmap_count;
	m->mmap_bytes = tot.mmap_bytes;
	m->system_current = tot.system_current;
	m->system_max = tot.system_max;
	*ret = *m;
	free(m);
	return 0;
}

/* ---- VM.flags ---- */

/* One "-XX:Name=value" token; values are bytes except ThreadStackSize
 * (KiB) and MaxRAMPercentage (a percentage, maybe fractional). */
static void flag_token(struct jvm_flags *f, const char *tok, size_t n)
{
	static const struct {
		const char *name;
		size_t off;
		size_t has;
	} names[] = {
#define F(n, v)                                \
	{n "=", offsetof(struct jvm_flags, v), \
	 offsetof(struct jvm_flags, has_##v)}
		F("MaxHeapSize", max_heap),
		F("MaxDirectMemorySize", max_direct),
		F("MaxMetaspaceSize", max_metaspace),
		F("ReservedCodeCacheSize", code_cache),
		F("ThreadStackSize", thread_stack),
		F("MaxRAMPercentage", max_ram_pct),
		F("MaxRAM", max_ram),
#undef F
	};
	uint64_t v;

	if (n < 5 || memcmp(tok, "-XX:", 4) != 0)
		return;
	tok += 4;
	n -= 4;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		size_t k = strlen(names[i].name);

		if (n <= k || memcmp(tok, names[i].name, k) != 0)
			continue;
		/* MaxRAMPercentage=75.000000: the integer part */
		size_t digits = 0;

		while (digits < n - k && tok[k + digits] >= '0' &&
		       tok[k + digits] <= '9')
			digits++;
		if (!digits || parse_u64_n(tok + k, digits, &v) < 0)
			return;
		if (streq(names[i].name, "ThreadStackSize="))
			v *= 1024;
		*(uint64_t *)((char *)f + names[i].off) = v;
		*(bool *)((char *)f + names[i].has) = true;
		return;
	}
}

int jvm_parse_flags(const char *buf, size_t len, struct jvm_flags *ret)
{
	struct jvm_flags f = {0};
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *tok;

		while (p < end &&
		       (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
			p++;
		tok = p;
		while (p < end && *p != ' ' && *p != '\n' && *p != '\t' &&
		       *p != '\r')
			p++;
		if (p > tok)
			flag_token(&f, tok, (size_t)(p - tok));
	}
	if (!f.has_max_heap)
		return -EBADMSG;
	*ret = f;
	return 0;
}

/* "307200 k", "1023", "2 M": HotSpot prints values of 1024 and more in
 * KiB with a separate unit; "unlimited", "no quota", "no shares", "not
 * supported" are words. */
static void container_value(const char *s, struct jvm_cval *ret)
{
	uint64_t v, mul = 1;
	const char *p = skip_ws(s);

	if (startswith(p, "unlimited") || startswith(p, "no ")) {
		*ret = (struct jvm_cval){.state = JVM_CVAL_UNLIMITED};
		return;
	}
	if (startswith(p, "not supported")) {
		*ret = (struct jvm_cval){.state = JVM_CVAL_NOT_SUPPORTED};
		return;
	}
	if (scan_u64(&p, &v) < 0)
		return;
	p = skip_ws(p);
	if (*p == 'k' || *p == 'K')
		mul = 1024;
	else if (*p == 'm' || *p == 'M')
		mul = 1024 * 1024;
	else if (*p == 'g' || *p == 'G')
		mul = 1024 * 1024 * 1024;
	else if (*p)
		return; /* an unknown unit: absent, not a wrong figure */
	if (v > UINT64_MAX / mul)
		return;
	*ret = (struct jvm_cval){.state = JVM_CVAL_VALUE, .v = v * mul};
}

static const struct {
	const char *key;
	size_t off;
} container_keys[] = {
#define K(k, f)                                          \
	{                                                \
		k ":", offsetof(struct jvm_container, f) \
	}
	K("memory_limit_in_bytes", memory_limit),
	K("memory_and_swap_limit_in_bytes", memory_and_swap_limit),
	K("memory_soft_limit_in_bytes", memory_soft_limit),
	K("memory_usage_in_bytes", memory_usage),
	K("memory_max_usage_in_bytes", memory_max_usage),
	K("active_processor_count", active_processor_count),
	K("cpu_quota", cpu_quota),
#undef K
};

/* One line inside the section; false when it ended (an empty line). */
static bool container_line(const char *l, struct jvm_container *c)
{
	if (!*l)
		return false;
	if (startswith(l, "container_type:")) {
		const char *t = skip_ws(l + strlen("container_type:"));

		copy_name(c->type, sizeof(c->type), t, strcspn(t, " "));
		return true;
	}
	for (size_t i = 0; i < ARRAY_SIZE(container_keys); i++)
		if (startswith(l, container_keys[i].key)) {
			container_value(
				l + strlen(container_keys[i].key),
				(struct jvm_cval *)((char *)c +
						    container_keys[i].off));
			break;
		}
	return true;
}

/* "Memory: 4k page, physical 307200k(253204k free), swap 0k(0k free)" */
static void physical_line(const char *l, struct jvm_container *c)
{
	const char *p = strstr(l, " physical ");
	uint64_t v;

	if (!p)
		return;
	p += strlen(" physical ");
	if (scan_size(&p, &v) == 0 && *p == '(') {
		c->has_physical = true;
		c->physical = v;
	}
}

int jvm_parse_container(const char *buf, size_t len, struct jvm_container *ret)
{
	struct line_iter it = {.p = buf, .end = buf + len};
	struct jvm_container c = {0};
	bool in = false;

	while (next_line(&it)) {
		rstrip(it.line);
		if (in) {
			in = container_line(it.line, &c);
		} else if (streq(it.line, "container (cgroup) information:")) {
			in = c.found = true;
		} else if (streq(it.line, "container information not found.")) {
			c.not_found_line = true;
		} else if (startswith(it.line, "Memory: ")) {
			physical_line(it.line, &c);
		}
	}
	if (!c.found && !c.not_found_line && !c.has_physical)
		return -EBADMSG;
	*ret = c;
	return 0;
}

bool jvm_container_believed_limit(const struct jvm_container *c, uint64_t *ret,
				  bool *ret_from_container)
{
	if (c->found && c->memory_limit.state == JVM_CVAL_VALUE) {
		*ret = c->memory_limit.v;
		*ret_from_container = true;
		return true;
	}
	if (c->has_physical) {
		*ret = c->physical;
		*ret_from_container = false;
		return true;
	}
	return false;
}
