/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP thread (libwebsockets service loop) and, beside it, the review
 * thread that asks the API server about bearer tokens: a slow API server
 * then delays only the /metrics requests waiting for it, never /healthz.
 * They meet through a small queue (mutex + condvar) one way and the
 * decision cache + lws_cancel_service() the other. */
#include <errno.h>
#include <libwebsockets.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "obs/http.h"
#include "obs/http_auth.h"
#include "obs/tls.h"
#include "kube/kube.h"
#include "kube/kube_authn.h"
#include "obs/metrics_agent.h"

/* Tokens waiting for a review; more at once get 503 (Retry-After). */
#define QUEUE_MAX 16
#define TOKEN_MAX 8192
#define METRICS_MAX (8u << 20)

/* How often the serving certificate's files are looked at (seconds). */
#define TLS_CHECK_S 10

struct review {
	struct http_auth_key key;
	char *token;
};

/* One request; pending ones wait for their token's review. Service
 * thread only. */
struct pss {
	struct lws *wsi;
	struct agent_http_answer ans;
	bool pending;
	struct http_auth_key key;
	struct pss *next_pending;
};

/* The server: the run's (cmd_run.c), reached from lws callbacks as the
 * context's user. */
struct agent_http {
	struct agent_http_opts opts;
	struct agent_metrics *metrics; /* the health flags and families */
	struct lws_context *ctx;
	pthread_t http_thread, auth_thread;
	atomic_bool stop;
	int port;
	struct agent_tls_watch *tls; /* HTTPS: the certificate's files */
	struct kube_client *kube;    /* NULL: /metrics answers 503 */
	struct pss *pending;	     /* service thread only */
	/* review queue, cache and failures: under lock */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct review queue[QUEUE_MAX];
	size_t n_queue;
	struct http_auth_cache cache;
	struct http_auth_key failed[QUEUE_MAX]; /* reviews that got no answer */
	size_t n_failed;
};

/* "--NAME VALUE" or "--NAME=VALUE" at argv[*i]: 1 (taken, *i past it),
 * 0 (not this option) or -EINVAL (no value; said on stderr). */
static int take_value(const char *name, int argc, char **argv, int *i,
		      const char **ret)
{
	const char *a = argv[*i] + 2;
	size_t n = strlen(name);

	if (!startswith(argv[*i], "--") || strncmp(a, name, n) != 0)
		return 0;
	if (a[n] == '=') {
		*ret = a + n + 1;
		return 1;
	}
	if (a[n])
		return 0;
	if (*i + 1 >= argc) {
		fprintf(stderr, "run: --%s needs a value\n", name);
		return -EINVAL;
	}
	*ret = argv[++*i];
	return 1;
}

int agent_http_take_opts(int *argc, char **argv, struct agent_http_opts *opts)
{
	int j = 1, r = 0;

	for (int i = 1; i < *argc && r >= 0; i++) {
		if (streq(argv[i], "--metrics-insecure")) {
			opts->insecure = true;
			continue;
		}
		r = take_value("metrics-addr", *argc, argv, &i, &opts->addr);
		if (r == 0)
			r = take_value("metrics-tls-cert", *argc, argv, &i,
				       &opts->cert);
		if (r == 0)
			r = take_value("metrics-tls-key", *argc, argv, &i,
				       &opts->key);
		if (r == 0)
			argv[j++] = argv[i];
	}
	argv[j] = NULL;
	*argc = j;
	if (r >= 0 && !opts->cert != !opts->key) {
		fprintf(stderr, "run: --metrics-tls-cert and "
				"--metrics-tls-key go together\n");
		r = -EINVAL;
	}
	return r < 0 ? r : 0;
}

int agent_http_port(const struct agent_http *h)
{
	return h ? h->port : 0;
}

/* ---- responses ---- */

int agent_http_answer_set(struct agent_http_answer *a, unsigned status,
			  const char *ctype, const char *body, size_t len)
{
	free(a->out);
	a->out = malloc(LWS_PRE + len + 1);
	if (!a->out)
		return -ENOMEM;
	memcpy(a->out + LWS_PRE, body, len);
	a->len = len;
	a->status = status;
	a->ctype = ctype;
	return 0;
}

void agent_http_answer_free(struct agent_http_answer *a)
{
	free(a->out);
	a->out = NULL;
}

int agent_http_answer_write(struct lws *wsi, struct agent_http_answer *a)
{
	unsigned char hdr[LWS_PRE + 512], *start = &hdr[LWS_PRE], *q = start,
					  *end = &hdr[sizeof(hdr) - 1];

	if (!a->out)
		return -1;
	if (lws_add_http_common_headers(wsi, a->status, a->ctype,
					(lws_filepos_t)a->len, &q, end) ||
	    lws_finalize_write_http_header(wsi, start, &q, end))
		return -1;
	if (a->len && lws_write(wsi, a->out + LWS_PRE, a->len,
				LWS_WRITE_HTTP_FINAL) < (int)a->len)
		return -1;
	agent_http_answer_free(a);
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static int set_body(struct pss *p, unsigned status, const char *ctype,
		    const char *body, size_t len)
{
	return agent_http_answer_set(&p->ans, status, ctype, body, len);
}

static int set_text(struct pss *p, unsigned status, const char *text)
{
	return set_body(p, status, "text/plain; charset=utf-8", text,
			strlen(text));
}

static void healthz(struct agent_http *h, struct pss *p)
{
	uint64_t age;
	char msg[128];

	if (agent_health_live(h->metrics, now_monotonic_us(), &age)) {
		set_text(p, 200, "ok\n");
		return;
	}
	snprintf(msg, sizeof(msg),
		 "detector loop stalled: last beat %.1f s ago\n",
		 (double)age / 1e6);
	set_text(p, 503, msg);
}

static void readyz(struct agent_http *h, struct pss *p)
{
	char why[128], msg[160];

	if (agent_health_ready(h->metrics, why, sizeof(why))) {
		set_text(p, 200, "ok\n");
		return;
	}
	snprintf(msg, sizeof(msg), "not ready: %s\n",
		 why[0] ? why : "starting");
	set_text(p, 503, msg);
}

static void metrics_body(struct agent_http *h, struct pss *p)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb, METRICS_MAX);
	if (agent_metrics_render(h->metrics, &sb) < 0) {
		set_text(p, 500, "metrics unavailable\n");
		return;
	}
	set_body(p, 200, "text/plain; version=0.0.4; charset=utf-8", sb.buf,
		 sb.len);
}

/* ---- authorization ---- */

/* Under h->lock: 1 allowed, 0 denied, -EAGAIN waiting, -EIO review
 * failed. */
static int decision_locked(struct agent_http *h, const struct http_auth_key *k)
{
	bool allowed;

	if (http_auth_lookup(&h->cache, k, now_monotonic_us(), &allowed, NULL,
			     0))
		return allowed;
	for (size_t i = 0; i < h->n_failed; i++)
		if (memcmp(h->failed[i].h, k->h, sizeof(k->h)) == 0)
			return -EIO;
	return -EAGAIN;
}

static int enqueue_locked(struct agent_http *h, const struct http_auth_key *k,
			  const char *token, size_t len)
{
	for (size_t i = 0; i < h->n_queue; i++)
		if (memcmp(h->queue[i].key.h, k->h, sizeof(k->h)) == 0)
			return 0;
	if (h->n_queue == QUEUE_MAX)
		return -EBUSY;
	h->queue[h->n_queue].token = strndup(token, len);
	if (!h->queue[h->n_queue].token)
		return -ENOMEM;
	h->queue[h->n_queue++].key = *k;
	pthread_cond_signal(&h->wake);
	return 0;
}

static void answer_auth(struct agent_http *h, struct pss *p, int d)
{
	if (d == 1)
		metrics_body(h, p);
	else if (d == 0)
		set_text(p, 403, "forbidden: get on /metrics is not allowed\n");
	else
		set_text(p, 503, "cannot review the token now, retry\n");
}

/* 0: p has its answer; 1: p waits for a review. */
static int authorize(struct agent_http *h, struct lws *wsi, struct pss *p)
{
	char hdr[TOKEN_MAX + 16];
	const char *tok;
	size_t len;
	int d;

	if (h->opts.insecure) {
		metrics_body(h, p);
		return 0;
	}
	if (!h->kube) {
		set_text(p, 503,
			 "no API server to review tokens with; "
			 "run with --metrics-insecure for local use\n");
		return 0;
	}
	if (lws_hdr_copy(wsi, hdr, sizeof(hdr), WSI_TOKEN_HTTP_AUTHORIZATION) <=
		    0 ||
	    http_auth_parse_bearer(hdr, &tok, &len) < 0) {
		set_text(p, 401, "unauthorized: a bearer token is needed\n");
		return 0;
	}
	http_auth_key_of(tok, len, &p->key);
	pthread_mutex_lock(&h->lock);
	d = decision_locked(h, &p->key);
	if (d == -EAGAIN || d == -EIO) {
		/* a failed review is retried by the next request */
		d = enqueue_locked(h, &p->key, tok, len) == 0 ? -EAGAIN
							      : -EBUSY;
		if (d == -EAGAIN)
			for (size_t i = 0; i < h->n_failed; i++)
				if (!memcmp(h->failed[i].h, p->key.h, 32))
					h->failed[i] = h->failed[--h->n_failed];
	}
	pthread_mutex_unlock(&h->lock);
	if (d != -EAGAIN) {
		answer_auth(h, p, d);
		return 0;
	}
	p->pending = true;
	p->next_pending = h->pending;
	h->pending = p;
	return 1;
}

/* After a review finished: wake the requests whose answer is there. */
static void wake_pending(struct agent_http *h)
{
	for (struct pss **pp = &h->pending; *pp;) {
		struct pss *p = *pp;
		int d;

		pthread_mutex_lock(&h->lock);
		d = decision_locked(h, &p->key);
		pthread_mutex_unlock(&h->lock);
		if (d == -EAGAIN) {
			pp = &p->next_pending;
			continue;
		}
		*pp = p->next_pending;
		p->pending = false;
		answer_auth(h, p, d);
		lws_callback_on_writable(p->wsi);
	}
}

static void drop_pending(struct agent_http *h, struct pss *p)
{
	for (struct pss **pp = &h->pending; *pp; pp = &(*pp)->next_pending)
		if (*pp == p) {
			*pp = p->next_pending;
			break;
		}
	p->pending = false;
}

/* ---- the review thread ---- */

/* TokenReview, then SubjectAccessReview of get /metrics. 1 allowed, 0
 * denied (both cached), < 0 no answer (not cached). */
static int review(struct kube_client *c, const char *token, char *user,
		  size_t size)
{
	struct kube_token_review tr = {0};
	struct kube_error err = {0};
	bool allowed = false;
	int r;

	r = kube_token_review(c, token, &tr, &err);
	if (r < 0) {
		log_warn("TokenReview for /metrics: %s, ignoring",
			 err.message[0] ? err.message : strerror(-r));
		return r;
	}
	if (tr.authenticated && tr.username) {
		struct kube_nonresource_review a = {
			.user = tr.username,
			.uid = tr.uid,
			.groups = (const char *const *)tr.groups,
			.path = "/metrics",
			.verb = "get",
		};

		strlcpy_safe(user, tr.username, size);
		r = kube_nonresource_access_review(c, &a, &allowed, &err);
		if (r < 0)
			log_warn("SubjectAccessReview for /metrics (user "
				 "\"%s\"): %s, ignoring",
				 tr.username,
				 err.message[0] ? err.message : strerror(-r));
	}
	kube_token_review_release(&tr);
	return r < 0 ? r : allowed;
}

static void *auth_main(void *ud)
{
	struct agent_http *h = ud;

	pthread_mutex_lock(&h->lock);
	while (!atomic_load(&h->stop)) {
		struct review rv;
		char user[128] = "";
		int d;

		if (!h->n_queue) {
			pthread_cond_wait(&h->wake, &h->lock);
			continue;
		}
		rv = h->queue[0];
		memmove(&h->queue[0], &h->queue[1],
			--h->n_queue * sizeof(h->queue[0]));
		pthread_mutex_unlock(&h->lock);
		d = review(h->kube, rv.token, user, sizeof(user));
		explicit_bzero(rv.token, strlen(rv.token));
		free(rv.token);
		pthread_mutex_lock(&h->lock);
		if (d >= 0) {
			http_auth_store(&h->cache, &rv.key, d == 1, user,
					now_monotonic_us());
			if (d == 0)
				log_info("/metrics denied to \"%s\"",
					 user[0] ? user : "(unauthenticated)");
		} else if (h->n_failed < QUEUE_MAX) {
			h->failed[h->n_failed++] = rv.key;
		}
		if (h->ctx)
			lws_cancel_service(h->ctx);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

/* ---- the lws side ---- */

static void route(struct agent_http *h, struct lws *wsi, struct pss *p,
		  const char *uri)
{
	if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) <= 0) {
		set_text(p, 405, "only GET\n");
	} else if (streq(uri, "/healthz") || streq(uri, "/livez")) {
		healthz(h, p);
	} else if (streq(uri, "/readyz")) {
		readyz(h, p);
	} else if (streq(uri, "/metrics")) {
		if (authorize(h, wsi, p) == 1)
			return; /* answered when the review is done */
	} else {
		set_text(p, 404, "not found\n");
	}
}

static int write_answer(struct lws *wsi, struct pss *p)
{
	if (p->pending)
		return 0;
	if (!p->ans.out)
		set_text(p, 500, "no answer\n");
	return agent_http_answer_write(wsi, &p->ans);
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason,
		    void *user, void *in, size_t len)
{
	/* the server, as its context's user (wsi is a placeholder one for
	 * the context-wide reasons: EVENT_WAIT_CANCELLED) */
	struct agent_http *h =
		wsi ? lws_context_user(lws_get_context(wsi)) : NULL;
	struct pss *p = user;

	switch (reason) {
	case LWS_CALLBACK_HTTP:
		agent_http_answer_free(&p->ans);
		*p = (struct pss){.wsi = wsi};
		route(h, wsi, p, in ? (const char *)in : "");
		if (!p->pending)
			lws_callback_on_writable(wsi);
		return 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return write_answer(wsi, p);
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		if (h)
			wake_pending(h);
		return 0;
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		if (p) {
			if (p->pending)
				drop_pending(h, p);
			agent_http_answer_free(&p->ans);
		}
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

static const struct lws_protocols protocols[] = {
	{"http", callback, sizeof(struct pss), 0, 0, NULL, 0},
	{NULL, NULL, 0, 0, 0, NULL, 0},
};

void agent_http_limits(struct lws_context_creation_info *info)
{
	/* the listening socket and lws's own event pipe besides */
	info->fd_limit_per_thread = AGENT_HTTP_MAX_CONNS + 2;
	info->timeout_secs = AGENT_HTTP_TIMEOUT_S;
	info->keepalive_timeout = AGENT_HTTP_TIMEOUT_S;
}

void agent_lws_log(const char *who, int level, const char *line)
{
	size_t n = strlen(line);

	while (n && line[n - 1] == '\n')
		n--;
	if (level & LLL_ERR)
		log_warn("%s: %.*s", who, (int)n, line);
	else
		log_debug("%s: %.*s", who, (int)n, line);
}

static void lws_to_log(int level, const char *line)
{
	agent_lws_log("http", level, line);
}

static void *http_main(void *ud)
{
	struct agent_http *h = ud;

	while (!atomic_load(&h->stop))
		if (lws_service(h->ctx, 0) < 0)
			break;
	return NULL;
}

static int create_context(struct agent_http *h, const char *host, int port)
{
	struct lws_context_creation_info info;
	struct lws_vhost *vh;

	memset(&info, 0, sizeof(info));
	info.port = port;
	info.iface = host[0] ? host : NULL;
	info.protocols = protocols;
	info.gid = -1;
	info.uid = -1;
	info.vhost_name = "default";
	info.user = h;
	agent_http_limits(&info);
	if (h->opts.cert) {
		info.options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		info.ssl_cert_filepath = h->opts.cert;
		info.ssl_private_key_filepath = h->opts.key;
		/* a scrape is one request; HTTP/1.1 keeps a deferred answer
		 * (the token's review) simple */
		info.alpn = "http/1.1";
	}
	lws_set_log_level(LLL_ERR | LLL_WARN, lws_to_log);
	h->ctx = lws_create_context(&info);
	if (!h->ctx)
		return -EADDRNOTAVAIL;
	if (h->tls)
		agent_tls_watch_start(h->tls, h->ctx);
	vh = lws_get_vhost_by_name(h->ctx, "default");
	h->port = vh ? lws_get_vhost_listen_port(vh) : port;
	return 0;
}

bool agent_http_wanted(const struct agent_http_opts *o, bool standalone)
{
	return !standalone || o->addr;
}

static void http_free(struct agent_http *h)
{
	for (size_t i = 0; i < h->n_queue; i++)
		free(h->queue[i].token);
	agent_tls_watch_free(h->tls);
	if (h->ctx)
		lws_context_destroy(h->ctx);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->wake);
	free(h);
}

/* The review thread, then the service thread. */
static int start_threads(struct agent_http *h)
{
	int r = -pthread_create(&h->auth_thread, NULL, auth_main, h);

	if (r < 0)
		return r;
	r = -pthread_create(&h->http_thread, NULL, http_main, h);
	if (r < 0) {
		pthread_mutex_lock(&h->lock);
		atomic_store(&h->stop, true);
		pthread_cond_signal(&h->wake);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->auth_thread, NULL);
	}
	return r;
}

int agent_http_start(const struct agent_http_opts *o, bool standalone,
		     struct agent_metrics *m, struct kube_client *kube,
		     struct agent_http **ret)
{
	const char *addr = o->addr ? o->addr : AGENT_HTTP_DEFAULT_ADDR;
	struct agent_http *h;
	char host[256];
	int port, r;

	*ret = NULL;
	if (!agent_http_wanted(o, standalone))
		return 0;
	if (parse_host_port(addr, host, sizeof(host), &port) < 0) {
		log_error("--metrics-addr \"%s\": expected HOST:PORT or :PORT",
			  addr);
		return -EINVAL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->opts = *o;
	h->metrics = m;
	h->kube = kube;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->wake, NULL);
	if (o->cert) {
		h->tls = agent_tls_watch_new(o->cert, o->key, TLS_CHECK_S);
		if (!h->tls) {
			r = -errno;
			http_free(h);
			return r;
		}
	}
	r = create_context(h, host, port);
	if (r < 0) {
		log_error("cannot serve %s on \"%s\": %s%s",
			  o->cert ? "https" : "http", addr, strerror(-r),
			  o->cert ? " (address in use, or a bad certificate "
				    "or key)"
				  : "");
		http_free(h);
		return r;
	}
	r = start_threads(h);
	if (r < 0) {
		http_free(h);
		return r;
	}
	log_info("%s on \"%s\" (port %d): /healthz /readyz /metrics%s",
		 o->cert ? "https" : "http", addr, h->port,
		 o->insecure ? " (no authentication: --metrics-insecure)"
			     : " (TokenReview + SubjectAccessReview)");
	*ret = h;
	return 0;
}

void agent_http_stop(struct agent_http *h)
{
	if (!h)
		return;
	atomic_store(&h->stop, true);
	lws_cancel_service(h->ctx);
	pthread_join(h->http_thread, NULL);
	pthread_mutex_lock(&h->lock);
	pthread_cond_signal(&h->wake);
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->auth_thread, NULL);
	http_free(h);
}
