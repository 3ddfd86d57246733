/* SPDX-License-Identifier: Apache-2.0 */
/* Parsers for the single lines of a kernel OOM report (mm/oom_kill.c,
 * mm/memcontrol.c printk formats, 4.x to 6.18). Each takes one decoded,
 * NUL-terminated record text and fills part of a struct oom_report. Pure.
 * Comm values are untrusted: they may hold spaces, parentheses, commas and
 * newlines, so every comm is delimited from the far side. */
#include <limits.h>

#include "kmsg_internal.h"
#include "base/parse.h"
#include "base/util.h"

const char *kmsg_after(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

/* Copies [s, s+len) into a fixed buffer, truncating. */
static void copy_n(char *dst, size_t size, const char *s, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(dst, s, len);
	dst[len] = '\0';
}

static int to_int(int64_t v, int *ret)
{
	if (v < INT_MIN || v > INT_MAX)
		return -ERANGE;
	*ret = (int)v;
	return 0;
}

/* Reads "key=<int>" from a ", "-separated list such as the trigger line. */
static int find_int(const char *s, const char *key, int *ret)
{
	const char *p = strstr(s, key);
	int64_t v;

	if (!p)
		return -ENOENT;
	p += strlen(key);
	if (scan_i64(&p, &v) < 0)
		return -EBADMSG;
	return to_int(v, ret);
}

/* "COMM invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), [nodemask=…, ]
 * order=0, oom_score_adj=0" */
int kmsg_parse_trigger(const char *line, struct oom_report *r)
{
	const char *mark = strstr(line, " invoked oom-killer: ");
	const char *g, *e;

	if (!mark)
		return -EBADMSG;
	/* A comm is at most 15 bytes and cannot hold the 21-byte marker, so
	 * the first match is the real one. */
	copy_n(r->trigger.comm, sizeof(r->trigger.comm), line,
	       (size_t)(mark - line));
	r->trigger.present = true;
	g = strstr(mark, "gfp_mask=");
	if (g) {
		g += strlen("gfp_mask=");
		e = strchr(g, ',');
		copy_n(r->trigger.gfp_mask, sizeof(r->trigger.gfp_mask), g,
		       e ? (size_t)(e - g) : strlen(g));
	}
	(void)find_int(mark, "order=", &r->trigger.order);
	(void)find_int(mark, "oom_score_adj=", &r->trigger.oom_score_adj);
	return 0;
}

/* "CPU: 1 UID: 0 PID: 10133 Comm: hog Not tainted …" (6.x) or
 * "CPU: 1 PID: 10133 Comm: hog …" (older). */
int kmsg_parse_cpu_line(const char *line, struct oom_report *r)
{
	const char *p = strstr(line, " PID: ");
	int64_t v;

	if (!kmsg_after(line, "CPU: ") || !p)
		return -EBADMSG;
	p += strlen(" PID: ");
	if (scan_i64(&p, &v) < 0 || v <= 0 || to_int(v, &r->trigger.pid) < 0)
		return -EBADMSG;
	return 0;
}

/* "memory: usage 32768kB, limit 32768kB, failcnt 19" and the memory+swap,
 * swap and kmem variants. */
int kmsg_parse_usage(const char *line, struct oom_report *r)
{
	static const struct {
		const char *prefix;
		size_t off;
	} kinds[] = {
		{"memory: usage ", offsetof(struct oom_report, memcg)},
		{"memory+swap: usage ", offsetof(struct oom_report, memsw)},
		{"swap: usage ", offsetof(struct oom_report, swap)},
		{"kmem: usage ", offsetof(struct oom_report, kmem)},
	};

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		const char *p = kmsg_after(line, kinds[i].prefix);
		uint64_t usage, limit, failcnt;
		__typeof__(r->memcg) *dst;

		if (!p)
			continue;
		if (scan_u64(&p, &usage) < 0 ||
		    !(p = kmsg_after(p, "kB, limit ")) ||
		    scan_u64(&p, &limit) < 0 ||
		    !(p = kmsg_after(p, "kB, failcnt ")) ||
		    scan_u64(&p, &failcnt) < 0)
			return -EBADMSG;
		dst = (void *)((char *)r + kinds[i].off);
		dst->present = true;
		dst->usage_kb = usage;
		dst->limit_kb = limit;
		dst->failcnt = failcnt;
		return 0;
	}
	return -EBADMSG;
}

/* The end of an oom-kill line: ",pid=N,uid=N". Returns where it starts. */
static const char *pid_uid_tail(const char *p, int *ret_pid)
{
	const char *t = NULL, *q;
	int64_t pid;
	uint64_t uid;

	for (q = p; (q = strstr(q, ",pid=")); q++)
		t = q;
	if (!t)
		return NULL;
	q = t + strlen(",pid=");
	if (scan_i64(&q, &pid) < 0 || !(q = kmsg_after(q, ",uid=")) ||
	    scan_u64(&q, &uid) < 0 || *q || to_int(pid, ret_pid) < 0)
		return NULL;
	return t;
}

/* The oom-kill line, "oom-kill:constraint=C,nodemask=N[,cpuset=NAME,
 * mems_allowed=M][,oom_memcg=X|,global_oom][,task_memcg=Y],task=COMM,
 * pid=N,uid=N" (mm/oom_kill.c dump_oom_victim; the bracketed parts exist
 * with CONFIG_CPUSETS / CONFIG_MEMCG), has its fields in a fixed order.
 * A container controls NAME (its cpuset cgroup's name: no '/'), X and Y
 * (cgroup paths: start with '/') and COMM (at most 15 bytes, any byte),
 * and each may hold the keys that follow it. So the line is read as that
 * grammar, every way it can be split, and believed only when exactly one
 * split fits: otherwise the memcgs stay "" and memcg_ambiguous is set. */

#define COMM_LEN 15 /* TASK_COMM_LEN - 1 */

struct oom_kill_split {
	const char *x, *y; /* oom_memcg, task_memcg; NULL when absent */
	size_t xl, yl;
	bool global;
	unsigned n; /* splits that fit */
};

/* A node list as %*pbl prints it ("0", "0-3,8", "") or "(null)": digits,
 * '-', and ',' before a digit; the key after it starts with a letter. */
static const char *skip_nodelist(const char *p, const char *end)
{
	if (end - p >= 6 && strncmp(p, "(null)", 6) == 0)
		return p + 6;
	while (p < end &&
	       ((*p >= '0' && *p <= '9') || *p == '-' ||
		(*p == ',' && p + 1 < end && p[1] >= '0' && p[1] <= '9')))
		p++;
	return p;
}

/* [p, end) starts with the key "k" (",key=" or ",global_oom"). */
static const char *after_n(const char *p, const char *end, const char *k)
{
	size_t n = strlen(k);

	return (size_t)(end - p) >= n && strncmp(p, k, n) == 0 ? p + n : NULL;
}

static void split_add(struct oom_kill_split *sp, const char *x, size_t xl,
		      const char *y, size_t yl, bool global)
{
	if (sp->n++ == 0) {
		sp->x = x;
		sp->xl = xl;
		sp->y = y;
		sp->yl = yl;
		sp->global = global;
	}
}

/* y is x or below it: "/a" holds "/a" and "/a/b", not "/ab". */
static bool path_within(const char *x, size_t xl, const char *y, size_t yl)
{
	if (yl < xl || memcmp(x, y, xl) != 0)
		return false;
	return yl == xl || (xl == 1 && x[0] == '/') || y[xl] == '/';
}

/* The memcg part, [p, end): "", ",global_oom[,task_memcg=Y]" or
 * ",oom_memcg=X[,task_memcg=Y]" with Y within X. */
static void split_memcgs(const char *p, const char *end,
			 struct oom_kill_split *sp)
{
	const char *v, *y;

	if (p == end) {
		split_add(sp, NULL, 0, NULL, 0, false);
		return;
	}
	if ((v = after_n(p, end, ",global_oom"))) {
		if (v == end)
			split_add(sp, NULL, 0, NULL, 0, true);
		else if ((y = after_n(v, end, ",task_memcg=")) && *y == '/')
			split_add(sp, NULL, 0, y, (size_t)(end - y), true);
		return;
	}
	if (!(v = after_n(p, end, ",oom_memcg=")) || *v != '/')
		return;
	if (!memmem(v, (size_t)(end - v), ",task_memcg=", 12))
		split_add(sp, v, (size_t)(end - v), NULL, 0, false);
	for (const char *q = v;
	     (q = memmem(q, (size_t)(end - q), ",task_memcg=", 12)); q++) {
		y = q + 12;
		if (path_within(v, (size_t)(q - v), y, (size_t)(end - y)))
			split_add(sp, v, (size_t)(q - v), y, (size_t)(end - y),
				  false);
	}
}

/* [p, end) after the nodemask: the optional cpuset part, then the memcgs.
 * NAME is "/" (the root cpuset) or a name without '/'. */
static void split_middle(const char *p, const char *end,
			 struct oom_kill_split *sp)
{
	const char *name = after_n(p, end, ",cpuset="), *q;

	split_memcgs(p, end, sp); /* no cpuset part (!CONFIG_CPUSETS) */
	if (!name)
		return;
	for (q = name; (q = memmem(q, (size_t)(end - q), ",mems_allowed=", 14));
	     q++) {
		size_t nl = (size_t)(q - name);

		if (nl == 0)
			continue;
		if (memchr(name, '/', nl) && !(nl == 1 && name[0] == '/'))
			break; /* every later split holds this '/' too */
		split_memcgs(skip_nodelist(q + 14, end), end, sp);
	}
}

/* ",task=COMM" before tail: COMM is victim_comm when known, else at most
 * COMM_LEN bytes (four times that when the text escaped it as \xNN). */
static void split_line(const char *mid, const char *tail,
		       const char *victim_comm, struct oom_kill_split *sp)
{
	size_t len = (size_t)(tail - mid);

	if (victim_comm) {
		size_t n = strlen(victim_comm);
		const char *q = tail - n - 6;

		if (len >= n + 6 && strncmp(q, ",task=", 6) == 0 &&
		    memcmp(q + 6, victim_comm, n) == 0)
			split_middle(mid, q, sp);
		return;
	}
	for (size_t max = COMM_LEN; sp->n == 0 && max <= 4 * COMM_LEN; max *= 4)
		for (size_t n = 0; n <= max && n + 6 <= len; n++)
			if (strncmp(tail - n - 6, ",task=", 6) == 0)
				split_middle(mid, tail - n - 6, sp);
}

/* victim_comm (may be NULL) resolves a comm or cgroup name holding
 * ",task=". ret_pid gets the pid at the end (0 when the line was cut). */
int kmsg_parse_oom_kill(const char *line, const char *victim_comm,
			struct oom_report *r, int *ret_pid)
{
	const char *p = kmsg_after(line, "oom-kill:constraint="), *c, *tail;
	struct oom_kill_split sp = {0};
	const char *mid;

	if (!p)
		return -EBADMSG;
	for (c = p; (*c >= 'A' && *c <= 'Z') || *c == '_'; c++)
		;
	if (c == p || (*c && *c != ','))
		return -EBADMSG;
	copy_n(r->constraint, sizeof(r->constraint), p, (size_t)(c - p));
	tail = pid_uid_tail(c, ret_pid);
	if (!tail) {
		/* Cut short (dmesg -t and a newline in the comm): the comm's
		 * first line ends it. */
		*ret_pid = 0;
		tail = c + strlen(c);
		victim_comm = NULL;
	}
	mid = c;
	if (after_n(c, tail, ",nodemask="))
		mid = skip_nodelist(c + 10, tail);
	split_line(mid, tail, victim_comm, &sp);
	if (victim_comm && sp.n == 0) /* the comm is not there as given */
		split_line(mid, tail, NULL, &sp);
	r->oom_memcg[0] = r->task_memcg[0] = '\0';
	r->memcg_ambiguous = sp.n > 1;
	if (sp.n != 1)
		return sp.n ? 0 : -EBADMSG;
	if (sp.x)
		copy_n(r->oom_memcg, sizeof(r->oom_memcg), sp.x, sp.xl);
	if (sp.y)
		copy_n(r->task_memcg, sizeof(r->task_memcg), sp.y, sp.yl);
	if (sp.global || streq(r->constraint, "CONSTRAINT_NONE"))
		r->global = true;
	return 0;
}

/* pre-5.0: "Task in /a/b killed as a result of limit of /a". */
int kmsg_parse_task_in(const char *line, struct oom_report *r)
{
	const char *p = kmsg_after(line, "Task in ");
	const char *mid =
		p ? strstr(p, " killed as a result of limit of ") : NULL;

	if (!mid)
		return -EBADMSG;
	copy_n(r->task_memcg, sizeof(r->task_memcg), p, (size_t)(mid - p));
	mid += strlen(" killed as a result of limit of ");
	copy_n(r->oom_memcg, sizeof(r->oom_memcg), mid, strlen(mid));
	return 0;
}

/* "Tasks in /x are going to be killed due to memory.oom.group set" */
int kmsg_parse_group(const char *line, struct oom_report *r)
{
	static const char tail[] =
		" are going to be killed due to memory.oom.group set";
	const char *p = kmsg_after(line, "Tasks in ");
	size_t n;

	if (!p)
		return -EBADMSG;
	n = strlen(p);
	if (n < sizeof(tail) - 1 || !streq(p + n - (sizeof(tail) - 1), tail))
		return -EBADMSG;
	r->group_kill = true;
	copy_n(r->group_memcg, sizeof(r->group_memcg), p,
	       n - (sizeof(tail) - 1));
	return 0;
}

/* The fields after a victim's comm: "total-vm:35372kB, anon-rss:32640kB,
 * file-rss:972kB, shmem-rss:0kB, UID:0 pgtables:108kB oom_score_adj:0". */
static void victim_fields(const char *p, struct kmsg_victim *v)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{"total-vm:", offsetof(struct kmsg_victim, total_vm_kb)},
		{"anon-rss:", offsetof(struct kmsg_victim, anon_rss_kb)},
		{"file-rss:", offsetof(struct kmsg_victim, file_rss_kb)},
		{"shmem-rss:", offsetof(struct kmsg_victim, shmem_rss_kb)},
		{"pgtables:", offsetof(struct kmsg_victim, pgtables_kb)},
	};
	const char *q;
	int64_t s;
	uint64_t u;

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		q = strstr(p, keys[i].key);
		if (q) {
			q += strlen(keys[i].key);
			if (scan_u64(&q, &u) == 0)
				memcpy((char *)v + keys[i].off, &u, sizeof(u));
		}
	}
	q = strstr(p, "UID:");
	if (q && (q += 4, scan_u64(&q, &u) == 0) && u <= UINT32_MAX)
		v->uid = (uint32_t)u;
	q = strstr(p, "oom_score_adj:");
	if (q && (q += strlen("oom_score_adj:"), scan_i64(&q, &s) == 0))
		(void)to_int(s, &v->oom_score_adj);
}

/* "[PREFIX: ]Killed process PID (COMM) total-vm:…". A line cut inside the
 * comm (dmesg -t with a newline in it) keeps the pid and what is there. */
int kmsg_parse_killed(const char *line, struct kmsg_victim *ret)
{
	const char *p = strstr(line, "Killed process "), *c, *e;
	struct kmsg_victim v = {0};
	int64_t pid;

	if (!p)
		return -EBADMSG;
	p += strlen("Killed process ");
	if (scan_i64(&p, &pid) < 0 || pid <= 0 || pid > INT_MAX ||
	    !(c = kmsg_after(p, " (")))
		return -EBADMSG;
	v.pid = (int)pid;
	/* The last ") total-vm:" ends the comm: nothing after it is a comm. */
	e = NULL;
	for (const char *q = c; (q = strstr(q, ") total-vm:")); q++)
		e = q;
	if (e) {
		copy_n(v.comm, sizeof(v.comm), c, (size_t)(e - c));
		victim_fields(e + 2, &v);
	} else {
		size_t n = strlen(c);

		copy_n(v.comm, sizeof(v.comm), c,
		       n && c[n - 1] == ')' ? n - 1 : n);
	}
	*ret = v;
	return 0;
}

static const struct {
	const char *name;
	unsigned bit;
} task_cols[] = {
	{"uid", KMSG_COL_UID},
	{"tgid", KMSG_COL_TGID},
	{"total_vm", KMSG_COL_TOTAL_VM},
	{"rss", KMSG_COL_RSS},
	{"rss_anon", KMSG_COL_RSS_ANON},
	{"rss_file", KMSG_COL_RSS_FILE},
	{"rss_shmem", KMSG_COL_RSS_SHMEM},
	{"pgtables_bytes", KMSG_COL_PGTABLES_BYTES},
	{"nr_ptes", KMSG_COL_NR_PTES},
	{"swapents", KMSG_COL_SWAPENTS},
	{"oom_score_adj", KMSG_COL_OOM_SCORE_ADJ},
};

/* "[  pid  ]   uid  tgid total_vm      rss … oom_score_adj name": the
 * columns between the pid and the name, in order; unknown ones get 0. */
int kmsg_parse_task_header(const char *line, unsigned *cols, size_t *n_cols,
			   unsigned *ret_mask)
{
	const char *p = strchr(line, ']');
	unsigned mask = 0;
	size_t n = 0;

	if (line[0] != '[' || !p || !strstr(line, "pid"))
		return -EBADMSG;
	for (p++;;) {
		const char *w;
		size_t len;
		unsigned bit = 0;

		while (*p == ' ')
			p++;
		w = p;
		while (*p && *p != ' ')
			p++;
		len = (size_t)(p - w);
		if (len == 0)
			return -EBADMSG; /* no "name" column */
		if (len == 4 && strncmp(w, "name", 4) == 0 && *p == '\0')
			break;
		for (size_t i = 0; i < ARRAY_SIZE(task_cols); i++)
			if (strlen(task_cols[i].name) == len &&
			    strncmp(task_cols[i].name, w, len) == 0)
				bit = task_cols[i].bit;
		if (n == KMSG_MAX_COLS)
			return -EBADMSG;
		cols[n++] = bit;
		mask |= bit;
	}
	*n_cols = n;
	*ret_mask = mask;
	return 0;
}

static void task_set(struct kmsg_task *t, unsigned bit, int64_t v)
{
	uint64_t u = v < 0 ? 0 : (uint64_t)v;

	switch (bit) {
	case KMSG_COL_UID:
		t->uid = u <= UINT32_MAX ? (uint32_t)u : 0;
		break;
	case KMSG_COL_TGID:
		(void)to_int(v, &t->tgid);
		break;
	case KMSG_COL_TOTAL_VM:
		t->total_vm = u;
		break;
	case KMSG_COL_RSS:
		t->rss = u;
		break;
	case KMSG_COL_RSS_ANON:
		t->rss_anon = u;
		break;
	case KMSG_COL_RSS_FILE:
		t->rss_file = u;
		break;
	case KMSG_COL_RSS_SHMEM:
		t->rss_shmem = u;
		break;
	case KMSG_COL_PGTABLES_BYTES:
	case KMSG_COL_NR_PTES:
		t->pgtables_bytes = u;
		break;
	case KMSG_COL_SWAPENTS:
		t->swapents = u;
		break;
	case KMSG_COL_OOM_SCORE_ADJ:
		(void)to_int(v, &t->oom_score_adj);
		break;
	}
}

/* "[  10133]     0 10133     8843 …             0 NAME": numbers as the
 * header says, then one space, then the name (rest of the line, verbatim). */
int kmsg_parse_task_row(const char *line, const unsigned *cols, size_t n_cols,
			struct kmsg_task *ret)
{
	const char *p = line + 1;
	struct kmsg_task t = {0};
	int64_t v;

	if (line[0] != '[')
		return -EBADMSG;
	while (*p == ' ')
		p++;
	if (scan_i64(&p, &v) < 0 || *p != ']' || to_int(v, &t.pid) < 0)
		return -EBADMSG;
	p++;
	for (size_t i = 0; i < n_cols; i++) {
		if (*p != ' ')
			return -EBADMSG;
		while (*p == ' ')
			p++;
		if (scan_i64(&p, &v) < 0)
			return -EBADMSG;
		task_set(&t, cols[i], v);
	}
	if (*p != ' ')
		return -EBADMSG;
	copy_n(t.name, sizeof(t.name), p + 1, strlen(p + 1));
	*ret = t;
	return 0;
}

/* One "name value" stat line (6.x). */
int kmsg_parse_stat_line(const char *s, size_t len, char **ret_name,
			 uint64_t *ret_value)
{
	const char *sp = memchr(s, ' ', len);
	uint64_t v;
	char *name;

	if (!sp || sp == s)
		return -EBADMSG;
	for (const char *q = s; q < sp; q++)
		if (!(*q == '_' || *q == '.' || (*q >= 'a' && *q <= 'z') ||
		      (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')))
			return -EBADMSG;
	if (parse_u64_n(sp + 1, len - (size_t)(sp + 1 - s), &v) < 0)
		return -EBADMSG;
	name = strndup(s, (size_t)(sp - s));
	if (!name)
		return -ENOMEM;
	*ret_name = name;
	*ret_value = v;
	return 0;
}
