/* SPDX-License-Identifier: Apache-2.0 */
/* The uploader: oomlens-sidecar-upload (sidecar/upload/), a program apart
 * that holds the TLS stack and the service account, started once by run
 * in a pod and told of each new heavy snapshot through a socket, its
 * stdin (one byte; a full socket already says it). Closing our end stops
 * it once it has uploaded what is pending. This side never blocks on it:
 * a refused upload (401/403) ends the uploader, and the bytes sent after
 * go nowhere. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "pod_upload.h"

#define UPLOADER "oomlens-sidecar-upload"
/* What the uploader is given at the stop: its upload in progress, then
 * the pending one, within a pod's default 30 s grace period. */
#define STOP_WAIT_MS 25000

struct pod_upload {
	pid_t pid;
	int fd; /* our end of its stdin */
};

/* The uploader's path: beside /proc/self/exe. */
static int uploader_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n < 0)
		return -errno;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	if ((size_t)snprintf(buf, len, "%s/" UPLOADER, exe) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int pod_upload_start(const struct pod_upload_info *info,
		     const struct cli_globals *g, struct pod_upload **ret)
{
	char path[PATH_MAX];
	const char *argv[24];
	struct pod_upload *u;
	posix_spawn_file_actions_t fa;
	int sv[2], r, n = 0;
	pid_t pid;

	*ret = NULL;
	r = uploader_path(path, sizeof(path));
	if (r == 0 && access(path, X_OK) < 0)
		r = -errno;
	if (r < 0) {
		log_warn("no %s beside this program (%s): snapshots stay in "
			 "the spool (the agent reads it through the node), "
			 "no OOMBundle upload",
			 UPLOADER, strerror(-r));
		return 0;
	}
	argv[n++] = path;
	argv[n++] = "run";
	argv[n++] = "--namespace";
	argv[n++] = info->ns;
	argv[n++] = "--pod";
	argv[n++] = info->pod;
	argv[n++] = "--uid";
	argv[n++] = info->uid;
	argv[n++] = "--node";
	argv[n++] = info->node;
	argv[n++] = "--container";
	argv[n++] = info->container;
	argv[n++] = "--spool";
	argv[n++] = info->spool;
	argv[n++] = "--cgroup";
	argv[n++] = info->cgroup;
	argv[n++] = "--log-level";
	argv[n++] = log_level_name(g->log_level);
	if (g->log_json)
		argv[n++] = "--log-json";
	if (g->no_seccomp)
		argv[n++] = "--no-seccomp";
	argv[n] = NULL;

	u = calloc(1, sizeof(*u));
	if (!u || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		log_warn("cannot start %s: %s, no OOMBundle upload", UPLOADER,
			 strerror(u ? errno : ENOMEM));
		free(u);
		return 0;
	}
	/* posix_spawn: a vfork-like start, nothing of this mlockall'd
	 * process copied; the uploader gets stdin (our socket's other end),
	 * stdout and stderr, nothing else */
	r = -posix_spawn_file_actions_init(&fa);
	if (r == 0) {
		r = -posix_spawn_file_actions_adddup2(&fa, sv[1], STDIN_FILENO);
		if (r == 0)
			r = -posix_spawn_file_actions_addclosefrom_np(&fa, 3);
		if (r == 0)
			r = -posix_spawn(&pid, path, &fa, NULL,
					 (char *const *)argv, environ);
		posix_spawn_file_actions_destroy(&fa);
	}
	close(sv[1]);
	if (r < 0) {
		log_warn("cannot start %s: %s, no OOMBundle upload", UPLOADER,
			 strerror(-r));
		close(sv[0]);
		free(u);
		return 0;
	}
	u->pid = pid;
	u->fd = sv[0];
	log_debug("started %s (pid %d) for the OOMBundle uploads", path,
		  (int)pid);
	*ret = u;
	return 0;
}

void pod_upload_request(struct pod_upload *u)
{
	if (u)
		(void)send(u->fd, "s", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

void pod_upload_stop(struct pod_upload *u)
{
	struct pollfd pfd;

	if (!u)
		return;
	/* end of file for the uploader; its exit closes its end of ours */
	(void)shutdown(u->fd, SHUT_WR);
	pfd = (struct pollfd){.fd = u->fd, .events = POLLIN};
	for (;;) {
		char buf[16];
		int r = poll(&pfd, 1, STOP_WAIT_MS);

		if (r < 0 && errno == EINTR)
			continue;
		if (r > 0 && read(u->fd, buf, sizeof(buf)) > 0)
			continue; /* it never writes: nothing to keep */
		if (r <= 0) {
			log_warn("%s (pid %d) still uploading after %d s: "
				 "stopped",
				 UPLOADER, (int)u->pid, STOP_WAIT_MS / 1000);
			kill(u->pid, SIGKILL);
		}
		break;
	}
	while (waitpid(u->pid, NULL, 0) < 0 && errno == EINTR)
		;
	close(u->fd);
	free(u);
}
