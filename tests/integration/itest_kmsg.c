/* SPDX-License-Identifier: Apache-2.0 */
/* kmsg reader against the live /dev/kmsg (root): a marker record written
 * and read back, seq-based skipping, and a real OOM kill in a cgroup v1
 * memory cgroup parsed by the assembler. Touches the live system. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "base/fileio.h"
#include "kernel/kmsg.h"
#include "base/util.h"

#define CG_ROOT "/sys/fs/cgroup/memory"

static int root_fd = -1;

static void need_root(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to write and read /dev/kmsg");
	if (access("/dev/kmsg", R_OK | W_OK) < 0)
		cr_skip_test("/dev/kmsg not accessible");
	root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(root_fd, 0);
}

/* Logs a unique marker and returns its text. */
static void write_marker(char *buf, size_t size)
{
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	char line[160];
	int n;

	snprintf(buf, size, "oomlens-itest-kmsg marker %d-%llu", getpid(),
		 (unsigned long long)now_monotonic_us());
	n = snprintf(line, sizeof(line), "<6>%s\n", buf);
	cr_assert_geq(fd, 0);
	/* One write(2) is one record (dprintf would split it). */
	cr_assert_eq(write(fd, line, (size_t)n), n, "%s", strerror(errno));
	close(fd);
}

/* Reads until the marker shows up; other helpers may log meanwhile. */
static uint64_t find_marker(struct kmsg_reader *r, const char *marker)
{
	struct kmsg_record rec;

	for (int i = 0; i < 100000; i++) {
		int n = kmsg_reader_next(r, &rec);

		if (n == -EPIPE)
			continue;
		cr_assert_geq(n, 0);
		if (n == 0)
			break;
		if (rec.text_len == strlen(marker) &&
		    memcmp(rec.text, marker, rec.text_len) == 0)
			return rec.seq;
	}
	cr_assert_fail("marker '%s' not read back", marker);
	return 0;
}

Test(kmsg_live, marker_read_back_and_skip)
{
	struct kmsg_reader *r;
	struct kmsg_record rec;
	char marker[96];
	uint64_t seq;

	need_root();
	cr_assert_eq(kmsg_reader_open(root_fd, true, false, 0, &r), 0);
	cr_assert_eq(kmsg_reader_next(r, &rec), 0, "skip_to_end: no history");
	write_marker(marker, sizeof(marker));
	seq = find_marker(r, marker);
	kmsg_reader_free(r);

	/* A restart after seq-1 reads the marker first; after seq never. */
	cr_assert_eq(kmsg_reader_open(root_fd, false, true, seq - 1, &r), 0);
	cr_assert_eq(kmsg_reader_next(r, &rec), 1);
	cr_assert_eq(rec.seq, seq);
	kmsg_reader_free(r);
	write_marker(marker, sizeof(marker));
	cr_assert_eq(kmsg_reader_open(root_fd, false, true, seq, &r), 0);
	cr_assert_eq(kmsg_reader_next(r, &rec), 1);
	cr_assert_gt(rec.seq, seq, "nothing at or before the saved seq");
	cr_assert_eq(kmsg_reader_malformed(r), 0);
	kmsg_reader_free(r);
}

/* A seq saved before a reboot is above everything in the buffer now:
 * nothing may be skipped then. */
Test(kmsg_live, saved_seq_from_another_boot)
{
	struct kmsg_reader *r;
	struct kmsg_record rec;
	char marker[96];

	need_root();
	write_marker(marker, sizeof(marker));
	cr_assert_eq(kmsg_reader_open(root_fd, false, true, UINT64_MAX - 5, &r),
		     0);
	cr_assert_eq(kmsg_reader_next(r, &rec), 1);
	cr_assert_lt(rec.seq, UINT64_MAX - 5);
	kmsg_reader_free(r);
}

static char cg_path[128];

static void cg_cleanup(void)
{
	struct strbuf sb;
	char procs[160];

	if (!cg_path[0])
		return;
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg_path);
	for (int i = 0; i < 50 && rmdir(cg_path) < 0 && errno == EBUSY; i++) {
		const char *p;

		strbuf_init(&sb, 1 << 16);
		if (read_file_at(AT_FDCWD, procs, 1 << 16, &sb) >= 0)
			for (p = sb.buf; *p;) {
				kill((pid_t)strtol(p, (char **)&p, 10),
				     SIGKILL);
				while (*p == '\n')
					p++;
			}
		strbuf_release(&sb);
		usleep(20000);
	}
	cg_path[0] = '\0';
}

/* The child joins the cgroup and allocates until the kernel kills it. */
static pid_t start_victim(void)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char procs[160], me[32];
		int n = snprintf(me, sizeof(me), "%d", getpid());

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg_path);
		if (write_file_atomic_at(AT_FDCWD, procs, me, (size_t)n, 0644) <
		    0) {
			int fd = open(procs, O_WRONLY);

			if (fd < 0 || write(fd, me, (size_t)n) != n)
				_exit(3);
			close(fd);
		}
		for (;;) {
			char *p = malloc(1 << 20);

			if (!p)
				_exit(4);
			memset(p, 0x5a, 1 << 20);
		}
	}
	return pid;
}

static void write_limit(const char *mb16)
{
	char path[160];
	int fd;

	snprintf(path, sizeof(path), "%s/memory.limit_in_bytes", cg_path);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, mb16, strlen(mb16)), (ssize_t)strlen(mb16));
	close(fd);
}

/* Reads records until a report for pid is ready (2 s at most). */
static bool find_report(struct kmsg_reader *rd, struct kmsg_assembler *a,
			int pid, struct oom_report *ret)
{
	uint64_t end = now_monotonic_us() + 2000000;
	struct kmsg_record rec;
	int n;

	while (now_monotonic_us() < end) {
		while ((n = kmsg_reader_next(rd, &rec)) != 0)
			if (n > 0)
				cr_assert_geq(kmsg_assembler_feed(a, &rec), 0);
		kmsg_assembler_flush(a, false);
		while (kmsg_assembler_pop(a, ret) == 1) {
			if (ret->n_victims && ret->victims[0].pid == pid)
				return true;
			oom_report_release(ret);
		}
		usleep(20000);
	}
	return false;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && strcmp(s + n - t, tail) == 0 &&
	       (n == t || s[n - t - 1] == '/' || tail[0] == '/');
}

/* cppcheck-suppress unknownMacro */
Test(kmsg_live, real_oom_kill, .fini = cg_cleanup)
{
	struct kmsg_reader *rd;
	struct kmsg_assembler *a;
	struct oom_report r;
	int status;
	pid_t pid;

	need_root();
	if (access(CG_ROOT "/memory.limit_in_bytes", F_OK) < 0)
		cr_skip_test("no cgroup v1 memory controller at " CG_ROOT);
	snprintf(cg_path, sizeof(cg_path), CG_ROOT "/oomlens-test-kmsg-it%d",
		 getpid());
	cr_assert_eq(mkdir(cg_path, 0755), 0, "mkdir %s: %s", cg_path,
		     strerror(errno));
	write_limit("16777216");
	cr_assert_eq(kmsg_reader_open(root_fd, true, false, 0, &rd), 0);
	a = kmsg_assembler_new();
	pid = start_victim();
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		  "victim killed by the OOM killer (status %#x)", status);
	cr_assert(find_report(rd, a, pid, &r), "report for pid %d", pid);
	if (r.ratelimited) {
		/* Other kills on the host just before: the header was
		 * suppressed, only the kill line is there. */
		cr_assert_not(r.complete);
	} else {
		cr_assert(r.complete);
		/* the kernel prints its own frame: our cgroup, below the
		 * subtree a container's mount shows as its root (e.g.
		 * /libpod_parent/libpod-<id>), which the agent translates
		 * (cgroup_mount.c) */
		cr_assert(ends_with(r.task_memcg, cg_path + strlen(CG_ROOT)),
			  "task_memcg %s names %s", r.task_memcg,
			  cg_path + strlen(CG_ROOT));
		cr_assert_eq(r.trigger.pid, pid);
		cr_assert_eq(r.memcg.limit_kb, 16384);
		cr_assert_geq(r.victims[0].anon_rss_kb, 8192);
	}
	oom_report_release(&r);
	kmsg_assembler_free(a);
	kmsg_reader_free(rd);
}
