/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: any bytes through kmsg_parse_buffer() (raw records and
 * dmesg text), every report through oom_report_to_json() and its raw text
 * parsed again. */
#include <json-c/json.h>
#include <stdint.h>

#include "kernel/kmsg.h"
#include "base/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int reparse(struct oom_report *r, void *userdata)
{
	(void)r;
	(void)userdata;
	return 0;
}

static int check(struct oom_report *r, void *userdata)
{
	struct json_object *o = oom_report_to_json(r);

	(void)userdata;
	if (!o)
		abort();
	json_object_put(o);
	if (r->n_victims && !oom_report_victim_memcg(r))
		abort();
	/* kernel/oom.txt must parse back to at least one report */
	if (r->raw.len &&
	    kmsg_parse_buffer(r->raw.buf, r->raw.len, reparse, NULL) < 1)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (kmsg_parse_buffer((const char *)data, size, check, NULL) < 0)
		abort();
	return 0;
}
