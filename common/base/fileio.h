/* SPDX-License-Identifier: Apache-2.0 */
/* File I/O relative to directory fds (crun's read_all_file_at idea). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

/* Reads the whole file at dirfd/path (O_RDONLY|O_CLOEXEC|O_NOCTTY) into sb,
 * appending. max bounds the bytes read: beyond it the read stops and
 * -E2BIG is returned with what was read kept in sb. A read that fails midway
 * (ESRCH from a vanished process) returns the negative errno with the bytes
 * read so far kept. Blocks on disk I/O only. */
int read_file_at(int dirfd, const char *path, size_t max, struct strbuf *sb);

/* Same but opened with O_NOFOLLOW. */
int read_file_at_nofollow(int dirfd, const char *path, size_t max,
			  struct strbuf *sb);

/* Reads a small file and strips trailing newlines. */
int read_line_at(int dirfd, const char *path, struct strbuf *sb);

/* Writes data to dirfd/path atomically: a temp file in the same directory,
 * fsync, rename, fsync of the directory. mode as for open(2). */
int write_file_atomic_at(int dirfd, const char *path, const void *data,
			 size_t len, unsigned mode);

/* Writes all of buf to fd, retrying on EINTR and short writes. */
int write_all(int fd, const void *buf, size_t len);

/* mkdir -p relative to dirfd. */
int mkdir_p_at(int dirfd, const char *path, unsigned mode);

/* rm -rf relative to dirfd; never follows symlinks. -ENOENT is success. */
int rm_rf_at(int dirfd, const char *path);
