/* SPDX-License-Identifier: Apache-2.0 */
/* The seccomp filter as the kernel applies it: a child enters a spec and
 * makes the calls a hostile input might want (fork, a new user namespace,
 * an AF_ALG or sock_diag socket, connect) and the ones the programs need
 * (a thread, an IPv4, unix or route netlink socket); each result is
 * compared with the same call made without the filter, so that an EPERM
 * is the filter's, not the kernel's. */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/privs.h"

#ifndef AF_ALG
#define AF_ALG 38
#endif

enum probe {
	P_THREAD,
	P_FORK,
	P_CLONE_NEWUSER,
	P_CLONE3,
	P_UNSHARE,
	P_INET,
	P_UNIX,
	P_ROUTE,
	P_SOCK_DIAG,
	P_ALG,
	P_PAIR_UNIX,
	P_PAIR_INET,
	P_CONNECT,
	P_N,
};

static void *thread_fn(void *arg)
{
	return arg;
}

/* 0 when the call worked, else its errno. */
static int ret_of(long r)
{
	return r < 0 ? errno : 0;
}

static int sock(int family, int type, int proto)
{
	int fd = socket(family, type, proto);

	if (fd >= 0)
		close(fd);
	return ret_of(fd);
}

static int pair(int family)
{
	int sv[2];
	int r = socketpair(family, SOCK_STREAM, 0, sv);

	if (r == 0)
		close(sv[0]), close(sv[1]);
	return ret_of(r);
}

static int probe(enum probe p)
{
	pthread_t t;
	pid_t pid;
	long r;

	switch (p) {
	case P_THREAD:
		r = pthread_create(&t, NULL, thread_fn, NULL);
		if (r == 0)
			pthread_join(t, NULL);
		return (int)r;
	case P_FORK:
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return ret_of(pid);
	case P_CLONE_NEWUSER:
		r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
		if (r == 0)
			_exit(0);
		if (r > 0)
			waitpid((pid_t)r, NULL, 0);
		return ret_of(r);
	case P_CLONE3:
		/* a size too small for any clone_args: EINVAL when it runs */
		return ret_of(syscall(SYS_clone3, NULL, (size_t)0));
	case P_UNSHARE:
		return ret_of(syscall(SYS_unshare, 0));
	case P_INET:
		return sock(AF_INET, SOCK_STREAM, 0);
	case P_UNIX:
		return sock(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	case P_ROUTE:
		return sock(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	case P_SOCK_DIAG:
		return sock(AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG);
	case P_ALG:
		return sock(AF_ALG, SOCK_SEQPACKET, 0);
	case P_PAIR_UNIX:
		return pair(AF_UNIX);
	case P_PAIR_INET:
		return pair(AF_INET);
	case P_CONNECT:
		return ret_of(connect(-1, NULL, 0));
	case P_N:
		break;
	}
	return -1;
}

struct result {
	int entered, seccomp;
	int v[P_N];
};

/* Every probe in a child that entered spec (with seccomp as asked). */
static struct result run_spec(struct privs_spec spec)
{
	struct result res = {0};
	int fds[2], st;
	pid_t pid;

	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		enum privs_seccomp_state s;

		close(fds[0]);
		res.entered = privs_enter(&spec, false, &s);
		res.seccomp = s == PRIVS_SECCOMP_ON;
		for (int p = 0; res.entered == 0 && p < P_N; p++)
			res.v[p] = probe((enum probe)p);
		if (write(fds[1], &res, sizeof(res)) != sizeof(res))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	cr_assert_eq(read(fds[0], &res, sizeof(res)), (ssize_t)sizeof(res));
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert_eq(res.entered, 0, "privs_enter: %s", strerror(-res.entered));
	return res;
}

static struct result run(const char *const *syscalls, bool seccomp)
{
	return run_spec((struct privs_spec){
		.caps = 0, .seccomp = seccomp, .syscalls = syscalls});
}

static const char *const sockets[] = {"socket", "socketpair", "connect", NULL};

Test(privs, the_kernel_without_the_filter)
{
	struct result r = run(sockets, false);

	/* what the filtered runs are compared with: none of these is EPERM
	 * from the kernel itself */
	for (int p = 0; p < P_N; p++)
		cr_expect_neq(r.v[p], EPERM, "probe %d", p);
	cr_expect_eq(r.v[P_FORK], 0);
	cr_expect_eq(r.v[P_CLONE3], EINVAL);
	cr_expect_eq(r.v[P_CONNECT], EBADF);
}

Test(privs, base_makes_threads_no_processes_no_sockets)
{
	struct result r = run(NULL, true);

	if (!r.seccomp)
		cr_skip_test("no filter under a sanitizer");
	cr_expect_eq(r.v[P_THREAD], 0,
		     "pthread_create: clone3's ENOSYS, "
		     "then clone with CLONE_THREAD");
	cr_expect_eq(r.v[P_FORK], EPERM);
	cr_expect_eq(r.v[P_CLONE_NEWUSER], EPERM);
	cr_expect_eq(r.v[P_CLONE3], ENOSYS);
	cr_expect_eq(r.v[P_UNSHARE], EPERM);
	for (int p = P_INET; p <= P_CONNECT; p++)
		cr_expect_eq(r.v[p], EPERM, "probe %d: no socket of any kind",
			     p);
}

Test(privs, sockets_of_the_families_the_programs_use_only)
{
	struct result r = run(sockets, true);

	if (!r.seccomp)
		cr_skip_test("no filter under a sanitizer");
	cr_expect_eq(r.v[P_THREAD], 0);
	cr_expect_eq(r.v[P_FORK], EPERM);
	cr_expect_eq(r.v[P_INET], 0);
	cr_expect_eq(r.v[P_UNIX], 0);
	cr_expect_eq(r.v[P_ROUTE], 0, "glibc's getaddrinfo asks it");
	cr_expect_eq(r.v[P_PAIR_UNIX], 0);
	cr_expect_eq(r.v[P_CONNECT], EBADF, "allowed, on no socket");
	cr_expect_eq(r.v[P_SOCK_DIAG], EPERM);
	cr_expect_eq(r.v[P_ALG], EPERM);
	cr_expect_eq(r.v[P_PAIR_INET], EPERM);
}

Test(privs, unix_sockets_only_makes_no_network_socket)
{
	struct result r =
		run_spec((struct privs_spec){.seccomp = true,
					     .syscalls = sockets,
					     .unix_sockets_only = true});

	if (!r.seccomp)
		cr_skip_test("no filter under a sanitizer");
	cr_expect_eq(r.v[P_UNIX], 0, "a JVM's attach socket");
	cr_expect_eq(r.v[P_PAIR_UNIX], 0);
	cr_expect_eq(r.v[P_CONNECT], EBADF, "allowed, on no socket");
	cr_expect_eq(r.v[P_INET], EPERM);
	cr_expect_eq(r.v[P_ROUTE], EPERM);
	cr_expect_eq(r.v[P_SOCK_DIAG], EPERM);
	cr_expect_eq(r.v[P_ALG], EPERM);
	cr_expect_eq(r.v[P_PAIR_INET], EPERM);
}
