/* SPDX-License-Identifier: Apache-2.0 */
/* kube: the client — configuration copy, credentials (static token, token
 * file re-read on change, exec plugin cached until expiry), one HTTP
 * request on libcurl's multi interface so a cancel eventfd is polled next
 * to the socket, the limiter, and retries honouring Retry-After. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>

#include "kube_internal.h"
#include "base/fileio.h"
#include "base/static_nss.h"

struct kube_cancel {
	int efd;
	atomic_bool fired;
};

#define CONN_POOL 4

struct kube_conn {
	CURLM *multi;
	CURL *easy;
};

struct kube_client {
	struct kube_config *cfg;
	struct kube_client_options opt;
	char *user_agent;
	char *base_url;			/* server, host swapped for SNI */
	struct curl_slist *connect_to;	/* tls-server-name → real address */
	struct curl_slist *impersonate; /* "Impersonate-User: …" lines */
	struct kube_cancel *shutdown;
	pthread_mutex_t lock; /* everything below */
	struct kube_limiter limiter;
	struct kube_conn pool[CONN_POOL];
	size_t n_pool;
	char *token;		  /* current bearer token */
	struct stat token_st;	  /* of token_file when token was read */
	uint64_t token_expires_s; /* exec: 0 = no expiry */
	bool token_valid;
	struct kube_exec_credential exec_cred;
	struct kube_event_cache events;
};

struct kube_event_cache *kube_client_events(struct kube_client *c)
{
	return &c->events;
}

/* ---- cancel ---- */

int kube_cancel_new(struct kube_cancel **ret)
{
	struct kube_cancel *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->efd < 0) {
		int r = -errno;

		free(c);
		return r;
	}
	*ret = c;
	return 0;
}

void kube_cancel_free(struct kube_cancel *c)
{
	if (!c)
		return;
	close(c->efd);
	free(c);
}

void kube_cancel_trigger(struct kube_cancel *c)
{
	uint64_t one = 1;

	atomic_store(&c->fired, true);
	if (write(c->efd, &one, sizeof(one)) < 0) {
		/* the counter is already non-zero: still readable */
	}
}

void kube_cancel_reset(struct kube_cancel *c)
{
	uint64_t v;

	atomic_store(&c->fired, false);
	if (read(c->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: was not set */
	}
}

bool kube_cancel_is_triggered(const struct kube_cancel *c)
{
	return c && atomic_load(&c->fired);
}

static bool cancelled(struct kube_client *c, struct kube_cancel *k)
{
	return kube_cancel_is_triggered(c->shutdown) ||
	       kube_cancel_is_triggered(k);
}

int kube_client_sleep(struct kube_client *c, struct kube_cancel *cancel,
		      uint64_t us)
{
	struct pollfd p[2] = {
		{.fd = c->shutdown->efd, .events = POLLIN},
		{.fd = cancel ? cancel->efd : -1, .events = POLLIN}};
	uint64_t end = now_monotonic_us() + us;

	for (;;) {
		uint64_t now = now_monotonic_us();

		if (cancelled(c, cancel))
			return -ECANCELED;
		if (now >= end)
			return 0;
		if (poll(p, 2, (int)((end - now + 999) / 1000)) < 0 &&
		    errno != EINTR)
			return -errno;
	}
}

/* ---- client ---- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

/* Before libcurl's first use: in a static program, names resolve
 * through files and dns only (static_nss_pin(), docs/build.md). */
static void curl_init_once(void)
{
	static_nss_pin();
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

int kube_config_dup(const struct kube_config *cfg, struct kube_config **ret);

static void client_defaults(struct kube_client_options *o)
{
	if (o->qps == 0)
		o->qps = 5;
	if (o->burst == 0)
		o->burst = 10;
	if (o->timeout_ms == 0)
		o->timeout_ms = 30000;
	if (o->connect_timeout_ms == 0)
		o->connect_timeout_ms = 10000;
	if (o->max_response == 0)
		o->max_response = 64u << 20;
	if (o->max_retries == 0)
		o->max_retries = 3;
	if (o->no_retries)
		o->max_retries = 0;
}

/* tls-server-name: the URL names the certificate's host (SNI and
 * verification use it) and CONNECT_TO sends the connection to the real
 * address. */
static int setup_server_name(struct kube_client *c)
{
	const char *sni = c->cfg->tls_server_name;
	char *host = NULL, *port = NULL, *url = NULL, *map = NULL;
	CURLU *u;
	int r = -EINVAL;

	if (!sni || !*sni)
		return (c->base_url = strdup(c->cfg->server)) ? 0 : -ENOMEM;
	u = curl_url();
	if (!u)
		return -ENOMEM;
	if (curl_url_set(u, CURLUPART_URL, c->cfg->server, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) ==
		    CURLUE_OK &&
	    curl_url_set(u, CURLUPART_HOST, sni, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_URL, &url, 0) == CURLUE_OK) {
		r = -ENOMEM;
		if (asprintf(&map, "%s:%s:%s:%s", sni, port, host, port) >= 0) {
			c->connect_to = curl_slist_append(NULL, map);
			free(map);
		}
		/* curl adds a '/' path; every request path brings its own */
		if (c->connect_to && url[strlen(url) - 1] == '/')
			url[strlen(url) - 1] = '\0';
		if (c->connect_to && (c->base_url = strdup(url)))
			r = 0;
	}
	curl_free(host);
	curl_free(port);
	curl_free(url);
	curl_url_cleanup(u);
	return r;
}

/* One header line "name: value" onto *l; -EINVAL for a value that would
 * end the header (any control character), -ENOMEM. */
static int add_header(struct curl_slist **l, const char *name,
		      const char *value)
{
	_cleanup_free_ char *line = NULL;
	struct curl_slist *n;

	for (const char *v = value; *v; v++)
		if ((unsigned char)*v < 0x20 || *v == 0x7f)
			return -EINVAL;
	if (!*value || asprintf(&line, "%s: %s", name, value) < 0)
		return *value ? -ENOMEM : -EINVAL;
	n = curl_slist_append(*l, line);
	if (!n)
		return -ENOMEM;
	*l = n;
	return 0;
}

static int setup_impersonation(struct kube_client *c)
{
	const struct kube_client_options *o = &c->opt;
	int r = 0;

	if (!o->impersonate_user && o->n_impersonate_groups)
		return -EINVAL; /* as the API server: groups need a user */
	if (o->impersonate_user)
		r = add_header(&c->impersonate, "Impersonate-User",
			       o->impersonate_user);
	for (size_t i = 0; r == 0 && i < o->n_impersonate_groups; i++)
		r = add_header(&c->impersonate, "Impersonate-Group",
			       o->impersonate_groups[i]);
	c->opt.impersonate_user = NULL; /* not kept: the lines are */
	c->opt.impersonate_groups = NULL;
	return r;
}

int kube_client_new(const struct kube_config *cfg,
		    const struct kube_client_options *o,
		    struct kube_client **ret)
{
	struct kube_client *c;
	int r;

	if (!cfg || !cfg->server || !*cfg->server)
		return -EINVAL;
	pthread_once(&curl_once, curl_init_once);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (o)
		c->opt = *o;
	client_defaults(&c->opt);
	c->user_agent =
		strdup(c->opt.user_agent ? c->opt.user_agent : "oomlens/0.1");
	c->opt.user_agent = c->user_agent;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->events.lock, NULL);
	kube_limiter_init(&c->limiter, c->opt.qps, c->opt.burst,
			  now_monotonic_us());
	r = c->user_agent ? kube_config_dup(cfg, &c->cfg) : -ENOMEM;
	if (r == 0)
		r = kube_cancel_new(&c->shutdown);
	if (r == 0)
		r = setup_server_name(c);
	if (r == 0)
		r = setup_impersonation(c);
	if (r < 0) {
		kube_client_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

void kube_client_free(struct kube_client *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_pool; i++) {
		curl_easy_cleanup(c->pool[i].easy);
		curl_multi_cleanup(c->pool[i].multi);
	}
	kube_config_free(c->cfg);
	kube_cancel_free(c->shutdown);
	free(c->token);
	kube_exec_credential_release(&c->exec_cred);
	free(c->user_agent);
	free(c->base_url);
	curl_slist_free_all(c->connect_to);
	curl_slist_free_all(c->impersonate);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->events.lock);
	free(c);
}

void kube_client_shutdown(struct kube_client *c)
{
	kube_cancel_trigger(c->shutdown);
}

size_t kube_client_max_response(const struct kube_client *c)
{
	return c->opt.max_response;
}

const char *kube_client_namespace(const struct kube_client *c)
{
	return c->cfg->namespace ? c->cfg->namespace : "default";
}

/* ---- credentials ---- */

static int read_token_file(const char *path, char **ret, struct stat *ret_st)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct stat st;
	int r;

	/* stat first: a rotation between stat and read is seen next time */
	if (stat(path, &st) < 0)
		return -errno;
	strbuf_init(&sb, 64 << 10);
	r = read_file_at(AT_FDCWD, path, 64 << 10, &sb);
	if (r < 0)
		return r;
	while (sb.len > 0 && strchr(" \t\r\n", sb.buf[sb.len - 1]))
		sb.buf[--sb.len] = '\0';
	if (sb.len == 0)
		return -ENODATA;
	*ret = strbuf_detach(&sb, NULL);
	*ret_st = st;
	return *ret ? 0 : -ENOMEM;
}

static bool token_file_changed(struct kube_client *c)
{
	struct stat st;

	if (stat(c->cfg->token_file, &st) < 0)
		return false; /* keep the old token while it is away */
	return st.st_ino != c->token_st.st_ino ||
	       st.st_dev != c->token_st.st_dev ||
	       st.st_size != c->token_st.st_size ||
	       st.st_mtim.tv_sec != c->token_st.st_mtim.tv_sec ||
	       st.st_mtim.tv_nsec != c->token_st.st_mtim.tv_nsec;
}

static int refresh_exec(struct kube_client *c, struct kube_error *err)
{
	struct kube_exec_credential cred = {0};
	int r;

	r = kube_exec_run(c->cfg->exec, &cred, err);
	if (r < 0)
		return r;
	kube_exec_credential_release(&c->exec_cred);
	c->exec_cred = cred;
	free(c->token);
	c->token = cred.token ? strdup(cred.token) : NULL;
	c->token_expires_s = cred.expires_s;
	c->token_valid = true;
	return 0;
}

/* Under c->lock. Makes c->token current (may stay NULL: no token auth). */
static int refresh_token(struct kube_client *c, struct kube_error *err)
{
	uint64_t now_s = now_realtime_us() / 1000000;
	char *t = NULL;
	struct stat st;
	int r;

	if (c->cfg->exec) {
		if (c->token_valid && (c->token_expires_s == 0 ||
				       now_s + 10 < c->token_expires_s))
			return 0;
		return refresh_exec(c, err);
	}
	if (c->cfg->token_file) {
		if (c->token_valid && !token_file_changed(c))
			return 0;
		r = read_token_file(c->cfg->token_file, &t, &st);
		if (r < 0 && c->token)
			return 0; /* rotation in progress: keep the old one */
		if (r < 0)
			return kube_error_set(err, r, "token file '%s': %s",
					      c->cfg->token_file, strerror(-r));
		free(c->token);
		c->token = t;
		c->token_st = st;
		c->token_valid = true;
		return 0;
	}
	if (!c->token_valid && c->cfg->token) {
		c->token = strdup(c->cfg->token);
		if (!c->token)
			return -ENOMEM;
	}
	c->token_valid = true;
	return 0;
}

static void invalidate_token(struct kube_client *c)
{
	pthread_mutex_lock(&c->lock);
	c->token_valid = false;
	memset(&c->token_st, 0, sizeof(c->token_st));
	pthread_mutex_unlock(&c->lock);
}

/* ---- one transfer ---- */

struct xfer {
	struct kube_client *c;
	CURL *easy;
	struct strbuf *body; /* non-stream, or a failed stream */
	kube_stream_fn fn;   /* stream */
	void *ud;
	int fn_ret; /* fn's stop value */
	bool too_big;
	uint32_t retry_after_s;
	bool has_retry_after;
};

static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n;
	static const char h[] = "retry-after:";
	char v[64];

	if (len > sizeof(h) - 1 && len - (sizeof(h) - 1) < sizeof(v) &&
	    strncasecmp(data, h, sizeof(h) - 1) == 0) {
		size_t vl = len - (sizeof(h) - 1);

		memcpy(v, data + sizeof(h) - 1, vl);
		v[vl] = '\0';
		while (vl > 0 && strchr("\r\n \t", v[vl - 1]))
			v[--vl] = '\0';
		if (kube_parse_retry_after(v, now_realtime_us() / 1000000,
					   &x->retry_after_s) == 0)
			x->has_retry_after = true;
	}
	return len;
}

static size_t on_data(char *data, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t len = size * n;
	long code = 0;

	if (x->fn) {
		curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
		if (code >= 200 && code < 300) {
			x->fn_ret = x->fn(data, len, x->ud);
			return x->fn_ret < 0 ? 0 : len;
		}
	}
	if (strbuf_add(x->body, data, len) < 0) {
		x->too_big = true;
		return 0;
	}
	return len;
}

static int curl_errno(CURLcode cc)
{
	switch (cc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
		return -ECONNREFUSED;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CIPHER:
		return -EPROTO;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
		return -EINVAL;
	default:
		return -ECONNRESET;
	}
}

static struct curl_blob blob(const char *data, size_t len)
{
	struct curl_blob b = {(void *)data, len, CURL_BLOB_COPY};

	return b;
}

static void set_tls(struct kube_client *c, CURL *e)
{
	const struct kube_config *cfg = c->cfg;
	struct curl_blob b;

	if (cfg->insecure) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	} else if (cfg->ca_data) {
		b = blob(cfg->ca_data, cfg->ca_data_len);
		curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
	} else if (cfg->ca_file) {
		curl_easy_setopt(e, CURLOPT_CAINFO, cfg->ca_file);
	}
	if (c->exec_cred.cert_pem && c->exec_cred.key_pem) {
		b = blob(c->exec_cred.cert_pem, strlen(c->exec_cred.cert_pem));
		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &b);
		b = blob(c->exec_cred.key_pem, strlen(c->exec_cred.key_pem));
		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &b);
	} else if (cfg->cert_data && cfg->key_data) {
		b = blob(cfg->cert_data, cfg->cert_data_len);
		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &b);
		b = blob(cfg->key_data, cfg->key_data_len);
		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &b);
	} else if (cfg->cert_file && cfg->key_file) {
		curl_easy_setopt(e, CURLOPT_SSLCERT, cfg->cert_file);
		curl_easy_setopt(e, CURLOPT_SSLKEY, cfg->key_file);
	}
	curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
}

/* A header line of a caller's: "Name: value", no control character (it
 * would end the header or start another). */
static bool header_line_ok(const char *l)
{
	const char *colon = strchr(l, ':');

	if (!colon || colon == l)
		return false;
	for (; *l; l++)
		if ((unsigned char)*l < 0x20 || *l == 0x7f)
			return false;
	return true;
}

static int build_headers(struct kube_client *c, const struct kube_request *r,
			 struct curl_slist **ret)
{
	struct curl_slist *h = NULL, *n;
	char line[256];
	_cleanup_free_ char *auth = NULL;

	h = curl_slist_append(NULL, "Accept: application/json");
	if (h && r->content_type) {
		snprintf(line, sizeof(line), "Content-Type: %s",
			 r->content_type);
		n = curl_slist_append(h, line);
		h = n ? n : (curl_slist_free_all(h), NULL);
	}
	if (h && c->token) {
		if (asprintf(&auth, "Authorization: Bearer %s", c->token) < 0)
			auth = NULL;
		n = auth ? curl_slist_append(h, auth) : NULL;
		h = n ? n : (curl_slist_free_all(h), NULL);
	}
	for (struct curl_slist *i = c->impersonate; h && i; i = i->next) {
		n = curl_slist_append(h, i->data);
		h = n ? n : (curl_slist_free_all(h), NULL);
	}
	for (const char *const *l = r->headers; h && l && *l; l++) {
		if (!header_line_ok(*l)) {
			curl_slist_free_all(h);
			return -EINVAL;
		}
		n = curl_slist_append(h, *l);
		h = n ? n : (curl_slist_free_all(h), NULL);
	}
	if (!h)
		return -ENOMEM;
	*ret = h;
	return 0;
}

static void set_request(struct kube_client *c, CURL *e,
			const struct kube_request *r, const char *url,
			struct xfer *x, bool stream)
{
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	if (c->connect_to)
		curl_easy_setopt(e, CURLOPT_CONNECT_TO, c->connect_to);
	curl_easy_setopt(e, CURLOPT_USERAGENT, c->opt.user_agent);
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
			 c->opt.http1_only ? (long)CURL_HTTP_VERSION_1_1
					   : (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)c->opt.connect_timeout_ms);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
			 stream ? 0L : (long)c->opt.timeout_ms);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
	if (!streq(r->method, "GET"))
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
	if (r->body) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)r->body_len);
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
	}
	set_tls(c, e);
}

static int conn_get(struct kube_client *c, struct kube_conn *ret)
{
	struct kube_conn k = {0};

	pthread_mutex_lock(&c->lock);
	if (c->n_pool > 0)
		k = c->pool[--c->n_pool];
	pthread_mutex_unlock(&c->lock);
	if (!k.multi) {
		k.multi = curl_multi_init();
		k.easy = curl_easy_init();
		if (!k.multi || !k.easy) {
			curl_multi_cleanup(k.multi);
			curl_easy_cleanup(k.easy);
			return -ENOMEM;
		}
	}
	curl_easy_reset(k.easy);
	*ret = k;
	return 0;
}

static void conn_put(struct kube_client *c, struct kube_conn *k, bool reuse)
{
	pthread_mutex_lock(&c->lock);
	if (reuse && c->n_pool < CONN_POOL) {
		c->pool[c->n_pool++] = *k;
		k->multi = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	if (k->multi) {
		curl_easy_cleanup(k->easy);
		curl_multi_cleanup(k->multi);
	}
}

/* Drives the transfer until done or cancelled. Returns a CURLcode, or
 * -ECANCELED. */
static int run_multi(struct kube_client *c, struct kube_conn *k,
		     struct kube_cancel *cancel)
{
	struct curl_waitfd w[2] = {
		{.fd = c->shutdown->efd, .events = POLLIN},
		{.fd = cancel ? cancel->efd : -1, .events = POLLIN}};
	int running = 1, result = CURLE_OK;

	curl_multi_add_handle(k->multi, k->easy);
	while (running) {
		CURLMsg *m;
		int left;

		if (curl_multi_perform(k->multi, &running) != CURLM_OK) {
			result = CURLE_OUT_OF_MEMORY;
			break;
		}
		while ((m = curl_multi_info_read(k->multi, &left)))
			if (m->msg == CURLMSG_DONE)
				result = m->data.result;
		if (!running)
			break;
		if (cancelled(c, cancel)) {
			result = -ECANCELED;
			break;
		}
		curl_multi_poll(k->multi, w, cancel ? 2 : 1, 200, NULL);
		if (cancelled(c, cancel)) {
			result = -ECANCELED;
			break;
		}
	}
	curl_multi_remove_handle(k->multi, k->easy);
	return result;
}

/* One attempt. Fills *ret_status, x. Returns 0 when an HTTP answer came,
 * or a transport -errno (err filled). */
static int attempt(struct kube_client *c, const struct kube_request *r,
		   struct xfer *x, long *ret_status, struct kube_error *err)
{
	_cleanup_free_ char *url = NULL;
	struct curl_slist *h = NULL;
	struct kube_conn k;
	int res, ret;

	if (asprintf(&url, "%s%s", c->base_url, r->path) < 0)
		return -ENOMEM;
	ret = conn_get(c, &k);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&c->lock);
	ret = refresh_token(c, err);
	if (ret == 0)
		ret = build_headers(c, r, &h);
	if (ret == 0) {
		x->easy = k.easy;
		set_request(c, k.easy, r, url, x, x->fn != NULL);
		curl_easy_setopt(k.easy, CURLOPT_HTTPHEADER, h);
	}
	pthread_mutex_unlock(&c->lock);
	if (ret < 0) {
		conn_put(c, &k, true);
		return ret;
	}
	res = run_multi(c, &k, r->cancel);
	curl_easy_getinfo(k.easy, CURLINFO_RESPONSE_CODE, ret_status);
	curl_easy_setopt(k.easy, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(h);
	conn_put(c, &k, res == CURLE_OK);
	if (res == -ECANCELED)
		return kube_error_set(err, -ECANCELED, "cancelled");
	if (res == CURLE_WRITE_ERROR && x->fn_ret < 0)
		return x->fn_ret;
	if (res == CURLE_WRITE_ERROR && x->too_big)
		return kube_error_set(err, -E2BIG, "response over %zu bytes",
				      x->body->max);
	switch (kube_transfer_outcome(res != CURLE_OK, *ret_status,
				      x->fn != NULL)) {
	case KUBE_XFER_ANSWER:
		return 0;
	case KUBE_XFER_STREAM_BROKEN:
		return kube_error_set(err, curl_errno(res), "stream: %s",
				      curl_easy_strerror(res));
	case KUBE_XFER_TRANSPORT:
		break;
	}
	/* An interim 1xx is not an answer: the caller sees no status. */
	*ret_status = 0;
	return kube_error_set(err, curl_errno(res), "%s %s: %s", r->method,
			      r->path, curl_easy_strerror(res));
}

enum kube_xfer_outcome kube_transfer_outcome(bool failed, long status,
					     bool stream)
{
	if (!failed)
		return status >= 200 ? KUBE_XFER_ANSWER : KUBE_XFER_TRANSPORT;
	/* No final status (none, or only an interim 100 Continue before
	 * the connection went): nothing was answered. */
	if (status < 200)
		return KUBE_XFER_TRANSPORT;
	if (stream)
		return KUBE_XFER_STREAM_BROKEN;
	/* A 2xx whose body was cut is not the object it claims to be. */
	if (status < 300)
		return KUBE_XFER_TRANSPORT;
	/* An error status stands by itself: a 413 over HTTP/2 may come with
	 * its stream reset before (or instead of) its body. */
	return KUBE_XFER_ANSWER;
}

static int limiter_wait(struct kube_client *c, struct kube_cancel *cancel)
{
	uint64_t wait;

	pthread_mutex_lock(&c->lock);
	wait = kube_limiter_reserve(&c->limiter, now_monotonic_us());
	pthread_mutex_unlock(&c->lock);
	return wait ? kube_client_sleep(c, cancel, wait) : 0;
}

static bool can_refresh(struct kube_client *c)
{
	return c->cfg->exec || c->cfg->token_file;
}

/* The retry loop shared by plain and streamed requests. */
static int request_loop(struct kube_client *c, const struct kube_request *r,
			struct xfer *x, long *ret_status,
			struct kube_error *err)
{
	struct kube_error e = {0};
	bool refreshed = false;
	unsigned tries = 0;
	long status;
	int ret;

	for (;;) {
		ret = limiter_wait(c, r->cancel);
		if (ret < 0)
			return kube_error_set(err, ret, "cancelled");
		status = 0;
		x->has_retry_after = false;
		x->fn_ret = 0;
		x->too_big = false;
		strbuf_reset(x->body);
		ret = attempt(c, r, x, &status, &e);
		if (ret < 0 &&
		    (ret == -ECANCELED || !e.retryable || x->fn ||
		     !streq(r->method, "GET") || tries >= c->opt.max_retries))
			break;
		if (ret < 0) {
			ret = kube_client_sleep(c, r->cancel,
						200000ull << tries++);
			if (ret < 0)
				return kube_error_set(err, ret, "cancelled");
			continue;
		}
		ret = kube_status_parse(x->body->buf, x->body->len, status, &e);
		e.retry_after_s = x->has_retry_after ? x->retry_after_s : 0;
		if (ret == -EACCES && !refreshed && can_refresh(c)) {
			refreshed = true;
			invalidate_token(c);
			continue;
		}
		if (ret == 0 || !x->has_retry_after || !e.retryable ||
		    tries >= c->opt.max_retries)
			break;
		tries++;
		ret = kube_client_sleep(c, r->cancel,
					(uint64_t)(e.retry_after_s ?: 1) *
						1000000);
		if (ret < 0)
			return kube_error_set(err, ret, "cancelled");
	}
	*ret_status = status;
	if (ret < 0 && err)
		*err = e;
	else if (err)
		memset(err, 0, sizeof(*err));
	if (err)
		err->http_status = status;
	return ret;
}

int kube_request(struct kube_client *c, const struct kube_request *r,
		 long *ret_status, struct strbuf *ret_body,
		 struct kube_error *err)
{
	struct xfer x = {.c = c, .body = ret_body};
	long status = 0;
	int ret;

	ret = request_loop(c, r, &x, &status, err);
	if (ret_status)
		*ret_status = status;
	return ret;
}

int kube_request_stream(struct kube_client *c, const struct kube_request *r,
			kube_stream_fn fn, void *ud, struct kube_error *err)
{
	_cleanup_strbuf_ struct strbuf body = STRBUF_INIT;
	struct xfer x = {.c = c, .body = &body, .fn = fn, .ud = ud};
	long status = 0;

	strbuf_init(&body, 1 << 20);
	return request_loop(c, r, &x, &status, err);
}
