/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between the jvm_*.c files; not part of the public API. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "inspect/jvm.h"

struct jvm_creds {
	uid_t euid;
	gid_t egid;
	int dumpable;
	bool switched;
	gid_t *groups; /* root's supplementary groups, restored on leave */
	int n_groups;
};

/* Switches supplementary groups (to the target's gid alone: root's groups
 * must not come along), effective gid, then uid to the target's when they
 * differ and we are root (needs CAP_SETGID and CAP_SETUID). Returns 0,
 * -JVM_E_OWNER when not root and the uid differs, -errno. */
int jvm_creds_enter(uid_t uid, gid_t gid, struct jvm_creds *saved);
/* Restores what jvm_creds_enter changed. */
void jvm_creds_leave(struct jvm_creds *saved);

/* Opens <pidfd>/root/tmp (O_NOFOLLOW on tmp). Returns fd or -errno
 * (-ELOOP when tmp is a symlink). */
int jvm_open_tmp(int pidfd);

/* Reads fd to EOF into sb (bounded by sb->max) or until the monotonic
 * deadline (UINT64_MAX: none; the fd is polled). Returns 0, -E2BIG (sb
 * full, content kept), -ETIMEDOUT, -errno. */
int jvm_read_fd(int fd, struct strbuf *sb, uint64_t deadline_us);

/* jvm_detect() for an attach: /proc/<pid>/maps (a JVM's is 15-60 KB,
 * which the kernel prints line by line: a sixth of jcmd's CPU time) is
 * read only when no hsperfdata was found, so libjvm is false whenever
 * hsperfdata is true. Same returns. */
int jvm_detect_attach(const struct host *h, int pid, struct jvm_info *ret);

/* Reads the JVM's hsperfdata file (the one jvm_detect found) into sb, up
 * to its cap, with the target's credentials. Returns 0, -ENOENT (none:
 * -XX:-UsePerfData), -errno. Blocks at most 2 s. */
int jvm_perfdata_read(const struct host *h, const struct jvm_info *i,
		      struct strbuf *sb);
