/* SPDX-License-Identifier: Apache-2.0 */
/* webhook: the injector's HTTPS server (libwebsockets): POST /mutate-pods
 * answers with inject_review(), GET /healthz with "ok". The certificate
 * and key are re-read when either file changes (a Secret update swaps
 * them under a mounted volume). */
#pragma once

#include "base/cli.h"
#include "base/privs.h"
#include "injector/inject.h"

/* The largest AdmissionReview read (the API server's own request limit
 * is 3 MiB; a pod near etcd's 1.5 MiB object limit fits twice). */
#define WEBHOOK_MAX_BODY (8u << 20)

struct webhook_options {
	const char *cert, *key; /* PEM files */
	const char *addr;	/* "[HOST]:PORT" */
	unsigned check_s;	/* how often the files are looked at */
	struct inject_config inject;
	/* what the server keeps once listening (cmd_webhook.c) */
	const struct privs_spec *privs;
};

/* Serves until SIGTERM or SIGINT. Enters the steady state (o->privs)
 * once listening. Returns 0
 * after a signal, -errno when it cannot start (logged). Blocks. */
int webhook_serve(const struct webhook_options *o, const struct cli_globals *g);
