/* SPDX-License-Identifier: Apache-2.0 */
/* struct kube_error: what every layer of the client fills in (config,
 * exec credentials, transport), so it sits below them all. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kube_internal.h"

int kube_error_set(struct kube_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	memset(err, 0, sizeof(*err));
	err->code = code;
	err->retryable = code == -ECONNREFUSED || code == -ETIMEDOUT ||
			 code == -ECONNRESET || code == -EHOSTUNREACH;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return code;
}
