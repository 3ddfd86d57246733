/* SPDX-License-Identifier: Apache-2.0 */
/* kube: a small Kubernetes API client on libcurl + json-c (+ libyaml for
 * kubeconfig). Only the calls oomlens makes. Library code: never logs,
 * never exits; every failure comes back as a negative errno plus, when the
 * caller passes one, a struct kube_error with the HTTP status, the Status
 * object's reason and message, and whether a retry makes sense.
 *
 * errno mapping of HTTP answers (kube_error has the details):
 *   400 -EINVAL  401 -EACCES  403 -EPERM  404 -ENOENT
 *   409 AlreadyExists -EEXIST, 409 Conflict -EBUSY   410 -ESTALE
 *   413 / etcd-size 500 -E2BIG  422 -EINVAL  429 -EAGAIN  other 5xx -EIO
 *   no answer (connect, TLS, timeout) -ECONNREFUSED / -ETIMEDOUT / -EPROTO
 *   cancelled -ECANCELED
 *
 * Threads: a struct kube_client may be shared by threads; each call blocks
 * the calling thread only. Blocking calls return -ECANCELED within ~100 ms
 * of kube_cancel_trigger() on the cancel object they were given, or of
 * kube_client_shutdown(). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "base/strbuf.h"

/* ---- errors ---------------------------------------------------------- */

struct kube_error {
	long http_status;	/* 0 when no HTTP answer came */
	char reason[64];	/* Status.reason ("" if none) */
	char message[512];	/* Status.message, or the transport error */
	bool retryable;		/* 429, 5xx other than size errors, transport */
	uint32_t retry_after_s; /* Retry-After header, 0 if absent */
	int code;		/* the -errno the call returned */
};

/* Fills ret from an HTTP status and an error body (a Status object, or
 * anything else: then message holds the start of the body). Pure. Returns
 * the mapped -errno (see the table above), 0 for a 2xx status. */
int kube_status_parse(const char *body, size_t len, long http_status,
		      struct kube_error *ret);

/* The -errno for an HTTP status + Status reason (table above). */
int kube_errno_from_status(long http_status, const char *reason);

/* Parses a Retry-After value: delta-seconds or an HTTP-date (compared with
 * now_s, unix seconds). Returns 0 and *ret_s (capped at 3600), or
 * -EINVAL. */
int kube_parse_retry_after(const char *value, uint64_t now_s, uint32_t *ret_s);

/* ---- cancellation ---------------------------------------------------- */

/* An eventfd that blocking calls poll next to their socket. Thread safe:
 * any thread may trigger; the trigger sticks until kube_cancel_reset(). */
struct kube_cancel;
int kube_cancel_new(struct kube_cancel **ret);
void kube_cancel_free(struct kube_cancel *c);
void kube_cancel_trigger(struct kube_cancel *c);
void kube_cancel_reset(struct kube_cancel *c);
bool kube_cancel_is_triggered(const struct kube_cancel *c);

/* ---- client-side rate limit (token bucket, like client-go's) --------- */

struct kube_limiter {
	double qps;    /* tokens per second; <= 0 means unlimited */
	double burst;  /* bucket size, >= 1 */
	double tokens; /* current tokens (may go negative: reserved) */
	uint64_t last_us;
};

void kube_limiter_init(struct kube_limiter *l, double qps, unsigned burst,
		       uint64_t now_us);
/* Takes one token at now_us and returns how long the caller must wait
 * before sending (0 = now). Pure; the caller serialises access. */
uint64_t kube_limiter_reserve(struct kube_limiter *l, uint64_t now_us);

/* ---- configuration --------------------------------------------------- */

struct kube_exec_config {
	char *command;
	char **args; /* NULL-terminated */
	char **env;  /* NULL-terminated "NAME=value" */
	char *api_version;
};

struct kube_config {
	char *server;	 /* "https://host:port", no trailing slash */
	char *namespace; /* default namespace, "default" when unset */
	char *ca_file;	 /* PEM file, or NULL */
	char *ca_data;	 /* PEM bytes (decoded certificate-authority-data) */
	size_t ca_data_len;
	bool insecure; /* insecure-skip-tls-verify */
	char *tls_server_name;
	char *token;	  /* static bearer token */
	char *token_file; /* re-read whenever it changes (projected tokens) */
	char *cert_file, *key_file;
	char *cert_data, *key_data; /* PEM bytes */
	size_t cert_data_len, key_data_len;
	struct kube_exec_config *exec; /* exec credential plugin, or NULL */
};

void kube_config_free(struct kube_config *cfg);

struct kube_incluster_options {
	const char *sa_dir; /* default
			       /var/run/secrets/kubernetes.io/serviceaccount */
	const char *host;   /* default $KUBERNETES_SERVICE_HOST */
	const char *port;   /* default $KUBERNETES_SERVICE_PORT */
};

/* In-cluster configuration: token file (kept as a path: re-read on
 * change), ca.crt, namespace file, service host/port. Returns 0, -ENOENT
 * when not in a cluster (no host env or no token), -ENOMEM. Reads files. */
int kube_config_in_cluster(const struct kube_incluster_options *o,
			   struct kube_config **ret);

struct kube_kubeconfig_options {
	const char *paths;     /* ':'-separated; default $KUBECONFIG, then
				* $HOME/.kube/config */
	const char *context;   /* NULL → current-context */
	const char *namespace; /* overrides the context's namespace */
};

/* Loads kubeconfig files merged as kubectl merges them (the first file
 * that defines a cluster/user/context name or current-context wins;
 * relative paths resolve against the file that names them). Returns 0,
 * -ENOENT (no file / no such context), -EINVAL with a message in err for
 * a malformed file. Reads files. */
int kube_config_load_kubeconfig(const struct kube_kubeconfig_options *o,
				struct kube_config **ret,
				struct kube_error *err);

/* The names of the contexts the kubeconfig files define, merged as
 * kube_config_load_kubeconfig merges them (o->context and o->namespace
 * unused), in order, each once: *ret_names is a JSON array of strings, the
 * caller's (json_object_put). Same returns. Reads files. */
int kube_config_list_contexts(const struct kube_kubeconfig_options *o,
			      struct json_object **ret_names,
			      struct kube_error *err);

/* Parses one kubeconfig held in memory (base_dir resolves relative
 * paths). Pure: no file is read. Same returns. */
int kube_config_parse_kubeconfig(const char *buf, size_t len,
				 const char *base_dir,
				 const struct kube_kubeconfig_options *o,
				 struct kube_config **ret,
				 struct kube_error *err);

/* Runs an exec credential plugin (client.authentication.k8s.io/v1) and
 * returns its token and expiry (unix seconds, 0 = none) and/or client
 * cert/key PEM. Blocks until the plugin exits (at most 30 s). Caller frees
 * the strings. */
struct kube_exec_credential {
	char *token;
	char *cert_pem, *key_pem;
	uint64_t expires_s;
};
int kube_exec_run(const struct kube_exec_config *e,
		  struct kube_exec_credential *ret, struct kube_error *err);
void kube_exec_credential_release(struct kube_exec_credential *c);
/* Parses an ExecCredential JSON document. Pure. */
int kube_exec_credential_parse(const char *buf, size_t len,
			       struct kube_exec_credential *ret);

/* ---- client ---------------------------------------------------------- */

struct kube_client_options {
	const char *user_agent; /* default "oomlens/0.1" */
	double qps;		/* default 5; < 0 disables the limiter */
	unsigned burst;		/* default 10 */
	unsigned max_retries;	/* 429/5xx with Retry-After; default 3 */
	bool no_retries;	/* one attempt only */
	uint32_t timeout_ms;	/* whole non-watch request; default 30000 */
	uint32_t connect_timeout_ms; /* default 10000 */
	size_t max_response;	     /* default 64 MiB */
	bool http1_only; /* default: let curl negotiate h2 over TLS */
	/* kubectl's --as / --as-group: Impersonate-User and one
	 * Impersonate-Group header each (copied; a value with a control
	 * character is refused, -EINVAL) */
	const char *impersonate_user;
	const char *const *impersonate_groups;
	size_t n_impersonate_groups;
};

struct kube_client;

/* Makes a client from a configuration (copied). No I/O yet. Returns 0,
 * -EINVAL (no server), -ENOMEM. */
int kube_client_new(const struct kube_config *cfg,
		    const struct kube_client_options *o,
		    struct kube_client **ret);
void kube_client_free(struct kube_client *c);
/* Makes every blocking call of c, now and later, return -ECANCELED. */
void kube_client_shutdown(struct kube_client *c);
/* The configured default namespace. */
const char *kube_client_namespace(const struct kube_client *c);

/* ---- resources and paths --------------------------------------------- */

struct kube_resource {
	const char *group; /* "" for core */
	const char *version;
	const char *plural;
	const char *kind;
	bool namespaced;
};

extern const struct kube_resource kube_res_pods, kube_res_events,
	kube_res_oomreports, kube_res_oombundles, kube_res_tokenreviews,
	kube_res_subjectaccessreviews;

/* Appends "/api/v1/namespaces/ns/pods/name/sub" (parts may be NULL;
 * ns NULL on a namespaced resource = all namespaces). Path parts are
 * percent-encoded. */
int kube_build_path(struct strbuf *sb, const struct kube_resource *r,
		    const char *ns, const char *name, const char *subresource);
/* Appends "?k=v" or "&k=v" (v percent-encoded). Skips a NULL/empty v. */
int kube_query_add(struct strbuf *sb, const char *key, const char *value);

/* ---- generic calls --------------------------------------------------- */

struct kube_call {
	const struct kube_resource *res;
	const char *namespace; /* NULL → client default (namespaced res) */
	bool all_namespaces;   /* list/watch across namespaces */
	const char *name;
	const char *subresource; /* "status" */
	struct kube_cancel *cancel;
	/* the largest answer read (the transfer stops beyond it: -E2BIG);
	 * 0: the client's max_response. For objects a pod may write. */
	size_t max_response;
};

/* GET one object; *ret is the decoded object (caller puts it). */
int kube_get(struct kube_client *c, const struct kube_call *k,
	     struct json_object **ret, struct kube_error *err);

struct kube_list_options {
	const char *label_selector;
	const char *field_selector;
	unsigned limit; /* page size; 0 = server's choice */
	const char *continue_token;
	const char *resource_version;
	bool all_pages; /* follow continue tokens to the end */
};

/* LIST; *ret is the List object (all items when all_pages). On a 410 with
 * a continue token the call fails with -ESTALE. */
int kube_list(struct kube_client *c, const struct kube_call *k,
	      const struct kube_list_options *o, struct json_object **ret,
	      struct kube_error *err);

/* POST obj; *ret (optional) is the stored object. */
int kube_create(struct kube_client *c, const struct kube_call *k,
		struct json_object *obj, struct json_object **ret,
		struct kube_error *err);
/* PUT obj (its metadata.resourceVersion is the precondition). */
int kube_update(struct kube_client *c, const struct kube_call *k,
		struct json_object *obj, struct json_object **ret,
		struct kube_error *err);
/* PATCH with application/merge-patch+json. */
int kube_merge_patch(struct kube_client *c, const struct kube_call *k,
		     struct json_object *patch, struct json_object **ret,
		     struct kube_error *err);

struct kube_apply_options {
	const char *field_manager; /* required */
	bool force;
};
/* Server-side apply (application/apply-patch+yaml; JSON is YAML). Creates
 * the object when missing. */
int kube_apply(struct kube_client *c, const struct kube_call *k,
	       struct json_object *obj, const struct kube_apply_options *o,
	       struct json_object **ret, struct kube_error *err);

struct kube_delete_options {
	const char *precondition_uid;
	const char *precondition_rv;
	bool set_grace_period;	 /* else the server's default */
	int64_t grace_period_s;	 /* 0 = at once */
	const char *propagation; /* "Background", "Foreground", "Orphan" */
};
/* DELETE; *ret (optional) is the answer (a Status, or the object). */
int kube_delete(struct kube_client *c, const struct kube_call *k,
		const struct kube_delete_options *o, struct json_object **ret,
		struct kube_error *err);

/* The lowest layer: one request with the client's auth, limiter, retries.
 * path includes the query. body may be NULL. *ret_status is the HTTP
 * status, ret_body gets the body (also on errors). Returns 0 for 2xx,
 * else the mapped -errno with err filled. */
struct kube_request {
	const char *method;
	const char *path;
	const char *content_type;
	const char *body;
	size_t body_len;
	struct kube_cancel *cancel;
	size_t max_response; /* 0: the client's; see struct kube_call */
	/* more header lines, "Name: value", NULL-terminated (NULL: none);
	 * one with a control character is refused: -EINVAL, nothing sent */
	const char *const *headers;
};
int kube_request(struct kube_client *c, const struct kube_request *r,
		 long *ret_status, struct strbuf *ret_body,
		 struct kube_error *err);

/* ---- watch ----------------------------------------------------------- */

enum kube_event_type {
	KUBE_EVENT_ADDED,
	KUBE_EVENT_MODIFIED,
	KUBE_EVENT_DELETED,
	KUBE_EVENT_BOOKMARK,
	KUBE_EVENT_ERROR,
};

const char *kube_event_type_name(enum kube_event_type t);

struct kube_watch_event {
	enum kube_event_type type;
	struct json_object *object; /* owned by the event */
	char resource_version[32];  /* object's metadata.resourceVersion */
};

void kube_watch_event_release(struct kube_watch_event *e);

/* Parses one watch line ({"type":…,"object":{…}}). Pure. Returns 0,
 * -EBADMSG for anything else. ret untouched on failure. */
int kube_watch_event_parse(const char *line, size_t len,
			   struct kube_watch_event *ret);

/* What of an object a reader keeps: a table of members ended by a NULL
 * name. members NULL keeps the member's value whole; else a value that is
 * an object (an array, with each) is kept as the same object with only
 * those members (each object of the array so), and a value of another
 * type whole. A repeated member: the last one, as json-c's tree has it. */
struct kube_keep {
	const char *name;
	const struct kube_keep *members;
	bool each;
};
/* Every member, whole: kube_json_project() with it builds json-c's whole
 * tree of plain JSON (how the tests hold the builder to json-c's). */
extern const struct kube_keep kube_keep_all[];

/* Parses the JSON object in buf (len bytes; blanks around it allowed)
 * into a json-c tree of the members keep names, without building the
 * rest: a strict scanner (RFC 8259, 32 levels deep at most, as json-c)
 * checks every byte and builds the kept values as json-c's tokener would
 * (its tokener for fractions, exponents and long numbers). Returns 0 and
 * *ret (the caller's), -EBADMSG for text that is not plain JSON to the scanner
 * (json-c's extensions, raw control bytes, \u surrogates, numbers over 64
 * characters, keys with escapes where members are sought, not an object):
 * json_tokener_parse_ex() of the whole text is then the answer; -ENOMEM.
 * Pure; tok (reset and used for the kept values) is the caller's. */
int kube_json_project(struct json_tokener *tok, const char *buf, size_t len,
		      const struct kube_keep *keep, struct json_object **ret);

/* Decodes watch lines as kube_watch_event_parse() does, with one json-c
 * tokener for all of them; with keep, the object holds only the members
 * keep names (kube_json_project; an ERROR event's object is whole), and
 * keep must name what the watch itself reads: kind, apiVersion and
 * metadata's name, namespace, uid and resourceVersion. Text the projection
 * refuses is parsed whole: accepted or refused the same as
 * kube_watch_event_parse() does. */
struct kube_event_decoder;
struct kube_pod;
/* keep may be NULL (objects whole). Returns 0 or -ENOMEM. */
int kube_event_decoder_new(const struct kube_keep *keep,
			   struct kube_event_decoder **ret);
void kube_event_decoder_free(struct kube_event_decoder *d);
/* Returns 0, -EBADMSG (as kube_watch_event_parse), -ENOMEM. ret untouched
 * on failure; release it with kube_watch_event_release(). */
int kube_event_decoder_parse(struct kube_event_decoder *d, const char *line,
			     size_t len, struct kube_watch_event *ret);

/* A pod watch's line (the decoder made with kube_pod_keep) read straight
 * into a struct kube_pod, without a json-c tree of it: *ret_pod the pod,
 * ret its type and resourceVersion (ret->object NULL). Where the line is
 * not a plain pod event (an ERROR or BOOKMARK, a nameless object, another
 * kind, a member repeated, a type kube_pod_decode() converts, text the
 * scanner leaves to json-c), *ret_pod is NULL and ret is what
 * kube_event_decoder_parse() gives: kube_pod_decode(ret->object) is then
 * the answer, the same pod. Returns as kube_event_decoder_parse(). */
int kube_event_decoder_parse_pod(struct kube_event_decoder *d, const char *line,
				 size_t len, struct kube_watch_event *ret,
				 struct kube_pod **ret_pod);

/* Splits a byte stream into lines, whatever the chunking. */
struct kube_line_splitter {
	struct strbuf buf;
	size_t max_line;
	bool overflow; /* dropping the rest of an oversized line */
};
void kube_line_splitter_init(struct kube_line_splitter *s, size_t max_line);
void kube_line_splitter_release(struct kube_line_splitter *s);
/* Feeds data; calls fn(line, len, userdata) for each complete line
 * (without the '\n'; empty lines skipped). fn returns < 0 to stop, and that
 * is returned. An oversized line is skipped and counted as -E2BIG once via
 * fn(NULL, 0, userdata). */
int kube_line_splitter_feed(struct kube_line_splitter *s, const char *data,
			    size_t len,
			    int (*fn)(const char *line, size_t len, void *ud),
			    void *userdata);

/* Called for every delivered change. obj is borrowed (valid during the
 * call; json_object_get it to keep). Returning < 0 ends the watch with
 * that value. type is never ERROR: the client handles those itself. */
typedef int (*kube_watch_fn)(void *userdata, enum kube_event_type type,
			     struct json_object *obj);
/* The same for a pod, decoded; borrowed. */
typedef int (*kube_pod_watch_fn)(void *userdata, enum kube_event_type type,
				 const struct kube_pod *pod);

struct kube_watch_stats {
	unsigned connects; /* watch requests made */
	unsigned relists;  /* lists made (the first one included) */
	unsigned expired;  /* 410s seen (ERROR event or list) */
	unsigned bookmarks;
	unsigned events;	   /* changes delivered */
	char resource_version[32]; /* last RV seen */
};

struct kube_watch_options {
	struct kube_call call; /* res, namespace / all_namespaces */
	const char *label_selector;
	const char *field_selector;
	unsigned timeout_s;	 /* server-side per request; default 300 */
	bool no_bookmarks;	 /* default: allowWatchBookmarks=true */
	uint32_t backoff_min_ms; /* reconnect backoff, default 200 */
	uint32_t backoff_max_ms; /* default 30000; jitter ±25 % */
	unsigned max_failures;	 /* consecutive failures before giving up;
				  * 0 = never */
	size_t max_event;	 /* largest event line; default 8 MiB */
	/* what fn reads of each object (kube_pod_keep for pods); NULL: all.
	 * A list's objects are whole. */
	const struct kube_keep *keep;
	kube_watch_fn fn;
	/* instead of fn: each object a pod, read from a watch line straight
	 * into a struct kube_pod (kube_event_decoder_parse_pod), from a list
	 * by kube_pod_decode(); keep is then kube_pod_keep, and an object
	 * that is not a pod is not delivered */
	kube_pod_watch_fn pod_fn;
	void *userdata;
	struct kube_watch_stats *stats; /* optional, updated live */
	/* optional: called after each complete list (every item delivered):
	 * the caller's cache is in step with the server from here on */
	void (*synced)(void *userdata);
};

/* List-then-watch until cancelled (or fn < 0, or max_failures). Keeps a
 * name → resourceVersion map of what it delivered so that after a
 * reconnect or a 410 relist every change is delivered once: the relist is
 * diffed into ADDED / MODIFIED / DELETED. Stream ends are resumed from the
 * last RV (bookmarks included); failures back off with jitter. Blocks.
 * Returns -ECANCELED when cancelled, fn's value, or the last error. */
int kube_watch(struct kube_client *c, const struct kube_watch_options *o,
	       struct kube_error *err);

/* ---- typed objects --------------------------------------------------- */

/* Parses a resource.Quantity ("16Mi", "1G", "500m", "1e3") into a value
 * rounded up to an integer. Returns 0, -EINVAL, -ERANGE. */
int kube_parse_quantity(const char *s, uint64_t *ret);

struct kube_container {
	char *name;
	char *container_id;    /* "containerd://…" from the status, or NULL */
	uint64_t limit_memory; /* bytes, 0 = none */
	uint64_t request_memory; /* bytes, 0 = none */
	int restart_count;
	char *last_terminated_reason; /* e.g. "OOMKilled", or NULL */
	int last_exit_code;
	/* lastState.terminated.containerID: the instance before this one
	 * (the killed one, once the status has caught up), or NULL */
	char *last_container_id;
	char *image;				 /* spec image, or NULL */
	char *limit_memory_s, *request_memory_s; /* as written, or NULL */
};

struct kube_pod {
	char *name, *namespace, *uid, *node, *resource_version, *phase;
	char *qos_class;
	bool deleting; /* deletionTimestamp set */
	bool share_process_namespace;
	struct json_object *annotations; /* object, or NULL; owned */
	struct json_object *labels;	 /* object, or NULL; owned */
	/* the controller owner (else the first owner), or NULL */
	char *owner_kind, *owner_name, *owner_api_version;
	bool owner_controller; /* it is the controller */
	size_t n_containers;
	struct kube_container *containers;
	/* kube_event_decoder_parse_pod()'s: one block every string above
	 * points into, freed whole; NULL: each string its own */
	char *strings;
};

/* Decodes a Pod object. Pure. Returns 0, -EBADMSG (not a pod / no
 * metadata.name), -ENOMEM. */
int kube_pod_decode(struct json_object *obj, struct kube_pod **ret);
/* Same from JSON text. */
int kube_pod_parse(const char *buf, size_t len, struct kube_pod **ret);
/* The members of a Pod that kube_pod_decode() reads, with the
 * apiVersion of metadata.ownerReferences[] (the agent's owner chain) and
 * what kube_watch() reads: a watch with it as keep decodes the same pods. */
extern const struct kube_keep kube_pod_keep[];
void kube_pod_free(struct kube_pod *p);
/* An annotation value or NULL. */
const char *kube_pod_annotation(const struct kube_pod *p, const char *key);
/* Whether two decoded pods say the same: every field, the annotations and
 * labels by json_object_equal(). Pure. */
bool kube_pod_equal(const struct kube_pod *a, const struct kube_pod *b);

struct kube_pod_list_options {
	const char *namespace; /* NULL = all namespaces */
	const char *node;      /* spec.nodeName=… */
	const char *label_selector;
	struct kube_cancel *cancel;
};

int kube_pod_get(struct kube_client *c, const char *ns, const char *name,
		 struct kube_pod **ret, struct kube_error *err);
/* All pages. *ret_pods is an array of *ret_n pods (kube_pods_free). */
int kube_pod_list(struct kube_client *c, const struct kube_pod_list_options *o,
		  struct kube_pod ***ret_pods, size_t *ret_n,
		  char **ret_resource_version, struct kube_error *err);
void kube_pods_free(struct kube_pod **pods, size_t n);

struct kube_pod_watch_options {
	struct kube_pod_list_options list;
	kube_pod_watch_fn fn;
	void *userdata;
	unsigned timeout_s;
	struct kube_watch_stats *stats;
};
/* kube_watch on pods (of a node), decoded. Blocks until cancelled. */
int kube_pod_watch(struct kube_client *c,
		   const struct kube_pod_watch_options *o,
		   struct kube_error *err);

/* core/v1 Events. The client remembers events it posted (by involved uid,
 * reason, message) for 10 minutes: a repeat PATCHes count and
 * lastTimestamp of the first one instead of creating a new Event. */
struct kube_event_options {
	const char *namespace;
	const char *involved_kind; /* default "Pod" */
	const char *involved_name;
	const char *involved_uid;
	const char *field_path; /* e.g. "spec.containers{c}" */
	const char *type;	/* "Warning" (default) or "Normal" */
	const char *reason;	/* e.g. "OOMKilled" */
	const char *message;
	const char *component; /* source.component, default "oomlens" */
	const char *host;      /* source.host */
	/* reportingComponent and reportingInstance (the controller and its
	 * instance, as event exporters read them); NULL: unset */
	const char *reporting_component, *reporting_instance;
	struct kube_cancel *cancel;
};
/* The Event object of o named name in o->namespace, first and last seen
 * at now (RFC 3339), count 1; what kube_event_post creates. NULL on
 * ENOMEM or a NULL namespace. */
struct json_object *kube_event_object(const struct kube_event_options *o,
				      const char *name, const char *now);
/* Creates (or, for a repeat, patches) the Event. *ret_count (optional) is
 * the count now stored. */
int kube_event_post(struct kube_client *c, const struct kube_event_options *o,
		    unsigned *ret_count, struct kube_error *err);

struct kube_owner_ref {
	const char *api_version, *kind, *name, *uid;
	bool controller;
};

struct kube_oomreport {
	char *name, *namespace, *uid, *resource_version;
	char *created_at; /* metadata.creationTimestamp: the API server's */
	char *pod, *pod_uid, *container, *container_id, *node, *killed_at;
	int64_t pid;
	char *comm;
	int64_t anon_rss, file_rss, shmem_rss, limit, usage;
	char *verdict, *summary, *bundle;
	/* spec.bundleSHA256 / bundleSize: the bundle as its agent wrote it,
	 * what a reader checks the OOMBundle's data against (the bundle's
	 * own spec is whoever wrote it); NULL / 0: not given */
	char *bundle_sha256;
	int64_t bundle_size;
	/* spec.workload: the pod's top controller; NULL: not known */
	char *workload_kind, *workload_name;
	char *phase;		    /* status.phase */
	struct json_object *labels; /* owned, or NULL */
};

/* A label value the API server takes: at most 63 of [A-Za-z0-9._-],
 * beginning and ending with a letter or digit, or empty. Pure. */
bool kube_label_value_ok(const char *v);

/* Encodes r as an OOMReport object (name, namespace, labels, spec, owner
 * when given). Caller puts the result. NULL on ENOMEM. */
struct json_object *kube_oomreport_encode(const struct kube_oomreport *r,
					  const struct kube_owner_ref *owner);
int kube_oomreport_decode(struct json_object *obj, struct kube_oomreport **ret);
void kube_oomreport_free(struct kube_oomreport *r);

struct kube_oombundle {
	char *name, *namespace, *uid, *resource_version;
	unsigned char *data; /* decoded bytes */
	size_t size;
	char *sha256; /* hex, as given by the writer */
	struct json_object *labels;
};

struct json_object *kube_oombundle_encode(const struct kube_oombundle *b,
					  const struct kube_owner_ref *owner);
/* Decodes and base64-decodes .spec.data (-EBADMSG when it is not base64 or
 * its length disagrees with .spec.size). */
int kube_oombundle_decode(struct json_object *obj, struct kube_oombundle **ret);
void kube_oombundle_free(struct kube_oombundle *b);

/* The OOMBundle snap-<pod> a sidecar uploads: at most this many bytes of
 * data (the API's object limit, measured). */
#define KUBE_SNAP_MAX (900u << 10)

/* The sha256 of len bytes as 64 lowercase hex digits and a NUL: what an
 * OOMBundle's .spec.sha256 and an OOMReport's .spec.bundleSHA256 hold. */
void kube_sha256_hex(const void *data, size_t len, char hex[65]);
struct kube_snap_want {
	const char *ns, *name;	   /* where it was read: <ns>/snap-<pod> */
	const char *pod, *pod_uid; /* the Pod that must own it */
};
/* Checks an OOMBundle object read from the API (untrusted: the pod wrote
 * it) and decodes its data: every JSON type (metadata, ownerReferences,
 * spec.data string, spec.size integer, spec.sha256 64 hex), metadata.name
 * and (when present) namespace as asked, a Pod owner reference with w's
 * name and UID, size ≤ KUBE_SNAP_MAX and the base64's length checked
 * before decoding, then the decoded size and sha256 against the spec.
 * Returns 0 with *ret (malloc'd) and *ret_len; -EBADMSG (a type, base64,
 * size or digest), -EPERM (owner), -EFBIG (too large) or -ENOMEM, with a
 * sentence in why. Pure. */
int kube_snap_check(struct json_object *obj, const struct kube_snap_want *w,
		    unsigned char **ret, size_t *ret_len, char *why,
		    size_t why_size);

/* Base64 (standard alphabet, padded). Pure. */
int kube_base64_encode(const void *data, size_t len, struct strbuf *sb);
int kube_base64_decode(const char *s, size_t len, unsigned char **ret,
		       size_t *ret_len);

/* What the typed CRD helpers do. */
enum kube_write_mode {
	KUBE_WRITE_CREATE,
	KUBE_WRITE_APPLY, /* server-side apply, force, field manager */
};
struct kube_write_options {
	enum kube_write_mode mode;
	const char *field_manager; /* apply; default "oomlens" */
	const struct kube_owner_ref *owner;
	struct kube_cancel *cancel;
};

/* Creates (or server-side applies, per o->mode) a report; needs name, pod
 * and container. *ret (optional) is the stored report. Blocks. */
int kube_oomreport_write(struct kube_client *c, const struct kube_oomreport *r,
			 const struct kube_write_options *o,
			 struct kube_oomreport **ret, struct kube_error *err);
/* GET one report (-ENOENT when missing). Caller frees *ret. */
int kube_oomreport_get(struct kube_client *c, const char *ns, const char *name,
		       struct kube_oomreport **ret, struct kube_error *err);
/* All reports of ns (NULL: the client's) matching label_selector. Free
 * with kube_oomreports_free. */
int kube_oomreport_list(struct kube_client *c, const char *ns,
			const char *label_selector,
			struct kube_oomreport ***ret, size_t *ret_n,
			struct kube_error *err);
void kube_oomreports_free(struct kube_oomreport **r, size_t n);
/* Merge-patches .status of a report: phase, message, bundleStored and
 * the conditions Ready (phase Ready) and BundleStored, each with a reason
 * (Published/Publishing, Stored/NotStored/Publishing) and now as
 * lastTransitionTime (each call is a transition: Publishing, then Ready). */
int kube_oomreport_patch_status(struct kube_client *c, const char *ns,
				const char *name, const char *phase,
				const char *message, bool bundle_stored,
				struct kube_error *err);
/* Merge-patches a report ({"metadata":{"labels":…}}, {"spec":…});
 * *ret (optional) is the stored report. */
int kube_oomreport_patch(struct kube_client *c, const char *ns,
			 const char *name, struct json_object *patch,
			 struct kube_oomreport **ret, struct kube_error *err);
/* Deletes a report; uid (optional) is a precondition (409 -EBUSY when it
 * names another object). */
int kube_oomreport_delete(struct kube_client *c, const char *ns,
			  const char *name, const char *uid,
			  struct kube_error *err);

/* Creates / applies a bundle: data is base64-encoded here; size and
 * sha256 go in .spec. Large bundles: see the -E2BIG errors. Blocks. */
int kube_oombundle_write(struct kube_client *c, const struct kube_oombundle *b,
			 const struct kube_write_options *o,
			 struct kube_error *err);
/* GET one bundle with its data decoded. Caller frees *ret. */
int kube_oombundle_get(struct kube_client *c, const char *ns, const char *name,
		       struct kube_oombundle **ret, struct kube_error *err);
/* Lists bundles, payloads included (narrow it with a label selector).
 * Free with kube_oombundles_free. */
int kube_oombundle_list(struct kube_client *c, const char *ns,
			const char *label_selector,
			struct kube_oombundle ***ret, size_t *ret_n,
			struct kube_error *err);
void kube_oombundles_free(struct kube_oombundle **b, size_t n);
int kube_oombundle_delete(struct kube_client *c, const char *ns,
			  const char *name, const char *uid,
			  struct kube_error *err);

struct kube_token_review {
	bool authenticated;
	char *username, *uid;
	char **groups; /* NULL-terminated */
	char *error;
};
/* POST a TokenReview. 0 even when the token is not valid (see
 * authenticated / error). */
int kube_token_review(struct kube_client *c, const char *token,
		      struct kube_token_review *ret, struct kube_error *err);
void kube_token_review_release(struct kube_token_review *t);

struct kube_access_review {
	const char *user;
	const char *const *groups; /* NULL-terminated, optional */
	const char *verb, *group, *resource, *subresource, *namespace, *name;
};
/* POST a SubjectAccessReview. *ret_allowed; *ret_reason (optional, caller
 * frees, may be NULL). */
int kube_subject_access_review(struct kube_client *c,
			       const struct kube_access_review *a,
			       bool *ret_allowed, char **ret_reason,
			       struct kube_error *err);
