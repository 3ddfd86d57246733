/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP publish target: a kill POSTed to a collector's HTTPS URL
 * through common/kube's libcurl client (target_http.h). */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "publish/pubqueue.h"
#include "publish/target_http.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "base/util.h"

/* What a bundle file may be when it is read to be sent: the bundle cap
 * (--bundle-max-size, 900 KiB at most) and room. */
#define BUNDLE_READ_MAX (4u << 20)
/* The body beside the bundle: the report part and the boundaries. */
#define BODY_ROOM (64u << 10)

struct http_target {
	struct pub_target target;
	struct http_target_opts o;
	/* made at the first POST, on the publisher thread: libcurl's and
	 * OpenSSL's start-up faults in about 1.7 MiB of the binary, which an
	 * agent that never posts does not pay (docs/publish-http.md) */
	struct kube_client *client;
	struct kube_cancel *cancel;
	int state_fd;
	char server[1024];
	char path[2048];
	char where[2048];
};

int http_target_split_url(const char *url, char *server, size_t server_size,
			  char *path, size_t path_size, char *where,
			  size_t where_size)
{
	char *scheme = NULL, *host = NULL, *port = NULL, *p = NULL, *q = NULL;
	char *user = NULL, *pass = NULL;
	CURLU *u = curl_url();
	int r = -EINVAL, n = 0, m = 0;

	if (!u)
		return -ENOMEM;
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    !streq(scheme, "https") ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host ||
	    curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PASSWORD, &pass, 0) == CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PATH, &p, 0) != CURLUE_OK)
		goto out;
	if (curl_url_get(u, CURLUPART_PORT, &port, 0) != CURLUE_OK)
		port = NULL;
	if (curl_url_get(u, CURLUPART_QUERY, &q, 0) != CURLUE_OK)
		q = NULL;
	n = snprintf(server, server_size, "https://%s%s%s", host,
		     port ? ":" : "", port ? port : "");
	m = snprintf(path, path_size, "%s%s%s", p, q ? "?" : "", q ? q : "");
	r = n < 0 || (size_t)n >= server_size || m < 0 || (size_t)m >= path_size
		    ? -E2BIG
		    : 0;
	if (r == 0 && where) {
		n = snprintf(where, where_size, "%s%s", server, p);
		r = n < 0 || (size_t)n >= where_size ? -E2BIG : 0;
	}
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(p);
	curl_free(q);
	curl_free(user);
	curl_free(pass);
	curl_url_cleanup(u);
	return r;
}

void http_target_key(const struct pub_item *it, char *buf, size_t size)
{
	size_t i;
	int n = snprintf(buf, size, "%s/%s", it->node[0] ? it->node : "-",
			 it->id);
	size_t host = it->node[0] ? strlen(it->node) : 1;

	for (i = 0; n > 0 && i < host && i < size - 1; i++) {
		char c = buf[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			buf[i] = '_';
	}
}

static void add_str(struct json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, s[0] ? json_object_new_string(s) : NULL);
}

static struct json_object *victim_json(const struct pub_item *it)
{
	struct json_object *v;

	if (!it->pid)
		return NULL;
	v = json_object_new_object();
	json_object_object_add(v, "pid", json_object_new_int64(it->pid));
	add_str(v, "comm", it->comm);
	json_object_object_add(v, "anon_rss",
			       json_object_new_int64(it->anon_rss));
	json_object_object_add(v, "file_rss",
			       json_object_new_int64(it->file_rss));
	json_object_object_add(v, "shmem_rss",
			       json_object_new_int64(it->shmem_rss));
	return v;
}

static struct json_object *bundle_json(const struct pub_item *it,
				       const char *sha256, size_t len)
{
	struct json_object *b;
	char name[128];

	if (!sha256)
		return NULL;
	snprintf(name, sizeof(name), "%s.tar.gz", it->id);
	b = json_object_new_object();
	json_object_object_add(b, "name", json_object_new_string(name));
	json_object_object_add(b, "size", json_object_new_int64((int64_t)len));
	json_object_object_add(b, "sha256", json_object_new_string(sha256));
	return b;
}

int http_target_report(const struct pub_item *it, const char *bundle_sha256,
		       size_t bundle_len, const char *bundle_error,
		       struct strbuf *ret)
{
	struct json_object *o = json_object_new_object();
	const char *s;
	int r;

	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "schema",
			       json_object_new_string("oomlens.io/kill/v1"));
	json_object_object_add(o, "id", json_object_new_string(it->id));
	add_str(o, "node", it->node);
	add_str(o, "cgroup", it->cgroup);
	add_str(o, "killed_at", it->killed_at);
	json_object_object_add(o, "killed_at_ms",
			       it->killed_at_ms
				       ? json_object_new_int64(it->killed_at_ms)
				       : NULL);
	json_object_object_add(o, "victim", victim_json(it));
	json_object_object_add(o, "limit",
			       it->limit ? json_object_new_int64(it->limit)
					 : NULL);
	json_object_object_add(o, "usage",
			       it->usage ? json_object_new_int64(it->usage)
					 : NULL);
	add_str(o, "verdict", it->verdict);
	add_str(o, "summary", it->summary);
	json_object_object_add(o, "bundle",
			       bundle_json(it, bundle_sha256, bundle_len));
	if (!bundle_sha256)
		json_object_object_add(
			o, "bundle_error",
			json_object_new_string(bundle_error ? bundle_error
							    : "unknown"));
	s = json_object_to_json_string_ext(
		o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	r = s ? strbuf_adds(ret, s) : -ENOMEM;
	json_object_put(o);
	return r;
}

static bool occurs(const void *data, size_t len, const char *s)
{
	return data && memmem(data, len, s, strlen(s)) != NULL;
}

/* A boundary that occurs in neither part: from the report's hash (the
 * same for every retry of a kill), a counter added in the unlikely case
 * that the bytes hold it. */
static int boundary(const char *report, size_t report_len, const void *bundle,
		    size_t bundle_len, char *ret, size_t size)
{
	char hex[65];

	kube_sha256_hex(report, report_len, hex);
	for (unsigned i = 0; i < 100; i++) {
		char delim[96];

		snprintf(ret, size, "oomlens-%.24s-%u", hex, i);
		snprintf(delim, sizeof(delim), "--%s", ret);
		if (!occurs(report, report_len, delim) &&
		    !occurs(bundle, bundle_len, delim))
			return 0;
	}
	return -EBADMSG;
}

static bool name_ok(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == '"' || *s == '\\' ||
		    *s == 0x7f)
			return false;
	return true;
}

int http_target_body(const char *report, size_t report_len, const void *bundle,
		     size_t bundle_len, const char *bundle_name,
		     struct strbuf *ret, char *ctype, size_t ctype_size)
{
	char b[64];
	int r = boundary(report, report_len, bundle, bundle_len, b, sizeof(b));

	if (r < 0)
		return r;
	r = strbuf_addf(ret,
			"--%s\r\nContent-Disposition: form-data; "
			"name=\"report\"\r\nContent-Type: application/json"
			"\r\n\r\n",
			b);
	if (r >= 0)
		r = strbuf_add(ret, report, report_len);
	if (r >= 0 && bundle)
		r = strbuf_addf(ret,
				"\r\n--%s\r\nContent-Disposition: form-data; "
				"name=\"bundle\"; filename=\"%s\"\r\n"
				"Content-Type: application/gzip\r\n\r\n",
				b,
				name_ok(bundle_name) ? bundle_name
						     : "bundle.tar.gz");
	if (r >= 0 && bundle)
		r = strbuf_add(ret, bundle, bundle_len);
	if (r >= 0)
		r = strbuf_addf(ret, "\r\n--%s--\r\n", b);
	if (r >= 0)
		snprintf(ctype, ctype_size, "multipart/form-data; boundary=%s",
			 b);
	return r < 0 ? r : 0;
}

enum pub_outcome http_target_classify(const struct pub_item *it, int r,
				      const struct kube_error *e)
{
	long s = e ? e->http_status : 0;

	(void)it;
	/* 409: a POST of this key still in progress at the collector (our
	 * first timed out on the way); 408, 425, 429: come back later */
	if (s >= 500 || s == 408 || s == 409 || s == 425 || s == 429)
		return PUB_RETRY;
	if (s >= 400)
		return PUB_GIVE_UP; /* the collector refuses it as it is */
	if (s >= 300)
		return PUB_RETRY; /* not followed: a URL being fixed */
	/* no answer: connection, TLS, the deadline, the token file away
	 * while it is rotated, memory, the agent stopping; a request that
	 * cannot be made (-EINVAL) never will be */
	return r == -EINVAL ? PUB_GIVE_UP : PUB_RETRY;
}

/* The item's bundle, read for the POST; NULL (why logged and in *why)
 * when it cannot be: the report goes without it. */
static void *read_bundle(struct http_target *t, const struct pub_item *it,
			 size_t *len, const char **why)
{
	void *data = NULL;
	int r = pub_read_bundle(t->state_fd, it->bundle_file, BUNDLE_READ_MAX,
				&data, len);

	if (r == 0)
		return data;
	*why = strerror(-r);
	log_warn("report %s: its bundle \"%s\" cannot be read (%s): posting "
		 "the report without it",
		 it->id, it->bundle_file, *why);
	return NULL;
}

/* The client, once: the first POST makes it. */
static int make_client(struct http_target *t)
{
	struct kube_config cfg = {.server = t->server,
				  .ca_file = (char *)t->o.ca_file,
				  .token_file = (char *)t->o.token_file};
	struct kube_client_options co = {
		.user_agent = "oomlens-agent/0.1",
		.qps = -1,	    /* the queue paces itself */
		.no_retries = true, /* the queue retries, with backoff */
		.timeout_ms = HTTP_TARGET_TIMEOUT_MS,
		.connect_timeout_ms = HTTP_TARGET_CONNECT_MS,
		.max_response = HTTP_TARGET_ANSWER_MAX,
	};

	return t->client ? 0 : kube_client_new(&cfg, &co, &t->client);
}

/* The POST of body; the error's message names the collector and its
 * answer. */
static int post(struct http_target *t, const struct pub_item *it,
		const struct strbuf *body, const char *ctype,
		struct kube_error *err)
{
	_cleanup_strbuf_ struct strbuf answer = STRBUF_INIT;
	char key[400], key_line[440], msg[sizeof(err->message)];
	const char *headers[] = {key_line, "Expect:", NULL};
	struct kube_request rq = {.method = "POST",
				  .path = t->path,
				  .content_type = ctype,
				  .body = body->buf,
				  .body_len = body->len,
				  .cancel = t->cancel,
				  .headers = headers};
	long status = 0;
	int r = make_client(t);

	if (r < 0) {
		err->code = r;
		snprintf(err->message, sizeof(err->message),
			 "the HTTP client: %s", strerror(-r));
		return r;
	}
	http_target_key(it, key, sizeof(key));
	snprintf(key_line, sizeof(key_line), "Idempotency-Key: %s", key);
	strbuf_init(&answer, HTTP_TARGET_ANSWER_MAX);
	r = kube_request(t->client, &rq, &status, &answer, err);
	if (r == -E2BIG && status >= 200 && status < 300)
		r = 0; /* taken; the rest of its answer is not needed */
	if (r >= 0) {
		log_info("report %s: posted to %s (%ld)", it->id, t->where,
			 status);
		return 0;
	}
	if (status)
		snprintf(msg, sizeof(msg), "%.200s answered %ld: %.280s",
			 t->where, status, err->message);
	else
		snprintf(msg, sizeof(msg), "%.200s: %.300s", t->where,
			 err->message);
	strlcpy_safe(err->message, msg, sizeof(err->message));
	return r;
}

static int do_post(void *ud, struct pub_item *it, struct kube_error *err)
{
	struct http_target *t = ud;
	_cleanup_strbuf_ struct strbuf report = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf body = STRBUF_INIT;
	const char *why = NULL;
	char hex[65], ctype[128], name[128];
	size_t len = 0;
	void *data = read_bundle(t, it, &len, &why);
	int r;

	if (data)
		kube_sha256_hex(data, len, hex);
	snprintf(name, sizeof(name), "%s.tar.gz", it->id);
	strbuf_init(&report, BODY_ROOM / 2);
	strbuf_init(&body, len + BODY_ROOM);
	r = http_target_report(it, data ? hex : NULL, len, why, &report);
	if (r >= 0)
		r = http_target_body(report.buf, report.len, data, len, name,
				     &body, ctype, sizeof(ctype));
	free(data);
	if (r < 0) { /* not sent: memory, retried */
		err->code = -ENOMEM;
		snprintf(err->message, sizeof(err->message),
			 "the request's body: %s", strerror(-r));
		return -ENOMEM;
	}
	return post(t, it, &body, ctype, err);
}

static const struct pub_step steps[] = {
	{"post", do_post},
};

static void cancel(void *ud)
{
	struct http_target *t = ud;

	/* every request passes it: one in flight, or the client being made,
	 * returns at once */
	kube_cancel_trigger(t->cancel);
}

/* A file the agent must read later: readable now, or a clear error. */
static int check_file(const char *opt, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		log_error("%s \"%s\": %s", opt, path, strerror(errno));
		return -errno;
	}
	close(fd);
	return 0;
}

int http_target_new(const struct http_target_opts *o, int state_fd,
		    struct http_target **ret)
{
	struct http_target *t;
	int r;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->o = *o;
	r = http_target_split_url(o->url, t->server, sizeof(t->server), t->path,
				  sizeof(t->path), t->where, sizeof(t->where));
	if (r < 0) {
		log_error("--publish-url \"%s\": %s", o->url,
			  r == -E2BIG ? "too long"
				      : "not an https:// URL with a host (a "
					"token goes in --publish-token-file)");
		free(t);
		return -EINVAL;
	}
	if ((o->token_file &&
	     check_file("--publish-token-file", o->token_file) < 0) ||
	    (o->ca_file && check_file("--publish-ca-file", o->ca_file) < 0)) {
		free(t);
		return -EINVAL;
	}
	t->state_fd = state_fd;
	r = kube_cancel_new(&t->cancel);
	if (r < 0) {
		log_error("publish target %s: %s", t->where, strerror(-r));
		http_target_free(t);
		return r;
	}
	t->target = (struct pub_target){
		.name = "http",
		.ud = t,
		.steps = steps,
		.n_steps = ARRAY_SIZE(steps),
		.delivered = 0,
		.classify = http_target_classify,
		.cancel = cancel,
	};
	*ret = t;
	return 0;
}

void http_target_free(struct http_target *t)
{
	if (!t)
		return;
	kube_client_free(t->client);
	kube_cancel_free(t->cancel);
	free(t);
}

const struct pub_target *http_target_target(struct http_target *t)
{
	return &t->target;
}

const char *http_target_where(const struct http_target *t)
{
	return t->where;
}
