/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's HTTP endpoint, its own thread (libwebsockets): /healthz,
 * /readyz, /metrics (docs/metrics.md). It reads the health flags and the
 * metrics registry of metrics_agent.h and never touches the detector's
 * state. /metrics needs a bearer token that TokenReview authenticates and
 * a SubjectAccessReview allows (get on the non-resource URL /metrics),
 * unless --metrics-insecure. With --metrics-tls-cert/--metrics-tls-key
 * it serves HTTPS only, the certificate reloaded when its files change
 * (obs/tls.h), so the token never crosses the network in the clear. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct kube_client;

#define AGENT_HTTP_DEFAULT_ADDR ":9477"

/* The options of the server, as given on run's command line. */
struct agent_http_opts {
	const char *addr;
	const char *cert, *key; /* both or neither: HTTPS */
	bool insecure;
};

/* Takes --metrics-addr ADDR, --metrics-tls-cert FILE, --metrics-tls-key
 * FILE (each also as --NAME=VALUE) and --metrics-insecure out of argv
 * into *opts (argv[0] is the subcommand; the rest shifts down, *argc
 * shrinks). Returns 0 or -EINVAL (a missing value, or a certificate
 * without its key: printed on stderr). */
int agent_http_take_opts(int *argc, char **argv, struct agent_http_opts *opts);

/* Whether the server runs: always in cluster mode (on the default
 * address unless --metrics-addr), in standalone mode only with
 * --metrics-addr. */
bool agent_http_wanted(const struct agent_http_opts *o, bool standalone);

/* The server: an object the run owns (cmd_run.c). */
struct agent_http;
struct agent_metrics;
/* Starts the HTTP thread and its review thread when agent_http_wanted();
 * *ret is NULL when not. m: the health flags and families it serves (it
 * must outlive the server). kube: the client /metrics reviews tokens
 * with (cluster mode's; NULL: /metrics answers 503 unless
 * --metrics-insecure; shared by threads, it must outlive the server).
 * Returns 0 or -errno (the address cannot be bound; logged). Call before
 * the seccomp filter is installed. */
int agent_http_start(const struct agent_http_opts *o, bool standalone,
		     struct agent_metrics *m, struct kube_client *kube,
		     struct agent_http **ret);

/* Stops and joins the threads and frees h (NULL: a no-op). */
void agent_http_stop(struct agent_http *h);

/* The bound port (0 when not started): for logs and tests. */
int agent_http_port(const struct agent_http *h);

/* One HTTP answer of a libwebsockets session, shared by the metrics
 * server and the webhook: the body behind LWS_PRE bytes of headroom. */
struct lws;
struct agent_http_answer {
	unsigned status;
	const char *ctype;  /* static */
	unsigned char *out; /* NULL: none yet */
	size_t len;
};
/* Sets a's answer to a copy of body (len bytes). -ENOMEM. */
int agent_http_answer_set(struct agent_http_answer *a, unsigned status,
			  const char *ctype, const char *body, size_t len);
/* Writes a (headers, body, end of the transaction) on wsi and frees it;
 * -1 (close the connection) when a has no answer or the write fails. */
int agent_http_answer_write(struct lws *wsi, struct agent_http_answer *a);
void agent_http_answer_free(struct agent_http_answer *a);

/* The limits of our libwebsockets servers (the metrics server, the
 * webhook): at most AGENT_HTTP_MAX_CONNS connections at once (lws stops
 * accepting at its fd limit: more wait in the kernel's backlog until one
 * closes; a TLS one costs ~46 KiB, so 1,000 idle ones flooding the
 * webhook cost ~4 MiB where 256 cost 12), and AGENT_HTTP_TIMEOUT_S for a
 * request's headers and body and between the requests of a kept-alive
 * connection (idle ones are closed). Who connects to them is a handful:
 * the API servers, Prometheus, the kubelet's probes. */
#define AGENT_HTTP_MAX_CONNS 64
#define AGENT_HTTP_TIMEOUT_S 10
struct lws_context_creation_info;
void agent_http_limits(struct lws_context_creation_info *info);

/* A libwebsockets log line into our log, prefixed by who ("http", "tls"):
 * errors as warnings, the rest at debug, its trailing newline dropped. */
void agent_lws_log(const char *who, int level, const char *line);
