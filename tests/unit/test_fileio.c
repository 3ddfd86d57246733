/* SPDX-License-Identifier: Apache-2.0 */
/* fileio against what a pod can plant in a directory it shares with us:
 * symlinks at temp names and parents, FIFOs, "..". Trees are built in a
 * temporary directory (no live /proc or /sys). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/fileio.h"

static char root[64];
static int rootfd = -1;

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/oomlens-fileio-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(rootfd, 0);
	fileio_walk_only = false;
}

static void teardown(void)
{
	close(rootfd);
	rm_rf_at(AT_FDCWD, root);
}

static void put(const char *rel, const char *text)
{
	int fd = openat(rootfd, rel, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	cr_assert_geq(fd, 0, "%s", rel);
	cr_assert_eq(write_all(fd, text, strlen(text)), 0);
	close(fd);
}

static void expect(const char *rel, const char *text)
{
	struct strbuf sb;

	strbuf_init(&sb, 4096);
	cr_assert_eq(read_file_at(rootfd, rel, 4096, &sb), 0, "%s", rel);
	cr_assert_str_eq(sb.buf, text, "%s", rel);
	strbuf_release(&sb);
}

/* The finding: the old temp name ".<name>.tmp.<pid>" planted as a symlink
 * to a root-only file made root overwrite that file. */
Test(fileio, planted_temp_symlink_is_not_written_through, .init = setup,
     .fini = teardown)
{
	char tmp[64];

	put("secret", "root only\n");
	snprintf(tmp, sizeof(tmp), ".out.json.tmp.%d", (int)getpid());
	cr_assert_eq(symlinkat("secret", rootfd, tmp), 0);
	cr_assert_eq(write_file_atomic_at(rootfd, "out.json", "{}", 2, 0640),
		     0);
	expect("secret", "root only\n");
	expect("out.json", "{}");
}

/* A symlink at the final name is replaced, not followed. */
Test(fileio, symlink_at_target_is_replaced, .init = setup, .fini = teardown)
{
	struct stat st;

	put("secret", "root only\n");
	cr_assert_eq(symlinkat("secret", rootfd, "out.json"), 0);
	cr_assert_eq(write_file_atomic_at(rootfd, "out.json", "{}", 2, 0640),
		     0);
	expect("secret", "root only\n");
	cr_assert_eq(fstatat(rootfd, "out.json", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0640);
}

static void symlinked_parent(void)
{
	cr_assert_eq(mkdirat(rootfd, "elsewhere", 0700), 0);
	cr_assert_eq(mkdirat(rootfd, "spool", 0700), 0);
	cr_assert_eq(symlinkat("../elsewhere", rootfd, "spool/snapshots"), 0);
	cr_assert_eq(write_file_atomic_at(rootfd, "spool/snapshots/x.json",
					  "{}", 2, 0640),
		     -ELOOP);
	cr_assert_eq(mkdir_p_at(rootfd, "spool/snapshots/t.tmp", 0750), -ELOOP);
	cr_assert_eq(faccessat(rootfd, "elsewhere/x.json", F_OK, 0), -1);
	cr_assert_eq(faccessat(rootfd, "elsewhere/t.tmp", F_OK, 0), -1);
	/* A real directory still works. */
	cr_assert_eq(mkdir_p_at(rootfd, "spool/real/a", 0750), 0);
	cr_assert_eq(write_file_atomic_at(rootfd, "spool/real/a/x.json", "1", 1,
					  0640),
		     0);
	expect("spool/real/a/x.json", "1");
}

Test(fileio, symlinked_parent_refused_openat2, .init = setup, .fini = teardown)
{
	symlinked_parent();
}

Test(fileio, symlinked_parent_refused_walk, .init = setup, .fini = teardown)
{
	fileio_walk_only = true;
	symlinked_parent();
}

static void untrusted_opens(void)
{
	struct strbuf sb;
	uint64_t t0 = now_monotonic_us();
	int fd;

	cr_assert_eq(mkdirat(rootfd, "tmp", 0700), 0);
	cr_assert_eq(mkdirat(rootfd, "tmp/hsperfdata_app", 0700), 0);
	cr_assert_eq(mkfifoat(rootfd, "tmp/hsperfdata_app/42", 0600), 0);
	put("tmp/hsperfdata_app/43", "0123456789");
	cr_assert_eq(symlinkat("43", rootfd, "tmp/hsperfdata_app/44"), 0);
	cr_assert_eq(symlinkat("hsperfdata_app", rootfd, "tmp/link"), 0);

	/* A FIFO: refused at once, no writer needed. */
	cr_assert_eq(
		open_untrusted_at(rootfd, "tmp/hsperfdata_app/42", O_RDONLY),
		-EINVAL);
	cr_assert_lt(now_monotonic_us() - t0, 2000000);
	cr_assert_eq(
		open_untrusted_at(rootfd, "tmp/hsperfdata_app/44", O_RDONLY),
		-ELOOP);
	cr_assert_eq(open_untrusted_at(rootfd, "tmp/link/43", O_RDONLY),
		     -ELOOP);
	cr_assert_eq(
		open_untrusted_at(rootfd, "tmp/link", O_RDONLY | O_DIRECTORY),
		-ELOOP);
	cr_assert_eq(open_untrusted_at(rootfd, "tmp/../tmp/hsperfdata_app/43",
				       O_RDONLY),
		     -EXDEV);
	cr_assert_eq(open_untrusted_at(rootfd, "/etc/passwd", O_RDONLY),
		     -EXDEV);
	cr_assert_eq(open_untrusted_at(rootfd, "tmp", O_RDONLY), -EISDIR);
	fd = open_untrusted_at(rootfd, "tmp/hsperfdata_app",
			       O_RDONLY | O_DIRECTORY);
	cr_assert_geq(fd, 0);
	close(fd);

	strbuf_init(&sb, 4096);
	cr_assert_eq(read_untrusted_at(rootfd, "tmp/hsperfdata_app/43", 4,
				       UINT64_MAX, &sb),
		     -E2BIG);
	cr_assert_str_eq(sb.buf, "0123");
	strbuf_reset(&sb);
	cr_assert_eq(read_untrusted_at(rootfd, "./tmp/hsperfdata_app/43", 100,
				       UINT64_MAX, &sb),
		     0);
	cr_assert_str_eq(sb.buf, "0123456789");
	strbuf_reset(&sb);
	cr_assert_eq(read_untrusted_at(rootfd, "tmp/hsperfdata_app/43", 100, t0,
				       &sb),
		     -ETIME, "a deadline already passed");
	cr_assert_eq(read_untrusted_at(rootfd, "tmp/hsperfdata_app/42", 100,
				       UINT64_MAX, &sb),
		     -EINVAL);
	strbuf_release(&sb);
}

Test(fileio, untrusted_open_openat2, .init = setup, .fini = teardown)
{
	untrusted_opens();
}

Test(fileio, untrusted_open_walk, .init = setup, .fini = teardown)
{
	fileio_walk_only = true;
	untrusted_opens();
}

Test(fileio, mkdir_p_relative_and_dotdot, .init = setup, .fini = teardown)
{
	struct stat st;

	cr_assert_eq(mkdir_p_at(rootfd, "a/b/c", 0750), 0);
	cr_assert_eq(mkdir_p_at(rootfd, "a/b/c", 0750), 0, "idempotent");
	cr_assert_eq(fstatat(rootfd, "a/b/c", &st, 0), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(mkdir_p_at(rootfd, "a/../../x", 0750), -EXDEV);
	put("a/file", "");
	cr_assert_eq(mkdir_p_at(rootfd, "a/file/d", 0750), -ENOTDIR);
}

/* The fd of the last directory, from the walk that made it: a file
 * created through it lands there; links, files and ".." on the way are
 * refused as mkdir_p_at refuses them. */
Test(fileio, mkdir_p_open_at_returns_the_last_directory, .init = setup,
     .fini = teardown)
{
	struct stat st;
	int fd = mkdir_p_open_at(rootfd, "x/y", 0750), f;

	cr_assert_geq(fd, 0, "%s", strerror(-fd));
	f = openat(fd, "z", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	cr_assert_geq(f, 0, "%s", strerror(errno));
	close(f);
	close(fd);
	cr_assert_eq(fstatat(rootfd, "x/y/z", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISREG(st.st_mode));
	fd = mkdir_p_open_at(rootfd, ".", 0750);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(symlinkat("/", rootfd, "x/link"), 0);
	cr_assert_eq(mkdir_p_open_at(rootfd, "x/link/d", 0750), -ELOOP);
	cr_assert_eq(mkdir_p_open_at(rootfd, "x/y/z/d", 0750), -ENOTDIR);
	cr_assert_eq(mkdir_p_open_at(rootfd, "x/../..", 0750), -EXDEV);
	cr_assert_eq(mkdir_p_open_at(rootfd, "/tmp", 0750), -EXDEV);
}

/* Lists names in dirfd/path; the count of entries other than . and .. */
static int count_entries(DIR *d)
{
	struct dirent *de;
	int n = 0;

	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

Test(fileio, opendir_at_lists_without_following_or_taking_the_fd, .init = setup,
     .fini = teardown)
{
	DIR *d = NULL, *again = NULL;

	cr_assert_eq(mkdir_p_at(rootfd, "q/a", 0750), 0);
	cr_assert_eq(mkdir_p_at(rootfd, "q/b", 0750), 0);
	cr_assert_eq(opendir_at(rootfd, "q", &d), 0);
	cr_assert_eq(count_entries(d), 2);
	/* "." is a descriptor of its own: two listings, rootfd still open */
	cr_assert_eq(opendir_at(rootfd, ".", &d), 0);
	cr_assert_eq(opendir_at(rootfd, ".", &again), 0);
	cr_assert_eq(count_entries(d), 1);
	cr_assert_eq(count_entries(again), 1);
	cr_assert_eq(fcntl(rootfd, F_GETFD) >= 0, 1);
	cr_assert_eq(symlinkat("q", rootfd, "link"), 0);
	/* O_DIRECTORY with O_NOFOLLOW: a symlink is not a directory */
	cr_assert_eq(opendir_at(rootfd, "link", &d), -ENOTDIR);
	cr_assert_eq(write_file_atomic_at(rootfd, "f", "x", 1, 0640), 0);
	cr_assert_eq(opendir_at(rootfd, "f", &d), -ENOTDIR);
	cr_assert_eq(opendir_at(rootfd, "none", &d), -ENOENT);
}

/* A text written in pieces (the sidecar's timeline.json, a chunk at a
 * time): a fill that fails midway leaves the file as it was and no temp
 * file behind; one that succeeds replaces it whole. */
struct pieces {
	const char *const *text;
	size_t n, fail_at; /* fail before piece fail_at (n: never) */
	size_t written;
};

static int fill_pieces(int fd, void *arg)
{
	struct pieces *p = arg;

	for (size_t i = 0; i < p->n; i++) {
		if (i == p->fail_at)
			return -ENOSPC;
		cr_assert_eq(write_all(fd, p->text[i], strlen(p->text[i])), 0);
		p->written++;
	}
	return 0;
}

/* The entries of the test's directory (a temp file is one). */
static int entries(void)
{
	DIR *d;

	cr_assert_eq(opendir_at(rootfd, ".", &d), 0);
	return count_entries(d);
}

Test(fileio, atomic_fill_failing_midway_keeps_the_old_file, .init = setup,
     .fini = teardown)
{
	static const char *const text[] = {"{\"samples\":[", "{\"t\":1}",
					   ",{\"t\":2}", "]}"};
	struct pieces p = {.text = text, .n = 4, .fail_at = 2};
	struct stat st;

	cr_assert_eq(
		write_file_atomic_at(rootfd, "timeline.json", "old", 3, 0640),
		0);
	cr_assert_eq(write_file_atomic_fill_at(rootfd, "timeline.json", 0640,
					       fill_pieces, &p),
		     -ENOSPC);
	cr_assert_eq(p.written, 2, "two pieces went to the temp file");
	expect("timeline.json", "old");
	cr_assert_eq(entries(), 1, "the temp file is removed");

	p = (struct pieces){.text = text, .n = 4, .fail_at = 4};
	cr_assert_eq(write_file_atomic_fill_at(rootfd, "timeline.json", 0640,
					       fill_pieces, &p),
		     0);
	expect("timeline.json", "{\"samples\":[{\"t\":1},{\"t\":2}]}");
	cr_assert_eq(entries(), 1);
	cr_assert_eq(fstatat(rootfd, "timeline.json", &st, 0), 0);
	cr_assert_eq(st.st_mode & 07777, 0640);
}

/* is_regular_at: a regular file is one; a symlink to one, a directory, a
 * FIFO and a missing name are not. */
Test(fileio, is_regular_at_follows_no_symlink, .init = setup, .fini = teardown)
{
	put("file", "x");
	cr_assert_eq(symlinkat("file", rootfd, "link"), 0);
	cr_assert_eq(mkdirat(rootfd, "dir", 0700), 0);
	cr_assert_eq(mkfifoat(rootfd, "fifo", 0600), 0);
	cr_assert(is_regular_at(rootfd, "file"));
	cr_assert_not(is_regular_at(rootfd, "link"));
	cr_assert_not(is_regular_at(rootfd, "dir"));
	cr_assert_not(is_regular_at(rootfd, "fifo"));
	cr_assert_not(is_regular_at(rootfd, "missing"));
}
