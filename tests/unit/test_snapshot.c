/* SPDX-License-Identifier: Apache-2.0 */
/* snapshot_process on a fake host root (tests/fixtures/smaps/hostile copied
 * under <tmp>/proc/<pid>/): what it writes, with which modes, and that the
 * command line is redacted. No live /proc. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/host.h"
#include "forensics/snapshot.h"

#define FIX "tests/fixtures/smaps/hostile/"

static char root[64];

static int fake_host(void)
{
	static const char *const files[] = {"status", "cmdline", "smaps",
					    "smaps_rollup"};
	int dfd, pid = -1;
	struct strbuf sb;

	snprintf(root, sizeof(root), "/tmp/oomlens-snap-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	dfd = open(root, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(mkdir_p_at(dfd, "proc/4711", 0755), 0);
	cr_assert_eq(mkdir_p_at(dfd, "out", 0755), 0);
	strbuf_init(&sb, 4u << 20);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char src[128], dst[128];

		snprintf(src, sizeof(src), FIX "%s", files[i]);
		snprintf(dst, sizeof(dst), "proc/4711/%s", files[i]);
		strbuf_reset(&sb);
		cr_assert_eq(read_file_at(AT_FDCWD, src, 4u << 20, &sb), 0);
		cr_assert_eq(
			write_file_atomic_at(dfd, dst, sb.buf, sb.len, 0644),
			0);
	}
	cr_assert_eq(write_file_atomic_at(dfd, "proc/4711/cgroup",
					  "0::/demo/app\n", 13, 0644),
		     0);
	strbuf_release(&sb);
	pid = 4711;
	close(dfd);
	return pid;
}

/* Finding: snapshot directories were 0755 and files 0644, pmap.txt of
 * root processes included (which /proc restricts to ptrace-capable
 * readers). */
Test(snapshot, files_0640_dirs_0750_cmdline_redacted)
{
	struct snapshot_opts o = {.skip_jvm = true};
	struct snapshot_result res;
	struct host h;
	struct strbuf sb;
	struct stat st;
	int pid = fake_host(), out;
	char path[128];
	mode_t old = umask(022);

	cr_assert_eq(host_open(root, &h), 0);
	out = openat(h.root_fd, "out", O_RDONLY | O_DIRECTORY);
	cr_assert_eq(snapshot_process(&h, pid, out, &o, &res), 0);
	umask(old);
	cr_assert_eq(fstatat(out, "4711", &st, 0), 0);
	cr_assert_eq(st.st_mode & 07777, 0750, "dir mode %o", st.st_mode);
	for (const char *const *f =
		     (const char *const[]){"status", "cmdline.txt", "pmap.txt",
					   "snapshot.json", "classes.json",
					   NULL};
	     *f; f++) {
		snprintf(path, sizeof(path), "4711/%s", *f);
		cr_assert_eq(fstatat(out, path, &st, 0), 0, "%s", *f);
		cr_assert_eq(st.st_mode & 07777, 0640, "%s mode %o", *f,
			     st.st_mode);
	}
	strbuf_init(&sb, 1u << 20);
	cr_assert_eq(read_file_at(out, "4711/cmdline.txt", 1u << 20, &sb), 0);
	cr_assert_str_eq(sb.buf, "/usr/bin/python3 /tmp/hostile.py "
				 "--password=*** --api-key *** -Dx.token=***");
	strbuf_reset(&sb);
	cr_assert_eq(read_file_at(out, "4711/pmap.txt", 1u << 20, &sb), 0);
	cr_assert_null(strstr(sb.buf, "hunter2"));
	strbuf_release(&sb);
	close(out);
	host_close(&h);
	rm_rf_at(AT_FDCWD, root);
}
