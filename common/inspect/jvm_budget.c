/* SPDX-License-Identifier: Apache-2.0 */
/* The configuration check of a JVM against its container's limit. */
#include "inspect/jvm.h"

/* HotSpot's defaults when VM.flags does not print the flag (x86_64 and
 * aarch64, JDK 17 and 25): 1 MiB thread stacks, 240 MiB code cache with
 * tiered compilation. */
#define DEFAULT_STACK (1024ull * 1024)
#define DEFAULT_CODE_CACHE (240ull * 1024 * 1024)

void jvm_budget_compute(const struct jvm_flags *f, uint64_t threads,
			uint64_t metaspace_committed, uint64_t native,
			uint64_t limit, struct jvm_budget *ret)
{
	struct jvm_budget b = {0};

	b.heap = f->max_heap;
	/* Unbounded direct memory defaults to the max heap: counted only
	 * when set, or every default JVM would be called oversized. */
	b.direct = f->has_max_direct ? f->max_direct : 0;
	b.metaspace =
		f->has_max_metaspace ? f->max_metaspace : metaspace_committed;
	b.code_cache = f->has_code_cache ? f->code_cache : DEFAULT_CODE_CACHE;
	b.stacks = threads *
		   (f->has_thread_stack ? f->thread_stack : DEFAULT_STACK);
	b.native = native;
	b.total = b.heap + b.direct + b.metaspace + b.code_cache + b.stacks +
		  b.native;
	b.outgrows = limit && b.total > limit;
	b.heap_outgrows = limit && b.heap + b.native > limit;
	*ret = b;
}
