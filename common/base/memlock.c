/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>
#include <malloc.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "base/fileio.h"
#include "base/log.h"
#include "base/memlock.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "base/util.h"

#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4
#endif

static void raise_limit(int resource, rlim_t v)
{
	struct rlimit rl;

	if (getrlimit(resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < v) {
		rl.rlim_cur = v;
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < v)
			rl.rlim_max = v;
		(void)setrlimit(resource, &rl);
	}
}

void memlock_heap_policy(void)
{
	(void)mallopt(M_ARENA_MAX, 1);
	(void)mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}

void memlock_give_back(void)
{
	(void)malloc_trim(0);
}

int memlock_all(uint64_t max_bytes, bool *ret_future)
{
	struct rlimit rl;
	bool future;
	int flags;

	if (max_bytes)
		raise_limit(RLIMIT_MEMLOCK, (rlim_t)max_bytes);
	/* Once CAP_IPC_LOCK is dropped every new mapping counts against
	 * RLIMIT_MEMLOCK: a locked-future process under a small limit would
	 * fail its large allocations. Lock only what is mapped then. */
	future = getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
		 (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= max_bytes);
	flags = MCL_CURRENT | (future ? MCL_FUTURE : 0);
	if (mlockall(flags | MCL_ONFAULT) < 0 &&
	    (errno != EINVAL || mlockall(flags) < 0))
		return -errno;
	if (ret_future)
		*ret_future = future;
	return 0;
}

int memlock_allow_priority(void)
{
	struct rlimit rt = {1, 1}, nice = {30, 30};
	int r = 0;

	if (setrlimit(RLIMIT_RTPRIO, &rt) < 0)
		r = -errno;
	if (setrlimit(RLIMIT_NICE, &nice) < 0)
		r = -errno;
	return r;
}

int memlock_raise_priority(const char *who)
{
	struct sched_param sp = {.sched_priority = 1};

	if (sched_setscheduler(0, SCHED_FIFO, &sp) == 0) {
		log_info("%s: SCHED_FIFO priority 1", who);
		return 2;
	}
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), -10) == 0) {
		log_info("%s: nice -10", who);
		return 1;
	}
	log_info("%s: normal priority (no CAP_SYS_NICE, RLIMIT_RTPRIO or "
		 "RLIMIT_NICE): %s",
		 who, strerror(errno));
	return 0;
}

uint64_t memlock_locked_bytes(void)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *p;
	uint64_t kb = 0;

	strbuf_init(&sb, 16384);
	if (read_file_at(AT_FDCWD, "/proc/self/status", 16384, &sb) < 0)
		return 0;
	p = strstr(sb.buf, "\nVmLck:");
	if (!p)
		return 0;
	p += strlen("\nVmLck:");
	while (*p == ' ' || *p == '\t')
		p++;
	return scan_u64(&p, &kb) == 0 ? kb * 1024 : 0;
}
