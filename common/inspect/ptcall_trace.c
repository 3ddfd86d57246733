/* SPDX-License-Identifier: Apache-2.0 */
/* ptcall: choosing a safe thread, stopping it, running calls in it under a
 * deadline, restoring it and detaching. */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "base/fileio.h"
#include "base/parse.h"
#include "base/util.h"
#include "ptcall_internal.h"

#define MAX_THREADS 4096u
#define STACK_SCAN 2048u /* bytes above sp searched for malloc frames */
#define STACK_HEADROOM (64u << 10) /* below sp, for the called function */
#define STOP_WAIT_US 1000000ull	   /* extra time for a stop after a deadline */
#define STUCK_WAIT_US 5000000ull
#define REAP_WAIT_US 500000ull /* a killed thread's end, at close */
#define MAX_DEAD 16

struct candidate {
	int tid;
	int score; /* higher first; < 0 never */
};

/* Signals that stay deliverable during a call: synchronous faults (a
 * blocked one would make the kernel reset its handler) and the
 * unblockable ones. */
static uint64_t call_mask(void)
{
	static const int keep[] = {SIGSEGV, SIGBUS, SIGILL,  SIGFPE,
				   SIGTRAP, SIGSYS, SIGKILL, SIGSTOP};
	uint64_t m = ~0ull;

	for (size_t i = 0; i < ARRAY_SIZE(keep); i++)
		m &= ~(1ull << (keep[i] - 1));
	return m;
}

static bool restartable(long nr)
{
	/* Calls that restart transparently after a ptrace stop; others
	 * (epoll_wait, sigtimedwait…) may return EINTR to the program. */
	static const long good[] = {
		SYS_read,
		SYS_readv,
		SYS_pread64,
		SYS_write,
		SYS_recvfrom,
		SYS_recvmsg,
		SYS_accept,
		SYS_accept4,
		SYS_wait4,
		SYS_waitid,
		SYS_ppoll,
		SYS_pselect6,
		SYS_clock_nanosleep,
		SYS_rt_sigsuspend,
#ifdef SYS_pause
		SYS_pause,
		SYS_poll,
		SYS_select,
		SYS_nanosleep,
#endif
	};

	for (size_t i = 0; i < ARRAY_SIZE(good); i++)
		if (nr == good[i])
			return true;
	return false;
}

/* Ranks a thread from /proc: only a hint, the stopped registers decide. */
static int rank_thread(struct ptcall_session *s, int tid)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char path[64];
	const char *p;
	int64_t nr;

	strbuf_init(&sb, 4096);
	snprintf(path, sizeof(path), "task/%d/stat", tid);
	if (read_file_at(s->pid_fd, path, 4096, &sb) < 0)
		return -1;
	p = strrchr(sb.buf, ')');
	if (!p || p[1] != ' ' || strchr("TtZXxD", p[2]))
		return -1; /* stopped, dead or uninterruptible */
	strbuf_reset(&sb);
	snprintf(path, sizeof(path), "task/%d/syscall", tid);
	if (read_file_at(s->pid_fd, path, 4096, &sb) < 0)
		return -1;
	if (startswith(sb.buf, "running"))
		return 1;
	p = sb.buf;
	if (scan_i64(&p, &nr) < 0 || nr < 0)
		return 1;
	if (ptcall_syscall_unsafe((long)nr))
		return -1;
	/* a futex wait may be for one of libc's own locks (stdio, loader)
	 * while holding another: prefer threads blocked in plain I/O */
	return restartable((long)nr) ? 3 : 2;
}

static int by_score(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->score != y->score)
		return y->score - x->score;
	return x->tid - y->tid;
}

static int list_candidates(struct ptcall_session *s, struct candidate **ret,
			   size_t *ret_n)
{
	_cleanup_free_ struct candidate *c = NULL;
	size_t n = 0;
	DIR *d;
	struct dirent *de;
	int fd = openat(s->pid_fd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	c = calloc(MAX_THREADS, sizeof(*c));
	while (c && n < MAX_THREADS && (de = readdir(d))) {
		int tid;

		if (parse_int(de->d_name, &tid) < 0)
			continue;
		c[n].tid = tid;
		c[n].score = rank_thread(s, tid);
		if (c[n].score >= 0)
			n++;
	}
	closedir(d);
	if (!c)
		return -ENOMEM;
	qsort(c, n, sizeof(*c), by_score);
	*ret = TAKE_PTR(c);
	*ret_n = n;
	return 0;
}

static void pause_us(unsigned us)
{
	struct timespec ts = {0, (long)us * 1000};

	nanosleep(&ts, NULL);
}

/* Waits for the next stop of the thread until s->deadline_us. */
static int wait_stop(struct ptcall_session *s, int *ret_status)
{
	unsigned delay = 5, spins = 0;

	for (;;) {
		int st;
		pid_t r = waitpid(s->tid, &st, __WALL | WNOHANG);

		if (r == s->tid && (WIFEXITED(st) || WIFSIGNALED(st))) {
			s->attached = false;
			ptcall_why(s, false, "thread %d of pid %d exited",
				   s->tid, s->pid);
			return -ESRCH;
		}
		if (r == s->tid) {
			*ret_status = st;
			return 0;
		}
		if (r < 0 && errno != EINTR) {
			s->attached = errno == ECHILD ? false : s->attached;
			return errno == ECHILD ? -ESRCH : -errno;
		}
		if (now_monotonic_us() >= s->deadline_us)
			return -ETIMEDOUT;
		/* a call takes tens of µs: yield first, then back off */
		if (spins++ < 50) {
			sched_yield();
			continue;
		}
		pause_us(delay);
		delay = delay < 1000 ? delay * 2 : 1000;
	}
}

static void defer_signal(struct ptcall_session *s)
{
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, s->tid, NULL, &si) < 0)
		return;
	if (s->n_deferred < PTCALL_MAX_DEFERRED)
		s->deferred[s->n_deferred++] = si;
}

static int seize_stop(struct ptcall_session *s, int tid)
{
	int st, r;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0)
		return -errno;
	s->tid = tid;
	s->attached = true;
	s->stop_start_us = now_monotonic_us();
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0)
		return -errno;
	for (;;) {
		r = wait_stop(s, &st);
		if (r < 0)
			return r;
		if (st >> 16 == PTRACE_EVENT_STOP)
			break;
		/* a signal on its way: let it through, the interrupt
		 * stop follows */
		if (ptrace(PTRACE_CONT, tid, NULL,
			   (void *)(uintptr_t)WSTOPSIG(st)) < 0)
			return -errno;
	}
	s->in_sig_stop = false;
	return 0;
}

/* Is any word of the stack top a return address into malloc code? */
static bool malloc_frame_near(struct ptcall_session *s, uint64_t sp)
{
	uint64_t words[STACK_SCAN / 8];
	const struct ptvma *v = ptmaps_find(&s->maps, sp);
	size_t len = STACK_SCAN;

	if (!v || s->zone_lo == s->zone_hi)
		return false;
	if (v->end - sp < len)
		len = (size_t)(v->end - sp) & ~(size_t)7;
	if (ptcall_read_mem(s, sp, words, len) < 0)
		return true; /* cannot tell: unsafe */
	for (size_t i = 0; i < len / 8; i++)
		if (words[i] >= s->zone_lo && words[i] < s->zone_hi)
			return true;
	return false;
}

static const char *unsafe_reason(struct ptcall_session *s,
				 const struct ptarch_regs *r)
{
	long nr = ptarch_syscall_nr(r);
	uint64_t sp = ptarch_sp(r);
	const struct ptvma *v = ptmaps_find(&s->maps, sp);

	if (nr >= 0 && ptcall_syscall_unsafe(nr))
		return "in a system call malloc or fork makes";
	if (nr < 0 && ptcall_pc_in_libc(s, ptarch_pc(r)))
		return "running inside libc";
	if (malloc_frame_near(s, sp))
		return "malloc code on its stack";
	if (!v || (!streq(v->path, "[stack]") &&
		   sp - v->start < STACK_HEADROOM + PTCALL_SCRATCH_MAX))
		return "too little stack left";
	return NULL;
}

static int save_state(struct ptcall_session *s)
{
	uint64_t mask = call_mask(), top;
	int r;

	r = ptarch_save_fp(s->tid, &s->fp);
	if (r < 0)
		return r;
	if (ptrace(PTRACE_GETSIGMASK, s->tid, (void *)sizeof(uint64_t),
		   &s->saved_mask) < 0)
		return -errno;
	if (ptrace(PTRACE_SETSIGMASK, s->tid, (void *)sizeof(uint64_t), &mask) <
	    0)
		return -errno;
	s->saved_state = true;
	top = (ptarch_sp(&s->saved) - PTARCH_RED_ZONE) & ~15ull;
	s->scratch_base = top - PTCALL_SCRATCH_MAX;
	s->scratch_used = 0;
	return 0;
}

/* Threads that died while seized by us and whose end we have not waited
 * for yet. Until the tracer waits, the kernel keeps such a thread as a
 * zombie traced by us and its parent cannot reap the process: seen on a
 * loaded machine, a victim OOM-killed during the sidecar's probe stayed a
 * zombie while the sidecar lived, and its parent hung in wait4. */
static pthread_mutex_t dead_mu = PTHREAD_MUTEX_INITIALIZER;
static int dead_tids[MAX_DEAD];
static size_t n_dead;

/* True when tid is ours no more: its end waited for, detached from a
 * stop, or not our tracee (ECHILD). */
static bool reap_once(int tid)
{
	int st;
	pid_t r = waitpid(tid, &st, __WALL | WNOHANG);

	if (r == tid && (WIFEXITED(st) || WIFSIGNALED(st)))
		return true;
	if (r == tid) /* a stop after all: it lives, let it go */
		return ptrace(PTRACE_DETACH, tid, NULL, NULL) == 0 ||
		       errno != ESRCH;
	return r < 0 && errno != EINTR;
}

/* PTRACE_DETACH said ESRCH: the thread is not in a ptrace stop, killed
 * and exiting (a thread group leader ends only after its other threads)
 * or running on. Waits a while for its end or its stop; one still
 * pending is left to ptcall_reap(). */
static void reap_dead(int tid)
{
	uint64_t end = now_monotonic_us() + REAP_WAIT_US;
	unsigned delay = 100;

	while (!reap_once(tid)) {
		if (now_monotonic_us() >= end) {
			pthread_mutex_lock(&dead_mu);
			if (n_dead < MAX_DEAD)
				dead_tids[n_dead++] = tid;
			pthread_mutex_unlock(&dead_mu);
			return;
		}
		pause_us(delay);
		delay = delay < 20000 ? delay * 2 : 20000;
	}
}

void ptcall_reap(void)
{
	size_t k = 0;

	pthread_mutex_lock(&dead_mu);
	for (size_t i = 0; i < n_dead; i++)
		if (!reap_once(dead_tids[i]))
			dead_tids[k++] = dead_tids[i];
	n_dead = k;
	pthread_mutex_unlock(&dead_mu);
}

static void detach_plain(struct ptcall_session *s, int sig)
{
	if (ptrace(PTRACE_DETACH, s->tid, NULL, (void *)(uintptr_t)sig) < 0 &&
	    errno == ESRCH)
		reap_dead(s->tid);
	s->attached = false;
	s->rep->stopped_us += now_monotonic_us() - s->stop_start_us;
}

/* The interrupt did not stop the thread in time (uninterruptible sleep):
 * it is still seized and will stop later; wait for that stop a while so it
 * can be detached instead of staying stopped while we live. */
static int settle_seized(struct ptcall_session *s)
{
	int st;

	s->deadline_us = now_monotonic_us() + STUCK_WAIT_US;
	if (wait_stop(s, &st) == 0 && st >> 16 != PTRACE_EVENT_STOP)
		return WSTOPSIG(st); /* a signal on its way: pass it on */
	return 0;
}

static int try_thread(struct ptcall_session *s, int tid, const char **why)
{
	int r = seize_stop(s, tid);

	if (r < 0) {
		int sig = r == -ETIMEDOUT && s->attached ? settle_seized(s) : 0;

		if (s->attached)
			detach_plain(s, sig);
		return r;
	}
	s->rep->threads_tried++;
	r = ptarch_get_regs(tid, &s->saved);
	if (r < 0) {
		detach_plain(s, 0);
		return r;
	}
	*why = unsafe_reason(s, &s->saved);
	if (*why) {
		detach_plain(s, 0);
		return -EAGAIN;
	}
	r = save_state(s);
	if (r < 0)
		return r; /* ptcall_close restores what was saved */
	s->rep->tid = tid;
	return 0;
}

static int explain_attach_error(struct ptcall_session *s, int r)
{
	if (r == -EPERM)
		ptcall_why(s, true,
			   "ptrace of pid %d denied (EPERM): needs "
			   "CAP_SYS_PTRACE or the same uid, and no Yama "
			   "scope or seccomp filter against it",
			   s->pid);
	else if (r == -ETIMEDOUT)
		ptcall_why(s, true, "deadline expired while stopping pid %d",
			   s->pid);
	else
		ptcall_why(s, false, "attaching to pid %d: %s", s->pid,
			   strerror(-r));
	return r;
}

int ptcall_attach(struct ptcall_session *s)
{
	_cleanup_free_ struct candidate *c = NULL;
	const char *why = "no thread found";
	int last_tid = 0;
	size_t n = 0;
	int r;

	if (s->attached)
		return -EINVAL;
	ptcall_reap();
	r = list_candidates(s, &c, &n);
	if (r < 0)
		return explain_attach_error(s, r);
	for (size_t i = 0; i < n; i++) {
		r = try_thread(s, c[i].tid, &why);
		if (r == 0)
			return 0;
		if (r == -ESRCH) /* that thread ended meanwhile */
			continue;
		if (r != -EAGAIN || s->saved_state)
			return explain_attach_error(s, r);
		last_tid = c[i].tid;
	}
	ptcall_why(s, true,
		   "no thread of pid %d is safe to use (%u tried; last: "
		   "thread %d %s)",
		   s->pid, s->rep->threads_tried, last_tid, why);
	return -EAGAIN;
}

/* A stop during a call. Returns 0 when the call returned (*ret set),
 * 1 when the thread must be resumed, -EFAULT when the callee crashed. */
static int classify_stop(struct ptcall_session *s, int st, uint64_t call_sp,
			 uint64_t *ret)
{
	struct ptarch_regs r;
	siginfo_t si;
	int sig = WSTOPSIG(st);

	if (st >> 16 == PTRACE_EVENT_STOP) {
		s->in_sig_stop = false;
		return 1; /* group-stop or our interrupt */
	}
	s->in_sig_stop = true;
	if (sig == SIGSEGV && ptarch_get_regs(s->tid, &r) == 0 &&
	    ptarch_returned(&r, call_sp)) {
		*ret = ptarch_retval(&r);
		return 0;
	}
	if (ptrace(PTRACE_GETSIGINFO, s->tid, NULL, &si) == 0 &&
	    si.si_code > 0 &&
	    (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
	     sig == SIGFPE || sig == SIGTRAP || sig == SIGSYS)) {
		ptcall_why(s, true,
			   "the called function crashed in pid %d "
			   "(signal %d, code %d); thread restored",
			   s->pid, sig, si.si_code);
		return -EFAULT;
	}
	defer_signal(s); /* re-delivered after the call */
	return 1;
}

static bool abort_is_safe(struct ptcall_session *s)
{
	struct ptarch_regs r;

	if (ptarch_get_regs(s->tid, &r) < 0)
		return true;
	/* waiting for a lock holds none of malloc's */
	if (ptarch_syscall_nr(&r) == SYS_futex)
		return true;
	return !(ptarch_pc(&r) >= s->zone_lo && ptarch_pc(&r) < s->zone_hi) &&
	       !malloc_frame_near(s, ptarch_sp(&r));
}

/* The deadline passed during a call: stop the thread, then either abort
 * (0 → caller returns -ETIMEDOUT) or, when it runs malloc code that may
 * hold a lock, grant one more period (1). */
static int on_deadline(struct ptcall_session *s, uint64_t call_sp,
		       uint64_t *ret, bool *done)
{
	int st, r;

	*done = false;
	ptrace(PTRACE_INTERRUPT, s->tid, NULL, NULL);
	s->deadline_us = now_monotonic_us() + STOP_WAIT_US;
	r = wait_stop(s, &st);
	if (r == -ETIMEDOUT) {
		s->stuck = true;
		return r;
	}
	if (r < 0)
		return r;
	r = classify_stop(s, st, call_sp, ret);
	if (r <= 0) {
		*done = r == 0;
		return r;
	}
	if (!s->grace_used && !abort_is_safe(s)) {
		s->grace_used = true;
		s->deadline_us = now_monotonic_us() + s->timeout_us;
		return 1;
	}
	ptcall_why(s, true,
		   "deadline expired during a call in pid %d; "
		   "thread %d restored and detached",
		   s->pid, s->tid);
	return -ETIMEDOUT;
}

static int run_call(struct ptcall_session *s, uint64_t call_sp, uint64_t *ret)
{
	int st, r;
	bool done;

	for (;;) {
		r = wait_stop(s, &st);
		if (r == -ETIMEDOUT) {
			r = on_deadline(s, call_sp, ret, &done);
			if (done)
				return 0;
		} else if (r == 0) {
			r = classify_stop(s, st, call_sp, ret);
		}
		if (r <= 0)
			return r;
		if (ptrace(PTRACE_CONT, s->tid, NULL, NULL) < 0)
			return -errno;
	}
}

int ptcall_call(struct ptcall_session *s, uint64_t fn, const uint64_t *args,
		size_t n_args, uint64_t *ret)
{
	struct ptarch_regs r = s->saved;
	uint64_t slot = 0, call_sp = 0, zero = 0, v = 0;
	int rc;

	if (!s->attached || !s->saved_state || s->stuck ||
	    n_args > PTCALL_MAX_ARGS)
		return -EINVAL;
	ptarch_setup_call(&r, fn, args, n_args, s->scratch_base, &slot,
			  &call_sp);
	if (slot) {
		rc = ptcall_write_mem(s, slot, &zero, sizeof(zero));
		if (rc < 0)
			return rc;
	}
	rc = ptarch_set_regs(s->tid, &r);
	if (rc < 0)
		return rc;
	s->rep->calls++;
	if (ptrace(PTRACE_CONT, s->tid, NULL, NULL) < 0)
		return -errno;
	rc = run_call(s, call_sp, &v);
	if (rc < 0)
		return rc;
	*ret = v;
	return 0;
}

/* Last resort when the thread would not stop after a deadline. */
static void wait_unstuck(struct ptcall_session *s)
{
	int st;

	s->deadline_us = now_monotonic_us() + STUCK_WAIT_US;
	ptrace(PTRACE_INTERRUPT, s->tid, NULL, NULL);
	if (wait_stop(s, &st) == 0) {
		s->stuck = false;
		s->in_sig_stop = st >> 16 != PTRACE_EVENT_STOP;
	}
}

static void redeliver(struct ptcall_session *s, unsigned from)
{
	/* siginfo cannot be forged for another process: these arrive as
	 * tgkill from us, with the right number */
	for (unsigned i = from; i < s->n_deferred; i++)
		syscall(SYS_tgkill, s->pid, s->tid, s->deferred[i].si_signo);
}

static int restore_and_detach(struct ptcall_session *s)
{
	int r = 0, sig = 0;
	unsigned from = 0;

	if (s->stuck)
		wait_unstuck(s);
	if (s->saved_state && !s->stuck) {
		r = ptarch_restore(s->tid, &s->saved);
		if (ptarch_restore_fp(s->tid, &s->fp) < 0 && r == 0)
			r = -EIO;
		if (ptrace(PTRACE_SETSIGMASK, s->tid, (void *)sizeof(uint64_t),
			   &s->saved_mask) < 0 &&
		    r == 0)
			r = -errno;
	}
	/* from a signal-delivery-stop the first deferred signal leaves
	 * with its own siginfo */
	if (s->in_sig_stop && s->n_deferred &&
	    ptrace(PTRACE_SETSIGINFO, s->tid, NULL, &s->deferred[0]) == 0) {
		sig = s->deferred[0].si_signo;
		from = 1;
	}
	if (ptrace(PTRACE_DETACH, s->tid, NULL, (void *)(uintptr_t)sig) < 0) {
		if (errno == ESRCH)
			reap_dead(s->tid);
		else if (r == 0)
			r = -errno;
	}
	s->attached = false;
	s->rep->stopped_us += now_monotonic_us() - s->stop_start_us;
	redeliver(s, from);
	if (r < 0 && r != -ESRCH)
		ptcall_why(s, true, "restoring thread %d of pid %d failed: %s",
			   s->tid, s->pid, strerror(-r));
	return r == -ESRCH ? 0 : r;
}

int ptcall_close(struct ptcall_session *s)
{
	int r = 0;

	if (!s)
		return 0;
	if (s->attached)
		r = restore_and_detach(s);
	ptcall_session_free(s);
	return r;
}
