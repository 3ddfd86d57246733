/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>

#include "base/fileio.h"
#include "base/parse.h"
#include "kernel/procfs.h"
#include "kernel/procfs_access.h"
#include "base/util.h"

#define STATUS_MAX (64u << 10)
#define CMDLINE_MAX (64u << 10)

static int parse_kb(const char *v, uint64_t *ret)
{
	return scan_u64(&v, ret);
}

static int parse_int_field(const char *v, int *ret)
{
	int64_t x;

	if (scan_i64(&v, &x) < 0 || x < INT32_MIN || x > INT32_MAX)
		return -EBADMSG;
	*ret = (int)x;
	return 0;
}

static void parse_ids(const char *v, uint32_t *real, uint32_t *eff)
{
	uint64_t a, b;

	if (scan_u64(&v, &a) < 0 || a > UINT32_MAX)
		return;
	while (*v == '\t' || *v == ' ')
		v++;
	if (scan_u64(&v, &b) < 0 || b > UINT32_MAX)
		return;
	*real = (uint32_t)a;
	*eff = (uint32_t)b;
}

static void parse_nspid(const char *v, int *ret)
{
	int last = -1, x;

	for (;;) {
		while (*v == '\t' || *v == ' ')
			v++;
		if (parse_int_field(v, &x) < 0)
			break;
		last = x;
		while (*v && *v != '\t' && *v != ' ' && *v != '\n')
			v++;
	}
	if (last >= 0)
		*ret = last;
}

struct kb_field {
	const char *name;
	size_t off;
};

#define KB(n, f)                                   \
	{                                          \
		n, offsetof(struct proc_status, f) \
	}
static const struct kb_field kb_fields[] = {
	KB("VmPeak", vm_peak_kb),     KB("VmSize", vm_size_kb),
	KB("VmHWM", vm_hwm_kb),	      KB("VmRSS", vm_rss_kb),
	KB("RssAnon", rss_anon_kb),   KB("RssFile", rss_file_kb),
	KB("RssShmem", rss_shmem_kb), KB("VmData", vm_data_kb),
	KB("VmStk", vm_stk_kb),	      KB("VmSwap", vm_swap_kb),
};

/* One "Key:\tvalue" line; key and v are NUL-terminated copies. */
static void status_field(struct proc_status *st, const char *key, const char *v,
			 bool *seen_name, bool *seen_pid)
{
	if (streq(key, "Name")) {
		strlcpy_safe(st->name, v, sizeof(st->name));
		*seen_name = true;
	} else if (streq(key, "State")) {
		st->state = v[0];
	} else if (streq(key, "Pid")) {
		*seen_pid = parse_int_field(v, &st->pid) == 0;
	} else if (streq(key, "Tgid")) {
		(void)parse_int_field(v, &st->tgid);
	} else if (streq(key, "PPid")) {
		(void)parse_int_field(v, &st->ppid);
	} else if (streq(key, "NSpid")) {
		parse_nspid(v, &st->nspid);
	} else if (streq(key, "Threads")) {
		(void)parse_int_field(v, &st->threads);
	} else if (streq(key, "Uid")) {
		parse_ids(v, &st->uid, &st->euid);
	} else if (streq(key, "Gid")) {
		parse_ids(v, &st->gid, &st->egid);
	} else if (streq(key, "SigCgt")) {
		(void)scan_hex_u64(&v, &st->sig_cgt);
	} else if (streq(key, "SigIgn")) {
		(void)scan_hex_u64(&v, &st->sig_ign);
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(kb_fields); i++) {
			if (!streq(key, kb_fields[i].name))
				continue;
			(void)parse_kb(
				v, (uint64_t *)((char *)st + kb_fields[i].off));
			if (streq(key, "VmRSS"))
				st->has_mm = true;
		}
	}
}

int procfs_parse_status(const char *buf, size_t len, struct proc_status *ret)
{
	struct proc_status st = {.nspid = -1};
	bool seen_name = false, seen_pid = false;
	const char *p = buf, *e = buf + len;

	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		const char *end = nl ? nl : e;
		const char *colon = memchr(p, ':', (size_t)(end - p));
		char key[32], val[256];
		const char *v;

		if (colon && (size_t)(colon - p) < sizeof(key)) {
			memcpy(key, p, (size_t)(colon - p));
			key[colon - p] = '\0';
			v = colon + 1;
			while (v < end && (*v == '\t' || *v == ' '))
				v++;
			strlcpy_safe(val, "", sizeof(val));
			if ((size_t)(end - v) < sizeof(val)) {
				memcpy(val, v, (size_t)(end - v));
				val[end - v] = '\0';
			} else {
				memcpy(val, v, sizeof(val) - 1);
				val[sizeof(val) - 1] = '\0';
			}
			status_field(&st, key, val, &seen_name, &seen_pid);
		}
		p = nl ? nl + 1 : e;
	}
	if (!seen_name || !seen_pid)
		return -EBADMSG;
	if (st.nspid < 0)
		st.nspid = st.pid;
	*ret = st;
	return 0;
}

static int read_pid_file(int pid_fd, const char *name, size_t max,
			 struct strbuf *sb)
{
	int r = procfs_read_at(pid_fd, name, 0, max, sb);

	if (r == -ENOENT)
		return -ESRCH;
	return r;
}

int procfs_read_status(int pid_fd, struct proc_status *ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_init(&sb, STATUS_MAX + 1);
	r = read_pid_file(pid_fd, "status", STATUS_MAX, &sb);
	if (r < 0 && r != -E2BIG)
		return r;
	if (sb.len == 0)
		return -ESRCH;
	return procfs_parse_status(sb.buf, sb.len, ret);
}

int procfs_read_cmdline(int pid_fd, bool redact, struct strbuf *out)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_init(&sb, CMDLINE_MAX + 1);
	r = read_pid_file(pid_fd, "cmdline", CMDLINE_MAX, &sb);
	if (r < 0 && r != -E2BIG)
		return r;
	return procfs_format_cmdline(sb.buf, sb.len, redact, out);
}

int procfs_parse_cgroup(const char *buf, size_t len, char *ret, size_t size)
{
	const char *p = buf, *e = buf + len;
	const char *best = NULL, *best_end = NULL;

	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		const char *end = nl ? nl : e;
		const char *c1 = memchr(p, ':', (size_t)(end - p));
		const char *c2 =
			c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;

		if (c2) {
			const char *ctl = c1 + 1;
			size_t cl = (size_t)(c2 - ctl);
			bool mem = false;

			/* v1 controller lists are comma separated. */
			for (const char *t = ctl; t < c2;) {
				const char *comma =
					memchr(t, ',', (size_t)(c2 - t));
				const char *te = comma ? comma : c2;

				if (te - t == 6 && memcmp(t, "memory", 6) == 0)
					mem = true;
				t = te + 1;
			}
			if (mem || (cl == 0 && !best)) {
				best = c2 + 1;
				best_end = end;
			}
			if (mem)
				break;
		}
		p = nl ? nl + 1 : e;
	}
	if (!best)
		return -ENOENT;
	if ((size_t)(best_end - best) >= size)
		return -ENAMETOOLONG;
	memcpy(ret, best, (size_t)(best_end - best));
	ret[best_end - best] = '\0';
	return 0;
}

int procfs_read_cgroup(int pid_fd, char *ret, size_t size)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_init(&sb, STATUS_MAX + 1);
	r = read_pid_file(pid_fd, "cgroup", STATUS_MAX, &sb);
	if (r < 0 && r != -E2BIG)
		return r;
	return procfs_parse_cgroup(sb.buf, sb.len, ret, size);
}

int procfs_read_rollup(int pid_fd, struct smaps *ret)
{
	int r = smaps_read_at(pid_fd, "smaps_rollup", ret);

	if (r == -ESRCH && faccessat(pid_fd, "status", F_OK, 0) == 0)
		return -ENOENT;
	return r;
}
