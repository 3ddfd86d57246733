/* SPDX-License-Identifier: Apache-2.0 */
/* kube: what a finished transfer means (kube_transfer_outcome), and errors
 * mapped by their status when the body never came (a 413 over HTTP/2). */
#include <criterion/criterion.h>
#include <errno.h>

#include "kube/kube_internal.h"

struct xfer_case {
	bool failed;
	long status;
	bool stream;
	enum kube_xfer_outcome want;
};

static const struct xfer_case xfer_cases[] = {
	{false, 200, false, KUBE_XFER_ANSWER},
	{false, 404, false, KUBE_XFER_ANSWER},
	/* the bug seen against the real server: 100 Continue, then the
	 * transfer failed; it must not come back as "HTTP 100" */
	{true, 100, false, KUBE_XFER_TRANSPORT},
	{true, 100, true, KUBE_XFER_TRANSPORT},
	{true, 0, false, KUBE_XFER_TRANSPORT},
	{true, 0, true, KUBE_XFER_TRANSPORT},
	/* a 2xx body cut short is not an answer */
	{true, 200, false, KUBE_XFER_TRANSPORT},
	{true, 201, false, KUBE_XFER_TRANSPORT},
	{true, 200, true, KUBE_XFER_STREAM_BROKEN},
	/* an error status stands by itself, body or not */
	{true, 413, false, KUBE_XFER_ANSWER},
	{true, 500, false, KUBE_XFER_ANSWER},
	{true, 410, true, KUBE_XFER_STREAM_BROKEN},
};

Test(kube_transfer, outcome_table)
{
	for (size_t i = 0; i < sizeof(xfer_cases) / sizeof(xfer_cases[0]);
	     i++) {
		const struct xfer_case *c = &xfer_cases[i];

		cr_expect_eq(
			kube_transfer_outcome(c->failed, c->status, c->stream),
			c->want, "case %zu: failed %d status %ld", i, c->failed,
			c->status);
	}
}

Test(kube_transfer, status_413_without_body)
{
	struct kube_error e;

	cr_assert_eq(kube_status_parse(NULL, 0, 413, &e), -E2BIG);
	cr_assert_eq(e.code, -E2BIG);
	cr_assert_eq(e.http_status, 413);
	cr_assert_not(e.retryable);
	cr_assert_str_empty(e.reason);
	/* and with a partial body the status still decides */
	cr_assert_eq(kube_status_parse("{\"kind\":\"Sta", 12, 413, &e), -E2BIG);
	cr_assert_not(e.retryable);
}

Test(kube_transfer, status_1xx_is_not_success)
{
	struct kube_error e;

	/* whatever reaches the mapper, 1xx is never 0 */
	cr_assert_neq(kube_status_parse(NULL, 0, 100, &e), 0);
}
