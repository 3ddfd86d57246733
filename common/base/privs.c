/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <linux/netlink.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "base/privs.h"
#include "base/util.h"

/* Measured with strace -f -c over the real-kill suites (agent run, sidecar
 * run with JVM attach and the ptrace probe), plus what glibc's own paths
 * use for the same calls (openat for fopen, newfstatat for fstat...). */
const char *const privs_base_syscalls[] = {
	/* files */
	"read", "write", "readv", "writev", "pread64", "pwrite64", "lseek",
	"close", "openat", "openat2", "newfstatat", "fstat", "statx",
	"getdents64", "readlinkat", "mkdirat", "unlinkat", "renameat",
	"renameat2", "fchmod", "fchmodat", "ftruncate", "fsync", "fdatasync",
	"faccessat", "faccessat2", "fcntl", "dup", "dup3", "pipe2", "ioctl",
	"statfs", "fstatfs", "umask", "getcwd", "flock",
	/* memory */
	"mmap", "munmap", "mremap", "mprotect", "madvise", "brk",
	/* waiting */
	"epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
	"epoll_pwait2", "poll", "ppoll", "select", "pselect6", "timerfd_create",
	"timerfd_settime", "timerfd_gettime", "eventfd2", "signalfd4",
	"inotify_init1", "inotify_add_watch", "inotify_rm_watch", "futex",
	"nanosleep", "clock_nanosleep", "sched_yield", "restart_syscall",
	/* signals */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigtimedwait",
	"sigaltstack", "tgkill", "getpid", "gettid",
	/* clocks and facts */
	"clock_gettime", "clock_getres", "gettimeofday", "time", "uname",
	"sysinfo", "getrandom", "getrlimit", "prlimit64", "sched_getaffinity",
	"getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid",
	"getgroups", "getppid", "capget",
	/* sockets already open: the HTTP thread's listening one (bound
	 * before the drop) and what it accepts. Making sockets (socket,
	 * socketpair, connect, bind) is a mode's own entry */
	"accept", "accept4", "getsockname", "getpeername", "setsockopt",
	"getsockopt", "sendto", "recvfrom", "sendmsg", "recvmsg", "shutdown",
	/* threads (clone only with CLONE_THREAD, clone3 ENOSYS: add_rule)
	 * and exit */
	"clone", "clone3", "set_robust_list", "rseq", "set_tid_address", "exit",
	"exit_group",
	/* residency and priority: mlockall at start-up keeps the lock on new
	 * mappings (mlock2/munlock for glibc's own paths); the sampler thread
	 * raises its own priority (sched_setscheduler, else setpriority) */
	"mlock", "mlock2", "munlock", "mlockall", "munlockall",
	"sched_setscheduler", "sched_getscheduler", "sched_setparam",
	"sched_getparam", "sched_setattr", "sched_getattr", "setpriority",
	"getpriority", "setrlimit",
	/* the ptrace probe opens the target's libc with openat2
	 * (RESOLVE_IN_ROOT): refused, it failed with EPERM, no fallback */
	"openat2", NULL};

bool privs_under_sanitizer(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	return true;
#endif
#endif
	const char *pre = getenv("LD_PRELOAD");

	return pre && strstr(pre, "vgpreload");
}

static int drop_caps(uint64_t keep)
{
	cap_t caps = cap_init(); /* all clear */
	cap_value_t list[64];
	int n = 0, r = 0;

	if (!caps)
		return -errno;
	for (cap_value_t c = 0; c <= CAP_LAST_CAP && c < 64; c++) {
		if (keep & PRIVS_CAP(c))
			list[n++] = c;
		/* EINVAL: a capability this kernel does not know. Dropped
		 * without asking first (CAP_IS_SUPPORTED is a prctl of its
		 * own): one prctl a capability, ~40 a start. */
		else if (cap_drop_bound(c) < 0 && errno != EINVAL &&
			 errno != EPERM)
			r = -errno;
	}
	if (r == 0 && n > 0 &&
	    (cap_set_flag(caps, CAP_PERMITTED, n, list, CAP_SET) < 0 ||
	     cap_set_flag(caps, CAP_EFFECTIVE, n, list, CAP_SET) < 0))
		r = -errno;
	/* A capability we never had stays unset: capsetp refuses to add
	 * it, so only ask for the kept ones we hold. */
	if (r == 0 && cap_set_proc(caps) < 0)
		r = -errno;
	cap_free(caps);
	/* Emptying the inheritable set already cleared the ambient one in
	 * the kernel; said once more in one prctl (libcap's
	 * cap_reset_ambient() asks each capability first: ~40 more). EINVAL:
	 * a kernel without ambient capabilities. */
	if (r == 0 &&
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
	    errno != EINVAL)
		r = -errno;
	return r;
}

/* The socket families a mode that makes sockets may ask for: unix (the
 * JVM's attach socket, libcurl's wakeup pair), IPv4 and IPv6 (the API
 * server, its resolver), and route netlink (glibc's getaddrinfo asks it
 * which address families the host has); unix only with
 * unix_sockets_only. No AF_PACKET, AF_ALG, AF_VSOCK, other netlink. */
static const int socket_families[] = {AF_UNIX, AF_INET, AF_INET6};

/* One name's rule: most allowed outright; clone only to make a thread
 * (no fork, no new namespaces: the flags are clone's first argument on
 * x86_64 and aarch64), clone3 refused with ENOSYS (its flags are in
 * memory a filter cannot read; glibc's pthread_create then falls back to
 * clone), socket and socketpair only in socket_families (socket only
 * AF_UNIX when unix_only). */
static int add_rule(scmp_filter_ctx ctx, const char *name, int nr,
		    bool unix_only)
{
	int r = 0;

	if (streq(name, "clone"))
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A0(SCMP_CMP_MASKED_EQ,
						CLONE_THREAD, CLONE_THREAD));
	if (streq(name, "clone3"))
		return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
	if (streq(name, "socketpair"))
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
	if (!streq(name, "socket"))
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	if (unix_only)
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(socket_families); i++)
		r = seccomp_rule_add(
			ctx, SCMP_ACT_ALLOW, nr, 1,
			SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)socket_families[i]));
	if (r >= 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 2,
				     SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
				     SCMP_A2(SCMP_CMP_EQ, NETLINK_ROUTE));
	return r;
}

static int add_rules(scmp_filter_ctx ctx, const char *const *names,
		     bool unix_only)
{
	for (; names && *names; names++) {
		int nr = seccomp_syscall_resolve_name(*names);
		int r;

		if (nr == __NR_SCMP_ERROR)
			continue; /* not on this architecture */
		r = add_rule(ctx, *names, nr, unix_only);
		if (r < 0 && r != -EEXIST)
			return r;
	}
	return 0;
}

static int install_seccomp(const struct privs_spec *spec)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	int r;

	if (!ctx)
		return -ENOMEM;
	r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	/* the kernel logs each refusal (audit type=1326): the way to find a
	 * missing entry; ENOTSUP on kernels without SECCOMP_FILTER_FLAG_LOG */
	if (r == 0 && seccomp_attr_set(ctx, SCMP_FLTATR_CTL_LOG, 1) < 0)
		r = 0;
	if (r == 0)
		r = add_rules(ctx, privs_base_syscalls, false);
	if (r == 0)
		r = add_rules(ctx, spec->syscalls, spec->unix_sockets_only);
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

int privs_enter(const struct privs_spec *spec, bool no_seccomp,
		enum privs_seccomp_state *ret_seccomp)
{
	enum privs_seccomp_state st = PRIVS_SECCOMP_OFF;
	uint64_t held = 0;
	cap_t cur = cap_get_proc();
	int r;

	if (!cur)
		return -errno;
	for (cap_value_t c = 0; c <= CAP_LAST_CAP && c < 64; c++) {
		cap_flag_value_t v = CAP_CLEAR;

		if (cap_get_flag(cur, c, CAP_PERMITTED, &v) == 0 &&
		    v == CAP_SET)
			held |= PRIVS_CAP(c);
	}
	cap_free(cur);
	r = drop_caps(spec->caps & held);
	if (r < 0)
		return r;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (spec->seccomp && !no_seccomp) {
		st = PRIVS_SECCOMP_SANITIZER;
		if (!privs_under_sanitizer()) {
			r = install_seccomp(spec);
			if (r < 0)
				return r;
			st = PRIVS_SECCOMP_ON;
		}
	}
	if (ret_seccomp)
		*ret_seccomp = st;
	return 0;
}
