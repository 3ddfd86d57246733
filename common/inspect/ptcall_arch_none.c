/* SPDX-License-Identifier: Apache-2.0 */
/* ptcall on an architecture without an implementation: every call is
 * refused by ptcall_open (PTARCH_EM == EM_NONE); these only link. */
#if !defined(__x86_64__) && !defined(__aarch64__)
#include <errno.h>

#include "ptcall_internal.h"

int ptarch_get_regs(int tid, struct ptarch_regs *r)
{
	(void)tid, (void)r;
	return -ENOTSUP;
}

int ptarch_set_regs(int tid, const struct ptarch_regs *r)
{
	(void)tid, (void)r;
	return -ENOTSUP;
}

int ptarch_save_fp(int tid, struct ptarch_fp *fp)
{
	(void)tid, (void)fp;
	return -ENOTSUP;
}

int ptarch_restore_fp(int tid, const struct ptarch_fp *fp)
{
	(void)tid, (void)fp;
	return -ENOTSUP;
}

void ptarch_fp_release(struct ptarch_fp *fp)
{
	(void)fp;
}

uint64_t ptarch_pc(const struct ptarch_regs *r)
{
	(void)r;
	return 0;
}

uint64_t ptarch_sp(const struct ptarch_regs *r)
{
	(void)r;
	return 0;
}

long ptarch_syscall_nr(const struct ptarch_regs *r)
{
	(void)r;
	return -1;
}

void ptarch_setup_call(struct ptarch_regs *r, uint64_t fn, const uint64_t *args,
		       size_t n, uint64_t top, uint64_t *ret_slot,
		       uint64_t *ret_sp)
{
	(void)r, (void)fn, (void)args, (void)n, (void)top;
	*ret_slot = *ret_sp = 0;
}

bool ptarch_returned(const struct ptarch_regs *r, uint64_t call_sp)
{
	(void)r, (void)call_sp;
	return false;
}

uint64_t ptarch_retval(const struct ptarch_regs *r)
{
	(void)r;
	return 0;
}

int ptarch_restore(int tid, const struct ptarch_regs *saved)
{
	(void)tid, (void)saved;
	return -ENOTSUP;
}
#endif
