/* SPDX-License-Identifier: Apache-2.0 */
/* Live processes that exit while the sidecar reads them (touches the live
 * /proc): between maps and smaps, mid-way through a large smaps, before
 * a snapshot. Nothing may crash; what was read is returned and flagged. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

#include "base/fileio.h"
#include "base/host.h"
#include "kernel/procfs.h"
#include "kernel/smaps.h"
#include "forensics/snapshot.h"

static struct host h;

static void setup(void)
{
	cr_assert_eq(host_open("/", &h), 0);
}

static void teardown(void)
{
	host_close(&h);
}

TestSuite(sidecar_exit_live, .init = setup, .fini = teardown);

static pid_t spawn(char *const argv[])
{
	int pfd[2];
	pid_t pid;
	char c;

	cr_assert_eq(pipe(pfd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		close(pfd[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	/* The victims print one line when ready. */
	cr_assert_eq(read(pfd[0], &c, 1), 1, "%s did not start", argv[0]);
	close(pfd[0]);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static const char *victim(const char *name)
{
	static char path[4096];
	const char *b = getenv("OOMLENS_BUILD");

	snprintf(path, sizeof(path), "%s/victims/%s", b ? b : "build", name);
	if (access(path, X_OK) != 0)
		cr_skip_test("victim %s not built (make victims)", path);
	return path;
}

Test(sidecar_exit_live, exit_between_maps_and_smaps)
{
	char *argv[] = {(char *)victim("leak"), "--total-mb", "1", NULL};
	pid_t pid = spawn(argv);
	int fd = host_open_pid(&h, pid);
	struct strbuf maps;
	struct smaps s;
	struct proc_status st;

	cr_assert_geq(fd, 0);
	strbuf_init(&maps, 1u << 20);
	cr_assert_eq(read_file_at(fd, "maps", 1u << 20, &maps), 0);
	cr_assert_gt(maps.len, 100);
	reap(pid);
	smaps_init(&s);
	cr_assert_eq(smaps_read_at(fd, "smaps", &s), -ESRCH);
	cr_assert_eq(s.n, 0);
	cr_assert_eq(procfs_read_status(fd, &st), -ESRCH);
	cr_assert_eq(host_open_pid(&h, pid), -ESRCH);
	close(fd);
	strbuf_release(&maps);
}

struct reader {
	int fd;
	int r;
	struct smaps s;
};

static void *read_smaps(void *arg)
{
	struct reader *rd = arg;

	smaps_init(&rd->s);
	rd->r = smaps_read_at(rd->fd, "smaps", &rd->s);
	return NULL;
}

/* 20,000 mappings take tens of ms to read; the process is killed during
 * the read. Whatever the timing: no crash, and a table without the
 * truncated flag is complete. */
Test(sidecar_exit_live, exit_during_large_smaps, .timeout = 60)
{
	char *argv[] = {(char *)victim("mmap_heavy"), "--maps", "20000", NULL};
	int cut = 0, complete = 0, gone = 0;

	for (int round = 0; round < 6; round++) {
		pid_t pid = spawn(argv);
		struct reader rd = {.fd = host_open_pid(&h, pid)};
		pthread_t t;

		cr_assert_geq(rd.fd, 0);
		cr_assert_eq(pthread_create(&t, NULL, read_smaps, &rd), 0);
		usleep((useconds_t)(round * 4000));
		reap(pid);
		pthread_join(t, NULL);
		if (rd.r == -ESRCH) {
			gone++;
		} else {
			cr_assert_eq(rd.r, 0, "unexpected %d", rd.r);
			if (rd.s.truncated) {
				cut++;
			} else {
				cr_assert_geq(rd.s.n, 20000);
				complete++;
			}
		}
		smaps_release(&rd.s);
		close(rd.fd);
	}
	cr_log_info("complete %d, cut %d, gone %d", complete, cut, gone);
	cr_assert_eq(complete + cut + gone, 6);
}

Test(sidecar_exit_live, snapshot_of_a_gone_process)
{
	char *argv[] = {(char *)victim("leak"), "--total-mb", "1", NULL};
	pid_t pid = spawn(argv);
	char dir[] = "/tmp/oomlens-itest-snap-XXXXXX";
	int dfd;

	cr_assert_not_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	reap(pid);
	cr_assert_eq(snapshot_process(&h, pid, dfd, NULL, NULL), -ESRCH);
	close(dfd);
	rm_rf_at(AT_FDCWD, dir);
}

Test(sidecar_exit_live, snapshot_of_a_live_process)
{
	char *argv[] = {(char *)victim("leak"), "--total-mb", "4", NULL};
	pid_t pid = spawn(argv);
	char dir[] = "/tmp/oomlens-itest-snap-XXXXXX", sub[64];
	struct snapshot_result res;
	int dfd, pfd;

	cr_assert_not_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(snapshot_process(&h, pid, dfd, NULL, &res), 0);
	cr_assert_not(res.truncated);
	cr_assert_gt(res.rss_kb, 1000);
	cr_assert_str_eq(res.name, "leak");
	snprintf(sub, sizeof(sub), "%d", pid);
	pfd = openat(dfd, sub, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(pfd, 0);
	for (const char *const *f =
		     (const char *const[]){"status", "cmdline.txt", "cgroup",
					   "smaps_rollup", "pmap.txt",
					   "classes.json", "arenas.json",
					   "snapshot.json", NULL};
	     *f; f++)
		cr_assert_eq(faccessat(pfd, *f, F_OK, 0), 0, "missing %s", *f);
	close(pfd);
	close(dfd);
	reap(pid);
	rm_rf_at(AT_FDCWD, dir);
}

/* A symlink planted where the snapshot directory goes is not followed. */
Test(sidecar_exit_live, snapshot_refuses_symlinked_destination)
{
	char *argv[] = {(char *)victim("leak"), "--total-mb", "1", NULL};
	pid_t pid = spawn(argv);
	char dir[] = "/tmp/oomlens-itest-snap-XXXXXX";
	char other[] = "/tmp/oomlens-itest-other-XXXXXX";
	char link[128];
	int dfd;

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_not_null(mkdtemp(other));
	snprintf(link, sizeof(link), "%s/%d", dir, pid);
	cr_assert_eq(symlink(other, link), 0);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_lt(snapshot_process(&h, pid, dfd, NULL, NULL), 0);
	cr_assert_eq(rmdir(other), 0, "nothing was written through the link");
	close(dfd);
	reap(pid);
	rm_rf_at(AT_FDCWD, dir);
}
