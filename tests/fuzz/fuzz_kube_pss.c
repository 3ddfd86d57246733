/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for kube_pss_check(): any bytes as a Pod, at every level.
 * Invariants: the answer is 0, 1 or -EBADMSG, the same at each level for
 * bad input; privileged admits every object; a pod restricted admits,
 * baseline admits too; every violation names a check and a bounded,
 * NUL-terminated path free of control bytes; the count is capped and
 * kept only when something was found; the text line can be built. */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube_pss.h"
#include "base/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_result(const struct kube_pss_result *r, int q)
{
	struct strbuf sb = STRBUF_INIT;

	if (r->n > KUBE_PSS_MAX_VIOLATIONS || (q == 0) != (r->n == 0) ||
	    (r->more && r->n != KUBE_PSS_MAX_VIOLATIONS))
		abort();
	for (size_t i = 0; i < r->n; i++) {
		const struct kube_pss_violation *v = &r->v[i];

		if (!*kube_pss_check_name(v->check) || !v->path[0] ||
		    !memchr(v->path, '\0', sizeof(v->path)) ||
		    !memchr(v->value, '\0', sizeof(v->value)))
			abort();
		for (const char *c = v->path; *c; c++)
			if ((unsigned char)*c < 0x20)
				abort();
	}
	if (kube_pss_result_text(r, &sb) < 0 && r->n)
		abort();
	strbuf_release(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kube_pss_result r[3];
	struct json_tokener *tok;
	struct json_object *pod;
	int q[3];

	if (size > (1u << 20))
		return 0;
	tok = json_tokener_new();
	if (!tok)
		abort();
	pod = json_tokener_parse_ex(tok, (const char *)data, (int)size);
	json_tokener_free(tok);
	for (int l = KUBE_PSS_PRIVILEGED; l <= KUBE_PSS_RESTRICTED; l++) {
		q[l] = kube_pss_check(pod, (enum kube_pss_level)l, &r[l]);
		if (q[l] != 0 && q[l] != 1 && q[l] != -EBADMSG)
			abort();
		if (q[l] >= 0)
			check_result(&r[l], q[l]);
	}
	if ((q[0] < 0) != (q[2] < 0) || (q[1] < 0) != (q[2] < 0))
		abort();
	if (q[0] == 1 || (q[2] == 0 && q[1] != 0))
		abort();
	json_object_put(pod);
	return 0;
}
