/* SPDX-License-Identifier: Apache-2.0 */
/* Reaching a JVM's files: the credential switch, the target's /tmp, bounded
 * reads with a deadline, and the error texts. Used by detection and by the
 * attach protocol alike, so it sits below both. */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/fileio.h"
#include "kernel/procfs_access.h"
#include "jvm_internal.h"

/* Credentials of the calling thread only. glibc's setgroups/seteuid
 * change every thread of the process (POSIX), which would also take root
 * away from the sidecar's sampler and spool writer for as long as a reply
 * is awaited; the raw system calls are per thread. */
static int thread_setgroups(size_t n, const gid_t *g)
{
	return (int)syscall(SYS_setgroups, n, g);
}

static int thread_seteuid(uid_t uid)
{
	return (int)syscall(SYS_setresuid, (uid_t)-1, uid, (uid_t)-1);
}

static int thread_setegid(gid_t gid)
{
	return (int)syscall(SYS_setresgid, (gid_t)-1, gid, (gid_t)-1);
}

const char *jvm_strerror(int r)
{
	switch (-r) {
	case JVM_E_NOT_JVM:
		return "not a JVM (no libjvm.so mapped, no hsperfdata)";
	case JVM_E_DISABLED:
		return "attach is disabled in this JVM "
		       "(-XX:+DisableAttachMechanism); no signal sent";
	case JVM_E_NO_SIGQUIT:
		return "no attach listener is running and the JVM does not "
		       "handle SIGQUIT (-Xrs?); start it with "
		       "-XX:+StartAttachListener";
	case JVM_E_STALE:
		return "stale attach socket: nobody listens on it";
	case JVM_E_TIMEOUT:
		return "the JVM did not answer before the deadline";
	case JVM_E_SYMLINK:
		return "refused: a symlink stands where the attach socket or "
		       "/tmp should be";
	case JVM_E_OWNER:
		return "refused: the attach socket is not owned by the JVM's "
		       "user (or the credentials could not be switched)";
	case JVM_E_PROTO:
		return "malformed reply from the JVM";
	case JVM_E_NO_COMMAND:
		return "the JVM does not have this command";
	case EACCES:
		return "permission denied on the target's /proc files: run as "
		       "root, or as the JVM's uid and gid";
	case JVM_E_DROPPED:
		return "the JVM closed the connection without a reply (its "
		       "peer check wants our euid and egid equal to its own, "
		       "or root)";
	default:
		return strerror(-r);
	}
}

/* Keeps root's supplementary groups in saved and leaves only gid. */
static int groups_enter(gid_t gid, struct jvm_creds *saved)
{
	int n = getgroups(0, NULL);

	if (n < 0)
		return -errno;
	saved->groups = calloc((size_t)n + 1, sizeof(gid_t));
	if (!saved->groups)
		return -ENOMEM;
	n = getgroups(n, saved->groups);
	if (n < 0 || thread_setgroups(1, &gid) < 0) {
		int r = -errno;

		free(saved->groups);
		saved->groups = NULL;
		return r;
	}
	saved->n_groups = n;
	return 0;
}

static void groups_leave(struct jvm_creds *saved)
{
	if (thread_setgroups((size_t)saved->n_groups, saved->groups) < 0)
		abort(); /* see jvm_creds_leave */
	free(saved->groups);
	saved->groups = NULL;
}

int jvm_creds_enter(uid_t uid, gid_t gid, struct jvm_creds *saved)
{
	int r;

	saved->euid = geteuid();
	saved->egid = getegid();
	saved->switched = false;
	saved->groups = NULL;
	if (saved->euid == uid && saved->egid == gid)
		return 0;
	if (saved->euid != 0)
		return saved->euid == uid ? 0 : -JVM_E_OWNER;
	if (uid == 0)
		return 0; /* root reaches a root JVM as it is */
	saved->dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	r = groups_enter(gid, saved);
	if (r < 0)
		return r;
	if (thread_setegid(gid) < 0 || thread_seteuid(uid) < 0) {
		r = -errno;
		if (thread_setegid(saved->egid) < 0)
			abort();
		groups_leave(saved);
		return r;
	}
	saved->switched = true;
	return 0;
}

void jvm_creds_leave(struct jvm_creds *saved)
{
	if (!saved->switched)
		return;
	/* Running on as the target's uid would be a security bug: better to
	 * stop than to go on with the wrong credentials. */
	if (thread_seteuid(saved->euid) < 0 || thread_setegid(saved->egid) < 0)
		abort();
	groups_leave(saved);
	/* seteuid() cleared "dumpable"; our own /proc files need it back. */
	if (saved->dumpable > 0)
		prctl(PR_SET_DUMPABLE, saved->dumpable, 0, 0, 0);
	saved->switched = false;
}

int jvm_open_tmp(int pidfd)
{
	_cleanup_close_ int rootfd = -1;
	int fd;

	rootfd = procfs_open_at(pidfd, "root", O_PATH | O_DIRECTORY);
	if (rootfd < 0)
		return rootfd == -ENOENT ? -ESRCH : rootfd;
	fd = openat(rootfd, "tmp",
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOTDIR ? -JVM_E_SYMLINK : -errno;
	return fd;
}

int jvm_read_fd(int fd, struct strbuf *sb, uint64_t deadline_us)
{
	for (;;) {
		char chunk[16384];
		ssize_t n;
		int r;

		if (deadline_us != UINT64_MAX) {
			uint64_t now = now_monotonic_us();
			struct pollfd p = {.fd = fd, .events = POLLIN};

			if (now >= deadline_us)
				return -JVM_E_TIMEOUT;
			r = poll(&p, 1, (int)((deadline_us - now) / 1000 + 1));
			if (r < 0 && errno != EINTR)
				return -errno;
			if (r <= 0)
				continue;
		}
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		r = strbuf_add(sb, chunk, (size_t)n);
		if (r == -E2BIG) {
			size_t room = sb->max - sb->len;

			strbuf_add(sb, chunk, room < (size_t)n ? room : 0);
			return -E2BIG;
		}
		if (r < 0)
			return r;
	}
}
