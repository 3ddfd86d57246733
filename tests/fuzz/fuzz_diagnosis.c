/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for what the agent (at a kill) and `show` (on a bundle
 * from anywhere) make of a pod's files: the input, cut at NUL bytes, is
 * the text of the files below in order (the first the kernel's report);
 * they go into a bundle, which is
 * diagnosed (diagnosis_load_bundle + diagnosis_run) and rendered as HTML
 * and text. A part given for diagnosis.json replaces the computed one, as
 * in a hostile OOMBundle. Invariants: no abort (json-c asserts on a wrong
 * type), every figure of the ledger within the limit plus its slack. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forensics/bundle.h"
#include "forensics/diagnosis.h"
#include "forensics/report.h"
#include "kernel/kmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const paths[] = {
	"kernel/oom.txt", /* parsed: the kill's report */
	"timeline.json",
	"manifest.json",
	"processes/42/arenas.json",
	"processes/42/jvm/heap_rss.json",
	"processes/42/jvm/native_memory.txt",
	"processes/42/jvm/heap_info.txt",
	"spool/snapshot.json",
	"cgroup/at-notification/memory.stat",
	"processes/42/jvm/trim.json",
	"processes/42/classes.json",
	"processes/42/allocator.json",
	"processes/42/pmap.txt",
	"diagnosis.json", /* an empty part: not given, the agent's */
	"processes/42/status",
	"processes/42/snapshot.json",
	"processes/42/jvm/class_histogram.json",
};

#define N_PATHS (sizeof(paths) / sizeof(paths[0]))

static void check_ledger(const struct diagnosis *d)
{
	uint64_t max = d->limit_bytes + diag_slack(d->limit_bytes);

	if (d->n_parts > DIAG_MAX_PARTS)
		abort();
	for (size_t i = 0; d->limit_bytes && i < d->n_parts; i++)
		if (d->parts[i].bytes > max)
			abort();
}

/* Keeps the first report of the paste. */
static int take_first(struct oom_report *r, void *userdata)
{
	struct oom_report *first = userdata;

	if (first->n_victims == 0 && r->n_victims > 0) {
		oom_report_release(first);
		*first = *r;
		oom_report_init(r);
	}
	return 0;
}

static void diagnose(struct bundle *b)
{
	struct diag_input in;
	struct diagnosis *d = calloc(1, sizeof(*d));
	struct oom_report r;
	struct json_object *dj;
	const char *raw;
	size_t len = 0;

	oom_report_init(&r);
	raw = bundle_get(b, "kernel/oom.txt", &len);
	if (raw && kmsg_parse_buffer(raw, len, take_first, &r) < 0)
		abort();
	if (!d || diagnosis_load_bundle(b, r.n_victims ? &r : NULL,
					1796031080000ull, &in) < 0)
		abort();
	diagnosis_run(&in, d);
	check_ledger(d);
	dj = diagnosis_to_json(d);
	if (!dj)
		abort();
	bundle_add_json(b, "diagnosis.json", dj, BUNDLE_ESSENTIAL);
	json_object_put(dj);
	diag_input_release(&in);
	oom_report_release(&r);
	free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bundle *b;
	struct strbuf out;
	size_t at = 0, i = 0;
	bool given = false;

	if (bundle_new("fuzz", &b) < 0)
		abort();
	for (; i < N_PATHS && at <= size; i++) {
		const uint8_t *z = memchr(data + at, '\0', size - at);
		size_t len = z ? (size_t)(z - data - at) : size - at;

		if (bundle_add(b, paths[i], data + at, len, BUNDLE_NORMAL) < 0)
			abort();
		given = given || (len && streq(paths[i], "diagnosis.json"));
		at += len + 1;
	}
	if (!given) /* no diagnosis.json given: the agent's */
		diagnose(b);
	strbuf_init(&out, 64u << 20);
	report_render_html(b, &out);
	strbuf_reset(&out);
	report_render_text(b, true, &out);
	strbuf_release(&out);
	bundle_free(b);
	return 0;
}
