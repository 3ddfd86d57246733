/* SPDX-License-Identifier: Apache-2.0 */
/* HotSpot's attach protocol on Linux (DESIGN.md "JVM attach"): a Unix
 * socket /tmp/.java_pid<nspid> in the target's mount namespace, started by
 * a trigger file + SIGQUIT, one operation per connection. */
#include <fcntl.h>
#include <linux/sockios.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#include "jvm_internal.h"
#include "base/fileio.h"
#include "base/parse.h"

#define POLL_INTERVAL_US 5000
/* The v2 protocol, and so the probe for it, exists from JDK 24 on. */
#define JVM_FEATURE_V2 24
/* How often a listener is asked whether it read the request. */
#define READ_CHECK_MAX_MS 16

/* Opens the socket inode with O_PATH|O_NOFOLLOW and checks it: a socket,
 * owned by the JVM's uid. Returns the O_PATH fd, -ENOENT, -JVM_E_*. */
static int open_socket_inode(int tmpfd, const struct jvm_info *i)
{
	_cleanup_close_ int fd = -1;
	char name[32];
	struct stat st;

	snprintf(name, sizeof(name), ".java_pid%d", i->nspid);
	fd = openat(tmpfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return -JVM_E_SYMLINK;
	if (!S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	if (st.st_uid != i->uid)
		return -JVM_E_OWNER;
	return TAKE_FD(fd);
}

/* Connects through /proc/self/fd/<O_PATH fd>: the kernel follows only that
 * magic link to the inode we checked, never a name in the target's /tmp. */
static int connect_inode(const struct host *h, int inode_fd, uint64_t deadline)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *root = h->root && strcmp(h->root, "/") ? h->root : "";
	_cleanup_close_ int s = -1;
	int n;

	n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/proc/self/fd/%d",
		     root, inode_fd);
	if (n < 0 || (size_t)n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -errno;
	/* A full backlog gives EAGAIN on a non-blocking Unix connect. */
	while (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		if (now_monotonic_us() >= deadline)
			return -JVM_E_TIMEOUT;
		usleep(POLL_INTERVAL_US);
	}
	return TAKE_FD(s);
}

/* Creates the trigger file .attach_pid<nspid> in cwd, else in tmp.
 * Returns the dir fd it was created in (caller unlinks), or -errno. */
static int create_trigger(int pidfd, int tmpfd, const char *name)
{
	_cleanup_close_ int cwdfd = -1;
	int dirs[2], fd, r = -ENOENT;

	cwdfd = openat(pidfd, "cwd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	dirs[0] = cwdfd;
	dirs[1] = tmpfd;
	for (size_t k = 0; k < 2; k++) {
		if (dirs[k] < 0)
			continue;
		fd = openat(dirs[k], name,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				    O_CLOEXEC,
			    0600);
		if (fd >= 0) {
			close(fd);
			return fcntl(dirs[k], F_DUPFD_CLOEXEC, 3);
		}
		r = -errno;
	}
	return r;
}

static void sleep_us(uint64_t us)
{
	struct timespec ts = {.tv_sec = (time_t)(us / 1000000),
			      .tv_nsec = (long)(us % 1000000) * 1000};

	nanosleep(&ts, NULL);
}

/* Trigger file + SIGQUIT, then polls for the socket until the deadline. */
static int start_listener(const struct jvm_target *t, int pidfd, int tmpfd,
			  uint64_t deadline)
{
	_cleanup_close_ int trig_dir = -1;
	char trig[32];
	int fd = -ENOENT;

	if (t->opts.no_signal || !t->info.sigquit_handled)
		return -JVM_E_NO_SIGQUIT;
	snprintf(trig, sizeof(trig), ".attach_pid%d", t->info.nspid);
	trig_dir = create_trigger(pidfd, tmpfd, trig);
	if (trig_dir < 0 && trig_dir != -EEXIST)
		return trig_dir;
	if (kill(t->info.pid, SIGQUIT) < 0) {
		fd = -errno;
	} else {
		while ((fd = open_socket_inode(tmpfd, &t->info)) == -ENOENT &&
		       now_monotonic_us() < deadline)
			sleep_us(POLL_INTERVAL_US);
		if (fd == -ENOENT)
			fd = -JVM_E_TIMEOUT;
	}
	if (trig_dir >= 0)
		unlinkat(trig_dir, trig, 0);
	return fd;
}

static int send_all(int s, const char *p, size_t len, uint64_t deadline)
{
	while (len) {
		struct pollfd pf = {.fd = s, .events = POLLOUT};
		ssize_t n = send(s, p, len, MSG_NOSIGNAL);
		uint64_t now;

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		now = now_monotonic_us();
		if (now >= deadline)
			return -JVM_E_TIMEOUT;
		poll(&pf, 1, (int)((deadline - now) / 1000 + 1));
	}
	return 0;
}

/* v1: "1\0op\0a0\0a1\0a2\0"; v2: "2\0<size>\0op[ opts]\0args...\0". */
static int build_request(const struct jvm_target *t, int proto, const char *op,
			 const char *const *args, size_t nargs,
			 struct strbuf *req)
{
	_cleanup_strbuf_ struct strbuf body = STRBUF_INIT;
	bool jcmd = streq(op, "jcmd");
	int r;

	strbuf_init(&body, 256u << 10);
	if (proto == 1 && (nargs > 3 || strlen(op) > 16))
		return -E2BIG;
	r = strbuf_adds(&body, op);
	if (r == 0 && proto == 2 && jcmd && t->has_streaming)
		r = strbuf_adds(&body, " streaming=0");
	if (r == 0)
		r = strbuf_addch(&body, '\0');
	for (size_t k = 0; r == 0 && k < (proto == 1 ? 3 : nargs); k++) {
		const char *a = k < nargs && args[k] ? args[k] : "";

		if (proto == 1 && strlen(a) > 1024)
			return -E2BIG;
		r = strbuf_add(&body, a, strlen(a) + 1);
	}
	if (r == 0 && proto == 2)
		r = strbuf_addf(req, "2%c%zu%c", '\0', body.len, '\0');
	else if (r == 0)
		r = strbuf_add(req, "1", 2);
	if (r == 0)
		r = strbuf_add(req, body.buf, body.len);
	return r;
}

/* "<status>\n<text>": moves text into ret. */
static int split_reply(struct strbuf *raw, size_t max, bool truncated,
		       struct jvm_reply *ret)
{
	const char *nl = memchr(raw->buf, '\n', raw->len < 16 ? raw->len : 16);
	int64_t status;
	size_t skip;

	if (raw->len == 0)
		return -JVM_E_DROPPED;
	if (!nl ||
	    parse_i64_n(raw->buf, (size_t)(nl - raw->buf), &status) < 0 ||
	    status < INT32_MIN || status > INT32_MAX)
		return -JVM_E_PROTO;
	skip = (size_t)(nl - raw->buf) + 1;
	memmove(raw->buf, raw->buf + skip, raw->len - skip + 1);
	raw->len -= skip;
	if (raw->len > max) {
		raw->len = max;
		raw->buf[max] = '\0';
		truncated = true;
	}
	ret->status = (int)status;
	ret->truncated = truncated;
	ret->text = *raw;
	strbuf_init(raw, 0);
	return 0;
}

/* Bytes sent on s that the peer has not read yet (SIOCOUTQ: a Unix
 * stream socket counts what sits in the peer's receive queue), or -errno
 * (a kernel or sandbox without it). */
static int unread_bytes(int s)
{
	int n;

	return ioctl(s, SIOCOUTQ, &n) < 0 ? -errno : n;
}

/* Waits until the listener has read the whole request (HotSpot's listener
 * reads it before it runs the operation), or a reply or hang-up is there,
 * up to the deadline: a listener that accepts and never reads fails here
 * with -JVM_E_TIMEOUT, without a round trip of its own. The wakeups only
 * look: a reply wakes the poll at once. */
static int wait_request_read(int s, uint64_t deadline)
{
	for (unsigned step = 1;;
	     step = step < READ_CHECK_MAX_MS ? 2 * step : step) {
		struct pollfd pf = {.fd = s, .events = POLLIN};
		int n = unread_bytes(s);
		uint64_t now, left;

		if (n <= 0)
			return n;
		now = now_monotonic_us();
		if (now >= deadline)
			return -JVM_E_TIMEOUT;
		left = (deadline - now) / 1000 + 1;
		if (poll(&pf, 1, (int)(left < step ? left : step)) > 0)
			return 0;
	}
}

/* One operation on a new connection. read_deadline (0: none): the
 * listener must have read the request by then (wait_request_read); a
 * kernel that cannot tell gives -ENOTTY before anything is sent. */
static int exchange(const struct jvm_target *t, int tmpfd, const char *req,
		    size_t req_len, uint64_t deadline, uint64_t read_deadline,
		    struct jvm_reply *ret)
{
	_cleanup_close_ int ifd = -1, s = -1;
	_cleanup_strbuf_ struct strbuf raw = STRBUF_INIT;
	int r;

	strbuf_init(&raw, t->opts.reply_max + 32);
	ifd = open_socket_inode(tmpfd, &t->info);
	if (ifd < 0)
		return ifd;
	s = connect_inode(t->host, ifd, deadline);
	if (s < 0)
		return s;
	if (read_deadline && unread_bytes(s) < 0)
		return -ENOTTY;
	r = send_all(s, req, req_len, deadline);
	if (r == 0 && read_deadline)
		r = wait_request_read(s, read_deadline);
	if (r < 0)
		return r;
	r = jvm_read_fd(s, &raw, deadline);
	if (r < 0 && r != -E2BIG)
		return r;
	return split_reply(&raw, t->opts.reply_max, r == -E2BIG, ret);
}

/* read_ms: 0, or the listener must read the request within it. */
static int execute_proto(const struct jvm_target *t, int proto, const char *op,
			 const char *const *args, size_t nargs,
			 unsigned timeout_ms, unsigned read_ms,
			 struct jvm_reply *ret)
{
	uint64_t now = now_monotonic_us(),
		 deadline = now + (uint64_t)timeout_ms * 1000,
		 read_deadline = read_ms ? now + (uint64_t)read_ms * 1000 : 0;
	_cleanup_strbuf_ struct strbuf req = STRBUF_INIT;
	_cleanup_close_ int pidfd = -1, tmpfd = -1;
	struct jvm_creds saved;
	int r;

	strbuf_init(&req, 300u << 10);
	r = build_request(t, proto, op, args, nargs, &req);
	if (r < 0)
		return r;
	pidfd = host_open_pid(t->host, t->info.pid);
	if (pidfd < 0)
		return pidfd;
	r = jvm_creds_enter(t->info.uid, t->info.gid, &saved);
	if (r < 0)
		return r;
	tmpfd = jvm_open_tmp(pidfd);
	r = tmpfd < 0 ? tmpfd
		      : exchange(t, tmpfd, req.buf, req.len, deadline,
				 read_deadline, ret);
	jvm_creds_leave(&saved);
	return r;
}

/* `getversion options` over v1: "0\n2 streaming" on JDK 24+; older JVMs
 * answer with an error status and stay on v1. */
static int probe_version(struct jvm_target *t)
{
	const char *args[1] = {"options"};
	struct jvm_reply rep = {0};
	int r;

	r = execute_proto(t, 1, "getversion", args, 1, t->opts.timeout_ms, 0,
			  &rep);
	if (r < 0)
		return r;
	t->protocol = 1;
	if (rep.status == 0 && rep.text.len && rep.text.buf[0] == '2') {
		t->protocol = 2;
		t->has_streaming = strstr(rep.text.buf, "streaming") != NULL;
	}
	jvm_reply_release(&rep);
	return 0;
}

/* Unlinks the socket file if it is still the inode ifd refers to. */
static int unlink_stale(int tmpfd, int ifd, int nspid)
{
	struct stat a, b;
	char name[32];

	snprintf(name, sizeof(name), ".java_pid%d", nspid);
	if (fstat(ifd, &a) < 0 ||
	    fstatat(tmpfd, name, &b, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return -JVM_E_STALE;
	return unlinkat(tmpfd, name, 0) < 0 ? -errno : 0;
}

/* Makes sure the listener runs: the socket exists, else start it. With
 * replace, a socket nobody listens on is removed and the listener
 * restarted (a container restart with /tmp kept, e.g. an emptyDir). */
static int ensure_listener(struct jvm_target *t, uint64_t deadline,
			   bool replace)
{
	_cleanup_close_ int pidfd = -1, tmpfd = -1, ifd = -1;
	struct jvm_creds saved;
	int r;

	pidfd = host_open_pid(t->host, t->info.pid);
	if (pidfd < 0)
		return pidfd;
	r = jvm_creds_enter(t->info.uid, t->info.gid, &saved);
	if (r < 0)
		return r;
	tmpfd = jvm_open_tmp(pidfd);
	if (tmpfd < 0) {
		r = tmpfd;
	} else {
		ifd = open_socket_inode(tmpfd, &t->info);
		if (replace && ifd >= 0) {
			r = unlink_stale(tmpfd, ifd, t->info.nspid);
			closep(&ifd);
			ifd = r < 0 ? r : -ENOENT;
		}
		if (ifd == -ENOENT)
			ifd = start_listener(t, pidfd, tmpfd, deadline);
		r = ifd < 0 ? ifd : 0;
	}
	jvm_creds_leave(&saved);
	return r;
}

/* The first operation on a JVM attached without a probe: it makes the
 * probe's checks. A stale socket is replaced as jvm_attach() replaces it
 * (nothing was sent: connect failed); the listener must read the request
 * within the attach timeout; a kernel that cannot tell gets the probe. */
static int execute_first(struct jvm_target *t, const char *op,
			 const char *const *args, size_t nargs,
			 struct jvm_reply *ret)
{
	unsigned read_ms = t->opts.timeout_ms;
	int r;

	r = execute_proto(t, 1, op, args, nargs, t->opts.reply_timeout_ms,
			  read_ms, ret);
	if (r == -JVM_E_STALE && t->info.sigquit_handled &&
	    !t->opts.no_signal) {
		r = ensure_listener(t, now_monotonic_us() + read_ms * 1000ull,
				    true);
		if (r == 0)
			r = execute_proto(t, 1, op, args, nargs,
					  t->opts.reply_timeout_ms, read_ms,
					  ret);
	}
	if (r == -ENOTTY) {
		r = probe_version(t);
		if (r == 0)
			r = execute_proto(t, t->protocol, op, args, nargs,
					  t->opts.reply_timeout_ms, 0, ret);
	}
	return r;
}

int jvm_execute(struct jvm_target *t, const char *op, const char *const *args,
		size_t nargs, struct jvm_reply *ret)
{
	struct jvm_reply rep = {0};
	int r;

	if (nargs > 8)
		return -E2BIG;
	if (t->unverified)
		r = execute_first(t, op, args, nargs, &rep);
	else
		r = execute_proto(t, t->protocol, op, args, nargs,
				  t->opts.reply_timeout_ms, 0, &rep);
	if (r < 0)
		return r;
	t->unverified = false;
	*ret = rep;
	return 0;
}

int jvm_jcmd(struct jvm_target *t, const char *cmdline, struct jvm_reply *ret)
{
	const char *args[1] = {cmdline};

	return jvm_execute(t, "jcmd", args, 1, ret);
}

void jvm_reply_release(struct jvm_reply *r)
{
	if (r)
		strbuf_release(&r->text);
}

int jvm_attach(const struct host *h, int pid, const struct jvm_attach_opts *o,
	       struct jvm_target *ret)
{
	struct jvm_target t = {.host = h, .protocol = 1};
	uint64_t deadline;
	int r;

	if (o)
		t.opts = *o;
	if (!t.opts.timeout_ms)
		t.opts.timeout_ms = JVM_TIMEOUT_MS_DEFAULT;
	if (!t.opts.reply_timeout_ms)
		t.opts.reply_timeout_ms = JVM_REPLY_TIMEOUT_MS_DEFAULT;
	if (!t.opts.reply_max)
		t.opts.reply_max = JVM_REPLY_MAX_DEFAULT;
	r = jvm_detect_attach(h, pid, &t.info);
	if (r < 0)
		return r;
	if (!jvm_info_is_jvm(&t.info))
		return -JVM_E_NOT_JVM;
	if (t.info.attach_capable == 0)
		return -JVM_E_DISABLED;
	deadline = now_monotonic_us() + (uint64_t)t.opts.timeout_ms * 1000;
	r = ensure_listener(&t, deadline, false);
	/* Before JDK 24 the probe would only say v1 (one round trip, about
	 * half of jcmd's wall time against the JVM): the first operation
	 * checks the listener instead. */
	if (r == 0 && t.info.java_feature > 0 &&
	    t.info.java_feature < JVM_FEATURE_V2) {
		t.unverified = true;
		*ret = t;
		return 0;
	}
	if (r == 0)
		r = probe_version(&t);
	/* Stale socket: restart the listener when we may signal. */
	if (r == -JVM_E_STALE && t.info.sigquit_handled && !t.opts.no_signal) {
		r = ensure_listener(&t, deadline, true);
		if (r == 0)
			r = probe_version(&t);
	}
	if (r < 0)
		return r;
	*ret = t;
	return 0;
}
