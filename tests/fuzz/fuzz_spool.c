/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for what the agent reads of a pod's spool before it trusts
 * anything: manifest.json (the cgroup it claims) and a snapshot's
 * snapshot.json (its time), on bytes that are not NUL-terminated. The
 * claim then goes through the matchers the agent uses. Invariants: ret
 * untouched on failure, terminated and within size on success; a claim
 * matches itself unless it is the root. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forensics/spool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	char cg[64];
	int r;

	memset(cg, 'x', sizeof(cg));
	r = spool_parse_manifest(buf, size, cg, sizeof(cg));
	if (r < 0) {
		if ((r != -EBADMSG && r != -ENOENT) || cg[0] != 'x' ||
		    cg[sizeof(cg) - 1] != 'x')
			abort();
	} else {
		if (r != 0 || !memchr(cg, '\0', sizeof(cg)))
			abort();
		if (cg[0] == '/' && cg[1] && !spool_cgroup_matches(cg, cg))
			abort();
		spool_cgroup_matches(cg, "/kubepods/pod1/ctr");
		spool_cgroup_in_pod(cg, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
	}
	spool_parse_snapshot_time(buf, size);
	return 0;
}
