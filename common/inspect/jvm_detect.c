/* SPDX-License-Identifier: Apache-2.0 */
/* Is this process a HotSpot JVM, and may we attach to it? /proc/<pid>/status
 * (ids, NSpid, signal masks), maps (libjvm.so) and the JVM's hsperfdata file
 * (sun.rt.jvmCapabilities) tell. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include "jvm_internal.h"
#include "base/fileio.h"
#include "base/parse.h"
#include "kernel/procfs.h"
#include "kernel/procfs_access.h"

#define PERF_MAGIC 0xcafec0c0u
#define PERF_PROLOGUE_SIZE 32
#define PERF_ENTRY_HEADER 20

static uint32_t get_u32(const uint8_t *p, bool little)
{
	if (little)
		return (uint32_t)p[0] | (uint32_t)p[1] << 8 |
		       (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[0] << 24;
}

/* The entry named name in an hsperfdata buffer: 0 with *ret, *room (the
 * entry's length) and *little set, -ENOENT when absent, -EBADMSG when
 * the buffer is malformed. */
static int perf_find(const void *buf, size_t len, const char *name,
		     const uint8_t **ret, size_t *room, bool *little)
{
	const uint8_t *b = buf;
	size_t nlen = strlen(name);
	uint32_t off, n;

	if (len < PERF_PROLOGUE_SIZE || get_u32(b, false) != PERF_MAGIC)
		return -EBADMSG;
	*little = b[4] == 1;
	off = get_u32(b + 24, *little);
	n = get_u32(b + 28, *little);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t elen, name_off;

		if (off > len || len - off < PERF_ENTRY_HEADER)
			return -EBADMSG;
		elen = get_u32(b + off, *little);
		if (elen < PERF_ENTRY_HEADER || elen > len - off)
			return -EBADMSG;
		name_off = get_u32(b + off + 4, *little);
		if (name_off < elen && elen - name_off >= nlen + 1 &&
		    memcmp(b + off + name_off, name, nlen + 1) == 0) {
			*ret = b + off;
			*room = elen;
			return 0;
		}
		off += elen;
	}
	return -ENOENT;
}

int jvm_perfdata_string(const void *buf, size_t len, const char *name,
			char *ret, size_t size)
{
	const uint8_t *e;
	uint32_t vlen, data_off;
	size_t room, n = 0;
	bool little;
	int r;

	if (!size)
		return -EBADMSG;
	r = perf_find(buf, len, name, &e, &room, &little);
	if (r < 0)
		return r;
	vlen = get_u32(e + 8, little);
	data_off = get_u32(e + 16, little);
	if (e[12] != 'B' || data_off > room || vlen > room - data_off)
		return -EBADMSG;
	while (n < vlen && n + 1 < size && e[data_off + n])
		n++;
	memcpy(ret, e + data_off, n);
	ret[n] = '\0';
	return 0;
}

static uint64_t get_u64(const uint8_t *p, bool little)
{
	uint64_t lo = get_u32(p, little), hi = get_u32(p + 4, little);

	return little ? hi << 32 | lo : lo << 32 | hi;
}

/* A long is a scalar of type 'J': no vector, 8 bytes at its data
 * offset. */
int jvm_perfdata_long(const void *buf, size_t len, const char *name,
		      int64_t *ret)
{
	const uint8_t *e;
	uint32_t vlen, data_off;
	size_t room;
	bool little;
	int r = perf_find(buf, len, name, &e, &room, &little);

	if (r < 0)
		return r;
	vlen = get_u32(e + 8, little);
	data_off = get_u32(e + 16, little);
	if (e[12] != 'J' || vlen != 0 || data_off > room || room - data_off < 8)
		return -EBADMSG;
	*ret = (int64_t)get_u64(e + data_off, little);
	return 0;
}

/* Fills nspid, uid, gid and sigquit_handled from the target's status. */
static int read_status(int pidfd, struct jvm_info *i)
{
	struct proc_status st;
	int r = procfs_read_status(pidfd, &st);

	if (r < 0)
		return r;
	if (st.nspid > 0)
		i->nspid = st.nspid;
	i->uid = st.euid;
	i->gid = st.egid;
	i->sigquit_handled = (st.sig_cgt & (1ull << (SIGQUIT - 1))) &&
			     !(st.sig_ign & (1ull << (SIGQUIT - 1)));
	return 0;
}

/* 1 when libjvm.so is mapped, 0 not, -errno when maps is unreadable. */
static int maps_have_libjvm(int pidfd)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	strbuf_init(&sb, 16u << 20);
	r = procfs_read_at(pidfd, "maps", 0, 16u << 20, &sb);
	/* A partial read (E2BIG, a vanished process) still counts. */
	if (strstr(sb.buf, "/libjvm.so\n"))
		return 1;
	return r == -EACCES || r == -EPERM ? -EACCES : 0;
}

/* The target's /tmp is the pod's: a FIFO or a slow file there must not
 * hold detection (and so snapshot, jcmd and run) for longer than this. */
#define PERF_DEADLINE_US (2 * 1000 * 1000)
#define PERF_MAX_DIRS 64

/* Reads <tmp>/hsperfdata_<user>/<nspid>, a regular file owned by the
 * target's uid, opened as a pod's file (fileio.h open_untrusted_at). */
static int read_perf_file(int tmpfd, const char *user, const char *name,
			  const struct jvm_info *i, uint64_t deadline,
			  struct strbuf *sb)
{
	_cleanup_close_ int fd = -1;
	char rel[300];
	struct stat st;
	int r;

	r = snprintf(rel, sizeof(rel), "%s/%s", user, name);
	if (r < 0 || (size_t)r >= sizeof(rel))
		return -ENAMETOOLONG;
	fd = open_untrusted_at(tmpfd, rel, O_RDONLY);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_uid != i->uid)
		return -EPERM;
	strbuf_reset(sb);
	r = jvm_read_fd(fd, sb, deadline);
	/* Past the cap: the prologue and first entries suffice. */
	return r == -E2BIG ? 0 : r;
}

static int read_perfdata(int tmpfd, const struct jvm_info *i, struct strbuf *sb)
{
	uint64_t deadline = now_monotonic_us() + PERF_DEADLINE_US;
	DIR *d;
	struct dirent *de;
	char name[16];
	int fd, r = -ENOENT, seen = 0;

	fd = openat(tmpfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	snprintf(name, sizeof(name), "%d", i->nspid);
	while (r < 0 && (de = readdir(d))) {
		if (!startswith(de->d_name, "hsperfdata_"))
			continue;
		if (++seen > PERF_MAX_DIRS || now_monotonic_us() >= deadline)
			break;
		r = read_perf_file(dirfd(d), de->d_name, name, i, deadline, sb);
	}
	closedir(d);
	return r < 0 ? r : 0;
}

/* Digits at *p (at most three) as a number, p moved past them; 0 when
 * there are none or more. */
static int leading_number(const char **p)
{
	int n = 0, k = 0;

	while (**p >= '0' && **p <= '9' && k < 4) {
		n = n * 10 + (**p - '0');
		(*p)++;
		k++;
	}
	return k > 0 && k < 4 ? n : 0;
}

int jvm_java_feature(const char *version)
{
	const char *p = version;
	int n = leading_number(&p);

	/* JDK 8 and before: "1.<feature>..." */
	if (n == 1 && *p == '.') {
		p++;
		n = leading_number(&p);
	}
	return n;
}

static void detect_perfdata(int pidfd, struct jvm_info *i)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_close_ int tmpfd = -1;
	char caps[80], version[32];

	strbuf_init(&sb, 1u << 20);
	tmpfd = jvm_open_tmp(pidfd);
	if (tmpfd < 0 || read_perfdata(tmpfd, i, &sb) < 0)
		return;
	i->hsperfdata = true;
	if (jvm_perfdata_string(sb.buf, sb.len, "sun.rt.jvmCapabilities", caps,
				sizeof(caps)) == 0 &&
	    caps[0])
		i->attach_capable = caps[0] == '1';
	if (jvm_perfdata_string(sb.buf, sb.len, "java.property.java.version",
				version, sizeof(version)) == 0)
		i->java_feature = jvm_java_feature(version);
}

int jvm_perfdata_read(const struct host *h, const struct jvm_info *i,
		      struct strbuf *sb)
{
	_cleanup_close_ int pidfd = -1, tmpfd = -1;
	struct jvm_creds saved;
	int r;

	pidfd = host_open_pid(h, i->pid);
	if (pidfd < 0)
		return pidfd;
	r = jvm_creds_enter(i->uid, i->gid, &saved);
	if (r < 0)
		return r;
	tmpfd = jvm_open_tmp(pidfd);
	r = tmpfd < 0 ? tmpfd : read_perfdata(tmpfd, i, sb);
	jvm_creds_leave(&saved);
	return r;
}

/* need_maps: read maps even when hsperfdata says it is a JVM. */
static int detect(const struct host *h, int pid, bool need_maps,
		  struct jvm_info *ret)
{
	_cleanup_close_ int pidfd = -1;
	struct jvm_info i = {.pid = pid, .nspid = pid, .attach_capable = -1};
	struct jvm_creds saved;
	int r, maps = 0;

	pidfd = host_open_pid(h, pid);
	if (pidfd < 0)
		return pidfd;
	r = read_status(pidfd, &i);
	if (r < 0)
		return r;
	/* Not root and another uid: maps may still be readable, hsperfdata
	 * (0600) is not; attaching will fail with a clear error later. */
	r = jvm_creds_enter(i.uid, i.gid, &saved);
	if (r == 0)
		detect_perfdata(pidfd, &i);
	if (need_maps || !i.hsperfdata) {
		maps = maps_have_libjvm(pidfd);
		i.libjvm = maps > 0;
	}
	if (r == 0)
		jvm_creds_leave(&saved);
	if (maps < 0 && !i.hsperfdata)
		return maps;
	*ret = i;
	return 0;
}

int jvm_detect(const struct host *h, int pid, struct jvm_info *ret)
{
	return detect(h, pid, true, ret);
}

int jvm_detect_attach(const struct host *h, int pid, struct jvm_info *ret)
{
	return detect(h, pid, false, ret);
}
