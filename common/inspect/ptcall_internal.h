/* SPDX-License-Identifier: Apache-2.0 */
/* Internals of ptcall shared by ptcall.c, ptcall_elf.c, ptcall_malloc.c and
 * the per-architecture file (ptcall_x86_64.c, ptcall_aarch64.c). */
#pragma once

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inspect/ptcall.h"

/* ---- per-architecture interface (one implementation per arch) ---- */

#if defined(__x86_64__)
#include <sys/user.h>
struct ptarch_regs {
	struct user_regs_struct u;
};
#define PTARCH_EM EM_X86_64
#define PTARCH_RED_ZONE 128u
#elif defined(__aarch64__)
#include <asm/ptrace.h>
struct ptarch_regs {
	struct user_pt_regs u;
	int64_t syscallno; /* NT_ARM_SYSTEM_CALL */
	uint64_t orig_x0; /* first syscall argument, from /proc/<tid>/syscall */
};
#define PTARCH_EM EM_AARCH64
#define PTARCH_RED_ZONE 0u
#else
struct ptarch_regs {
	uint64_t unused;
};
#define PTARCH_EM EM_NONE
#define PTARCH_RED_ZONE 0u
#endif

/* The thread's FP/vector state, saved whole and written back whole. */
struct ptarch_fp {
	void *buf;
	size_t len;
	unsigned kind; /* regset note type */
};

/* All return 0 or -errno. The thread is in a ptrace stop. */
int ptarch_get_regs(int tid, struct ptarch_regs *r);
int ptarch_set_regs(int tid, const struct ptarch_regs *r);
int ptarch_save_fp(int tid, struct ptarch_fp *fp);
int ptarch_restore_fp(int tid, const struct ptarch_fp *fp);
void ptarch_fp_release(struct ptarch_fp *fp);
uint64_t ptarch_pc(const struct ptarch_regs *r);
uint64_t ptarch_sp(const struct ptarch_regs *r);
/* The system call the thread is in (interrupted or blocked), or -1. */
long ptarch_syscall_nr(const struct ptarch_regs *r);
/* Prepares *r (a copy of the saved registers) to call fn(args) with the
 * stack pointer at or below top, and returns in *ret_slot the address
 * where the caller must write the 8-byte return address 0 (0 when the
 * return address lives in a register), in *ret_sp the sp to check at
 * return. */
void ptarch_setup_call(struct ptarch_regs *r, uint64_t fn, const uint64_t *args,
		       size_t n, uint64_t top, uint64_t *ret_slot,
		       uint64_t *ret_sp);
/* True when r shows the thread faulted on the impossible return address. */
bool ptarch_returned(const struct ptarch_regs *r, uint64_t call_sp);
uint64_t ptarch_retval(const struct ptarch_regs *r);
/* Writes back the saved registers so an interrupted system call restarts
 * as if nothing happened. */
int ptarch_restore(int tid, const struct ptarch_regs *saved);

/* ---- /proc/<pid>/maps ---- */

struct ptvma {
	uint64_t start, end, offset, inode;
	char perms[5];
	const char *path; /* "" for anonymous; points into the maps buffer */
};

struct ptmaps {
	struct ptvma *v;
	size_t n;
};

/* Parses maps text in place (newlines become NULs; paths point into buf).
 * buf[len] must be NUL (a strbuf is). Pure. Mappings must come sorted by
 * address and disjoint, as the kernel prints them. Returns 0, -EBADMSG on
 * a malformed line or a mapping that starts before the previous one ends,
 * -ENOMEM. */
int ptmaps_parse(char *buf, size_t len, struct ptmaps *ret);
void ptmaps_release(struct ptmaps *m);
/* The mapping containing addr, or NULL. */
const struct ptvma *ptmaps_find(const struct ptmaps *m, uint64_t addr);

/* ---- ELF dynamic symbols ---- */

enum ptelf_hash { PTELF_HASH_NONE, PTELF_HASH_GNU, PTELF_HASH_SYSV };

/* An ELF file's dynamic symbols, looked up through its hash table
 * (DT_GNU_HASH, else DT_HASH) by small reads of the file: only the bucket,
 * the chain and the symbols and names on it. The file is the target's
 * (untrusted): every offset is checked against the file's size, a chain
 * walk is capped. Without a hash table the tables are read whole. */
struct ptelf {
	int fd;	     /* a duplicate, owned when own_fd */
	bool own_fd; /* not with the tables read whole */
	uint64_t file_size;
	uint64_t sym_off; /* .dynsym in the file */
	size_t n_syms;
	uint64_t str_off; /* .dynstr in the file */
	size_t strs_len;
	uint64_t versym_off; /* .gnu.version in the file; 0 when absent */
	enum ptelf_hash hash;
	uint32_t n_buckets, n_chains;
	uint32_t first_hashed; /* GNU's symoffset; n_syms without a table */
	uint64_t buckets_off, chains_off;
	Elf64_Sym *syms; /* the tables read whole, or NULL */
	char *strs;
	uint16_t *versym;
	uint64_t load_vaddr;  /* page-truncated vaddr of the first PT_LOAD */
	uint64_t load_offset; /* page-truncated offset of the first PT_LOAD */
};

/* Reads the ELF header and the section headers of fd (a regular file) and
 * finds .dynsym, .dynstr, .gnu.version and a hash table; keeps a duplicate
 * of fd for the lookups. Without a hash table, reads .dynsym, .dynstr and
 * .gnu.version whole. -ENOEXEC: not an ELF, not a regular file, tables
 * outside the file or malformed; -ENOTSUP: not ELFCLASS64 little-endian or
 * a machine other than ours; -ENOENT: no .dynsym. Blocks only on the
 * file's reads. */
int ptelf_load(int fd, struct ptelf *ret);
/* The same with the tables always read whole, as without a hash table
 * (tests compare the two). */
int ptelf_load_whole(int fd, struct ptelf *ret);
void ptelf_release(struct ptelf *e);
/* A defined symbol by name into *ret (the default version preferred, then
 * the lowest index). 0, -ENOENT when there is none, -ENOEXEC for a
 * malformed table (a bucket or chain out of range, a chain without end),
 * -EINVAL for a name over 63 bytes, -errno of a read. */
int ptelf_lookup(const struct ptelf *e, const char *name, Elf64_Sym *ret);

/* Is name one of glibc's malloc-family entry points? */
bool ptcall_is_malloc_symbol(const char *name);
/* [lo, hi) of the malloc code in e (unrelocated): from the end of the
 * nearest other function below the lowest malloc-family symbol to the
 * start of the nearest one above the highest, so the static helpers in
 * between (_int_malloc, sysmalloc…) are covered. The family is found
 * through the hash table, the neighbours by one pass over .dynsym a chunk
 * at a time, reading only the names of the symbols that would move a
 * bound. -ENOENT without malloc; the errors of ptelf_lookup(). */
int ptelf_malloc_zone(const struct ptelf *e, uint64_t *ret_lo,
		      uint64_t *ret_hi);

/* ---- the session (ptcall.c, ptcall_trace.c) ---- */

#include <signal.h>

#include "base/strbuf.h"

#define PTCALL_SCRATCH_MAX 1024u
#define PTCALL_MAX_DEFERRED 16u

struct ptcall_session {
	int pid;
	int proc_fd; /* owned when own_proc_fd */
	bool own_proc_fd;
	int pid_fd;
	struct ptcall_report *rep; /* the caller's or own_rep */
	struct ptcall_report own_rep;
	uint64_t start_us, deadline_us, timeout_us;
	struct strbuf maps_sb;
	struct ptmaps maps;
	const char *libc_path; /* into maps_sb */
	struct ptelf libc;
	uint64_t bias;		   /* load address minus link-time address */
	uint64_t zone_lo, zone_hi; /* malloc code, absolute; 0,0 unknown */
	/* the thread */
	int tid;
	bool attached;	  /* seized, must be detached */
	bool saved_state; /* regs/fp/mask saved, must be restored */
	bool in_sig_stop; /* stopped in a signal-delivery-stop */
	bool stuck;	  /* running our code and would not stop */
	bool grace_used;
	uint64_t stop_start_us;
	struct ptarch_regs saved;
	struct ptarch_fp fp;
	uint64_t saved_mask;
	uint64_t scratch_base; /* [scratch_base, +PTCALL_SCRATCH_MAX) */
	size_t scratch_used;
	siginfo_t deferred[PTCALL_MAX_DEFERRED];
	unsigned n_deferred;
};

/* Releases what ptcall_open() set up (no ptrace state: ptcall_close()
 * restores and detaches first) and frees s. */
void ptcall_session_free(struct ptcall_session *s);
/* Writes the report's reason (printf-style); the first cause wins unless
 * overwrite. */
void ptcall_why(struct ptcall_session *s, bool overwrite, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Does pc lie in libc or the dynamic loader's code? */
bool ptcall_pc_in_libc(const struct ptcall_session *s, uint64_t pc);
/* Refused system calls: ones malloc makes while holding a lock, and fork. */
bool ptcall_syscall_unsafe(long nr);
