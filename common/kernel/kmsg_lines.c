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

/* Finds "key=" at the start of s or after a ',' and returns its value up to
 * the next ','. */
static const char *kv_find(const char *s, const char *key, size_t *ret_len)
{
	size_t kl = strlen(key);

	for (const char *p = s; (p = strstr(p, key)); p++) {
		const char *v, *e;

		if ((p != s && p[-1] != ',') || p[kl] != '=')
			continue;
		v = p + kl + 1;
		e = strchr(v, ',');
		*ret_len = e ? (size_t)(e - v) : strlen(v);
		return v;
	}
	return NULL;
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

/* Where "task=COMM" starts in [s, tail): with the victim's comm known, the
 * one that names it exactly; else the leftmost whose comm fits in 15
 * bytes (a comm may hold ",task=" itself, and so may a cgroup name). */
static const char *task_start(const char *s, const char *tail, const char *comm)
{
	const char *best = NULL;

	for (const char *q = s; (q = strstr(q, ",task=")) && q < tail; q++) {
		const char *c = q + strlen(",task=");
		size_t n = (size_t)(tail - c);

		if (comm && !comm[0])
			return q; /* "": no tail to measure from, take the first
				   */
		if (comm && strlen(comm) == n && strncmp(c, comm, n) == 0)
			return q;
		if (!best && n <= 15)
			best = q;
	}
	return best;
}

/* oom_memcg is an ancestor of (or equal to) task_memcg: of the
 * ",task_memcg=" candidates, the first whose value starts with the
 * oom_memcg before it splits them (cgroup names may hold that key). */
static const char *split_memcgs(const char *om, const char *end)
{
	const char *first = NULL;

	for (const char *q = om; (q = strstr(q, ",task_memcg=")) && q < end;
	     q++) {
		const char *y = q + strlen(",task_memcg=");
		size_t xl = (size_t)(q - om);

		if (!first)
			first = q;
		if ((size_t)(end - y) >= xl && strncmp(y, om, xl) == 0 &&
		    (xl == 1 || y[xl] == '/' || y + xl == end ||
		     strncmp(y + xl, ",task=", 6) == 0))
			return q;
	}
	return first;
}

/* "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,
 * mems_allowed=0,[global_oom,|oom_memcg=/x,]task_memcg=/x/y,task=COMM,
 * pid=N,uid=N". victim_comm (may be NULL) resolves a comm or cgroup name
 * holding ",task=". ret_pid gets the pid at the end. */
int kmsg_parse_oom_kill(const char *line, const char *victim_comm,
			struct oom_report *r, int *ret_pid)
{
	const char *p = kmsg_after(line, "oom-kill:"), *v, *tail, *task, *tm;
	size_t len;

	if (!p || !(v = kv_find(p, "constraint", &len)))
		return -EBADMSG;
	copy_n(r->constraint, sizeof(r->constraint), v, len);
	tail = pid_uid_tail(p, ret_pid);
	if (!tail) {
		/* Cut short (dmesg -t and a newline in the comm): the first
		 * task= after task_memcg= is the best guess. */
		*ret_pid = 0;
		tail = p + strlen(p);
		victim_comm = "";
	}
	tm = strstr(p, ",task_memcg=");
	task = task_start(tm ? tm : p, tail, victim_comm);
	if (!task)
		return -EBADMSG;
	v = strstr(p, ",oom_memcg=");
	if (v && v < task) {
		v += strlen(",oom_memcg=");
		tm = split_memcgs(v, task);
		if (tm)
			copy_n(r->oom_memcg, sizeof(r->oom_memcg), v,
			       (size_t)(tm - v));
	}
	if (tm && tm < task) {
		v = tm + strlen(",task_memcg=");
		copy_n(r->task_memcg, sizeof(r->task_memcg), v,
		       (size_t)(task - v));
	}
	v = strstr(p, ",global_oom,");
	if (streq(r->constraint, "CONSTRAINT_NONE") || (v && v < task))
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
