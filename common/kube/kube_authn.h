/* SPDX-License-Identifier: Apache-2.0 */
/* kube_authn: the two reviews an HTTP endpoint makes to protect itself as
 * kubelet does (delegated authentication and authorization): who holds
 * this bearer token (TokenReview, kube.h), and may they <verb> this
 * non-resource URL (a SubjectAccessReview with nonResourceAttributes). */
#pragma once

#include <stdbool.h>

#include "kube/kube.h"

struct kube_nonresource_review {
	const char *user;
	const char *uid;	   /* optional */
	const char *const *groups; /* NULL-terminated, optional */
	const char *path;	   /* e.g. "/metrics" */
	const char *verb;	   /* e.g. "get" */
};

/* Builds the SubjectAccessReview object for a (a new reference, NULL on
 * ENOMEM). Pure: for tests. */
struct json_object *
kube_nonresource_review_encode(const struct kube_nonresource_review *a);

/* POSTs it and sets *ret_allowed from .status.allowed (a denial is 0 with
 * false). Returns 0 or -errno as kube.h maps them; blocks. */
int kube_nonresource_access_review(struct kube_client *c,
				   const struct kube_nonresource_review *a,
				   bool *ret_allowed, struct kube_error *err);
