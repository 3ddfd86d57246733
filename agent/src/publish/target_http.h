/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP publish target (target_http.c): each kill POSTed to a
 * collector the user runs (standalone mode's --publish-url), one
 * multipart/form-data request a kill: part "report" (application/json,
 * the kill's facts: http_target_report()) and part "bundle"
 * (application/gzip, the bundle file as the node keeps it), with an
 * Idempotency-Key header that names the kill (the same on every retry:
 * the collector drops a second POST of a key it has). One step, "post".
 * A 2xx answer delivers the kill; 5xx, 408, 409, 425, 429, 3xx and no
 * answer at all (connection, TLS, the deadline) are retried with the
 * queue's backoff; any other 4xx gives the item up into queue/failed/.
 * HTTPS only, the collector's certificate verified (--publish-ca-file, or
 * the system's CAs); a bearer token from --publish-token-file, re-read
 * when the file changes, never logged; each POST has a 30 s deadline
 * (10 s to connect) and an answer is read up to 64 KiB.
 * docs/publish-http.md is the collector's side. */
#pragma once

#include <stddef.h>

#include "publish/pubtarget.h"

struct strbuf;

struct http_target_opts {
	const char *url;	/* https://host[:port]/path[?query] */
	const char *token_file; /* NULL: no Authorization header */
	const char *ca_file;	/* NULL: the system's CA bundle */
};

/* The deadlines and the answer's cap. */
#define HTTP_TARGET_TIMEOUT_MS 30000
#define HTTP_TARGET_CONNECT_MS 10000
#define HTTP_TARGET_ANSWER_MAX (64u << 10)

struct http_target;

/* The target for o (the URL checked; the token and CA files readable now:
 * each a clear error), reading bundles from state_fd. Logs and returns
 * -errno. No I/O to the collector yet. */
int http_target_new(const struct http_target_opts *o, int state_fd,
		    struct http_target **ret);
/* NULL is a no-op. */
void http_target_free(struct http_target *t);
/* Its struct pub_target (lives as long as t). */
const struct pub_target *http_target_target(struct http_target *t);
/* Where it posts, for logs: scheme, host, port and path (no query). */
const char *http_target_where(const struct http_target *t);

/* ---- pure parts, for tests ---- */

/* url split into the server ("https://host[:port]") and the path with its
 * query ("/path?q", "/" when none); where (optional) gets what logs may
 * show: server and path without the query. -EINVAL for a URL that is not
 * https://, has no host, or carries a user or password (a token belongs
 * in --publish-token-file), -E2BIG when a part does not fit. */
int http_target_split_url(const char *url, char *server, size_t server_size,
			  char *path, size_t path_size, char *where,
			  size_t where_size);
/* The Idempotency-Key of it: "<node>/<id>", a byte outside [A-Za-z0-9._-]
 * of the node's name as '_'. Unique per kill across hosts and reboots
 * (the id is the boot's and the kernel record's). */
void http_target_key(const struct pub_item *it, char *buf, size_t size);
/* The "report" part: a JSON object of it's facts (docs/publish-http.md)
 * and of its bundle (its name, size and sha256 when
 * bundle_sha256, else "bundle": null and "bundle_error": why). */
int http_target_report(const struct pub_item *it, const char *bundle_sha256,
		       size_t bundle_len, const char *bundle_error,
		       struct strbuf *ret);
/* The body: report and, when bundle is not NULL, the bundle as parts of
 * a multipart/form-data body, into ret; its Content-Type (with the
 * boundary, one that occurs in neither part) into ctype. -E2BIG when ret's
 * cap is too small, -ENOMEM. */
int http_target_body(const char *report, size_t report_len, const void *bundle,
		     size_t bundle_len, const char *bundle_name,
		     struct strbuf *ret, char *ctype, size_t ctype_size);
/* A failed POST (r, e: the client's error, e->http_status its answer's
 * status or 0): PUB_RETRY or PUB_GIVE_UP as above. */
enum pub_outcome http_target_classify(const struct pub_item *it, int r,
				      const struct kube_error *e);
