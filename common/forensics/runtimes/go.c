/* SPDX-License-Identifier: Apache-2.0 */
/* Go: detected from the executable's .go.buildinfo section; at first
 * sight, whether GOMEMLIMIT tells the runtime the container's limit (an
 * event in the timeline); at each snapshot, GOMEMLIMIT, GOGC and the Go
 * heap's RSS from smaps (processes/<pid>/go/facts.json); in the
 * diagnosis, the "go heap" ledger row and the go-heap verdict with the
 * GOMEMLIMIT that fits and how to take a heap profile (docs/diagnosis.md,
 * "Go"). The parsers are pure and exported in go.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bundle_paths.h"
#include "base/fileio.h"
#include "base/jget.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "forensics/bundle.h"
#include "forensics/diagnosis.h"
#include "forensics/diagnosis_frame.h"
#include "forensics/runtimes/go.h"
#include "forensics/runtimes/registry.h"
#include "kernel/smaps.h"
#include "kernel/procfs_access.h"

#define GO_MAX_SHNUM 4096u
#define GO_MAX_SHSTR (64u << 10)
#define GO_ENV_MAX (256u << 10) /* /proc/<pid>/environ read at most */
#define GO_FACTS_MAX (16u << 10)

/* ---- the executable ---- */

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static bool read_exact(go_pread_fn rd, void *ctx, void *buf, size_t len,
		       uint64_t off)
{
	return rd(ctx, buf, len, off) == (ssize_t)len;
}

/* The version string inline after the magic (Go 1.18+, flags bit 2): a
 * uvarint length, then the bytes. */
static void inline_version(const uint8_t *b, size_t n, char *ret, size_t size)
{
	uint64_t len = 0;
	size_t i = 32;
	unsigned shift = 0;

	ret[0] = '\0';
	if (n <= 32 || !(b[15] & 2))
		return;
	while (i < n && shift < 63) {
		len |= (uint64_t)(b[i] & 0x7f) << shift;
		shift += 7;
		if (!(b[i++] & 0x80))
			break;
	}
	if (!len || len >= size || len > n - i)
		return;
	for (size_t k = 0; k < len; k++)
		if (b[i + k] < 0x21 || b[i + k] > 0x7e)
			return;
	memcpy(ret, b + i, len);
	ret[len] = '\0';
}

int go_buildinfo_read(go_pread_fn rd, void *ctx, uint64_t size,
		      struct go_buildinfo *ret)
{
	uint8_t eh[64], bi[96];
	uint64_t shoff, stroff, strsize, off = 0, len = 0;
	unsigned shnum, shstrndx;
	_cleanup_free_ uint8_t *sh = NULL;
	_cleanup_free_ char *str = NULL;
	bool found = false;

	memset(ret, 0, sizeof(*ret));
	if (size < sizeof(eh) || !read_exact(rd, ctx, eh, sizeof(eh), 0) ||
	    memcmp(eh,
		   "\x7f"
		   "ELF",
		   4) ||
	    eh[4] != 2 || eh[5] != 1)
		return -ENOEXEC;
	shoff = le64(eh + 0x28);
	shnum = le16(eh + 0x3c);
	shstrndx = le16(eh + 0x3e);
	if (!shoff || !shnum)
		return -ENOENT;
	if (le16(eh + 0x3a) != 64 || shnum > GO_MAX_SHNUM ||
	    shstrndx >= shnum || shoff > size || shnum * 64ull > size - shoff)
		return -EBADMSG;
	sh = malloc(shnum * 64u);
	if (!sh)
		return -ENOMEM;
	if (!read_exact(rd, ctx, sh, shnum * 64u, shoff))
		return -EBADMSG;
	stroff = le64(sh + shstrndx * 64u + 0x18);
	strsize = le64(sh + shstrndx * 64u + 0x20);
	if (!strsize || strsize > GO_MAX_SHSTR || stroff > size ||
	    strsize > size - stroff)
		return -EBADMSG;
	str = malloc(strsize + 1);
	if (!str)
		return -ENOMEM;
	if (!read_exact(rd, ctx, str, strsize, stroff))
		return -EBADMSG;
	str[strsize] = '\0';
	for (unsigned i = 0; i < shnum && !found; i++) {
		const uint8_t *s = sh + i * 64u;
		uint32_t name = le32(s);

		if (name < strsize && streq(str + name, ".go.buildinfo")) {
			off = le64(s + 0x18);
			len = le64(s + 0x20);
			found = true;
		}
	}
	if (!found)
		return -ENOENT;
	if (len < 32 || off > size || len > size - off)
		return -EBADMSG;
	len = len < sizeof(bi) ? len : sizeof(bi);
	if (!read_exact(rd, ctx, bi, len, off))
		return -EBADMSG;
	if (memcmp(bi, GO_BUILDINFO_MAGIC, strlen(GO_BUILDINFO_MAGIC)))
		return -ENOENT;
	inline_version(bi, len, ret->version, sizeof(ret->version));
	return 0;
}

struct mem_file {
	const uint8_t *buf;
	size_t len;
};

static ssize_t mem_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
	const struct mem_file *f = ctx;

	if (off > f->len)
		return 0;
	len = len < f->len - off ? len : f->len - off;
	memcpy(buf, f->buf + off, len);
	return (ssize_t)len;
}

int go_buildinfo_mem(const void *buf, size_t len, struct go_buildinfo *ret)
{
	struct mem_file f = {buf, len};

	return go_buildinfo_read(mem_pread, &f, len, ret);
}

static ssize_t fd_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
	ssize_t r = pread(*(int *)ctx, buf, len, (off_t)off);

	return r < 0 ? -errno : r;
}

/* ---- the environment ---- */

int go_parse_memlimit(const char *s, uint64_t *ret)
{
	static const struct {
		const char *suffix;
		unsigned shift;
	} units[] = {{"", 0},	  {"B", 0},    {"KiB", 10},
		     {"MiB", 20}, {"GiB", 30}, {"TiB", 40}};
	size_t n = 0;
	uint64_t v;

	if (streq(s, "off")) {
		*ret = UINT64_MAX;
		return 0;
	}
	while (s[n] >= '0' && s[n] <= '9')
		n++;
	if (!n || parse_u64_n(s, n, &v) < 0)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (streq(s + n, units[i].suffix)) {
			if (v > (UINT64_MAX >> units[i].shift))
				return -EINVAL;
			*ret = v << units[i].shift;
			return 0;
		}
	return -EINVAL;
}

int go_env_parse(const char *buf, size_t len, struct go_env *ret)
{
	*ret = (struct go_env){.gogc = 100};
	for (size_t i = 0; i < len;) {
		const char *e = buf + i, *end = memchr(e, '\0', len - i);
		size_t n = end ? (size_t)(end - e) : len - i;
		char val[32];
		int pct;

		i += n + 1;
		/* the first of a key counts: the runtime's gogetenv (and
		 * getenv) scan from the start */
		if (n >= 11 && !memcmp(e, "GOMEMLIMIT=", 11) &&
		    ret->memlimit_set)
			continue;
		if (n >= 5 && !memcmp(e, "GOGC=", 5) && ret->gogc_set)
			continue;
		if (n > 11 && !memcmp(e, "GOMEMLIMIT=", 11) &&
		    n - 11 < sizeof(val)) {
			memcpy(val, e + 11, n - 11);
			val[n - 11] = '\0';
			ret->memlimit_set = true;
			ret->memlimit_valid =
				go_parse_memlimit(val, &ret->memlimit) == 0;
		} else if (n >= 11 && !memcmp(e, "GOMEMLIMIT=", 11)) {
			ret->memlimit_set = true; /* empty or too long */
			ret->memlimit_valid = false;
		} else if (n >= 5 && !memcmp(e, "GOGC=", 5)) {
			snprintf(val, sizeof(val), "%.*s",
				 (int)(n - 5 < 31 ? n - 5 : 31), e + 5);
			ret->gogc_set = true;
			/* as the runtime: "off", else atoi, else 100 */
			ret->gogc = streq(val, "off") ? -1
				    : parse_int(val, &pct) == 0 && pct >= 0
					    ? pct
					    : 100;
		}
	}
	return 0;
}

/* ---- the heap ---- */

void go_heap_rss(const struct smaps *s, uint64_t *ret_heap, uint64_t *ret_rss,
		 size_t *ret_n)
{
	uint64_t heap = 0, rss = 0, last_end = 0;
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct smaps_mapping *m = &s->m[i];
		uint64_t kb = smaps_get(s, i, SMAPS_F_RSS);

		/* smaps is read in pieces: a mapping that changed between two
		 * reads (a heap growing) can come again, overlapping what was
		 * counted; it is counted once */
		if (m->start < last_end)
			continue;
		last_end = m->end;
		rss = add_sat(rss, KB(kb));
		if (!m->name[0] && !m->inode && m->start >= GO_ARENA_LO &&
		    m->end <= GO_ARENA_HI && m->start < m->end) {
			heap = add_sat(heap, KB(kb));
			n++;
		}
	}
	*ret_heap = heap;
	*ret_rss = rss;
	*ret_n = n;
}

uint64_t go_fitting_memlimit(uint64_t limit, uint64_t nonheap)
{
	uint64_t room = limit / 10 * 9;

	if (sub_sat(room, nonheap) < 16 * MiB)
		return 16 * MiB;
	return (room - nonheap) / MiB * MiB;
}

/* ---- the sidecar ---- */

static int open_exe(const struct rt_sight *s, struct stat *st)
{
	int fd = procfs_open_at(s->proc_fd, "exe", O_RDONLY | O_NONBLOCK);

	if (fd < 0)
		return fd;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

static int exe_buildinfo(const struct rt_sight *s, struct go_buildinfo *ret)
{
	struct stat st;
	_cleanup_close_ int fd = open_exe(s, &st);

	if (fd < 0)
		return fd;
	return go_buildinfo_read(fd_pread, &fd, (uint64_t)st.st_size, ret);
}

static int go_detect(const struct rt_sight *s)
{
	struct go_buildinfo bi;
	int r = exe_buildinfo(s, &bi);

	if (r == -ENOENT || r == -ENOEXEC || r == -EBADMSG)
		return 0;
	return r < 0 ? r : 1;
}

/* GOMEMLIMIT and GOGC of the live process: the environment is read
 * (O_NOFOLLOW, at most GO_ENV_MAX) and wiped; only the two keys stay. */
static int read_env(const struct rt_sight *s, struct go_env *ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	/* the buffer's ceiling is the read's: below it, the first chunk
	 * read_fd_max grows for already fails with -E2BIG and nothing is
	 * read (the sidecar said "GOMEMLIMIT unset" of every Go program) */
	strbuf_init(&sb, GO_ENV_MAX);
	r = procfs_read_at(s->proc_fd, "environ", O_NOFOLLOW | O_NONBLOCK,
			   GO_ENV_MAX, &sb);
	if (r < 0 && r != -E2BIG)
		return r;
	go_env_parse(sb.buf, sb.len, ret);
	explicit_bzero(sb.buf, sb.len);
	return 0;
}

/* What GOGC lets the heap do, for a line of text. */
static const char *gogc_says(const struct go_env *e, char *buf, size_t size)
{
	if (e->gogc < 0)
		snprintf(buf, size,
			 "GOGC=off: it never collects for the heap's growth");
	else
		snprintf(buf, size,
			 "GOGC=%d lets its heap grow to %d%% of the live heap "
			 "before it collects",
			 e->gogc, 100 + e->gogc);
	return buf;
}

/* Whether the runtime knows the container's limit: GOMEMLIMIT set,
 * valid and at most the limit. */
static bool knows_limit(const struct go_env *e, uint64_t limit)
{
	return e->memlimit_valid && (!limit || e->memlimit <= limit);
}

static int go_first_sight(struct rt_sight *s)
{
	struct go_buildinfo bi;
	struct go_env e;
	char lim[48] = "unknown";
	int r = read_env(s, &e);

	if (r < 0)
		return r;
	(void)exe_buildinfo(s, &bi);
	if (knows_limit(&e, s->limit))
		return 0;
	if (s->limit)
		snprintf(lim, sizeof(lim), "%" PRIu64 " MiB", s->limit >> 20);
	if (!e.memlimit_valid) {
		strlcpy_safe(s->event_kind, "go-memlimit-unset",
			     sizeof(s->event_kind));
		snprintf(s->event_text, sizeof(s->event_text),
			 "pid %d (Go %s): GOMEMLIMIT %s: the Go runtime does "
			 "not know the container's limit (%s); %s",
			 s->pid, bi.version[0] ? bi.version : "?",
			 e.memlimit_set ? "unreadable" : "unset", lim,
			 gogc_says(&e, (char[96]){0}, 96));
	} else {
		strlcpy_safe(s->event_kind, "go-memlimit-above-limit",
			     sizeof(s->event_kind));
		snprintf(s->event_text, sizeof(s->event_text),
			 "pid %d (Go %s): GOMEMLIMIT %" PRIu64
			 " MiB is above the limit (%s): the Go runtime does "
			 "not know the container's limit",
			 s->pid, bi.version[0] ? bi.version : "?",
			 e.memlimit >> 20, lim);
	}
	return 0;
}

static int go_snapshot(const struct rt_sight *s, int pid_dirfd)
{
	struct go_buildinfo bi;
	struct go_env e;
	struct smaps sm;
	struct json_object *o;
	uint64_t heap = 0, rss = 0;
	size_t n = 0;
	const char *txt;
	int r = read_env(s, &e);

	if (r < 0)
		return r;
	(void)exe_buildinfo(s, &bi);
	smaps_init(&sm);
	r = smaps_read_at(s->proc_fd, "smaps", &sm);
	if (r >= 0)
		go_heap_rss(&sm, &heap, &rss, &n);
	smaps_release(&sm);
	if (r < 0)
		return r;
	o = json_object_new_object();
	if (!o)
		return -ENOMEM;
#define ADD(k, v) json_object_object_add(o, k, v)
	ADD("t_ms", json_object_new_uint64(now_realtime_us() / 1000));
	ADD("pid", json_object_new_int(s->pid));
	ADD("version", json_object_new_string(bi.version));
	ADD("gomemlimit_set", json_object_new_boolean(e.memlimit_set));
	ADD("gomemlimit", e.memlimit_valid && e.memlimit != UINT64_MAX
				  ? json_object_new_uint64(e.memlimit)
				  : NULL);
	ADD("gomemlimit_off",
	    json_object_new_boolean(e.memlimit_valid &&
				    e.memlimit == UINT64_MAX));
	ADD("gogc", json_object_new_int(e.gogc));
	ADD("heap_rss", json_object_new_uint64(heap));
	ADD("rss", json_object_new_uint64(rss));
	ADD("heap_mappings", json_object_new_uint64(n));
	ADD("limit", json_object_new_uint64(s->limit));
#undef ADD
	txt = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	r = mkdir_p_at(pid_dirfd, BP_GO_DIR, MODE_PRIVATE_DIR);
	if (r == 0)
		r = write_file_atomic_at(pid_dirfd, BP_GO_FACTS, txt,
					 strlen(txt), MODE_PRIVATE_FILE);
	json_object_put(o);
	return r;
}

/* ---- from a bundle ---- */

static void load_one(const struct bundle *b, uint64_t kill_ms,
		     struct diag_input *in, int pid, struct go_facts *f)
{
	struct jget_notes *n = &in->notes;
	char path[96];
	struct json_object *o;
	struct go_proc *p;
	const char *v;
	uint64_t t = 0, lim;
	int gogc = 100;
	bool off = false;

	snprintf(path, sizeof(path), BP_PROC_DIR_FMT "/" BP_GO_FACTS, pid);
	o = bundle_get_json(b, path);
	jget_where(n, path);
	if (!o || f->n == GO_MAX_PROCS) {
		json_object_put(o);
		return;
	}
	p = &f->p[f->n++];
	*p = (struct go_proc){.pid = pid, .age_s = -1, .env.gogc = 100};
	if ((v = jget_str(n, o, "version")))
		strlcpy_safe(p->version, v, sizeof(p->version));
	jget_bool(n, o, "gomemlimit_set", &p->env.memlimit_set);
	if (jget_u64(n, o, "gomemlimit", &lim)) {
		p->env.memlimit_valid = true;
		p->env.memlimit = lim;
	}
	if (jget_bool(n, o, "gomemlimit_off", &off) && off) {
		p->env.memlimit_valid = true;
		p->env.memlimit = UINT64_MAX;
	}
	if (jget_int(n, o, "gogc", &gogc))
		p->env.gogc = gogc;
	p->heap_rss = jget_u64_or0(n, o, "heap_rss");
	p->rss = jget_u64_or0(n, o, "rss");
	if (jget_u64(n, o, "t_ms", &t) && t && kill_ms)
		p->age_s = ((double)kill_ms - (double)t) / 1000.0;
	json_object_put(o);
}

/* A Go process's heap arenas look like glibc's arena heaps in smaps
 * (64 MiB-aligned rw-p + ---p): they are Go's. */
static void go_load_proc(const struct bundle *b, const char *dir,
			 struct diag_proc *p, struct diag_input *in)
{
	char path[160];
	size_t len;

	(void)in;
	snprintf(path, sizeof(path), "%s/" BP_GO_FACTS, dir);
	if (bundle_get(b, path, &len))
		p->arenas_not_glibc = true;
}

static void go_load(const struct bundle *b, uint64_t kill_ms,
		    struct diag_input *in, void **data)
{
	struct go_facts *f = calloc(1, sizeof(*f));

	for (size_t i = 0; f && i < in->n_procs; i++)
		load_one(b, kill_ms, in, in->procs[i].pid, f);
	jget_where(&in->notes, NULL);
	if (f && !f->n) {
		free(f);
		f = NULL;
	}
	*data = f;
}

static void go_release(void *data)
{
	free(data);
}

static const struct go_proc *go_of(const void *data, int pid)
{
	const struct go_facts *f = data;

	for (size_t i = 0; f && i < f->n; i++)
		if (f->p[i].pid == pid)
			return &f->p[i];
	return NULL;
}

/* ---- the ledger and the verdict ---- */

static void go_ledger(struct diag_ledger *l, const struct diag_input *in,
		      const void *data, const struct diag_proc *p)
{
	const struct go_proc *g = go_of(data, p->pid);

	(void)in;
	if (g)
		diag_part(l->d, p->pid, "go heap",
			  diag_take_anon(l, g->heap_rss), false,
			  "smaps pid %d: Go heap arenas (anonymous, from "
			  "0xc000000000)",
			  p->pid);
}

/* The heap held most of the process's RSS at the snapshot. */
static bool heap_dominates(const struct go_proc *g)
{
	return g->rss && mul_sat(g->heap_rss, 2) >= g->rss;
}

static bool go_explains_growth(const struct diag_input *in, const void *data,
			       uint64_t usage)
{
	const struct go_facts *f = data;

	(void)in;
	(void)usage;
	for (size_t i = 0; f && i < f->n; i++)
		if (heap_dominates(&f->p[i]))
			return true;
	return false;
}

static uint64_t resident(const struct diagnosis *d, int pid)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < d->n_parts; i++)
		if (d->parts[i].pid == pid &&
		    streq(d->parts[i].name, "go heap"))
			sum = add_sat(sum, d->parts[i].bytes);
	return sum;
}

static void go_one(const struct diag_input *in, const struct go_proc *g,
		   struct diagnosis *d)
{
	uint64_t u = d->usage_bytes, res = resident(d, g->pid);
	uint64_t lim = d->limit_bytes != UINT64_MAX ? d->limit_bytes : u;
	uint64_t nonheap = sub_sat(g->rss, g->heap_rss), ml;
	bool knows = knows_limit(&g->env, lim);
	struct diag_verdict *v;

	if (!u || !lim || !heap_dominates(g) ||
	    mul_sat(res, 10) < mul_sat(u, 3))
		return;
	v = diag_verdict(d, DIAG_GO_HEAP,
			 45 + (int)(pct(res, u) / 2) + (knows ? 0 : 10), res);
	strlcpy_safe(v->detail, knows ? "" : "GOMEMLIMIT unset",
		     sizeof(v->detail));
	if (g->env.memlimit_valid && !knows)
		strlcpy_safe(v->detail, "GOMEMLIMIT above the limit",
			     sizeof(v->detail));
	EVID(v,
	     "pid %d (Go %s): Go heap RSS %s, %.0f%% of the %s in use; of its "
	     "%s RSS, %s outside the heap (smaps, %.1f s before the kill)",
	     g->pid, g->version[0] ? g->version : "?", H(res), pct(res, u),
	     H(u), H(g->rss), H(nonheap), g->age_s);
	if (!g->env.memlimit_valid)
		EVID(v,
		     "GOMEMLIMIT %s: the Go runtime does not know the "
		     "container's limit (%s); %s",
		     g->env.memlimit_set ? "unreadable" : "unset", H(lim),
		     gogc_says(&g->env, (char[96]){0}, 96));
	else if (!knows)
		EVID(v,
		     "GOMEMLIMIT %s is above the %s limit: the Go runtime "
		     "does not know the container's limit",
		     g->env.memlimit == UINT64_MAX ? "off" : H(g->env.memlimit),
		     H(lim));
	else
		EVID(v,
		     "GOMEMLIMIT %s is within the %s limit: the live heap "
		     "itself outgrew it (the GC cannot free what is still "
		     "referenced)",
		     H(g->env.memlimit), H(lim));
	ml = go_fitting_memlimit(lim, nonheap);
	if (!knows)
		RECO(v,
		     "GOMEMLIMIT=%lluMiB (90%% of the %s limit minus the %s "
		     "non-heap RSS measured): the Go GC then collects harder "
		     "near the limit instead of the kernel killing",
		     (unsigned long long)(ml / MiB), H(lim), H(nonheap));
	RECO(v,
	     "take a heap profile: import _ \"net/http/pprof\", then go tool "
	     "pprof -sample_index=inuse_space "
	     "http://HOST:PORT/debug/pprof/heap (top, list): a heap that "
	     "only grows (a map never pruned) is a leak no GOMEMLIMIT "
	     "cures");
	RECO(v, "or raise the limit to %s", H(diag_suggested_limit(in, d)));
}

static void go_verdicts(const struct diag_input *in, const void *data,
			struct diagnosis *d)
{
	const struct go_facts *f = data;

	for (size_t i = 0; f && i < f->n; i++)
		go_one(in, &f->p[i], d);
}

/* ---- report.html ---- */

/* Names the rows of a Go program's heap arenas: "go heap (arena)". */
static void go_label_mappings(const struct bundle *b, const char *dir, int pid,
			      struct rt_mapping *rows, size_t n,
			      struct jget_notes *notes)
{
	char path[160];
	size_t len;

	(void)notes;
	snprintf(path, sizeof(path), "%s/" BP_GO_FACTS, dir);
	if (!bundle_get(b, path, &len))
		return;
	for (size_t j = 0; j < n; j++)
		if (rows[j].pid == pid && !rows[j].name[0] &&
		    rows[j].addr >= GO_ARENA_LO && rows[j].addr < GO_ARENA_HI)
			snprintf(rows[j].name, rows[j].name_size,
				 "go heap (arena)");
}

const struct diag_runtime rt_go = {
	.name = "go",
	.detect = go_detect,
	.first_sight = go_first_sight,
	.snapshot = go_snapshot,
	.load_proc = go_load_proc,
	.load = go_load,
	.release = go_release,
	.ledger = go_ledger,
	.verdicts = go_verdicts,
	.explains_growth = go_explains_growth,
	.label_mappings = go_label_mappings,
};
