/* SPDX-License-Identifier: Apache-2.0 */
/* The host context: one root prefix (--host-root) opened once in main() and
 * turned into directory fds. Nothing below it hard-codes /proc or
 * /sys/fs/cgroup; tests point it at fixture trees. */
#pragma once

#include <stdbool.h>

struct host {
	int root_fd;   /* the host root itself */
	int proc_fd;   /* <root>/proc, or -1 when absent */
	int cgroup_fd; /* <root>/sys/fs/cgroup, or -1 when absent */
	char *root;    /* the prefix as given ("/" by default) */
};

/* Opens root and the fds below it. Absent proc or cgroup dirs give -1
 * (not an error); an unopenable root gives -errno. */
int host_open(const char *root, struct host *ret);
/* host_open() from a root directory already open (an fd opened under
 * other credentials, e.g. /proc/<pid>/root through procfs_open_at): the
 * host owns root_fd afterwards, also on failure; root names it (logs). */
int host_adopt(int root_fd, const char *root, struct host *ret);
void host_close(struct host *h);

/* Opens /proc/<pid> as a directory fd. -ESRCH when the process is gone. */
int host_open_pid(const struct host *h, int pid);
