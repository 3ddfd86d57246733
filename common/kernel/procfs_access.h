/* SPDX-License-Identifier: Apache-2.0 */
/* procfs_access: opening another user's /proc/<pid> files. smaps, maps,
 * environ, and following root, cwd and exe need ptrace-mode read access:
 * without CAP_SYS_PTRACE the caller's fsuid and fsgid must equal the
 * target's real, effective and saved uids and gids, the target must be
 * dumpable and its permitted capabilities a subset of the caller's
 * effective ones. A caller that kept CAP_SETUID and CAP_SETGID (a root
 * sidecar under Pod Security baseline) takes the target's ids as its
 * filesystem ids for one open; procfs_open_at() is the only place they
 * change (docs/privileges.md, "The fsuid retry"). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

/* Ids and capabilities of a task: [0] real, [1] effective, [2] saved,
 * [3] filesystem, as /proc/<pid>/status prints them. */
struct procfs_creds {
	uint32_t uid[4], gid[4];
	uint64_t cap_prm, cap_eff;
};

/* Pure: the Uid:, Gid:, CapPrm: and CapEff: lines of a status text.
 * Returns 0, or -EBADMSG when the Uid or Gid line is missing or
 * malformed (absent capability lines read as 0). */
int procfs_parse_creds(const char *buf, size_t len, struct procfs_creds *ret);

/* The calling thread's own: getresuid/getresgid, setfsuid(-1), capget.
 * Returns 0 or -errno. */
int procfs_self_creds(struct procfs_creds *ret);

/* openat(pid_fd, name, flags | O_CLOEXEC). When the kernel refuses it
 * (EACCES, EPERM) and name has no '/', once more with this thread's
 * fsuid and fsgid set to the target's ids (from pid_fd's status; only
 * when its three uids agree and its three gids agree), which needs
 * CAP_SETUID and CAP_SETGID; the ids, and the process' dumpable flag the
 * switch clears, are restored before it returns (abort() if they cannot
 * be: never go on with the wrong ids). Returns the fd or -errno of the
 * first attempt. Other threads are untouched (setfsuid is per thread). */
int procfs_open_at(int pid_fd, const char *name, int flags);

/* procfs_open_at() and a read of at most max bytes appended to sb.
 * Returns 0, -E2BIG when cut at max (sb holds max bytes), or -errno. */
int procfs_read_at(int pid_fd, const char *name, int flags, size_t max,
		   struct strbuf *sb);

/* Pure: why self cannot open target's ptrace-guarded files, in words for
 * the bundle ("uid 0 differs from the sidecar's 1000 and no
 * CAP_SYS_PTRACE"). Into buf (always terminated); returns buf. */
const char *procfs_denied_why(const struct procfs_creds *self,
			      const struct procfs_creds *target, char *buf,
			      size_t size);

/* procfs_denied_why() for pid_fd's process and the calling thread (reads
 * its status); "permission denied" when the status is unreadable. */
const char *procfs_explain_denied(int pid_fd, char *buf, size_t size);
