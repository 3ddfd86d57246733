/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <stdio.h>

#include "base/host.h"
#include "base/util.h"

static int open_dir_at(int dirfd, const char *path)
{
	return openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int host_open(const char *root, struct host *ret)
{
	int fd;

	if (!root || !*root)
		root = "/";
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return host_adopt(fd, root, ret);
}

int host_adopt(int root_fd, const char *root, struct host *ret)
{
	struct host h = {.root_fd = root_fd, .proc_fd = -1, .cgroup_fd = -1};

	h.root = strdup(root);
	if (!h.root) {
		close(h.root_fd);
		return -ENOMEM;
	}
	h.proc_fd = open_dir_at(h.root_fd, "proc");
	h.cgroup_fd = open_dir_at(h.root_fd, "sys/fs/cgroup");
	*ret = h;
	return 0;
}

void host_close(struct host *h)
{
	if (!h)
		return;
	closep(&h->root_fd);
	closep(&h->proc_fd);
	closep(&h->cgroup_fd);
	h->root_fd = h->proc_fd = h->cgroup_fd = -1;
	free(h->root);
	h->root = NULL;
}

int host_open_pid(const struct host *h, int pid)
{
	char path[32];
	int fd;

	if (h->proc_fd < 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "%d", pid);
	fd = open_dir_at(h->proc_fd, path);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return fd;
}
