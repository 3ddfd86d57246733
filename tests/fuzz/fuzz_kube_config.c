/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: kubeconfig YAML (any bytes) into a configuration, with the
 * current context and a named one. */
#include <stdint.h>

#include "kube/kube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kube_kubeconfig_options named = {.context = "a"};
	struct kube_config *c;
	struct kube_error e;

	if (kube_config_parse_kubeconfig((const char *)data, size, "/base",
					 NULL, &c, &e) == 0) {
		if (!c->server || !c->namespace)
			__builtin_trap();
		kube_config_free(c);
	}
	if (kube_config_parse_kubeconfig((const char *)data, size, NULL, &named,
					 &c, &e) == 0)
		kube_config_free(c);
	return 0;
}
