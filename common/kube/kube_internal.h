/* SPDX-License-Identifier: Apache-2.0 */
/* kube: helpers shared by the kube_*.c files. Not installed. */
#pragma once

#include <pthread.h>

#include <curl/curl.h>

#include "kube/kube.h"

/* JSON access by up to three keys (NULL ends the path). Borrowed. */
struct json_object *kube_json_path(struct json_object *o, const char *a,
				   const char *b, const char *c);
const char *kube_json_str(struct json_object *o, const char *a, const char *b,
			  const char *c);
/* *ret = strdup of the string at the path, NULL when absent. -ENOMEM. */
int kube_json_dup(struct json_object *o, const char *a, const char *b,
		  const char *c, char **ret);
int64_t kube_json_int(struct json_object *o, const char *a, const char *b,
		      const char *c);
/* Whole buffer must be one JSON value (trailing whitespace allowed). */
int kube_json_parse(const char *buf, size_t len, struct json_object **ret);
int kube_json_set_str(struct json_object *o, const char *key, const char *v);
int kube_json_set_int(struct json_object *o, const char *key, int64_t v);
struct json_object *kube_json_add_obj(struct json_object *o, const char *key);
struct json_object *kube_object_new(const struct kube_resource *res,
				    const char *name, const char *ns,
				    struct json_object *labels,
				    const struct kube_owner_ref *owner);

/* Sets err (when non-NULL) to a transport-level failure. Returns code. */
int kube_error_set(struct kube_error *err, int code, const char *fmt, ...)
	_printf_(3, 4);

/* Waits up to us microseconds or until a cancel fires. Returns 0 or
 * -ECANCELED. */
int kube_client_sleep(struct kube_client *c, struct kube_cancel *cancel,
		      uint64_t us);

/* A streamed request: data goes to fn as it arrives. Returns like
 * kube_request; a 2xx stream that ends is 0. */
typedef int (*kube_stream_fn)(const char *data, size_t len, void *ud);
int kube_request_stream(struct kube_client *c, const struct kube_request *r,
			kube_stream_fn fn, void *ud, struct kube_error *err);

/* Path of a call: resource, namespace (client default), name, sub. */
int kube_call_path(struct kube_client *c, const struct kube_call *k,
		   struct strbuf *sb);

/* Events the client posted recently (kube_event_post). */
#define KUBE_EVENT_CACHE 64
struct kube_event_cache_entry {
	char key[256];	/* involved uid + reason + message digest */
	char name[256]; /* the Event's name */
	char ns[64];
	unsigned count;
	uint64_t last_us; /* monotonic */
};
struct kube_event_cache {
	pthread_mutex_t lock;
	struct kube_event_cache_entry e[KUBE_EVENT_CACHE];
};
struct kube_event_cache *kube_client_events(struct kube_client *c);

/* RFC 3339 UTC time of now ("2026-11-30T09:29:59Z"). */
void kube_now_rfc3339(char buf[32]);

/* What one finished transfer means: failed = libcurl reported an error,
 * status = the last response code it saw (0 none, 1xx interim), stream =
 * a streamed 2xx whose data already went to the caller. Pure. */
enum kube_xfer_outcome {
	KUBE_XFER_ANSWER,	 /* an HTTP answer: map it by its status */
	KUBE_XFER_TRANSPORT,	 /* no (usable) answer: a transport error */
	KUBE_XFER_STREAM_BROKEN, /* a stream that ended badly */
};
enum kube_xfer_outcome kube_transfer_outcome(bool failed, long status,
					     bool stream);

/* The client's max_response option. */
size_t kube_client_max_response(const struct kube_client *c);
