/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: Pod / OOMReport / OOMBundle decoders on arbitrary JSON. */
#include <stdint.h>

#include "kube/kube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_tokener *tok;
	struct json_object *o;
	struct kube_pod *p;
	struct kube_oomreport *r;
	struct kube_oombundle *b;

	if (kube_pod_parse((const char *)data, size, &p) == 0) {
		for (size_t i = 0; i < p->n_containers; i++)
			if (!p->containers[i].name)
				__builtin_trap();
		kube_pod_annotation(p, "oomlens.io/capture");
		kube_pod_free(p);
	}
	if (size == 0 || size > (1u << 24))
		return 0;
	tok = json_tokener_new();
	o = json_tokener_parse_ex(tok, (const char *)data, (int)size);
	json_tokener_free(tok);
	if (!o)
		return 0;
	if (kube_oomreport_decode(o, &r) == 0) {
		struct json_object *e = kube_oomreport_encode(r, NULL);

		json_object_put(e);
		kube_oomreport_free(r);
	}
	if (kube_oombundle_decode(o, &b) == 0)
		kube_oombundle_free(b);
	json_object_put(o);
	return 0;
}
