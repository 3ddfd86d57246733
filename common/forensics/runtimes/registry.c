/* SPDX-License-Identifier: Apache-2.0 */
/* The runtimes, in the order their hooks run: a process's ledger rows
 * follow it (a JVM's heap and NMT categories before glibc's arenas, so
 * that a JVM's malloc'd bytes are counted once, in NMT; Go's heap arenas
 * before glibc's, which a cgo program has too; Node's V8 pages, CPython's
 * pymalloc arenas and buffers and .NET's GC heap before glibc's arenas,
 * whose rows take what is left of the anonymous memory, so that no byte
 * is counted twice; .NET's load_proc names its GC reservations before
 * glibc's load_proc reads the arenas, some of which they are). */
#include "base/util.h"
#include "forensics/runtimes/registry.h"

static const struct diag_runtime *const table[] = {
	&rt_jvm, &rt_go, &rt_node, &rt_python, &rt_dotnet, &rt_glibc,
};

_Static_assert(ARRAY_SIZE(table) <= DIAG_MAX_RUNTIMES,
	       "raise DIAG_MAX_RUNTIMES");

size_t diag_runtime_count(void)
{
	return ARRAY_SIZE(table);
}

const struct diag_runtime *diag_runtime_at(size_t i)
{
	return i < ARRAY_SIZE(table) ? table[i] : NULL;
}

int diag_runtime_index(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		if (streq(table[i]->name, name))
			return (int)i;
	return -1;
}
