/* SPDX-License-Identifier: Apache-2.0 */
/* ptcall against live processes (touches the live system: ptrace, /proc).
 * Victims: build/victims/ptcall_reader (retention, blocked in read()),
 * ptcall_stress (busy allocator counting SIGUSR1s), ptcall_spin (never
 * leaves libc). Refusal cases build what they need with cc and skip with a
 * reason when they cannot. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/parse.h"
#include "inspect/ptcall.h"
#include "base/util.h"

struct victim {
	pid_t pid;
	int in;	 /* its stdin (we write commands) */
	int out; /* its stdout (we read JSON lines) */
	char line[4096];
};

static char victim_dir[512];
static char tmpdir[256];

static void suite_init(void)
{
	const char *b = getenv("OOMLENS_BUILD");

	snprintf(victim_dir, sizeof(victim_dir), "%s/victims", b ? b : "build");
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/oomlens-test-ptcall-%d",
		 getpid());
	mkdir(tmpdir, 0755);
}

static void suite_fini(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", tmpdir);
}

// cppcheck-suppress unknownMacro
TestSuite(ptcall, .init = suite_init, .fini = suite_fini, .timeout = 90);

/* Reads one line (without '\n') within ms. Returns its length or -1. */
static int read_line(struct victim *v, int ms)
{
	size_t n = 0;

	while (n + 1 < sizeof(v->line)) {
		struct pollfd p = {v->out, POLLIN, 0};
		char c;

		if (poll(&p, 1, ms) <= 0 || read(v->out, &c, 1) != 1)
			return -1;
		if (c == '\n')
			break;
		v->line[n++] = c;
	}
	v->line[n] = '\0';
	return (int)n;
}

/* Waits until the victim's main thread blocks in read() (syscall 0). */
static void wait_in_read(pid_t pid)
{
	char path[64], buf[256];
	uint64_t until = now_monotonic_us() + 5000000;

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	while (now_monotonic_us() < until) {
		int fd = open(path, O_RDONLY);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

		if (fd >= 0)
			close(fd);
		if (n > 2 && buf[0] == '0' && buf[1] == ' ')
			return;
		usleep(1000);
	}
	cr_assert_fail("pid %d never blocked in read()", pid);
}

static void start_victim_env(struct victim *v, char *const argv[],
			     const char *preload)
{
	int in[2], out[2];

	cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
	v->pid = fork();
	cr_assert_geq(v->pid, 0);
	if (v->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (preload)
			setenv("LD_PRELOAD", preload, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	v->in = in[1];
	v->out = out[0];
	cr_assert_gt(read_line(v, 10000), 0, "victim %s did not start",
		     argv[0]);
	cr_assert(strstr(v->line, "\"ready\":true"), "victim said: %s",
		  v->line);
	if (!strstr(argv[0], "spin"))
		wait_in_read(v->pid);
}

static void start_victim(struct victim *v, char *const argv[])
{
	start_victim_env(v, argv, NULL);
}

static void stop_victim(struct victim *v)
{
	int st;

	if (v->pid <= 0)
		return;
	kill(v->pid, SIGKILL);
	waitpid(v->pid, &st, 0);
	close(v->in);
	close(v->out);
	v->pid = 0;
}

static void victim_path(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", victim_dir, name);
	if (access(buf, X_OK) != 0)
		cr_skip_test("victim %s not built (make victims)", buf);
}

/* Sends a one-byte command and reads the answer line. */
static void victim_cmd(struct victim *v, char c)
{
	cr_assert_eq(write(v->in, &c, 1), 1);
	cr_assert_gt(read_line(v, 5000), 0, "no answer to '%c'", c);
}

static uint64_t json_u64(struct json_object *o, const char *key)
{
	struct json_object *f;

	cr_assert(json_object_object_get_ex(o, key, &f), "no %s", key);
	return (uint64_t)json_object_get_int64(f);
}

static uint64_t rss_kb(pid_t pid)
{
	char path[64], buf[4096];
	const char *p;
	uint64_t v = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	cr_assert_gt(n, 0);
	buf[n] = '\0';
	p = strstr(buf, "VmRSS:");
	cr_assert(p);
	for (p += 6; *p == ' ' || *p == '\t'; p++)
		;
	cr_assert_eq(scan_u64(&p, &v), 0);
	return v;
}

Test(ptcall, mallinfo2_equals_the_victims_own)
{
	char path[600];
	struct victim v;
	struct ptcall_mallinfo2 mi;
	struct ptcall_report rep;
	struct json_object *j, *m;

	victim_path(path, sizeof(path), "ptcall_reader");
	start_victim(&v, (char *const[]){path, "4", "8", NULL});
	cr_assert_eq(ptcall_mallinfo2(v.pid, NULL, &mi, &rep), 0, "%s",
		     rep.reason);
	/* the victim takes its mallinfo2 right after read() returns */
	victim_cmd(&v, 'm');
	j = json_tokener_parse(v.line);
	cr_assert(j && json_object_object_get_ex(j, "mallinfo2", &m), "%s",
		  v.line);
	cr_expect_eq(json_u64(j, "read"), 1);
	cr_expect_eq(mi.arena, json_u64(m, "arena"));
	cr_expect_eq(mi.ordblks, json_u64(m, "ordblks"));
	cr_expect_eq(mi.smblks, json_u64(m, "smblks"));
	cr_expect_eq(mi.hblks, json_u64(m, "hblks"));
	cr_expect_eq(mi.hblkhd, json_u64(m, "hblkhd"));
	cr_expect_eq(mi.fsmblks, json_u64(m, "fsmblks"));
	cr_expect_eq(mi.uordblks, json_u64(m, "uordblks"));
	cr_expect_eq(mi.fordblks, json_u64(m, "fordblks"));
	cr_expect_eq(mi.keepcost, json_u64(m, "keepcost"));
	/* 4 threads x 8 MiB of 480-byte blocks, 63 of 64 freed */
	cr_expect_gt(mi.fordblks, 4 * (7u << 20));
	cr_expect_eq(rep.tid, v.pid, "the main thread (in read) is used");
	cr_expect_eq(rep.calls, 1);
	json_object_put(j);
	stop_victim(&v);
}

Test(ptcall, malloc_info_arenas_add_up_to_mallinfo2)
{
	char path[600];
	struct victim v;
	struct ptcall_mallinfo2 mi;
	struct ptcall_malloc_info info;
	struct ptcall_report rep;
	char *xml = NULL;
	size_t len = 0;
	uint64_t sum = 0;

	victim_path(path, sizeof(path), "ptcall_reader");
	start_victim(&v, (char *const[]){path, "3", "4", NULL});
	cr_assert_eq(ptcall_malloc_stats(v.pid, NULL, &mi, &xml, &len, &rep), 0,
		     "%s", rep.reason);
	cr_assert_eq(strlen(xml), len);
	cr_assert_eq(ptcall_parse_malloc_info(xml, len, &info), 0);
	cr_expect_eq(info.n_arenas, 4, "main + 3 thread arenas");
	for (size_t i = 0; i < info.n_arenas; i++) {
		cr_expect_eq(info.arenas[i].nr, (int)i);
		sum += info.arenas[i].system_current;
	}
	cr_expect_eq(sum, info.total.system_current);
	cr_expect_eq(sum, mi.arena);
	cr_expect_eq(info.mmap_bytes, mi.hblkhd);
	victim_cmd(&v, 'p');
	cr_expect(strstr(v.line, "\"read\":1,\"errno\":0"), "%s", v.line);
	ptcall_malloc_info_release(&info);
	free(xml);
	stop_victim(&v);
}

Test(ptcall, trim_returns_most_arena_rss_and_victim_answers)
{
	char path[600];
	struct victim v;
	struct ptcall_report rep;
	uint64_t before, after;
	int released = -1;

	victim_path(path, sizeof(path), "ptcall_reader");
	start_victim(&v, (char *const[]){path, "4", "32", NULL});
	before = rss_kb(v.pid);
	cr_assert_eq(ptcall_malloc_trim(v.pid, NULL, &released, &rep), 0, "%s",
		     rep.reason);
	after = rss_kb(v.pid);
	cr_expect_eq(released, 1);
	/* ~128 MiB retained in 4 arenas, 1/64 of it still in use */
	cr_expect_gt(before, 100u << 10, "before %lu KiB", before);
	cr_expect_lt(after * 2, before, "before %lu after %lu KiB", before,
		     after);
	victim_cmd(&v, 'p');
	cr_expect(strstr(v.line, "\"read\":1,\"errno\":0,\"cmd\":\"p\""), "%s",
		  v.line);
	victim_cmd(&v, 'm');
	cr_expect(strstr(v.line, "\"mallinfo2\""), "%s", v.line);
	stop_victim(&v);
}

Test(ptcall, blocked_read_completes_normally_after_calls)
{
	char path[600];
	struct victim v;
	struct ptcall_mallinfo2 mi;
	struct ptcall_report rep;

	victim_path(path, sizeof(path), "ptcall_reader");
	start_victim(&v, (char *const[]){path, "1", "1", NULL});
	for (int i = 0; i < 20; i++) {
		wait_in_read(v.pid); /* restarted after the previous call */
		cr_assert_eq(ptcall_mallinfo2(v.pid, NULL, &mi, &rep), 0, "%s",
			     rep.reason);
		cr_assert_eq(rep.tid, v.pid, "the read()ing thread is used");
	}
	/* the read() interrupted 20 times restarts and gets this byte */
	victim_cmd(&v, 'q');
	cr_expect_str_eq(v.line, "{\"read\":1,\"errno\":0,\"cmd\":\"q\"}");
	stop_victim(&v);
}

/* ---- the stress program: 1,000 calls, SIGUSR1s counted ---- */

struct sender {
	pid_t pid;
	volatile uint64_t *counters;
	volatile bool stop;
	uint64_t sent;
	bool lost;
};

static void *send_usr1(void *arg)
{
	struct sender *s = arg;

	while (!s->stop) {
		uint64_t until = now_monotonic_us() + 3000000;

		kill(s->pid, SIGUSR1);
		s->sent++;
		/* one at a time: standard signals coalesce while pending */
		while (__atomic_load_n(&s->counters[0], __ATOMIC_SEQ_CST) <
		       s->sent) {
			if (now_monotonic_us() > until) {
				s->lost = true;
				return NULL;
			}
			usleep(50);
		}
		usleep(300 + (unsigned)(s->sent % 7) * 100);
	}
	return NULL;
}

Test(ptcall, stress_1000_calls_no_crash_deadlock_or_lost_signal)
{
	char path[600], counter[300], cs[16];
	struct victim v;
	struct sender snd = {0};
	struct ptcall_report rep;
	struct ptcall_mallinfo2 mi;
	uint64_t t0 = now_monotonic_us(), bursts0;
	unsigned ok = 0, busy = 0, sane = 0;
	pthread_t th;
	int fd;

	victim_path(path, sizeof(path), "ptcall_stress");
	snprintf(counter, sizeof(counter), "%s/stress-counters", tmpdir);
	snprintf(cs, sizeof(cs), "%d", 3);
	start_victim(&v, (char *const[]){path, counter, cs, NULL});
	fd = open(counter, O_RDONLY);
	cr_assert_geq(fd, 0);
	snd.counters = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	cr_assert_neq((void *)snd.counters, MAP_FAILED);
	snd.pid = v.pid;
	bursts0 = snd.counters[1];
	cr_assert_eq(pthread_create(&th, NULL, send_usr1, &snd), 0);
	for (int i = 0; i < 1000 && now_monotonic_us() - t0 < 50000000; i++) {
		int r = ptcall_mallinfo2(v.pid, NULL, &mi, &rep);

		ok += r == 0;
		busy += r == -EAGAIN;
		sane += r == 0 && mi.arena > 0 && mi.uordblks <= mi.arena;
		cr_assert(r == 0 || r == -EAGAIN, "call %d: %d %s", i, r,
			  rep.reason);
	}
	snd.stop = true;
	pthread_join(th, NULL);
	cr_log_info("stress: %u ok, %u busy, %lu SIGUSR1 sent, %lu counted, "
		    "%.1f s",
		    ok, busy, snd.sent, snd.counters[0],
		    (double)(now_monotonic_us() - t0) / 1e6);
	cr_expect(!snd.lost, "a SIGUSR1 was lost (sent %lu, counted %lu)",
		  snd.sent, snd.counters[0]);
	cr_expect_eq(ok + busy, 1000, "1000 calls within 50 s");
	cr_expect_geq(ok, 990, "%u ok, %u refused as busy", ok, busy);
	cr_expect_eq(sane, ok);
	cr_expect_gt(snd.sent, 50, "signals were sent during the calls");
	cr_expect_eq(snd.counters[2], 0, "read() in the victim never failed");
	cr_expect_gt(snd.counters[1], bursts0, "workers kept allocating");
	victim_cmd(&v, 'p');
	cr_expect_str_eq(v.line, "{\"read\":1,\"cmd\":\"p\"}");
	munmap((void *)snd.counters, 4096);
	stop_victim(&v);
}

/* ---- the generic layer, deadline, signals ---- */

Test(ptcall, generic_call_follows_the_abi)
{
	char path[600];
	struct victim v;
	struct ptcall_session *s;
	struct ptcall_report rep;
	uint64_t fn, ret = 0, args[1] = {(uint64_t)-7};

	victim_path(path, sizeof(path), "ptcall_reader");
	start_victim(&v, (char *const[]){path, "1", "1", NULL});
	cr_assert_eq(ptcall_open(v.pid, NULL, &s, &rep), 0, "%s", rep.reason);
	cr_expect_eq(ptcall_resolve(s, "strlen", &fn), -ENOTSUP, "IFUNC");
	cr_expect_eq(ptcall_resolve(s, "no_such_function_here", &fn), -ENOSYS);
	cr_assert_eq(ptcall_attach(s), 0, "%s", rep.reason);
	cr_assert_eq(ptcall_resolve(s, "labs", &fn), 0);
	cr_assert_eq(ptcall_call(s, fn, args, 1, &ret), 0, "%s", rep.reason);
	cr_expect_eq(ret, 7);
	cr_assert_eq(ptcall_resolve(s, "getpid", &fn), 0);
	cr_assert_eq(ptcall_call(s, fn, NULL, 0, &ret), 0, "%s", rep.reason);
	cr_expect_eq((pid_t)ret, v.pid);
	cr_expect_eq(ptcall_close(s), 0, "%s", rep.reason);
	cr_expect_eq(rep.calls, 2);
	victim_cmd(&v, 'p');
	cr_expect_str_eq(v.line, "{\"read\":1,\"errno\":0,\"cmd\":\"p\"}");
	stop_victim(&v);
}

Test(ptcall, deadline_restores_and_detaches)
{
	char path[600];
	struct victim v;
	struct ptcall_session *s;
	struct ptcall_report rep;
	struct ptcall_opts o = {-1, 300};
	uint64_t fn, ret, args[1] = {5}, t0;

	victim_path(path, sizeof(path), "ptcall_reader");
	start_victim(&v, (char *const[]){path, "1", "1", NULL});
	t0 = now_monotonic_us();
	cr_assert_eq(ptcall_open(v.pid, &o, &s, &rep), 0, "%s", rep.reason);
	cr_assert_eq(ptcall_resolve(s, "sleep", &fn), 0);
	cr_assert_eq(ptcall_attach(s), 0, "%s", rep.reason);
	cr_expect_eq(ptcall_call(s, fn, args, 1, &ret), -ETIMEDOUT);
	cr_expect(strstr(rep.reason, "deadline"), "%s", rep.reason);
	cr_expect_eq(ptcall_close(s), 0, "%s", rep.reason);
	cr_expect_lt(now_monotonic_us() - t0, 1500000,
		     "bounded by the "
		     "deadline");
	/* restored exactly: the interrupted read() still gets its byte */
	victim_cmd(&v, 'p');
	cr_expect_str_eq(v.line, "{\"read\":1,\"errno\":0,\"cmd\":\"p\"}");
	stop_victim(&v);
}

struct late_signal {
	pid_t pid;
	volatile uint64_t *counters;
	uint64_t seen_during;
};

static void *signal_later(void *arg)
{
	struct late_signal *l = arg;

	usleep(100000);
	kill(l->pid, SIGUSR1);
	usleep(200000);
	l->seen_during = l->counters[0];
	return NULL;
}

Test(ptcall, signals_during_a_call_are_delivered_after_it)
{
	char path[600], counter[300];
	struct victim v;
	struct ptcall_session *s;
	struct ptcall_report rep;
	struct late_signal l = {0};
	uint64_t fn, ret, args[1] = {600000}, until;
	pthread_t th;
	int fd;

	victim_path(path, sizeof(path), "ptcall_stress");
	snprintf(counter, sizeof(counter), "%s/late-counters", tmpdir);
	start_victim(&v, (char *const[]){path, counter, "1", NULL});
	fd = open(counter, O_RDONLY);
	cr_assert_geq(fd, 0);
	l.counters = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	l.pid = v.pid;
	cr_assert_eq(ptcall_open(v.pid, NULL, &s, &rep), 0, "%s", rep.reason);
	cr_assert_eq(ptcall_resolve(s, "usleep", &fn), 0);
	cr_assert_eq(ptcall_attach(s), 0, "%s", rep.reason);
	cr_assert_eq(rep.tid, v.pid, "the signal-taking main thread is used");
	cr_assert_eq(pthread_create(&th, NULL, signal_later, &l), 0);
	cr_expect_eq(ptcall_call(s, fn, args, 1, &ret), 0, "%s", rep.reason);
	pthread_join(th, NULL);
	cr_expect_eq(l.seen_during, 0, "not handled inside our call");
	cr_expect_eq(ptcall_close(s), 0, "%s", rep.reason);
	until = now_monotonic_us() + 2000000;
	while (l.counters[0] == 0 && now_monotonic_us() < until)
		usleep(1000);
	cr_expect_eq(l.counters[0], 1, "delivered once after the detach");
	cr_expect_eq(l.counters[2], 0, "read() did not fail");
	victim_cmd(&v, 'p');
	cr_expect_str_eq(v.line, "{\"read\":1,\"cmd\":\"p\"}");
	munmap((void *)l.counters, 4096);
	stop_victim(&v);
}

/* ---- refusals ---- */

/* Builds tmpdir/name with cc; skips the test with the reason on failure. */
static void build_or_skip(const char *cc, const char *flags, const char *src,
			  const char *name, char *out, size_t size)
{
	char cmd[2048];

	snprintf(out, size, "%s/%s", tmpdir, name);
	snprintf(cmd, sizeof(cmd), "%s %s -o %s %s -lpthread >%s.log 2>&1", cc,
		 flags, out, src, out);
	if (system(cmd) != 0)
		cr_skip_test("cannot build %s with '%s %s' (see %s.log)", name,
			     cc, flags, out);
}

static void write_src(const char *name, const char *text, char *out,
		      size_t size)
{
	FILE *f;

	snprintf(out, size, "%s/%s", tmpdir, name);
	f = fopen(out, "w");
	cr_assert(f);
	fputs(text, f);
	fclose(f);
}

static void expect_refusal(pid_t pid, int err, const char *words)
{
	struct ptcall_mallinfo2 mi;
	struct ptcall_report rep;
	char state[64];

	cr_expect_eq(ptcall_mallinfo2(pid, NULL, &mi, &rep), err,
		     "expected %d (%s): %s", err, strerror(-err), rep.reason);
	cr_expect(strstr(rep.reason, words), "reason '%s' lacks '%s'",
		  rep.reason, words);
	/* never left stopped or traced */
	snprintf(state, sizeof(state), "/proc/%d/status", pid);
	cr_expect_eq(kill(pid, 0), 0, "target alive");
}

Test(ptcall, refuses_a_static_binary)
{
	char bin[600];
	struct victim v;

	build_or_skip("cc", "-static -O1", "tests/victims/ptcall_reader.c",
		      "reader-static", bin, sizeof(bin));
	start_victim(&v, (char *const[]){bin, "1", "1", NULL});
	expect_refusal(v.pid, -ENOEXEC, "statically linked");
	victim_cmd(&v, 'p');
	cr_expect_str_eq(v.line, "{\"read\":1,\"errno\":0,\"cmd\":\"p\"}");
	stop_victim(&v);
}

static const char musl_src[] =
	"#include <stdio.h>\n#include <unistd.h>\n"
	"int main(void){char c;printf(\"{\\\"ready\\\":true}\\n\");"
	"fflush(stdout);while(read(0,&c,1)==1){printf(\"{\\\"read\\\":1}\\n\");"
	"fflush(stdout);}return 0;}\n";

Test(ptcall, refuses_musl)
{
	char src[600], bin[600];
	struct victim v;

	if (system("command -v musl-gcc >/dev/null 2>&1") != 0)
		cr_skip_test("musl-gcc not installed (apt-get install "
			     "musl-tools)");
	write_src("musl.c", musl_src, src, sizeof(src));
	/* musl-gcc links statically by default; ask for its dynamic
	 * loader so the musl detection itself is what refuses */
	build_or_skip("musl-gcc",
		      "-O1 -Wl,-dynamic-linker,/lib/ld-musl-x86_64.so.1", src,
		      "musl-reader", bin, sizeof(bin));
	if (access("/lib/ld-musl-x86_64.so.1", X_OK) != 0)
		cr_skip_test("no /lib/ld-musl-x86_64.so.1 to run a dynamic "
			     "musl binary");
	start_victim(&v, (char *const[]){bin, NULL});
	expect_refusal(v.pid, -ENOEXEC, "musl");
	victim_cmd(&v, 'p');
	cr_expect_str_eq(v.line, "{\"read\":1}");
	stop_victim(&v);
}

static const char fake_malloc_src[] =
	"#include <stddef.h>\n"
	"extern void *__libc_malloc(size_t);extern void __libc_free(void*);\n"
	"extern void *__libc_calloc(size_t,size_t);\n"
	"extern void *__libc_realloc(void*,size_t);\n"
	"void *malloc(size_t n){return __libc_malloc(n);}\n"
	"void free(void *p){__libc_free(p);}\n"
	"void *calloc(size_t a,size_t b){return __libc_calloc(a,b);}\n"
	"void *realloc(void *p,size_t n){return __libc_realloc(p,n);}\n";

Test(ptcall, refuses_a_preloaded_malloc)
{
	char src[600], lib[600], path[600];
	struct victim v;

	victim_path(path, sizeof(path), "ptcall_reader");
	write_src("fakemalloc.c", fake_malloc_src, src, sizeof(src));
	build_or_skip("cc", "-shared -fPIC -O1", src, "libfakemalloc.so", lib,
		      sizeof(lib));
	start_victim_env(&v, (char *const[]){path, "1", "1", NULL}, lib);
	expect_refusal(v.pid, -ENOTSUP, "libfakemalloc.so defines it");
	stop_victim(&v);
}

Test(ptcall, refuses_jemalloc)
{
	static const char je[] = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";
	char path[600];
	struct victim v;

	if (access(je, R_OK) != 0)
		cr_skip_test("%s not installed (apt-get install libjemalloc2)",
			     je);
	victim_path(path, sizeof(path), "ptcall_reader");
	start_victim_env(&v, (char *const[]){path, "1", "1", NULL}, je);
	expect_refusal(v.pid, -ENOTSUP, "libjemalloc.so.2 defines it");
	victim_cmd(&v, 'p');
	cr_expect_str_eq(v.line, "{\"read\":1,\"errno\":0,\"cmd\":\"p\"}");
	stop_victim(&v);
}

static bool wait_traced(pid_t pid, bool traced)
{
	char path[64], buf[4096];
	uint64_t until = now_monotonic_us() + 5000000;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	while (now_monotonic_us() < until) {
		int fd = open(path, O_RDONLY);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		const char *p;

		if (fd >= 0)
			close(fd);
		buf[n > 0 ? n : 0] = '\0';
		p = strstr(buf, "TracerPid:\t");
		if (p && (p[11] != '0') == traced)
			return true;
		usleep(10000);
	}
	return false;
}

Test(ptcall, refuses_a_process_traced_by_another_tracer)
{
	char path[600];
	struct victim v;
	pid_t tracer;
	int st;

	victim_path(path, sizeof(path), "ptcall_reader");
	start_victim(&v, (char *const[]){path, "1", "1", NULL});
	tracer = fork();
	cr_assert_geq(tracer, 0);
	if (tracer == 0) {
		if (ptrace(PTRACE_SEIZE, v.pid, NULL, NULL) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	cr_assert(wait_traced(v.pid, true), "tracer did not attach");
	expect_refusal(v.pid, -EBUSY, "already traced");
	kill(tracer, SIGKILL);
	waitpid(tracer, &st, 0);
	cr_assert(wait_traced(v.pid, false));
	victim_cmd(&v, 'p');
	cr_expect_str_eq(v.line, "{\"read\":1,\"errno\":0,\"cmd\":\"p\"}");
	stop_victim(&v);
}

Test(ptcall, refuses_a_process_under_strace)
{
	char path[600];
	struct victim v;
	pid_t strace;
	int st;

	if (access("/usr/bin/strace", X_OK) != 0)
		cr_skip_test("strace not installed");
	victim_path(path, sizeof(path), "ptcall_reader");
	start_victim(&v, (char *const[]){path, "1", "1", NULL});
	strace = fork();
	cr_assert_geq(strace, 0);
	if (strace == 0) {
		char p[16];

		snprintf(p, sizeof(p), "%d", v.pid);
		execl("/usr/bin/strace", "strace", "-qq", "-o", "/dev/null",
		      "-p", p, (char *)NULL);
		_exit(127);
	}
	cr_assert(wait_traced(v.pid, true), "strace did not attach");
	expect_refusal(v.pid, -EBUSY, "already traced");
	kill(strace, SIGTERM);
	waitpid(strace, &st, 0);
	cr_assert(wait_traced(v.pid, false));
	victim_cmd(&v, 'p');
	cr_expect_str_eq(v.line, "{\"read\":1,\"errno\":0,\"cmd\":\"p\"}");
	stop_victim(&v);
}

Test(ptcall, refuses_without_ptrace_rights)
{
	char path[600];
	struct victim v;
	int p[2], st, r = 0;
	pid_t child;

	if (geteuid() != 0)
		cr_skip_test("needs root to switch to nobody");
	victim_path(path, sizeof(path), "ptcall_reader");
	start_victim(&v, (char *const[]){path, "1", "1", NULL});
	cr_assert_eq(pipe(p), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		struct ptcall_mallinfo2 mi;
		struct ptcall_report rep;

		/* nobody, no capabilities: a different uid without
		 * CAP_SYS_PTRACE, as under Yama or a locked-down pod */
		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(2);
		r = ptcall_mallinfo2(v.pid, NULL, &mi, &rep);
		if (write(p[1], &r, sizeof(r)) != sizeof(r) ||
		    write(p[1], rep.reason, sizeof(rep.reason)) < 0)
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	waitpid(child, &st, 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
	cr_assert_eq(read(p[0], &r, sizeof(r)), sizeof(r));
	cr_assert_gt(read(p[0], v.line, sizeof(v.line)), 0);
	close(p[0]);
	cr_expect_eq(r, -EPERM, "got %d: %s", r, v.line);
	cr_expect(strstr(v.line, "denied"), "%s", v.line);
	victim_cmd(&v, 'p');
	cr_expect_str_eq(v.line, "{\"read\":1,\"errno\":0,\"cmd\":\"p\"}");
	stop_victim(&v);
}

Test(ptcall, refuses_when_no_thread_is_safe)
{
	char path[600], stat[64], buf[512];
	struct victim v;
	int fd;
	ssize_t n;

	victim_path(path, sizeof(path), "ptcall_spin");
	start_victim(&v, (char *const[]){path, NULL});
	usleep(50000);
	expect_refusal(v.pid, -EAGAIN, "running inside libc");
	/* detached and running again, not left stopped */
	snprintf(stat, sizeof(stat), "/proc/%d/stat", v.pid);
	fd = open(stat, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	close(fd);
	cr_assert_gt(n, 0);
	buf[n] = '\0';
	cr_expect(strstr(buf, ") R ") || strstr(buf, ") S "), "%s", buf);
	stop_victim(&v);
}

/* ---- hostile and vanishing targets ---- */

Test(ptcall, works_when_libc_was_deleted_under_the_process)
{
	char path[600], dir[400], lib[500], cmd[1200];
	struct victim v;
	struct ptcall_mallinfo2 mi;
	struct ptcall_report rep;

	victim_path(path, sizeof(path), "ptcall_reader");
	snprintf(dir, sizeof(dir), "%s/oldlibc", tmpdir);
	snprintf(lib, sizeof(lib), "%s/libc.so.6", dir);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s && cp /lib/x86_64-linux-gnu/libc.so.6 %s", dir,
		 lib);
	if (system(cmd) != 0)
		cr_skip_test("cannot copy /lib/x86_64-linux-gnu/libc.so.6");
	setenv("LD_LIBRARY_PATH", dir, 1);
	start_victim(&v, (char *const[]){path, "2", "2", NULL});
	unsetenv("LD_LIBRARY_PATH");
	/* as after an upgrade: maps now says "libc.so.6 (deleted)" */
	cr_assert_eq(unlink(lib), 0);
	cr_expect_eq(ptcall_mallinfo2(v.pid, NULL, &mi, &rep), 0, "%s",
		     rep.reason);
	cr_expect_gt(mi.arena, 0);
	victim_cmd(&v, 'p');
	cr_expect_str_eq(v.line, "{\"read\":1,\"errno\":0,\"cmd\":\"p\"}");
	stop_victim(&v);
}

Test(ptcall, hostile_process_name)
{
	char path[600], odd[600], cmd[1400];
	struct victim v;
	struct ptcall_mallinfo2 mi;
	struct ptcall_report rep;

	victim_path(path, sizeof(path), "ptcall_reader");
	/* comm "x) T (y": a parser taking the first ')' of stat would see
	 * state T and skip every thread */
	snprintf(odd, sizeof(odd), "%s/x) T (y", tmpdir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", path, odd);
	cr_assert_eq(system(cmd), 0);
	start_victim(&v, (char *const[]){odd, "1", "1", NULL});
	cr_expect_eq(ptcall_mallinfo2(v.pid, NULL, &mi, &rep), 0, "%s",
		     rep.reason);
	cr_expect_eq(rep.tid, v.pid);
	stop_victim(&v);
}

Test(ptcall, process_exiting_during_a_call)
{
	char path[600];
	struct victim v;
	struct ptcall_session *s;
	struct ptcall_report rep;
	uint64_t fn, ret, args[1] = {7};
	int st;

	victim_path(path, sizeof(path), "ptcall_reader");
	start_victim(&v, (char *const[]){path, "2", "1", NULL});
	cr_assert_eq(ptcall_open(v.pid, NULL, &s, &rep), 0, "%s", rep.reason);
	cr_assert_eq(ptcall_resolve(s, "_exit", &fn), 0);
	cr_assert_eq(ptcall_attach(s), 0, "%s", rep.reason);
	cr_expect_eq(ptcall_call(s, fn, args, 1, &ret), -ESRCH);
	cr_expect_eq(ptcall_close(s), 0, "%s", rep.reason);
	/* we are its parent and its tracer: ptcall's waitpid reaped it */
	if (waitpid(v.pid, &st, 0) == v.pid)
		cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 7, "st %d", st);
	else
		cr_expect_eq(errno, ECHILD);
	cr_expect_eq(kill(v.pid, 0), -1, "gone");
	close(v.in);
	close(v.out);
	/* and a pid that is gone */
	cr_expect_eq(ptcall_open(v.pid, NULL, &s, &rep), -ESRCH);
}

static void *stop_later(void *arg)
{
	usleep(100000);
	kill(*(pid_t *)arg, SIGSTOP);
	return NULL;
}

static char proc_state(pid_t pid)
{
	char path[64], buf[512];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] ? p[2] : '?';
}

Test(ptcall, sigstop_during_a_call_stops_the_process_after_it)
{
	char path[600];
	struct victim v;
	struct ptcall_session *s;
	struct ptcall_report rep;
	uint64_t fn, ret, args[1] = {300000}, until;
	pthread_t th;

	victim_path(path, sizeof(path), "ptcall_reader");
	start_victim(&v, (char *const[]){path, "1", "1", NULL});
	cr_assert_eq(ptcall_open(v.pid, NULL, &s, &rep), 0, "%s", rep.reason);
	cr_assert_eq(ptcall_resolve(s, "usleep", &fn), 0);
	cr_assert_eq(ptcall_attach(s), 0, "%s", rep.reason);
	cr_assert_eq(pthread_create(&th, NULL, stop_later, &v.pid), 0);
	cr_expect_eq(ptcall_call(s, fn, args, 1, &ret), 0, "%s", rep.reason);
	pthread_join(th, NULL);
	cr_expect_eq(ptcall_close(s), 0, "%s", rep.reason);
	/* the SIGSTOP sent meanwhile is honoured, not swallowed */
	until = now_monotonic_us() + 2000000;
	while (proc_state(v.pid) != 'T' && now_monotonic_us() < until)
		usleep(1000);
	cr_expect_eq(proc_state(v.pid), 'T');
	kill(v.pid, SIGCONT);
	victim_cmd(&v, 'p');
	cr_expect_str_eq(v.line, "{\"read\":1,\"errno\":0,\"cmd\":\"p\"}");
	stop_victim(&v);
}

/* The tracer: seizes pid, says so on `to`, waits for a byte on `from`,
 * closes the session, says so, then lives on (as the sidecar does). */
static void tracer_child(pid_t pid, int to, int from)
{
	struct ptcall_session *s;
	struct ptcall_report rep;
	char c = 'a';

	if (ptcall_open(pid, NULL, &s, &rep) < 0 || ptcall_attach(s) < 0)
		c = 'e';
	if (write(to, &c, 1) != 1 || c == 'e' || read(from, &c, 1) != 1)
		_exit(1);
	(void)ptcall_close(s);
	c = 'c';
	if (write(to, &c, 1) != 1)
		_exit(1);
	pause();
	_exit(0);
}

/* Seen on a loaded machine: a victim OOM-killed while the sidecar's probe
 * had a thread seized stayed a zombie traced by the sidecar, and its
 * parent hung in wait4 for as long as the sidecar lived. The tracer here
 * is another process than the parent, as there. */
Test(ptcall, a_process_killed_while_seized_is_reapable_by_its_parent)
{
	char path[600], c;
	struct victim v;
	int up[2], down[2], st = 0;
	pid_t tracer, r = 0;
	uint64_t until;

	victim_path(path, sizeof(path), "ptcall_reader");
	start_victim(&v, (char *const[]){path, "4", "1", NULL});
	cr_assert_eq(pipe(up), 0);
	cr_assert_eq(pipe(down), 0);
	tracer = fork();
	cr_assert_geq(tracer, 0);
	if (tracer == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		tracer_child(v.pid, up[1], down[0]);
	}
	cr_assert_eq(read(up[0], &c, 1), 1);
	cr_assert_eq(c, 'a', "the tracer could not seize pid %d", v.pid);
	kill(v.pid, SIGKILL);
	usleep(20000);
	cr_assert_eq(write(down[1], "x", 1), 1);
	cr_assert_eq(read(up[0], &c, 1), 1);
	cr_assert_eq(c, 'c');
	/* the tracer lives on: the victim must be reapable all the same */
	until = now_monotonic_us() + 3000000;
	while (now_monotonic_us() < until &&
	       (r = waitpid(v.pid, &st, WNOHANG)) == 0)
		usleep(10000);
	kill(tracer, SIGKILL);
	waitpid(tracer, NULL, 0);
	if (r == 0) /* reapable now that the tracer is gone */
		waitpid(v.pid, &st, 0);
	cr_assert_eq(r, v.pid, "the killed victim stayed unreapable");
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "st %d", st);
	close(v.in);
	close(v.out);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}
