/* SPDX-License-Identifier: Apache-2.0 */
/* Another user's /proc/<pid> files: the fsuid retry (procfs_access.h). */
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/parse.h"
#include "base/util.h"
#include "kernel/procfs_access.h"

#define STATUS_MAX (64u << 10)
#define CAP_BIT(c) (UINT64_C(1) << (c))

/* "Uid:\t0\t0\t0\t0": four numbers after the key. */
static int scan_four(const char *p, const char *end, uint32_t *ret)
{
	uint32_t v[4];

	for (size_t i = 0; i < 4; i++) {
		uint64_t n;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end || *p < '0' || *p > '9' || scan_u64(&p, &n) < 0 ||
		    n > UINT32_MAX)
			return -EBADMSG;
		v[i] = (uint32_t)n;
	}
	memcpy(ret, v, sizeof(v));
	return 0;
}

static uint64_t scan_hex(const char *p, const char *end)
{
	uint64_t v = 0;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p < end && scan_hex_u64(&p, &v) == 0 ? v : 0;
}

int procfs_parse_creds(const char *buf, size_t len, struct procfs_creds *ret)
{
	struct procfs_creds c = {0};
	const char *p = buf, *e = buf + len;
	bool uid = false, gid = false;

	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		const char *end = nl ? nl : e;
		size_t n = (size_t)(end - p);

		if (n > 4 && !memcmp(p, "Uid:", 4))
			uid = scan_four(p + 4, end, c.uid) == 0;
		else if (n > 4 && !memcmp(p, "Gid:", 4))
			gid = scan_four(p + 4, end, c.gid) == 0;
		else if (n > 7 && !memcmp(p, "CapPrm:", 7))
			c.cap_prm = scan_hex(p + 7, end);
		else if (n > 7 && !memcmp(p, "CapEff:", 7))
			c.cap_eff = scan_hex(p + 7, end);
		p = nl ? nl + 1 : e;
	}
	if (!uid || !gid)
		return -EBADMSG;
	*ret = c;
	return 0;
}

/* setfsuid/setfsgid return the previous id whatever happens; an invalid
 * id ((uid_t)-1) changes nothing, which is how the current one is read. */
static uint32_t fsuid_set(uint32_t id)
{
	return (uint32_t)syscall(SYS_setfsuid, id);
}

static uint32_t fsgid_set(uint32_t id)
{
	return (uint32_t)syscall(SYS_setfsgid, id);
}

int procfs_self_creds(struct procfs_creds *ret)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0}};
	struct procfs_creds c = {0};
	uid_t u[3];
	gid_t g[3];

	if (getresuid(&u[0], &u[1], &u[2]) < 0 ||
	    getresgid(&g[0], &g[1], &g[2]) < 0 ||
	    syscall(SYS_capget, &h, d) < 0)
		return -errno;
	for (size_t i = 0; i < 3; i++) {
		c.uid[i] = u[i];
		c.gid[i] = g[i];
	}
	c.uid[3] = fsuid_set((uint32_t)-1);
	c.gid[3] = fsgid_set((uint32_t)-1);
	c.cap_prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	c.cap_eff = d[0].effective | (uint64_t)d[1].effective << 32;
	*ret = c;
	return 0;
}

static bool all_same(const uint32_t *v)
{
	return v[0] == v[1] && v[1] == v[2];
}

/* The retry: this thread's fs ids set to the target's for one openat. */
static int open_as(int pid_fd, const char *name, int flags,
		   const struct procfs_creds *t)
{
	int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	uint32_t old_gid = fsgid_set((uint32_t)-1);
	uint32_t old_uid = fsuid_set((uint32_t)-1);
	int fd = -1, err = EPERM;

	(void)fsgid_set(t->gid[1]);
	if (fsgid_set((uint32_t)-1) == t->gid[1]) {
		(void)fsuid_set(t->uid[1]);
		if (fsuid_set((uint32_t)-1) == t->uid[1]) {
			fd = openat(pid_fd, name, flags);
			err = errno;
		}
	}
	(void)fsuid_set(old_uid);
	(void)fsgid_set(old_gid);
	/* Going on with the target's ids would be a security bug. */
	if (fsuid_set((uint32_t)-1) != old_uid ||
	    fsgid_set((uint32_t)-1) != old_gid)
		abort();
	/* An fs id change clears "dumpable" (commit_creds); our own /proc
	 * files need it back. */
	if (dumpable > 0 && prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != dumpable)
		(void)prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0);
	return fd >= 0 ? fd : -err;
}

static int target_creds(int pid_fd, struct procfs_creds *ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_init(&sb, STATUS_MAX + 1);
	r = read_file_at(pid_fd, "status", STATUS_MAX, &sb);
	if (r < 0 && r != -E2BIG)
		return r;
	return procfs_parse_creds(sb.buf, sb.len, ret);
}

int procfs_open_at(int pid_fd, const char *name, int flags)
{
	struct procfs_creds t;
	int fd, first;

	flags |= O_CLOEXEC;
	fd = openat(pid_fd, name, flags);
	if (fd >= 0)
		return fd;
	first = -errno;
	if ((first != -EACCES && first != -EPERM) || strchr(name, '/') ||
	    target_creds(pid_fd, &t) < 0 || !all_same(t.uid) ||
	    !all_same(t.gid))
		return first;
	fd = open_as(pid_fd, name, flags, &t);
	return fd >= 0 ? fd : first;
}

int procfs_read_at(int pid_fd, const char *name, int flags, size_t max,
		   struct strbuf *sb)
{
	_cleanup_close_ int fd =
		procfs_open_at(pid_fd, name, O_RDONLY | O_NOCTTY | flags);

	if (fd < 0)
		return fd;
	return read_fd_max(fd, max, sb);
}

const char *procfs_denied_why(const struct procfs_creds *self,
			      const struct procfs_creds *t, char *buf,
			      size_t size)
{
	bool ptrace = self->cap_eff & CAP_BIT(CAP_SYS_PTRACE);
	bool setid = (self->cap_eff & CAP_BIT(CAP_SETUID)) &&
		     (self->cap_eff & CAP_BIT(CAP_SETGID));
	uint64_t extra = t->cap_prm & ~self->cap_eff;

	if (!size)
		return buf;
	if (ptrace)
		snprintf(buf, size,
			 "permission denied although the sidecar "
			 "holds CAP_SYS_PTRACE (an LSM?)");
	else if (!all_same(t->uid) || !all_same(t->gid))
		snprintf(buf, size,
			 "permission denied: the target's uids (%u %u %u) or "
			 "gids (%u %u %u) differ among themselves and no "
			 "CAP_SYS_PTRACE",
			 t->uid[0], t->uid[1], t->uid[2], t->gid[0], t->gid[1],
			 t->gid[2]);
	else if (t->uid[1] != self->uid[3] && !setid)
		snprintf(buf, size,
			 "permission denied: uid %u differs from the sidecar's "
			 "%u and no CAP_SYS_PTRACE (or CAP_SETUID and "
			 "CAP_SETGID)",
			 t->uid[1], self->uid[3]);
	else if (t->gid[1] != self->gid[3] && !setid)
		snprintf(buf, size,
			 "permission denied: gid %u differs from the sidecar's "
			 "%u and no CAP_SYS_PTRACE (or CAP_SETUID and "
			 "CAP_SETGID)",
			 t->gid[1], self->gid[3]);
	else if (extra)
		snprintf(buf, size,
			 "permission denied: the target holds capabilities the "
			 "sidecar does not (0x%llx) and no CAP_SYS_PTRACE",
			 (unsigned long long)extra);
	else
		snprintf(buf, size,
			 "permission denied: the target is not dumpable and no "
			 "CAP_SYS_PTRACE");
	return buf;
}

const char *procfs_explain_denied(int pid_fd, char *buf, size_t size)
{
	struct procfs_creds self, t;

	if (procfs_self_creds(&self) < 0 || target_creds(pid_fd, &t) < 0) {
		snprintf(buf, size, "permission denied");
		return buf;
	}
	return procfs_denied_why(&self, &t, buf, size);
}
