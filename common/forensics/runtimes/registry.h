/* SPDX-License-Identifier: Apache-2.0 */
/* The table of runtimes (registry.c), in the order their hooks run. */
#pragma once

#include <stddef.h>

#include "forensics/runtimes/runtime.h"

extern const struct diag_runtime rt_jvm, rt_go, rt_node, rt_python, rt_dotnet,
	rt_glibc;

/* How many rows the table has (at most DIAG_MAX_RUNTIMES), and row i. */
size_t diag_runtime_count(void);
const struct diag_runtime *diag_runtime_at(size_t i);
/* The row of the runtime named name, -1 when none. */
int diag_runtime_index(const char *name);
