/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the procfs parsers (status, cmdline formatting with
 * redaction, cgroup lines) on bytes that are not NUL-terminated.
 * Invariants: outputs untouched on failure, names terminated, no control
 * characters in a formatted cmdline, redaction never grows a secret. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_status(const char *buf, size_t len)
{
	struct proc_status st, before;

	memset(&st, 0xa5, sizeof(st));
	before = st;
	if (procfs_parse_status(buf, len, &st) < 0) {
		if (memcmp(&st, &before, sizeof(st)) != 0)
			abort();
		return;
	}
	if (memchr(st.name, '\0', sizeof(st.name)) == NULL)
		abort();
}

static void check_cmdline(const char *buf, size_t len)
{
	struct strbuf a, b;

	strbuf_init(&a, 1u << 20);
	strbuf_init(&b, 1u << 20);
	if (procfs_format_cmdline(buf, len, true, &a) < 0 ||
	    procfs_format_cmdline(buf, len, false, &b) < 0)
		abort();
	for (size_t i = 0; i < a.len; i++)
		if ((unsigned char)a.buf[i] < 0x20)
			abort();
	/* "***" replaces at least one byte; a value "x" may grow to 3. */
	if (a.len > b.len * 3 + 3)
		abort();
	strbuf_release(&a);
	strbuf_release(&b);
}

static void check_cgroup(const char *buf, size_t len)
{
	char path[64];

	memset(path, 'x', sizeof(path));
	if (procfs_parse_cgroup(buf, len, path, sizeof(path)) == 0 &&
	    memchr(path, '\0', sizeof(path)) == NULL)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;

	check_status(buf, size);
	check_cmdline(buf, size);
	check_cgroup(buf, size);
	return 0;
}
