/* SPDX-License-Identifier: Apache-2.0 */
/* memlock: keep a long-running daemon resident under memory pressure.
 * Once start-up is done, mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)
 * (as earlyoom does): its own pages are never reclaimed, so a page fault
 * of the agent or the sidecar does not stall next to a container that is
 * being OOM-killed. MCL_ONFAULT locks pages as they are touched, not
 * whole reservations (thread stacks, malloc arenas): the locked footprint
 * is what the program uses. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* The heap of a locked daemon. One malloc arena for every thread
 * (M_ARENA_MAX 1). Call before the first thread starts. Each arena glibc
 * adds reserves 64 MiB of address space and, once locked, keeps its own
 * high-water mark: a freed page in a thread's arena cannot be given back
 * (MADV_DONTNEED fails on a locked page), while the main arena shrinks
 * with brk. One arena keeps the largest need, not the sum of every
 * thread's. And blocks of 128 KiB and more always mmap'd
 * (M_MMAP_THRESHOLD fixed): glibc's moving threshold rises to the
 * largest block freed (up to 32 MiB), after which a pod's 8 MiB file
 * would be read into the heap and its pages stay locked there. */
void memlock_heap_policy(void);

/* Gives the heap's free top back (malloc_trim(0)): after a burst of work
 * on a pod's input (a kill's capture, a large admission review). */
void memlock_give_back(void);

/* Raises RLIMIT_MEMLOCK to max_bytes where permitted (CAP_SYS_RESOURCE),
 * then locks: MCL_CURRENT | MCL_FUTURE when RLIMIT_MEMLOCK allows
 * max_bytes (after the privilege drop, without CAP_IPC_LOCK, every new
 * mapping counts against it: a smaller limit would make large allocations
 * fail), else MCL_CURRENT only; *ret_future says which. MCL_ONFAULT when
 * the kernel has it. Call before the drop (CAP_IPC_LOCK). Returns 0 or
 * -errno from mlockall; the caller logs and runs on unlocked. */
int memlock_all(uint64_t max_bytes, bool *ret_future);

/* Raises RLIMIT_RTPRIO to 1 and RLIMIT_NICE to 30 (nice -10) where
 * permitted, so that a thread may still raise its own priority after
 * CAP_SYS_NICE is dropped. Returns 0 or -errno (EPERM: not permitted). */
int memlock_allow_priority(void);

/* The calling thread: SCHED_FIFO priority 1 when permitted
 * (CAP_SYS_NICE, or RLIMIT_RTPRIO ≥ 1 from memlock_allow_priority), else
 * nice -10 (RLIMIT_NICE), else as is; logged with who ("sampler thread").
 * For a thread that sleeps nearly all the time and must wake on time
 * under a CPU hog; the kernel's real-time throttling bounds it. Threads it
 * creates afterwards inherit the priority: call it once the others are
 * started. Returns 2 (SCHED_FIFO), 1 (nice), 0 (as is). */
int memlock_raise_priority(const char *who);

/* VmLck of this process in bytes from /proc/self/status, 0 when unknown. */
uint64_t memlock_locked_bytes(void);
