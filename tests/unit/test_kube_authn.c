/* SPDX-License-Identifier: Apache-2.0 */
/* The SubjectAccessReview for a non-resource URL, as kubelet's delegated
 * authorizer sends it for /metrics. */
#include <criterion/criterion.h>
#include <json-c/json.h>

#include "kube/kube_authn.h"

Test(kube_authn, nonresource_review_object)
{
	const char *const groups[] = {"system:serviceaccounts",
				      "system:authenticated", NULL};
	struct kube_nonresource_review a = {
		.user = "system:serviceaccount:monitoring:prometheus",
		.uid = "42",
		.groups = groups,
		.path = "/metrics",
		.verb = "get",
	};
	struct json_object *o = kube_nonresource_review_encode(&a);

	cr_assert_not_null(o);
	cr_assert_str_eq(
		json_object_to_json_string_ext(
			o, JSON_C_TO_STRING_PLAIN |
				   JSON_C_TO_STRING_NOSLASHESCAPE),
		"{\"metadata\":{},\"apiVersion\":\"authorization.k8s.io/v1\","
		"\"kind\":\"SubjectAccessReview\","
		"\"spec\":{\"nonResourceAttributes\":{\"path\":\"/metrics\","
		"\"verb\":\"get\"},\"user\":\"system:serviceaccount:monitoring:"
		"prometheus\",\"uid\":\"42\",\"groups\":[\"system:"
		"serviceaccounts\",\"system:authenticated\"]}}");
	json_object_put(o);
}
