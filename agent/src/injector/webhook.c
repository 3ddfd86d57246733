/* SPDX-License-Identifier: Apache-2.0 */
/* The injector's HTTPS server: one thread, one lws context. A review is
 * small and inject_review() pure and fast (a 300-container pod: a few
 * ms), so it runs in the callback; the API server gives up after the
 * webhook's timeoutSeconds anyway and, with failurePolicy Ignore, admits
 * the pod as it was. */
#include <errno.h>
#include <libwebsockets.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/memlock.h"
#include "base/parse.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "obs/http.h"
#include "obs/tls.h"
#include "injector/webhook.h"

struct pss {
	struct strbuf body;	   /* the review as it arrives */
	bool mutate;		   /* POST /mutate-pods[/LEVEL] */
	enum kube_pss_level level; /* LEVEL; privileged when absent */
	bool too_big;
	struct agent_http_answer ans;
};

/* The server, owned by webhook_serve(); the lws context's user pointer. */
struct webhook {
	struct lws_context *ctx;
	const struct webhook_options *o;
	struct agent_tls_watch *tls;
	unsigned long reviews, patched;
};

/* What SIGTERM and SIGINT reach: the flag and the context to wake (a
 * handler has no other way to them). */
static volatile sig_atomic_t stop_requested;
static struct lws_context *volatile signal_ctx;

static struct webhook *server_of(struct lws *wsi)
{
	return lws_context_user(lws_get_context(wsi));
}

static int set_answer(struct pss *p, unsigned status, const char *ctype,
		      const char *s, size_t n)
{
	return agent_http_answer_set(&p->ans, status, ctype, s, n);
}

/* The review size after which the webhook trims its heap. */
#define WEBHOOK_TRIM_OVER (64u << 10)

static void review(struct webhook *w, struct pss *p)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	int r;

	if (p->too_big) {
		log_warn("review over %u bytes refused (the API server admits "
			 "the pod as is: failurePolicy Ignore)",
			 WEBHOOK_MAX_BODY);
		set_answer(p, 413, "text/plain", "too large\n", 10);
		return;
	}
	struct inject_config cfg = w->o->inject;

	cfg.level = p->level;
	r = inject_review(p->body.buf, p->body.len, &cfg, &out);
	w->reviews++;
	/* a large review's tree is freed in small pieces: give them back */
	if (p->body.len > WEBHOOK_TRIM_OVER)
		memlock_give_back();
	if (r == -EFBIG || r == INJECT_TOO_LARGE)
		log_warn("review of %zu bytes %s: its parse would take over "
			 "%u MiB",
			 p->body.len,
			 r == -EFBIG
				 ? "refused (no request.uid to answer)"
				 : "answered unread, the pod admitted as is",
			 INJECT_MAX_TREE >> 20);
	if (r == -EFBIG) {
		set_answer(p, 413, "text/plain", "too large\n", 10);
		return;
	}
	if (r < 0) {
		log_error("review: %s", strerror(-r));
		set_answer(p, 503, "text/plain", "cannot answer\n", 14);
		return;
	}
	if (strstr(out.buf, "\"patch\":"))
		w->patched++;
	log_debug("review answered (%zu bytes in, %zu out; %lu reviews, "
		  "%lu patched)",
		  p->body.len, out.len, w->reviews, w->patched);
	set_answer(p, 200, "application/json", out.buf, out.len);
}

/* /mutate-pods (--pod-security's level), or /mutate-pods/LEVEL: the Pod
 * Security level the namespaces the API server sends there enforce (the
 * chart registers one webhook per level, each with its
 * namespaceSelector). */
static bool mutate_path(const struct webhook *w, const char *uri,
			enum kube_pss_level *ret)
{
	*ret = w->o->inject.level;
	if (streq(uri, "/mutate-pods"))
		return true;
	return startswith(uri, "/mutate-pods/") &&
	       kube_pss_level_parse(uri + strlen("/mutate-pods/"), ret) == 0;
}

static void route(struct lws *wsi, struct pss *p, const char *uri)
{
	bool post = lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0;
	bool get = lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0;
	enum kube_pss_level level;
	bool mutate = mutate_path(server_of(wsi), uri, &level);

	if (post && mutate) {
		p->mutate = true;
		p->level = level;
		strbuf_init(&p->body, WEBHOOK_MAX_BODY);
		return; /* answered once the body is in */
	}
	if (get && streq(uri, "/healthz"))
		set_answer(p, 200, "text/plain", "ok\n", 3);
	else if (mutate || streq(uri, "/healthz"))
		set_answer(p, 405, "text/plain", "method not allowed\n", 19);
	else
		set_answer(p, 404, "text/plain", "not found\n", 10);
	lws_callback_on_writable(wsi);
}

static void pss_release(struct pss *p)
{
	if (!p)
		return;
	strbuf_release(&p->body);
	agent_http_answer_free(&p->ans);
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason,
		    void *user, void *in, size_t len)
{
	struct pss *p = user;

	switch (reason) {
	case LWS_CALLBACK_HTTP:
		pss_release(p);
		*p = (struct pss){.body = STRBUF_INIT};
		route(wsi, p, in ? (const char *)in : "");
		return 0;
	case LWS_CALLBACK_HTTP_BODY:
		if (p->mutate && !p->too_big &&
		    strbuf_add(&p->body, in, len) < 0)
			p->too_big = true;
		return 0;
	case LWS_CALLBACK_HTTP_BODY_COMPLETION:
		if (!p->mutate)
			return -1;
		review(server_of(wsi), p);
		lws_callback_on_writable(wsi);
		return 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		return agent_http_answer_write(wsi, &p->ans);
	case LWS_CALLBACK_CLOSED_HTTP:
	case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
		pss_release(p);
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

static const struct lws_protocols protocols[] = {
	{"http", callback, sizeof(struct pss), 0, 0, NULL, 0},
	{NULL, NULL, 0, 0, 0, NULL, 0},
};

static void lws_to_log(int level, const char *line)
{
	agent_lws_log("tls", level, line);
}

static int create_context(struct webhook *w, const struct webhook_options *o)
{
	struct lws_context_creation_info info;
	char host[256];
	int port;

	if (parse_host_port(o->addr, host, sizeof(host), &port) < 0) {
		log_error("--addr \"%s\": expected HOST:PORT or :PORT",
			  o->addr);
		return -EINVAL;
	}
	memset(&info, 0, sizeof(info));
	info.port = port;
	info.iface = host[0] ? host : NULL;
	info.protocols = protocols;
	info.gid = -1;
	info.uid = -1;
	info.vhost_name = "webhook";
	info.user = w;
	agent_http_limits(&info);
	info.options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
	info.ssl_cert_filepath = o->cert;
	info.ssl_private_key_filepath = o->key;
	/* one request per review; HTTP/1.1 keeps the body callbacks simple */
	info.alpn = "http/1.1";
	lws_set_log_level(LLL_ERR | LLL_WARN, lws_to_log);
	w->ctx = lws_create_context(&info);
	if (!w->ctx) {
		log_error("cannot serve TLS on \"%s\" with \"%s\" and \"%s\" "
			  "(address in use, or a bad certificate or key)",
			  o->addr, o->cert, o->key);
		return -EADDRNOTAVAIL;
	}
	return 0;
}

static void on_signal(int sig)
{
	struct lws_context *ctx = signal_ctx;

	(void)sig;
	stop_requested = 1;
	if (ctx)
		lws_cancel_service(ctx);
}

int webhook_serve(const struct webhook_options *o, const struct cli_globals *g)
{
	struct sigaction sa = {.sa_handler = on_signal};
	struct webhook srv = {.o = o}, *w = &srv;
	int r;

	w->tls = agent_tls_watch_new(o->cert, o->key, o->check_s);
	if (!w->tls)
		return -ENOENT;
	r = create_context(w, o);
	if (r < 0) {
		agent_tls_watch_free(w->tls);
		return r;
	}
	signal_ctx = w->ctx;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	r = cli_enter_steady_state(o->privs, g);
	if (r == 0) {
		log_info("webhook on \"%s\": /mutate-pods /healthz; sidecar "
			 "\"%s\" as %s",
			 o->addr, o->inject.image,
			 o->inject.native_sidecar ? "a native sidecar (init "
						    "container)"
						  : "a regular container");
		agent_tls_watch_start(w->tls, w->ctx);
	}
	while (r == 0 && !stop_requested)
		if (lws_service(w->ctx, 0) < 0)
			break;
	agent_tls_watch_free(w->tls);
	w->tls = NULL;
	signal_ctx = NULL;
	lws_context_destroy(w->ctx);
	w->ctx = NULL;
	log_info("webhook stopped (%lu reviews, %lu patched)", w->reviews,
		 w->patched);
	return r;
}
