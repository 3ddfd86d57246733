/* SPDX-License-Identifier: Apache-2.0 */
/* kube: the pure protocol pieces — Status decoding, errno mapping,
 * Retry-After, the token bucket, paths and queries, watch line framing,
 * base64. No I/O here. */
#include <errno.h>
#include <limits.h>
#include <openssl/evp.h>
#include <string.h>
#include <time.h>

#include "base/parse.h"
#include "kube_scan.h"

int kube_errno_from_status(long http_status, const char *reason)
{
	if (http_status >= 200 && http_status < 300)
		return 0;
	switch (http_status) {
	case 400:
	case 422:
		return -EINVAL;
	case 401:
		return -EACCES;
	case 403:
		return -EPERM;
	case 404:
		return -ENOENT;
	case 409:
		return reason && streq(reason, "AlreadyExists") ? -EEXIST
								: -EBUSY;
	case 410:
		return -ESTALE;
	case 413:
		return -E2BIG;
	case 429:
		return -EAGAIN;
	default:
		return -EIO;
	}
}

static const char *obj_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* etcd refuses objects over its limits with a 500 and no reason. */
static bool is_size_message(const char *m)
{
	return strstr(m, "request is too large") ||
	       strstr(m, "ResourceExhausted") || strstr(m, "larger than max");
}

static bool status_retryable(long code, const char *reason, const char *msg)
{
	if (code == 429 || code == 502 || code == 503 || code == 504)
		return true;
	if (code == 500)
		return !is_size_message(msg);
	return streq(reason, "ServerTimeout") || streq(reason, "Timeout") ||
	       streq(reason, "TooManyRequests");
}

static void copy_body_start(char *dst, size_t size, const char *body,
			    size_t len)
{
	size_t n = len < size - 1 ? len : size - 1;

	memcpy(dst, body, n);
	dst[n] = '\0';
	while (n > 0 && (dst[n - 1] == '\n' || dst[n - 1] == '\r'))
		dst[--n] = '\0';
}

int kube_status_parse(const char *body, size_t len, long http_status,
		      struct kube_error *ret)
{
	struct kube_error e = {.http_status = http_status};
	struct json_tokener *tok;
	struct json_object *o = NULL;
	const char *s;

	tok = json_tokener_new();
	if (tok && body && len > 0 && len < (1u << 30))
		o = json_tokener_parse_ex(tok, body, (int)len);
	if (tok)
		json_tokener_free(tok);
	if (o && json_object_is_type(o, json_type_object)) {
		if ((s = obj_str(o, "reason")))
			strlcpy_safe(e.reason, s, sizeof(e.reason));
		if ((s = obj_str(o, "message")))
			strlcpy_safe(e.message, s, sizeof(e.message));
	} else if (body && len > 0) {
		copy_body_start(e.message, sizeof(e.message), body, len);
	}
	json_object_put(o);
	e.code = kube_errno_from_status(http_status, e.reason);
	if (http_status == 500 && is_size_message(e.message))
		e.code = -E2BIG;
	e.retryable = e.code != 0 &&
		      status_retryable(http_status, e.reason, e.message);
	*ret = e;
	return e.code;
}

int kube_parse_retry_after(const char *value, uint64_t now_s, uint32_t *ret_s)
{
	uint64_t v;
	struct tm tm = {0};
	const char *end;
	time_t t;

	while (value && (*value == ' ' || *value == '\t'))
		value++;
	if (!value || !*value)
		return -EINVAL;
	if (parse_u64(value, &v) == 0) {
		*ret_s = v > 3600 ? 3600 : (uint32_t)v;
		return 0;
	}
	/* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" */
	end = strptime(value, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (!end || *end)
		return -EINVAL;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	v = (uint64_t)t > now_s ? (uint64_t)t - now_s : 0;
	*ret_s = v > 3600 ? 3600 : (uint32_t)v;
	return 0;
}

void kube_limiter_init(struct kube_limiter *l, double qps, unsigned burst,
		       uint64_t now_us)
{
	l->qps = qps;
	l->burst = burst < 1 ? 1 : burst;
	l->tokens = l->burst;
	l->last_us = now_us;
}

uint64_t kube_limiter_reserve(struct kube_limiter *l, uint64_t now_us)
{
	double wait_s;

	if (l->qps <= 0)
		return 0;
	if (now_us > l->last_us) {
		l->tokens += (double)(now_us - l->last_us) / 1e6 * l->qps;
		if (l->tokens > l->burst)
			l->tokens = l->burst;
		l->last_us = now_us;
	}
	l->tokens -= 1;
	if (l->tokens >= 0)
		return 0;
	wait_s = -l->tokens / l->qps;
	return (uint64_t)(wait_s * 1e6 + 0.5);
}

const struct kube_resource kube_res_pods = {"", "v1", "pods", "Pod", true};
const struct kube_resource kube_res_events = {"", "v1", "events", "Event",
					      true};
const struct kube_resource kube_res_oomreports = {
	"oomlens.io", "v1alpha1", "oomreports", "OOMReport", true};
const struct kube_resource kube_res_oombundles = {
	"oomlens.io", "v1alpha1", "oombundles", "OOMBundle", true};
const struct kube_resource kube_res_tokenreviews = {
	"authentication.k8s.io", "v1", "tokenreviews", "TokenReview", false};
const struct kube_resource kube_res_subjectaccessreviews = {
	"authorization.k8s.io", "v1", "subjectaccessreviews",
	"SubjectAccessReview", false};

static bool url_unreserved(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' ||
	       ch == '_' || ch == '~';
}

static int add_escaped(struct strbuf *sb, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	int r = 0;

	for (; *s && r == 0; s++) {
		unsigned char ch = (unsigned char)*s;

		if (url_unreserved(ch)) {
			r = strbuf_addch(sb, (char)ch);
		} else {
			char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};

			r = strbuf_add(sb, e, 3);
		}
	}
	return r;
}

int kube_build_path(struct strbuf *sb, const struct kube_resource *r,
		    const char *ns, const char *name, const char *subresource)
{
	int ret;

	if (!r || !r->plural || (subresource && !name))
		return -EINVAL;
	if (r->group && *r->group)
		ret = strbuf_addf(sb, "/apis/%s/%s", r->group, r->version);
	else
		ret = strbuf_addf(sb, "/api/%s", r->version);
	if (ret == 0 && r->namespaced && ns && *ns) {
		ret = strbuf_adds(sb, "/namespaces/");
		if (ret == 0)
			ret = add_escaped(sb, ns);
	}
	if (ret == 0)
		ret = strbuf_addf(sb, "/%s", r->plural);
	if (ret == 0 && name) {
		if (!*name)
			return -EINVAL;
		ret = strbuf_addch(sb, '/');
		if (ret == 0)
			ret = add_escaped(sb, name);
	}
	if (ret == 0 && subresource)
		ret = strbuf_addf(sb, "/%s", subresource);
	return ret;
}

int kube_query_add(struct strbuf *sb, const char *key, const char *value)
{
	int r;

	if (!value || !*value)
		return 0;
	r = strbuf_addch(sb, memchr(sb->buf, '?', sb->len) ? '&' : '?');
	if (r == 0)
		r = add_escaped(sb, key);
	if (r == 0)
		r = strbuf_addch(sb, '=');
	if (r == 0)
		r = add_escaped(sb, value);
	return r;
}

void kube_line_splitter_init(struct kube_line_splitter *s, size_t max_line)
{
	s->max_line = max_line ? max_line : (8u << 20);
	strbuf_init(&s->buf, s->max_line);
	s->overflow = false;
}

void kube_line_splitter_release(struct kube_line_splitter *s)
{
	strbuf_release(&s->buf);
}

/* Handles the bytes up to and excluding one '\n' at data[n]. */
static int finish_line(struct kube_line_splitter *s, const char *data, size_t n,
		       int (*fn)(const char *, size_t, void *), void *ud)
{
	int r = 0;

	if (s->overflow) {
		s->overflow = false;
		return 0;
	}
	if (s->buf.len == 0) {
		if (n > s->max_line)
			return fn(NULL, 0, ud);
		return n ? fn(data, n, ud) : 0;
	}
	if (strbuf_add(&s->buf, data, n) < 0) {
		strbuf_reset(&s->buf);
		return fn(NULL, 0, ud);
	}
	if (s->buf.len)
		r = fn(s->buf.buf, s->buf.len, ud);
	strbuf_reset(&s->buf);
	return r;
}

int kube_line_splitter_feed(struct kube_line_splitter *s, const char *data,
			    size_t len,
			    int (*fn)(const char *line, size_t len, void *ud),
			    void *userdata)
{
	while (len > 0) {
		const char *nl = memchr(data, '\n', len);
		size_t n;
		int r;

		if (!nl)
			break;
		n = (size_t)(nl - data);
		r = finish_line(s, data, n, fn, userdata);
		data += n + 1;
		len -= n + 1;
		if (r < 0)
			return r;
	}
	if (len == 0 || s->overflow)
		return 0;
	if (strbuf_add(&s->buf, data, len) < 0) {
		int r;

		strbuf_reset(&s->buf);
		s->overflow = true;
		r = fn(NULL, 0, userdata);
		return r < 0 ? r : 0;
	}
	return 0;
}

static const struct {
	const char *name;
	enum kube_event_type type;
} event_types[] = {
	{"ADDED", KUBE_EVENT_ADDED},	 {"MODIFIED", KUBE_EVENT_MODIFIED},
	{"DELETED", KUBE_EVENT_DELETED}, {"BOOKMARK", KUBE_EVENT_BOOKMARK},
	{"ERROR", KUBE_EVENT_ERROR},
};

const char *kube_event_type_name(enum kube_event_type t)
{
	for (size_t i = 0; i < ARRAY_SIZE(event_types); i++)
		if (event_types[i].type == t)
			return event_types[i].name;
	return "UNKNOWN";
}

int kube_event_type_parse(const char *s, size_t n, enum kube_event_type *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(event_types); i++)
		if (!strncmp(event_types[i].name, s, n) &&
		    !event_types[i].name[n]) {
			*ret = event_types[i].type;
			return 0;
		}
	return -EINVAL;
}

/* The event a parsed line o holds (ret->object a new reference to its
 * object), or -EBADMSG. */
static int event_from(struct json_object *o, struct kube_watch_event *ret)
{
	struct json_object *obj, *md;
	const char *type, *rv = NULL;
	enum kube_event_type t;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !(type = obj_str(o, "type")) ||
	    !json_object_object_get_ex(o, "object", &obj) ||
	    !json_object_is_type(obj, json_type_object) ||
	    kube_event_type_parse(type, strlen(type), &t) < 0)
		return -EBADMSG;
	if (json_object_object_get_ex(obj, "metadata", &md))
		rv = obj_str(md, "resourceVersion");
	ret->type = t;
	strlcpy_safe(ret->resource_version, rv ? rv : "",
		     sizeof(ret->resource_version));
	ret->object = json_object_get(obj);
	return 0;
}

/* One line parsed whole by json-c with tok (fresh or reset). */
static int parse_whole(struct json_tokener *tok, const char *line, size_t len,
		       struct kube_watch_event *ret)
{
	struct json_object *o;
	int r = -EBADMSG;

	o = json_tokener_parse_ex(tok, line, (int)len);
	/* the whole line must be one JSON value */
	if (o && json_tokener_get_parse_end(tok) == len)
		r = event_from(o, ret);
	json_object_put(o);
	return r;
}

int kube_watch_event_parse(const char *line, size_t len,
			   struct kube_watch_event *ret)
{
	struct json_tokener *tok;
	int r;

	if (!line || len == 0 || len >= (1u << 30))
		return -EBADMSG;
	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	r = parse_whole(tok, line, len, ret);
	json_tokener_free(tok);
	return r;
}

int kube_event_decoder_new(const struct kube_keep *keep,
			   struct kube_event_decoder **ret)
{
	struct kube_event_decoder *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->tok = json_tokener_new();
	if (!d->tok) {
		free(d);
		return -ENOMEM;
	}
	d->top[0] = (struct kube_keep){.name = "type"};
	d->top[1] = (struct kube_keep){.name = "object", .members = keep};
	*ret = d;
	return 0;
}

void kube_event_decoder_free(struct kube_event_decoder *d)
{
	if (!d)
		return;
	json_tokener_free(d->tok);
	free(d);
}

int kube_event_decoder_parse(struct kube_event_decoder *d, const char *line,
			     size_t len, struct kube_watch_event *ret)
{
	struct kube_watch_event ev;
	struct json_object *o;
	int r;

	if (!line || len == 0 || len >= (1u << 30))
		return -EBADMSG;
	/* plain JSON, the usual case: only the kept members are built, and
	 * json-c's tree of the same text would give the same answer */
	if (d->top[1].members &&
	    kube_json_project(d->tok, line, len, d->top, &o) == 0) {
		r = event_from(o, &ev);
		json_object_put(o);
		if (r < 0)
			return r;
		if (ev.type != KUBE_EVENT_ERROR) {
			*ret = ev;
			return 0;
		}
		/* an ERROR's Status is read whole */
		kube_watch_event_release(&ev);
	}
	json_tokener_reset(d->tok);
	return parse_whole(d->tok, line, len, ret);
}

void kube_watch_event_release(struct kube_watch_event *e)
{
	json_object_put(e->object);
	e->object = NULL;
}

int kube_base64_encode(const void *data, size_t len, struct strbuf *sb)
{
	size_t out_len;
	int r;

	if (len > (size_t)INT_MAX / 4 * 3 - 3)
		return -E2BIG;
	out_len = (len + 2) / 3 * 4;
	r = strbuf_grow(sb, out_len);
	if (r < 0)
		return r;
	/* writes out_len characters and a NUL, which strbuf_grow made room
	 * for */
	EVP_EncodeBlock((unsigned char *)sb->buf + sb->len, data, (int)len);
	sb->len += out_len;
	sb->buf[sb->len] = '\0';
	return 0;
}

int kube_base64_decode(const char *s, size_t len, unsigned char **ret,
		       size_t *ret_len)
{
	_cleanup_free_ unsigned char *out = NULL;
	size_t pad = 0;
	int n;

	/* EVP_DecodeBlock trims whitespace and takes '=' anywhere; the API
	 * server sends canonical padded base64, so anything else is refused
	 * here first. */
	if (len % 4 || len > INT_MAX)
		return -EBADMSG;
	while (pad < 2 && len - pad > 0 && s[len - pad - 1] == '=')
		pad++;
	if (memchr(s, '=', len - pad))
		return -EBADMSG;
	out = malloc(len / 4 * 3 + 1);
	if (!out)
		return -ENOMEM;
	n = EVP_DecodeBlock(out, (const unsigned char *)s, (int)len);
	if (n < 0 || (size_t)n != len / 4 * 3)
		return -EBADMSG;
	*ret = TAKE_PTR(out);
	*ret_len = (size_t)n - pad;
	return 0;
}

static int quantity_suffix(const char *s, uint64_t *mul, uint64_t *div)
{
	static const struct {
		const char *sfx;
		uint64_t mul;
	} tbl[] = {
		{"Ki", 1ull << 10},
		{"Mi", 1ull << 20},
		{"Gi", 1ull << 30},
		{"Ti", 1ull << 40},
		{"Pi", 1ull << 50},
		{"Ei", 1ull << 60},
		{"k", 1000ull},
		{"M", 1000000ull},
		{"G", 1000000000ull},
		{"T", 1000000000000ull},
		{"P", 1000000000000000ull},
		{"E", 1000000000000000000ull},
		{"", 1},
	};

	*div = 1;
	if (streq(s, "m")) {
		*mul = 1;
		*div = 1000;
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(tbl); i++)
		if (streq(s, tbl[i].sfx)) {
			*mul = tbl[i].mul;
			return 0;
		}
	return -EINVAL;
}

/* Splits "<digits>[.<digits>]" at *p into integer and fraction parts. */
static int scan_decimal(const char **p, uint64_t *ip, uint64_t *frac,
			uint64_t *frac_div)
{
	const char *s = *p;
	int r;

	*frac = 0;
	*frac_div = 1;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	r = scan_u64(&s, ip);
	if (r < 0)
		return r;
	if (*s == '.') {
		s++;
		for (; *s >= '0' && *s <= '9'; s++) {
			if (*frac_div >= 1000000000000ull)
				continue; /* more precision than bytes need */
			*frac = *frac * 10 + (uint64_t)(*s - '0');
			*frac_div *= 10;
		}
	}
	*p = s;
	return 0;
}

int kube_parse_quantity(const char *s, uint64_t *ret)
{
	uint64_t ip, frac, frac_div, mul, div, v, e = 0;
	const char *p = s;
	int r;

	if (!s)
		return -EINVAL;
	if (*p == '+')
		p++;
	r = scan_decimal(&p, &ip, &frac, &frac_div);
	if (r < 0)
		return -EINVAL;
	if ((*p == 'e' || *p == 'E') && p[1] >= '0' && p[1] <= '9') {
		p++;
		if (scan_u64(&p, &e) < 0 || e > 18 || *p)
			return -ERANGE;
		mul = 1;
		for (; e > 0; e--)
			mul *= 10;
		div = 1;
	} else if (quantity_suffix(p, &mul, &div) < 0) {
		return -EINVAL;
	}
	if (ip > UINT64_MAX / mul)
		return -ERANGE;
	v = ip * mul;
	/* fraction: frac/frac_div * mul, rounded up */
	if (frac) {
		unsigned __int128 f = (unsigned __int128)frac * mul;
		uint64_t fv = (uint64_t)((f + frac_div - 1) / frac_div);

		if (v > UINT64_MAX - fv)
			return -ERANGE;
		v += fv;
	}
	*ret = (v + div - 1) / div;
	return 0;
}
