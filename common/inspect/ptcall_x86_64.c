/* SPDX-License-Identifier: Apache-2.0 */
/* ptcall, x86_64 part: SysV ABI call setup, registers and xstate. */
#if defined(__x86_64__)
#include <errno.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "base/util.h"
#include "ptcall_internal.h"

/* Big enough for AVX-512 + AMX xsave areas; the kernel trims iov_len. */
#define XSTATE_MAX (16u << 10)
#define EFLAGS_DF 0x400ull

int ptarch_get_regs(int tid, struct ptarch_regs *r)
{
	if (ptrace(PTRACE_GETREGS, tid, NULL, &r->u) < 0)
		return -errno;
	return 0;
}

int ptarch_set_regs(int tid, const struct ptarch_regs *r)
{
	if (ptrace(PTRACE_SETREGS, tid, NULL, &r->u) < 0)
		return -errno;
	return 0;
}

int ptarch_save_fp(int tid, struct ptarch_fp *fp)
{
	struct iovec iov;

	fp->buf = calloc(1, XSTATE_MAX);
	if (!fp->buf)
		return -ENOMEM;
	iov = (struct iovec){fp->buf, XSTATE_MAX};
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) == 0) {
		fp->kind = NT_X86_XSTATE;
		fp->len = iov.iov_len;
		return 0;
	}
	iov = (struct iovec){fp->buf, sizeof(struct user_fpregs_struct)};
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRFPREG, &iov) == 0) {
		fp->kind = NT_PRFPREG;
		fp->len = iov.iov_len;
		return 0;
	}
	ptarch_fp_release(fp);
	return -errno;
}

int ptarch_restore_fp(int tid, const struct ptarch_fp *fp)
{
	struct iovec iov = {fp->buf, fp->len};

	if (!fp->buf)
		return 0;
	if (ptrace(PTRACE_SETREGSET, tid, (void *)(uintptr_t)fp->kind, &iov) <
	    0)
		return -errno;
	return 0;
}

void ptarch_fp_release(struct ptarch_fp *fp)
{
	free(fp->buf);
	fp->buf = NULL;
	fp->len = 0;
}

uint64_t ptarch_pc(const struct ptarch_regs *r)
{
	return r->u.rip;
}

uint64_t ptarch_sp(const struct ptarch_regs *r)
{
	return r->u.rsp;
}

long ptarch_syscall_nr(const struct ptarch_regs *r)
{
	return (long)r->u.orig_rax;
}

void ptarch_setup_call(struct ptarch_regs *r, uint64_t fn, const uint64_t *args,
		       size_t n, uint64_t top, uint64_t *ret_slot,
		       uint64_t *ret_sp)
{
	unsigned long long *argreg[] = {&r->u.rdi, &r->u.rsi, &r->u.rdx,
					&r->u.rcx, &r->u.r8,  &r->u.r9};
	/* As after a call: at entry (rsp + 8) % 16 == 0, the return
	 * address sits 8 bytes below a 16-byte boundary. */
	uint64_t sp = (top & ~15ull) - 8;

	for (size_t i = 0; i < n && i < ARRAY_SIZE(argreg); i++)
		*argreg[i] = args[i];
	r->u.rsp = sp;
	r->u.rip = fn;
	r->u.rax = 0; /* no vector registers used by a variadic callee */
	/* Not in a syscall any more: the kernel must not "restart" it by
	 * moving our rip back over a syscall instruction. */
	r->u.orig_rax = (unsigned long long)-1;
	r->u.eflags &= ~EFLAGS_DF;
	*ret_slot = sp;
	*ret_sp = sp + 8; /* after the ret popped the 0 */
}

bool ptarch_returned(const struct ptarch_regs *r, uint64_t call_sp)
{
	return r->u.rip == 0 && r->u.rsp == call_sp;
}

uint64_t ptarch_retval(const struct ptarch_regs *r)
{
	return r->u.rax;
}

int ptarch_restore(int tid, const struct ptarch_regs *saved)
{
	/* orig_rax and rax (-ERESTARTSYS…) come back as they were: when the
	 * thread resumes, the kernel restarts the interrupted system call. */
	return ptarch_set_regs(tid, saved);
}
#endif
