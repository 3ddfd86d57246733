/* SPDX-License-Identifier: Apache-2.0 */
/* The OOM report assembler: records in, whole reports out. A report starts
 * at "X invoked oom-killer:" (or, when the ring buffer wrapped over its
 * head, at the first report line seen: it is then incomplete) and ends
 * when the next one starts or a record that is not a kill line follows its
 * "Killed process" lines. Unrelated records inside a report are kept in
 * raw and otherwise ignored. Pure: no I/O. */
#include <inttypes.h>

#include "kmsg_internal.h"
#include "base/parse.h"
#include "base/util.h"

#define MAX_STATS 1024
#define MAX_TASKS 100000
#define MAX_VICTIMS 10000
/* printk caps a record near 1 KiB (LOG_LINE_MAX 992 on 6.1): a one-record
 * stats block this long was cut by the kernel. */
#define STATS_RECORD_CUT 960

enum section { SEC_HEAD, SEC_STATS, SEC_STATS_SKIP, SEC_TASKS, SEC_KILLS };

enum kind {
	K_OTHER,
	K_TRIGGER,
	K_CPU,
	K_USAGE,
	K_STATS_HDR,
	K_TASKS_STATE,
	K_TASK_HDR,
	K_TASK_ROW,
	K_OOM_KILL,
	K_TASK_IN,
	K_GROUP,
	K_KILLED,
	K_REAPER,
};

struct kmsg_assembler {
	struct oom_report cur;
	bool active;
	enum section sec;
	bool gap;
	uint64_t last_seq;
	unsigned cols[KMSG_MAX_COLS];
	size_t n_cols;
	bool have_cols;
	size_t cap_stats, cap_tasks, cap_victims;
	struct oom_report *ready;
	size_t n_ready, cap_ready;
	struct strbuf line;  /* NUL-terminated copy of the record's text */
	char *oom_kill_line; /* re-read once the victim's comm is known */
};

void oom_report_init(struct oom_report *r)
{
	*r = (struct oom_report){
		.seq_first = UINT64_MAX,
		.seq_last = UINT64_MAX,
		.usec = UINT64_MAX,
	};
	strbuf_init(&r->raw, KMSG_RAW_MAX);
}

void oom_report_release(struct oom_report *r)
{
	for (size_t i = 0; i < r->n_stats; i++)
		free(r->stats[i].name);
	free(r->stats);
	free(r->tasks);
	free(r->victims);
	strbuf_release(&r->raw);
	oom_report_init(r);
}

const char *oom_report_victim_memcg(const struct oom_report *r)
{
	if (r->task_memcg[0])
		return r->task_memcg;
	return r->oom_memcg;
}

static bool is_task_row(const char *s)
{
	if (*s++ != '[')
		return false;
	while (*s == ' ')
		s++;
	if (*s < '0' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9')
		s++;
	return *s == ']';
}

static bool is_usage(const char *s)
{
	return startswith(s, "memory: usage ") ||
	       startswith(s, "memory+swap: usage ") ||
	       startswith(s, "swap: usage ") || startswith(s, "kmem: usage ");
}

static enum kind classify(const char *s)
{
	size_t n = strlen(s);

	if (strstr(s, " invoked oom-killer: "))
		return K_TRIGGER;
	if (startswith(s, "CPU: ") && strstr(s, " PID: "))
		return K_CPU;
	if (is_usage(s))
		return K_USAGE;
	if (startswith(s, "Memory cgroup stats for "))
		return K_STATS_HDR;
	if (startswith(s, "Tasks state (memory values in pages)"))
		return K_TASKS_STATE;
	if (s[0] == '[' && strstr(s, "pid") && n > 5 &&
	    streq(s + n - 5, " name"))
		return K_TASK_HDR;
	if (is_task_row(s))
		return K_TASK_ROW;
	if (startswith(s, "oom-kill:"))
		return K_OOM_KILL;
	if (startswith(s, "Task in ") &&
	    strstr(s, " killed as a result of limit of "))
		return K_TASK_IN;
	if (startswith(s, "Tasks in ") && strstr(s, "memory.oom.group"))
		return K_GROUP;
	if (startswith(s, "Killed process ") || strstr(s, ": Killed process "))
		return K_KILLED;
	if (startswith(s, "oom_reaper: "))
		return K_REAPER;
	return K_OTHER;
}

static bool in_kill_phase(enum kind k)
{
	return k == K_KILLED || k == K_REAPER || k == K_GROUP;
}

/* A second "Killed process" line for another pid, not in a memory.oom.group
 * kill: the kernel rate-limits the report header (dump_header, 10 per 5 s)
 * but never the kill line, so quick kills in a row leave bare kill lines.
 * Each is its own kill. */
static bool another_kill(struct kmsg_assembler *a, enum kind k)
{
	struct kmsg_victim v;

	if (k != K_KILLED || a->sec != SEC_KILLS || a->cur.group_kill ||
	    a->cur.n_victims == 0 || kmsg_parse_killed(a->line.buf, &v) < 0)
		return false;
	for (size_t i = 0; i < a->cur.n_victims; i++)
		if (a->cur.victims[i].pid == v.pid)
			return false;
	return true;
}

/* Report lines that may begin a report whose head the ring buffer lost. */
static bool starts_orphan(enum kind k)
{
	return k != K_OTHER && k != K_CPU && k != K_TASK_ROW && k != K_REAPER;
}

static int grow(void **arr, size_t *cap, size_t n, size_t size, size_t max)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	if (n >= max)
		return -E2BIG;
	ncap = *cap ? *cap * 2 : 16;
	if (ncap > max)
		ncap = max;
	p = reallocarray(*arr, ncap, size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* Takes name. A repeated name is an unrelated record that looks like a
 * stat line: the first value stays. */
static int add_stat(struct kmsg_assembler *a, char *name, uint64_t value)
{
	struct oom_report *r = &a->cur;
	int ret;

	for (size_t i = 0; i < r->n_stats; i++)
		if (streq(r->stats[i].name, name)) {
			free(name);
			return 0;
		}
	ret = grow((void **)&r->stats, &a->cap_stats, r->n_stats,
		   sizeof(*r->stats), MAX_STATS);

	if (ret < 0) {
		free(name);
		if (ret == -E2BIG)
			r->stats_truncated = true;
		return ret == -E2BIG ? 0 : ret;
	}
	r->stats[r->n_stats++] = (struct kmsg_stat){name, value};
	return 0;
}

/* 6.x: "name value" per record; 6.1: all of them in one record with
 * newlines, cut by printk near 1 KiB (the last line is then unreliable). */
static int handle_stats(struct kmsg_assembler *a, const char *s, size_t len)
{
	bool cut = memchr(s, '\n', len) && len >= STATS_RECORD_CUT;
	const char *end = s + len;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl ? nl : end;
		char *name;
		uint64_t v;
		int r;

		if (!nl && cut) {
			a->cur.stats_truncated = true;
			break;
		}
		r = kmsg_parse_stat_line(s, (size_t)(e - s), &name, &v);
		if (r == -ENOMEM)
			return r;
		if (r == 0 && (r = add_stat(a, name, v)) < 0)
			return r;
		s = nl ? nl + 1 : end;
	}
	return 0;
}

/* "Memory cgroup stats for /x:" (6.x) or, on 4.x, "Memory cgroup stats
 * for /x: cache:0KB rss:1024KB …" (values turned into bytes). */
static int handle_stats_header(struct kmsg_assembler *a, const char *s)
{
	struct oom_report *r = &a->cur;
	const char *p = s + strlen("Memory cgroup stats for ");
	const char *inl = strstr(p, ": ");
	size_t n = inl ? (size_t)(inl - p) : strlen(p);

	if (r->stats_memcg[0] || r->n_stats) {
		a->sec = SEC_STATS_SKIP; /* 4.x: one block per child memcg */
		return 0;
	}
	a->sec = SEC_STATS;
	if (!inl && n && p[n - 1] == ':')
		n--;
	if (n >= sizeof(r->stats_memcg))
		n = sizeof(r->stats_memcg) - 1;
	memcpy(r->stats_memcg, p, n);
	r->stats_memcg[n] = '\0';
	for (p = inl ? inl + 2 : p + strlen(p); *p;) {
		const char *tok = p, *colon, *e = strchr(p, ' ');
		uint64_t v;
		char *name;

		e = e ? e : p + strlen(p);
		p = *e ? e + 1 : e;
		colon = memchr(tok, ':', (size_t)(e - tok));
		if (!colon || e - colon < 4 || strncmp(e - 2, "KB", 2) != 0)
			continue;
		if (parse_u64_n(colon + 1, (size_t)(e - 2 - colon - 1), &v) <
			    0 ||
		    v > UINT64_MAX / 1024)
			continue;
		name = strndup(tok, (size_t)(colon - tok));
		if (!name || add_stat(a, name, v * 1024) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int handle_task_row(struct kmsg_assembler *a, const char *s)
{
	struct oom_report *r = &a->cur;
	struct kmsg_task t;
	int ret;

	if (!a->have_cols || a->sec != SEC_TASKS ||
	    kmsg_parse_task_row(s, a->cols, a->n_cols, &t) < 0)
		return 0;
	ret = grow((void **)&r->tasks, &a->cap_tasks, r->n_tasks,
		   sizeof(*r->tasks), MAX_TASKS);
	if (ret < 0)
		return ret == -E2BIG ? 0 : ret;
	r->tasks[r->n_tasks++] = t;
	return 0;
}

static int handle_killed(struct kmsg_assembler *a, const char *s,
			 const struct kmsg_record *rec)
{
	struct oom_report *r = &a->cur;
	struct kmsg_victim v;
	int ret;

	a->sec = SEC_KILLS;
	if (startswith(s, "Out of memory"))
		r->global = true;
	if (kmsg_parse_killed(s, &v) < 0)
		return 0;
	/* memory.oom.group names the first victim a second time (and
	 * counts it a second time). */
	for (size_t i = 0; i < r->n_victims; i++)
		if (r->victims[i].pid == v.pid) {
			r->kills_repeated++;
			return 0;
		}
	ret = grow((void **)&r->victims, &a->cap_victims, r->n_victims,
		   sizeof(*r->victims), MAX_VICTIMS);
	if (ret < 0)
		return ret == -E2BIG ? 0 : ret;
	v.seq = rec->seq;
	v.usec = rec->usec;
	r->victims[r->n_victims++] = v;
	return 0;
}

static int handle(struct kmsg_assembler *a, enum kind k,
		  const struct kmsg_record *rec)
{
	struct oom_report *r = &a->cur;
	const char *s = a->line.buf;
	unsigned mask;
	int pid;

	switch (k) {
	case K_TRIGGER:
		r->usec = rec->usec;
		(void)kmsg_parse_trigger(s, r);
		return 0;
	case K_CPU:
		if (a->sec == SEC_HEAD && r->trigger.pid == 0)
			(void)kmsg_parse_cpu_line(s, r);
		return 0;
	case K_USAGE:
		(void)kmsg_parse_usage(s, r);
		return 0;
	case K_STATS_HDR:
		return handle_stats_header(a, s);
	case K_TASKS_STATE:
		a->sec = SEC_TASKS;
		return 0;
	case K_TASK_HDR:
		if (kmsg_parse_task_header(s, a->cols, &a->n_cols, &mask) ==
		    0) {
			a->have_cols = true;
			r->task_columns = mask;
			a->sec = SEC_TASKS;
		}
		return 0;
	case K_TASK_ROW:
		return handle_task_row(a, s);
	case K_OOM_KILL:
		free(a->oom_kill_line);
		a->oom_kill_line = strdup(s);
		if (!a->oom_kill_line)
			return -ENOMEM;
		(void)kmsg_parse_oom_kill(s, NULL, r, &pid);
		return 0;
	case K_TASK_IN:
		(void)kmsg_parse_task_in(s, r);
		return 0;
	case K_GROUP:
		a->sec = SEC_KILLS;
		(void)kmsg_parse_group(s, r);
		return 0;
	case K_KILLED:
		return handle_killed(a, s, rec);
	case K_REAPER:
		return 0;
	case K_OTHER:
		if (a->sec == SEC_STATS)
			return handle_stats(a, s, a->line.len);
		return 0;
	}
	return 0;
}

/* Text without a time that starts like a pasted line's prefix would lose
 * that start when re-read: it is written behind the one prefix that is
 * taken off alone, a `dmesg --time-format iso` stamp (at the epoch: the
 * time is not known). */
static bool reads_as_prefix(const struct kmsg_record *rec)
{
	struct kmsg_text_prefix t;

	(void)kmsg_parse_text_prefix(rec->text, rec->text_len, 0, &t);
	return t.skip > 0 || t.foreign || t.stamped;
}

/* One record as a line of kernel/oom.txt, in the format it came in. */
static void raw_append(struct oom_report *r, const struct kmsg_record *rec)
{
	struct strbuf *sb = &r->raw;
	size_t mark = sb->len;
	bool kmsg = rec->seq != UINT64_MAX;
	int ret = 0;

	if (r->raw_truncated)
		return;
	if (kmsg)
		ret = strbuf_addf(sb, "%d,%" PRIu64 ",%" PRIu64 ",%c;",
				  rec->prio < 0 ? 6 : rec->prio, rec->seq,
				  rec->usec == UINT64_MAX ? 0 : rec->usec,
				  rec->continuation ? 'c' : '-');
	else if (rec->usec != UINT64_MAX)
		ret = strbuf_addf(sb, "[%5" PRIu64 ".%06" PRIu64 "] ",
				  rec->usec / 1000000, rec->usec % 1000000);
	else if (reads_as_prefix(rec))
		ret = strbuf_adds(sb, "1970-01-01T00:00:00,000000+00:00 ");
	for (size_t i = 0; ret == 0 && i < rec->text_len; i++) {
		unsigned char c = (unsigned char)rec->text[i];

		if (kmsg && (c == '\n' || c == '\\'))
			ret = strbuf_addf(sb, "\\x%02x", c);
		else if (!kmsg && c == '\n' && rec->usec != UINT64_MAX)
			ret = strbuf_adds(sb, "\n               ");
		else
			ret = strbuf_addch(sb, (char)c);
	}
	if (ret == 0)
		ret = strbuf_addch(sb, '\n');
	if (ret < 0) {
		sb->len = mark;
		sb->buf[mark] = '\0';
		r->raw_truncated = true;
	}
}

static void start(struct kmsg_assembler *a, const struct kmsg_record *rec)
{
	oom_report_init(&a->cur);
	a->active = true;
	a->sec = SEC_HEAD;
	a->gap = false;
	a->have_cols = false;
	a->n_cols = 0;
	a->cap_stats = a->cap_tasks = a->cap_victims = 0;
	a->cur.seq_first = rec->seq;
	a->cur.usec = rec->usec;
	a->last_seq = UINT64_MAX;
}

/* The oom-kill line again, now that the "Killed process" line told the
 * victim's comm: a comm or cgroup name holding ",task=" is then exact. */
static void resolve_oom_kill(struct kmsg_assembler *a)
{
	struct oom_report *r = &a->cur;
	int pid;

	if (!a->oom_kill_line ||
	    kmsg_parse_oom_kill(a->oom_kill_line, NULL, r, &pid) < 0)
		goto out;
	for (size_t i = 0; i < r->n_victims; i++)
		if (r->victims[i].pid == pid) {
			(void)kmsg_parse_oom_kill(a->oom_kill_line,
						  r->victims[i].comm, r, &pid);
			break;
		}
out:
	free(a->oom_kill_line);
	a->oom_kill_line = NULL;
}

static int finish(struct kmsg_assembler *a)
{
	struct oom_report *r = &a->cur;
	int ret;

	a->active = false;
	resolve_oom_kill(a);
	if (!r->trigger.present && r->n_victims == 0) {
		/* Report lines without trigger or victim: nothing to report. */
		oom_report_release(r);
		return 0;
	}
	r->complete = r->trigger.present && r->n_victims > 0 && !a->gap;
	ret = grow((void **)&a->ready, &a->cap_ready, a->n_ready,
		   sizeof(*a->ready), SIZE_MAX / sizeof(*a->ready));
	if (ret < 0) {
		oom_report_release(r);
		return -ENOMEM;
	}
	a->ready[a->n_ready++] = *r;
	oom_report_init(r);
	return 1;
}

struct kmsg_assembler *kmsg_assembler_new(void)
{
	struct kmsg_assembler *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	oom_report_init(&a->cur);
	strbuf_init(&a->line, 1u << 16);
	return a;
}

void kmsg_assembler_free(struct kmsg_assembler *a)
{
	if (!a)
		return;
	oom_report_release(&a->cur);
	free(a->oom_kill_line);
	for (size_t i = 0; i < a->n_ready; i++)
		oom_report_release(&a->ready[i]);
	free(a->ready);
	strbuf_release(&a->line);
	free(a);
}

int kmsg_assembler_feed(struct kmsg_assembler *a, const struct kmsg_record *rec)
{
	size_t n = rec->text_len < a->line.max ? rec->text_len : a->line.max;
	int ready = 0, ret;
	bool split;
	enum kind k;

	strbuf_reset(&a->line);
	if (strbuf_add(&a->line, rec->text, n) < 0)
		return -ENOMEM;
	/* Only the kernel (facility 0) writes OOM reports; a record that
	 * user space wrote to /dev/kmsg cannot fake one. */
	k = rec->prio >= 8 ? K_OTHER : classify(a->line.buf);
	split = a->active && another_kill(a, k);
	if (a->active && (k == K_TRIGGER || split ||
			  (a->sec == SEC_KILLS && !in_kill_phase(k)))) {
		ready = finish(a);
		if (ready < 0)
			return ready;
	}
	if (!a->active) {
		if (k != K_TRIGGER && !starts_orphan(k))
			return ready;
		start(a, rec);
		a->cur.ratelimited = split;
	}
	if (rec->seq != UINT64_MAX && a->last_seq != UINT64_MAX &&
	    rec->seq != a->last_seq + 1)
		a->gap = true;
	a->last_seq = rec->seq;
	a->cur.seq_last = rec->seq;
	raw_append(&a->cur, rec);
	ret = handle(a, k, rec);
	return ret < 0 ? ret : ready;
}

int kmsg_assembler_flush(struct kmsg_assembler *a, bool force)
{
	if (!a->active || (!force && a->cur.n_victims == 0))
		return 0;
	return finish(a) > 0 ? 1 : 0;
}

bool kmsg_assembler_may_grow(const struct kmsg_assembler *a)
{
	return a->active && (a->cur.n_victims == 0 || a->cur.group_kill);
}

const struct oom_report *kmsg_assembler_current(const struct kmsg_assembler *a)
{
	return a->active ? &a->cur : NULL;
}

/* Whether pid has its line in r's group walk. */
static bool walked(const struct oom_report *r, long pid)
{
	if (pid == r->victims[0].pid)
		return r->kills_repeated > 0;
	for (size_t i = 1; i < r->n_victims; i++)
		if (r->victims[i].pid == pid)
			return true;
	return false;
}

bool oom_report_group_walked(const struct oom_report *r, const char *procs,
			     size_t len)
{
	size_t i = 0;

	if (!r->group_kill || !r->n_victims)
		return false;
	while (i < len) {
		long pid = 0;
		size_t digits = 0;

		for (; i < len && procs[i] >= '0' && procs[i] <= '9'; i++)
			if (++digits <= 10)
				pid = pid * 10 + (procs[i] - '0');
		if (i < len && procs[i] != '\n')
			return false;
		i++;
		if (!digits)
			continue; /* an empty line */
		if (digits > 10 || pid <= 0 || pid > INT32_MAX ||
		    !walked(r, pid))
			return false;
	}
	return true;
}

int kmsg_assembler_pop(struct kmsg_assembler *a, struct oom_report *ret)
{
	if (a->n_ready == 0)
		return 0;
	*ret = a->ready[0];
	memmove(a->ready, a->ready + 1, (a->n_ready - 1) * sizeof(*a->ready));
	a->n_ready--;
	return 1;
}
