/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: kube_snap_check() on arbitrary JSON, as an uploaded
 * OOMBundle snap-<pod> (written by anything in a pod). A success must
 * hand back exactly spec.size bytes whose sha256 was checked. */
#include <stdint.h>
#include <stdlib.h>

#include "kube/kube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct kube_snap_want w = {
		.ns = "default",
		.name = "snap-web-1",
		.pod = "web-1",
		.pod_uid = "0b6f1f6e-2f4a-4f7e-9d31-6a1f3b2c9d10"};
	struct json_tokener *tok;
	struct json_object *o;
	unsigned char *out = NULL;
	size_t n = 0;
	char why[256];

	if (size == 0 || size > (4u << 20))
		return 0;
	tok = json_tokener_new();
	o = json_tokener_parse_ex(tok, (const char *)data, (int)size);
	json_tokener_free(tok);
	if (!o)
		return 0;
	if (kube_snap_check(o, &w, &out, &n, why, sizeof(why)) == 0) {
		if (n > KUBE_SNAP_MAX)
			__builtin_trap();
		free(out);
	} else if (!why[0]) {
		__builtin_trap(); /* every refusal says why */
	}
	json_object_put(o);
	return 0;
}
