/* SPDX-License-Identifier: Apache-2.0 */
/* The certificate files' watch (tls.h). */
#include <errno.h>
#include <libwebsockets.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/log.h"
#include "obs/tls.h"

struct file_id {
	struct timespec mtime;
	dev_t dev;
	ino_t ino;
	off_t size;
};

struct agent_tls_watch {
	lws_sorted_usec_list_t sul; /* first: the callback's container */
	struct lws_context *ctx;
	const char *cert, *key;
	unsigned check_s;
	struct file_id cert_id, key_id;
};

/* stat(2), not lstat: a Secret volume's files are links into its
 * current ..data directory, which is what changes. */
static int file_id_read(const char *path, struct file_id *ret)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	*ret = (struct file_id){.mtime = st.st_mtim,
				.dev = st.st_dev,
				.ino = st.st_ino,
				.size = st.st_size};
	return 0;
}

static bool file_id_eq(const struct file_id *a, const struct file_id *b)
{
	return a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec && a->dev == b->dev &&
	       a->ino == b->ino && a->size == b->size;
}

static void schedule(struct agent_tls_watch *w);

static void look(lws_sorted_usec_list_t *sul)
{
	struct agent_tls_watch *w =
		lws_container_of(sul, struct agent_tls_watch, sul);
	struct file_id c, k;

	if (file_id_read(w->cert, &c) == 0 && file_id_read(w->key, &k) == 0 &&
	    (!file_id_eq(&c, &w->cert_id) || !file_id_eq(&k, &w->key_id))) {
		if (lws_tls_cert_updated(w->ctx, w->cert, w->key, NULL, 0, NULL,
					 0) == 0) {
			w->cert_id = c;
			w->key_id = k;
			log_info("certificate \"%s\" reloaded", w->cert);
		} else {
			log_warn("certificate \"%s\" changed but cannot be "
				 "loaded, keeping the old one",
				 w->cert);
		}
	}
	schedule(w);
}

static void schedule(struct agent_tls_watch *w)
{
	lws_sul_schedule(w->ctx, 0, &w->sul, look,
			 (lws_usec_t)w->check_s * LWS_US_PER_SEC);
}

struct agent_tls_watch *agent_tls_watch_new(const char *cert, const char *key,
					    unsigned check_s)
{
	struct agent_tls_watch *w = calloc(1, sizeof(*w));
	int r;

	if (!w)
		return NULL;
	w->cert = cert;
	w->key = key;
	w->check_s = check_s ? check_s : 1;
	r = file_id_read(cert, &w->cert_id);
	if (r == 0)
		r = file_id_read(key, &w->key_id);
	if (r < 0) {
		log_error("cannot read \"%s\" or \"%s\": %s", cert, key,
			  strerror(-r));
		free(w);
		errno = -r;
		return NULL;
	}
	return w;
}

void agent_tls_watch_start(struct agent_tls_watch *w, struct lws_context *ctx)
{
	w->ctx = ctx;
	schedule(w);
}

void agent_tls_watch_free(struct agent_tls_watch *w)
{
	if (!w)
		return;
	if (w->ctx)
		lws_sul_cancel(&w->sul);
	free(w);
}
