/* SPDX-License-Identifier: Apache-2.0 */
/* File I/O relative to directory fds (crun's read_all_file_at idea). */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

/* Modes of what we write about processes (snapshots, spools, reports):
 * they hold command lines and mappings /proc shows only to ptrace-capable
 * readers, so neither is world-readable. The owner is the writer; its
 * group (the agent's, when the spool is shared) may read. */
#define MODE_PRIVATE_FILE 0640
#define MODE_PRIVATE_DIR 0750

/* Opens dirfd/path, a file a pod may have written (a spool, something under
 * /proc/<pid>/root, an unpacked bundle): path must be relative with no ".."
 * (-EXDEV), no component may be a symlink (-ELOOP; openat2
 * RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH, else a walk of O_NOFOLLOW directory
 * fds), and O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC|O_NOCTTY are added to flags so a
 * planted FIFO never blocks the open. Unless flags hold O_DIRECTORY or O_PATH
 * the result must be a regular file: a directory gives -EISDIR, a FIFO,
 * socket or device -EINVAL. Returns the fd (caller closes) or -errno. */
int open_untrusted_at(int dirfd, const char *path, int flags);

/* open_untrusted_at, then reads at most max bytes into sb (appending) as
 * read_file_at does (-E2BIG beyond max, what was read kept). deadline_us
 * (now_monotonic_us() clock, UINT64_MAX none) is checked between chunks:
 * -ETIME once passed. Never blocks on a FIFO. */
int read_untrusted_at(int dirfd, const char *path, size_t max,
		      uint64_t deadline_us, struct strbuf *sb);

/* Tests only: skip openat2 and exercise the component walk. */
extern bool fileio_walk_only;

/* Reads the whole file at dirfd/path (O_RDONLY|O_CLOEXEC|O_NOCTTY) into sb,
 * appending. max bounds the bytes read: beyond it the read stops and
 * -E2BIG is returned with what was read kept in sb. A read that fails midway
 * (ESRCH from a vanished process) returns the negative errno with the bytes
 * read so far kept. Blocks on disk I/O only. */
int read_file_at(int dirfd, const char *path, size_t max, struct strbuf *sb);

/* The read of read_file_at() from an open fd: at most max bytes appended
 * to sb, -E2BIG beyond (what was read kept). */
int read_fd_max(int fd, size_t max, struct strbuf *sb);

/* Same but the last component is a pod's: opened O_NOFOLLOW|O_NONBLOCK
 * (-ELOOP on a symlink, a FIFO never blocks) and only a regular file is
 * read (-EISDIR, -EINVAL otherwise). dirfd itself must be trusted; see
 * read_untrusted_at for a whole path. */
int read_file_at_nofollow(int dirfd, const char *path, size_t max,
			  struct strbuf *sb);

/* Reads a small file and strips trailing newlines. */
int read_line_at(int dirfd, const char *path, struct strbuf *sb);

/* Writes data to dirfd/path atomically: a temp file in the same directory,
 * fsync, rename, fsync of the directory. mode as for open(2). The temp name
 * is ".<name>.tmp.<random>", created O_EXCL|O_NOFOLLOW (a planted name is
 * skipped, never written through). A relative path's directories are opened
 * without following symlinks (-ELOOP); an absolute path's are the
 * operator's and resolved as given. */
int write_file_atomic_at(int dirfd, const char *path, const void *data,
			 size_t len, unsigned mode);

/* The same, for a text made piece by piece: fill(fd, arg) writes the whole
 * content to fd (the temp file), in as many writes as it likes, and
 * returns >= 0 or -errno. Nothing needs to be in memory at once. When
 * fill (or the fsync, or the rename) fails, the temp file is removed and
 * path is left as it was; the error is returned. */
int write_file_atomic_fill_at(int dirfd, const char *path, unsigned mode,
			      int (*fill)(int fd, void *arg), void *arg);

/* Writes all of buf to fd, retrying on EINTR and short writes. */
int write_all(int fd, const void *buf, size_t len);

/* Whether dirfd/path is a regular file: a symlink as its last component
 * is not followed, and is not one. */
bool is_regular_at(int dirfd, const char *path);

/* mkdir -p relative to dirfd: every component must end up a real directory,
 * a symlink among them gives -ELOOP and nothing is created through it; ".."
 * gives -EXDEV. An absolute path (with AT_FDCWD) is the operator's: its
 * symlinks are followed. */
int mkdir_p_at(int dirfd, const char *path, unsigned mode);

/* mkdir_p_at for a relative path (an absolute one, or "..", gives
 * -EXDEV), returning an O_PATH fd of its last directory, taken in the same
 * walk that made and checked it: usable as the dirfd of openat, mkdirat.
 * The caller closes it. */
int mkdir_p_open_at(int dirfd, const char *path, unsigned mode);

/* Opens the directory dirfd/path for readdir ("." for dirfd itself: a
 * fresh descriptor, so the listing's position is its own and dirfd stays
 * the caller's), O_NOFOLLOW on the last component. *ret is closedir()'d by
 * the caller. Returns 0 or -errno (-ENOTDIR for a file or a symlink). */
int opendir_at(int dirfd, const char *path, DIR **ret);

/* rm -rf relative to dirfd; never follows symlinks. -ENOENT is success. */
int rm_rf_at(int dirfd, const char *path);
