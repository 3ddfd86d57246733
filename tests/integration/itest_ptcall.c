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
#include <sys/wait.h>
#include <unistd.h>

#include "oomlens/parse.h"
#include "oomlens/ptcall.h"
#include "oomlens/util.h"

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
