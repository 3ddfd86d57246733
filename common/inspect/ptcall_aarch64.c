/* SPDX-License-Identifier: Apache-2.0 */
/* ptcall, aarch64 part (AAPCS64). Written to the same interface as
 * ptcall_x86_64.c; NOT yet built or tested on an arm64 machine.
 *
 * Differences from x86_64 that shape it:
 * - the return address lives in x30 (lr): set it to 0, no stack slot;
 *   no red zone, sp 16-byte aligned;
 * - the syscall number is its own regset (NT_ARM_SYSTEM_CALL): -1 stops
 *   the kernel from restarting "our" call;
 * - the kernel keeps the first syscall argument in orig_x0, which a tracer
 *   cannot write and which our own calls' syscalls overwrite. So an
 *   interrupted syscall is restarted by hand at restore, as the kernel
 *   would: x0 = orig_x0 (read from /proc/<tid>/syscall), pc -= 4, and
 *   x8 = __NR_restart_syscall for -ERESTART_RESTARTBLOCK (unlike the
 *   kernel it also restarts -ERESTARTNOHAND/-ERESTARTSYS when a handler
 *   without SA_RESTART is about to run, where EINTR would be due);
 * - glibc may use SVE in its string functions: the SVE regset is saved
 *   when the kernel has it, else FPSIMD. */
#if defined(__aarch64__)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/parse.h"
#include "base/util.h"
#include "ptcall_internal.h"

#define FP_MAX (64u << 10) /* SVE with 2048-bit vectors fits */
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516

static int regset(int req, int tid, unsigned type, void *buf, size_t len,
		  size_t *ret_len)
{
	struct iovec iov = {buf, len};

	if (ptrace(req, tid, (void *)(uintptr_t)type, &iov) < 0)
		return -errno;
	if (ret_len)
		*ret_len = iov.iov_len;
	return 0;
}

/* orig_x0 of the syscall the thread is in: /proc/<tid>/syscall prints it
 * as the first argument. */
static uint64_t read_orig_x0(int tid)
{
	char path[64], buf[256];
	const char *p;
	uint64_t nr, a0 = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/syscall", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = buf;
	if (scan_u64(&p, &nr) < 0 || p[0] != ' ' || p[1] != '0' || p[2] != 'x')
		return 0;
	p += 3;
	return scan_hex_u64(&p, &a0) < 0 ? 0 : a0;
}

int ptarch_get_regs(int tid, struct ptarch_regs *r)
{
	int nr = -1;
	int rc = regset(PTRACE_GETREGSET, tid, NT_PRSTATUS, &r->u, sizeof(r->u),
			NULL);

	if (rc < 0)
		return rc;
	rc = regset(PTRACE_GETREGSET, tid, NT_ARM_SYSTEM_CALL, &nr, sizeof(nr),
		    NULL);
	if (rc < 0)
		return rc;
	r->syscallno = nr;
	r->orig_x0 = nr >= 0 ? read_orig_x0(tid) : 0;
	return 0;
}

int ptarch_set_regs(int tid, const struct ptarch_regs *r)
{
	int nr = (int)r->syscallno;
	int rc = regset(PTRACE_SETREGSET, tid, NT_PRSTATUS, (void *)&r->u,
			sizeof(r->u), NULL);

	if (rc < 0)
		return rc;
	return regset(PTRACE_SETREGSET, tid, NT_ARM_SYSTEM_CALL, &nr,
		      sizeof(nr), NULL);
}

int ptarch_save_fp(int tid, struct ptarch_fp *fp)
{
	fp->buf = calloc(1, FP_MAX);
	if (!fp->buf)
		return -ENOMEM;
	if (regset(PTRACE_GETREGSET, tid, NT_ARM_SVE, fp->buf, FP_MAX,
		   &fp->len) == 0) {
		fp->kind = NT_ARM_SVE;
		return 0;
	}
	if (regset(PTRACE_GETREGSET, tid, NT_PRFPREG, fp->buf, FP_MAX,
		   &fp->len) == 0) {
		fp->kind = NT_PRFPREG;
		return 0;
	}
	ptarch_fp_release(fp);
	return -errno;
}

int ptarch_restore_fp(int tid, const struct ptarch_fp *fp)
{
	if (!fp->buf)
		return 0;
	return regset(PTRACE_SETREGSET, tid, fp->kind, fp->buf, fp->len, NULL);
}

void ptarch_fp_release(struct ptarch_fp *fp)
{
	free(fp->buf);
	fp->buf = NULL;
	fp->len = 0;
}

uint64_t ptarch_pc(const struct ptarch_regs *r)
{
	return r->u.pc;
}

uint64_t ptarch_sp(const struct ptarch_regs *r)
{
	return r->u.sp;
}

long ptarch_syscall_nr(const struct ptarch_regs *r)
{
	return (long)r->syscallno;
}

void ptarch_setup_call(struct ptarch_regs *r, uint64_t fn, const uint64_t *args,
		       size_t n, uint64_t top, uint64_t *ret_slot,
		       uint64_t *ret_sp)
{
	uint64_t sp = top & ~15ull;

	for (size_t i = 0; i < n && i < 8; i++)
		r->u.regs[i] = args[i];
	r->u.regs[30] = 0; /* lr: the impossible return address */
	r->u.sp = sp;
	r->u.pc = fn;
	r->syscallno = -1;
	*ret_slot = 0;
	*ret_sp = sp;
}

bool ptarch_returned(const struct ptarch_regs *r, uint64_t call_sp)
{
	return r->u.pc == 0 && r->u.sp == call_sp;
}

uint64_t ptarch_retval(const struct ptarch_regs *r)
{
	return r->u.regs[0];
}

int ptarch_restore(int tid, const struct ptarch_regs *saved)
{
	struct ptarch_regs r = *saved;
	int64_t x0 = (int64_t)r.u.regs[0];

	if (r.syscallno >= 0 &&
	    (x0 == -ERESTARTSYS || x0 == -ERESTARTNOINTR ||
	     x0 == -ERESTARTNOHAND || x0 == -ERESTART_RESTARTBLOCK)) {
		/* restart by hand: the kernel's orig_x0 is ours by now */
		r.u.regs[0] = r.orig_x0;
		r.u.pc -= 4;
		if (x0 == -ERESTART_RESTARTBLOCK)
			r.u.regs[8] = __NR_restart_syscall;
		r.syscallno = -1;
	}
	return ptarch_set_regs(tid, &r);
}
#endif
