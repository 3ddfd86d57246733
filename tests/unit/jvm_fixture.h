/* SPDX-License-Identifier: Apache-2.0 */
/* The JVM unit tests' fixtures: real jcmd and hsperfdata captures in
 * tests/fixtures/jvm/ (its README says where each came from). Header-only,
 * included by each test_jvm*.c (Criterion tests are one file each). */
#pragma once

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>

#include "base/fileio.h"
#include "base/strbuf.h"

#define FIX "tests/fixtures/jvm/"

/* tests/fixtures/jvm/NAME, read whole (≤ 1 MiB); the caller frees it. */
static inline struct strbuf fixture(const char *name)
{
	struct strbuf sb;
	char path[256];

	strbuf_init(&sb, 1u << 20);
	snprintf(path, sizeof(path), FIX "%s", name);
	cr_assert_eq(read_file_at(AT_FDCWD, path, 1u << 20, &sb), 0,
		     "fixture %s", path);
	return sb;
}
