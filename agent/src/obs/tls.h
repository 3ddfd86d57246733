/* SPDX-License-Identifier: Apache-2.0 */
/* A serving certificate that follows its files: the pair an lws context
 * was created with is looked at every check_s seconds and reloaded into
 * the context once both files are readable and either changed (a Secret
 * volume swaps them together; cert-manager renews in place). The
 * webhook's certificate and /metrics over HTTPS share it. */
#pragma once

struct lws_context;
struct agent_tls_watch;

/* Reads the identities (device, inode, size, mtime) of cert and key.
 * Returns the watch, or NULL with errno set (either file unreadable:
 * logged). The strings must outlive the watch. */
struct agent_tls_watch *agent_tls_watch_new(const char *cert, const char *key,
					    unsigned check_s);

/* Schedules the first look on ctx's service thread (every later one
 * schedules the next). Call once, before or from that thread. */
void agent_tls_watch_start(struct agent_tls_watch *w, struct lws_context *ctx);

/* Cancels the look; call when the service thread has stopped, before
 * the context is destroyed. NULL is a no-op. */
void agent_tls_watch_free(struct agent_tls_watch *w);
