/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by cgroup.c and cgroup_watch.c; not a public API. */
#pragma once

#include <stddef.h>

#include "kernel/cgroup.h"

/* Turns a hierarchy path ("/", "/a/b") into one relative to the hierarchy's
 * root fd ("." or "a/b") in buf. -EINVAL for a path that does not start with
 * '/', has empty, "." or ".." components; -ENAMETOOLONG when it does not
 * fit. */
int cgroup_relpath(const char *path, char *buf, size_t size);

/* Opens the cgroup directory at path (O_DIRECTORY|O_NOFOLLOW on the last
 * component). Returns the fd or -errno (-ENOENT when gone). */
int cgroup_open_dir(const struct cgroup_fs *fs, const char *path);

/* The file that carries oom_kill for one cgroup: memory.oom_control (v1),
 * memory.events.local when the kernel has it, else memory.events (v2). */
const char *cgroup_oom_kill_file(int dirfd, enum cgroup_mode mode);

/* Reads the oom_kill counter of the cgroup directory dirfd. */
int cgroup_read_oom_kill(int dirfd, enum cgroup_mode mode, uint64_t *ret);
