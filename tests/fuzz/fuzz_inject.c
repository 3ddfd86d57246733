/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the injector's AdmissionReview decoder (agent/src/
 * injector/inject.c, linked in by name): any bytes as a review, with and
 * without native sidecars, and as the API server's /version body.
 * Invariants: a review always gets an answer that is JSON, allows the pod,
 * echoes the request's uid, and carries a patch only as base64 of a JSON
 * array. */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jget.h"
#include "injector/inject.h"
#include "kube/kube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_patch(struct json_object *resp)
{
	const char *b64 = jget_str(NULL, resp, "patch");
	unsigned char *raw;
	struct json_tokener *tok;
	struct json_object *ops;
	size_t n;

	if (!b64)
		return;
	tok = json_tokener_new();
	/* the decoded bytes are not NUL-terminated */
	if (!tok || kube_base64_decode(b64, strlen(b64), &raw, &n) != 0 ||
	    n > INT32_MAX)
		abort();
	ops = json_tokener_parse_ex(tok, (const char *)raw, (int)n);
	if (!ops || !json_object_is_type(ops, json_type_array) ||
	    json_object_array_length(ops) == 0)
		abort();
	json_object_put(ops);
	json_tokener_free(tok);
	free(raw);
}

static void check_review(const uint8_t *data, size_t size, bool native)
{
	struct inject_config cfg;
	struct strbuf out;
	struct json_object *o, *resp;
	bool allowed = false;
	int r;

	inject_config_init(&cfg);
	cfg.image = "ghcr.io/oomlens/sidecar:fuzz";
	cfg.native_sidecar = native;
	strbuf_init(&out, 64u << 20);
	r = inject_review((const char *)data, size, &cfg, &out);
	if (r == -EFBIG && size > INJECT_MAX_TREE / JGET_COST_OBJECT) {
		strbuf_release(&out); /* too costly a tree, and no uid */
		return;
	}
	if (r != 0 && r != INJECT_TOO_LARGE)
		abort();
	o = json_tokener_parse(out.buf);
	resp = jget_obj(NULL, o, "response");
	if (!resp || !jget_bool(NULL, resp, "allowed", &allowed) || !allowed ||
	    !jget_str(NULL, resp, "uid"))
		abort();
	check_patch(resp);
	json_object_put(o);
	strbuf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool native = false;

	check_review(data, size, false);
	check_review(data, size, true);
	inject_parse_version((const char *)data, size, &native);
	/* the uid a review too costly to parse is answered from */
	static const char *const uid_at[] = {"request", "uid", NULL};
	char uid[128];
	if (jget_scan_str((const char *)data, size, uid_at, uid, sizeof(uid)) ==
		    0 &&
	    strlen(uid) >= sizeof(uid))
		abort();
	return 0;
}
