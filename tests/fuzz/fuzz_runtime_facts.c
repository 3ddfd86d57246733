/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the runtimes' facts loaders (forensics/runtimes/
 * node.c, python.c, dotnet.c, through rtio.c): what a pod's sidecar may
 * write as processes/<pid>/<runtime>/facts.json. The input, cut at NUL
 * bytes, is the text of the files below in order, beside a fixed status;
 * the bundle is loaded (diagnosis_load_bundle), diagnosed in a 200 MiB
 * container, and rendered as HTML and text. Invariants: no abort (json-c
 * asserts on a wrong type), every ledger figure within the limit plus
 * its slack, every verdict's figure too. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forensics/bundle.h"
#include "forensics/diagnosis.h"
#include "forensics/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MIB (1ull << 20)

static const char *const paths[] = {
	"processes/42/node/facts.json",	  "processes/42/python/facts.json",
	"processes/42/dotnet/facts.json", "processes/42/arenas.json",
	"processes/42/pmap.txt",
};

#define N_PATHS (sizeof(paths) / sizeof(paths[0]))

static const char status[] = "Name:\tvictim\nPid:\t42\nPPid:\t1\n"
			     "RssAnon:\t190000 kB\nRssFile:\t8000 kB\n";

static void check(const struct diagnosis *d)
{
	uint64_t max = d->limit_bytes + diag_slack(d->limit_bytes);

	if (d->n_parts > DIAG_MAX_PARTS || d->n_verdicts > _DIAG_KIND_MAX)
		abort();
	for (size_t i = 0; i < d->n_parts; i++)
		if (d->parts[i].bytes > max)
			abort();
	for (size_t i = 0; i < d->n_verdicts; i++)
		if (d->verdicts[i].bytes > 2 * d->limit_bytes ||
		    !memchr(d->verdicts[i].detail, '\0',
			    sizeof(d->verdicts[i].detail)))
			abort();
}

static void diagnose(struct bundle *b)
{
	struct diag_input in;
	struct diagnosis *d = calloc(1, sizeof(*d));
	struct json_object *dj;

	if (!d || diagnosis_load_bundle(b, NULL, 1796031080000ull, &in) < 0)
		abort();
	in.have_usage = true;
	in.usage_bytes = in.limit_bytes = 200 * MIB;
	in.have_stats = true;
	in.anon = 190 * MIB;
	diagnosis_run(&in, d);
	check(d);
	dj = diagnosis_to_json(d);
	if (!dj)
		abort();
	bundle_add_json(b, "diagnosis.json", dj, BUNDLE_ESSENTIAL);
	json_object_put(dj);
	diag_input_release(&in);
	free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bundle *b;
	struct strbuf out;
	size_t at = 0;

	if (bundle_new("fuzz", &b) < 0 ||
	    bundle_add(b, "processes/42/status", status, sizeof(status) - 1,
		       BUNDLE_NORMAL) < 0)
		abort();
	for (size_t i = 0; i < N_PATHS && at <= size; i++) {
		const uint8_t *z = memchr(data + at, '\0', size - at);
		size_t len = z ? (size_t)(z - data - at) : size - at;

		if (len &&
		    bundle_add(b, paths[i], data + at, len, BUNDLE_NORMAL) < 0)
			abort();
		at += len + 1;
	}
	diagnose(b);
	strbuf_init(&out, 64u << 20);
	report_render_html(b, &out);
	strbuf_reset(&out);
	report_render_text(b, true, &out);
	strbuf_release(&out);
	bundle_free(b);
	return 0;
}
