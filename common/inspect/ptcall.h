/* SPDX-License-Identifier: Apache-2.0 */
/* ptcall: call a function inside another (glibc) process from outside, the
 * way `gdb -p PID -ex 'call malloc_trim(0)'` does, without gdb.
 *
 * One thread of the target is seized with ptrace (PTRACE_SEIZE +
 * PTRACE_INTERRUPT), its registers, FP state and signal mask are saved, the
 * function is called per the ABI with an impossible return address (0) so
 * the return faults, the result is read and everything is restored exactly
 * (an interrupted system call restarts), then the thread is detached.
 * Other threads keep running.
 *
 * Safety: only a thread blocked in a system call that malloc never makes
 * (or running outside libc) with no malloc frame near its stack top is
 * used; if none, the call is refused (-EAGAIN). Signals arriving during a
 * call stay pending (the thread's mask blocks them) and are delivered when
 * the thread resumes. Every path detaches; a deadline bounds the whole
 * operation (default 2 s).
 *
 * Errors (negative errno) and their meaning here:
 *   -ESRCH      the process (or the thread used) is gone
 *   -EPERM      ptrace denied (no CAP_SYS_PTRACE / other uid, Yama, seccomp)
 *   -EBUSY      already traced (TracerPid != 0) or stopped (state T)
 *   -ENOEXEC    no glibc libc.so mapped: static binary, musl, other libc
 *   -ENOSYS     glibc lacks the function (mallinfo2 needs glibc >= 2.33)
 *   -ENOTSUP    malloc is not glibc's (jemalloc, tcmalloc, ASan... define
 *               it), or the target's architecture is not ours
 *   -EAGAIN     no thread is safe to use right now
 *   -ETIMEDOUT  the deadline expired; the thread was restored and detached
 *   -EFAULT     the called function crashed or memory could not be read
 * The report (optional, may be NULL) says why in words, on failure and
 * success alike.
 *
 * Use from one thread of the caller: ptrace binds the tracee to the thread
 * that attached. A caller that is also the target's parent loses the
 * target's exit status to ptcall if it exits during a call. Blocks up to the
 * deadline. Needs ptrace rights on the target (root with CAP_SYS_PTRACE, or the
 * same uid under Yama scope 0). */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct json_object;

#define PTCALL_DEFAULT_TIMEOUT_MS 2000u
#define PTCALL_MAX_ARGS 6

struct ptcall_opts {
	int proc_fd;	     /* directory fd of /proc (host->proc_fd), or -1 */
	unsigned timeout_ms; /* deadline of the whole operation; 0: default */
};

/* Diagnostics of one operation; filled on success and failure. */
struct ptcall_report {
	char reason[256];	/* why it failed (or a note), "" when none */
	int tid;		/* the thread used, 0 when none was stopped */
	unsigned threads_tried; /* threads stopped and judged */
	unsigned calls;		/* functions called in the target */
	uint64_t stopped_us; /* time the used thread spent stopped/hijacked */
	uint64_t total_us;   /* wall time of the whole operation */
};

/* glibc's struct mallinfo2, widened to fixed 64-bit fields. */
struct ptcall_mallinfo2 {
	uint64_t arena;	   /* non-mmapped space allocated from the system */
	uint64_t ordblks;  /* free chunks */
	uint64_t smblks;   /* free fastbin blocks */
	uint64_t hblks;	   /* mmapped regions */
	uint64_t hblkhd;   /* bytes in mmapped regions */
	uint64_t usmblks;  /* always 0 */
	uint64_t fsmblks;  /* bytes in free fastbin blocks */
	uint64_t uordblks; /* bytes in use (non-mmapped) */
	uint64_t fordblks; /* bytes free (non-mmapped) */
	uint64_t keepcost; /* releasable from the top of the main heap */
};

/* One <heap> of malloc_info's XML, or its closing totals. */
struct ptcall_arena {
	int nr;				 /* heap nr (-1 for the totals) */
	uint64_t fast_count, fast_bytes; /* <total type="fast"> */
	uint64_t rest_count, rest_bytes; /* <total type="rest"> (free) */
	uint64_t system_current;	 /* <system type="current"> */
	uint64_t system_max;		 /* <system type="max"> */
	uint64_t aspace_total;		 /* <aspace type="total"> */
	uint64_t aspace_mprotect;	 /* <aspace type="mprotect"> */
	uint64_t subheaps;		 /* <aspace type="subheaps"> */
};

struct ptcall_malloc_info {
	struct ptcall_arena *arenas; /* n_arenas entries, heap order */
	size_t n_arenas;
	struct ptcall_arena total;	 /* the totals after the last heap */
	uint64_t mmap_count, mmap_bytes; /* <total type="mmap"> */
};

/* mallinfo2() in the target. Returns 0 and fills *ret, or -errno (above). */
int ptcall_mallinfo2(int pid, const struct ptcall_opts *o,
		     struct ptcall_mallinfo2 *ret, struct ptcall_report *rep);

/* malloc_trim(0) in the target; *ret_released is its return value (1 when
 * memory went back to the system). Can take long on a huge heap: the
 * deadline still applies. */
int ptcall_malloc_trim(int pid, const struct ptcall_opts *o, int *ret_released,
		       struct ptcall_report *rep);

/* mallinfo2() and malloc_info(0, fp) in one stop: fp is an open_memstream
 * made inside the target, closed, read back and freed there. *ret_xml is a
 * NUL-terminated heap string the caller frees; ret_mi or ret_xml may be
 * NULL to skip that part. */
int ptcall_malloc_stats(int pid, const struct ptcall_opts *o,
			struct ptcall_mallinfo2 *ret_mi, char **ret_xml,
			size_t *ret_len, struct ptcall_report *rep);

/* Parses malloc_info's XML (glibc >= 2.10 format, version="1"). Pure.
 * Returns 0, -EBADMSG when it is not malloc_info output, -ENOMEM.
 * Release with ptcall_malloc_info_release(). */
int ptcall_parse_malloc_info(const char *xml, size_t len,
			     struct ptcall_malloc_info *ret);
void ptcall_malloc_info_release(struct ptcall_malloc_info *mi);

/* Builds allocator.json for a snapshot from ptcall_malloc_stats():
 * {"source":"ptrace","mallinfo2":{…},"in_use_bytes","free_bytes",
 * "system_bytes","mmap_bytes","releasable_bytes","retained_bytes",
 * "arenas":[{…}],"probe":{tid,stopped_us,total_us}}. *ret is a new json-c
 * object the caller puts. */
int ptcall_allocator_json(int pid, const struct ptcall_opts *o,
			  struct json_object **ret, struct ptcall_report *rep);

/* Same from figures already read (pure; used by the above and tests). */
int ptcall_allocator_json_from(const struct ptcall_mallinfo2 *mi,
			       const struct ptcall_malloc_info *info,
			       const struct ptcall_report *rep,
			       struct json_object **ret);

/* Writes dir_fd/allocator.json for a snapshot: ptcall_allocator_json(), or
 * {"source":"ptrace","error":…,"reason":…} when the probe was refused, so
 * the bundle says why. timeout_ms 0: default. Returns 0 when the file was
 * written, else -errno. Blocks up to the deadline. */
int ptcall_write_allocator_json(int proc_fd, int pid, int dir_fd,
				unsigned timeout_ms);

/* ---- the generic layer, for other functions of libc ---- */

struct ptcall_session;

/* Inspects pid without stopping anything: not traced, glibc libc.so
 * mapped, ELF of our architecture. Returns a session (free with
 * ptcall_close) or -errno. The deadline starts here. */
int ptcall_open(int pid, const struct ptcall_opts *o,
		struct ptcall_session **ret, struct ptcall_report *rep);

/* Address of a function exported by the target's libc (default version).
 * -ENOSYS when absent, -ENOTSUP for an IFUNC. */
int ptcall_resolve(struct ptcall_session *s, const char *name,
		   uint64_t *ret_addr);

/* -ENOTSUP with the report naming the object when another mapped ELF object
 * (the executable or a preloaded library) defines malloc. */
int ptcall_check_glibc_malloc(struct ptcall_session *s);

/* Stops one safe thread and saves its state. -EAGAIN when none is safe. */
int ptcall_attach(struct ptcall_session *s);

/* Calls fn(args…) (integer/pointer args only) in the attached thread and
 * stores the integer return value. */
int ptcall_call(struct ptcall_session *s, uint64_t fn, const uint64_t *args,
		size_t n_args, uint64_t *ret);

/* A scratch area of `size` bytes (<= 4096) on the attached thread's stack
 * below the red zone, valid until ptcall_close; for struct returns. */
int ptcall_scratch(struct ptcall_session *s, size_t size, uint64_t *ret_addr);

/* Reads/writes target memory (process_vm_readv/writev, ptrace fallback). */
int ptcall_read_mem(struct ptcall_session *s, uint64_t addr, void *buf,
		    size_t len);
int ptcall_write_mem(struct ptcall_session *s, uint64_t addr, const void *buf,
		     size_t len);

/* Restores and detaches the thread if attached, fills the report's times
 * and frees the session. Returns 0 or -errno when the restore failed (the
 * thread is detached anyway when it still exists). NULL is a no-op. */
int ptcall_close(struct ptcall_session *s);

/* Waits (without blocking) for the end of threads that were killed while
 * seized and had not ended by ptcall_close: until then their process
 * cannot be reaped by its parent. Cheap when there are none; call it now
 * and then (ptcall_attach does). Thread-safe. */
void ptcall_reap(void);
