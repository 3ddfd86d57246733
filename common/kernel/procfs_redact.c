/* SPDX-License-Identifier: Apache-2.0 */
/* A process's command line made safe to store: arguments joined by spaces,
 * control characters replaced, and secrets replaced by "***". Secrets are
 * recognised by shape (URL credentials, Authorization-like headers,
 * NAME=value and --flag value with a secret-looking name) and, for a few
 * well-known clients, by their password flags (mysql's -p<pw>). Redacting
 * too much costs a line of context; too little, a password in a bundle. */
#include <strings.h>

#include "kernel/procfs.h"
#include "base/util.h"

#define MASK "***"

enum next_how { NEXT_NONE, NEXT_ALL, NEXT_AFTER_COLON };

/* Clients whose short flag takes a password: -X<pw> (attached) always,
 * -X <pw> (next argument) where the flag has no prompt form. */
struct tool_flag {
	const char *tool;
	char letter;
	bool next;	   /* "-X pw" also means a password */
	enum next_how how; /* what of the value is secret */
};

static const struct tool_flag tool_flags[] = {
	/* mysql's "-p" alone prompts: the next argument is a database. */
	{"mysql", 'p', false, NEXT_ALL},
	{"mysqldump", 'p', false, NEXT_ALL},
	{"mysqladmin", 'p', false, NEXT_ALL},
	{"mysqlimport", 'p', false, NEXT_ALL},
	{"mysqlshow", 'p', false, NEXT_ALL},
	{"mysqlcheck", 'p', false, NEXT_ALL},
	{"mysqlpump", 'p', false, NEXT_ALL},
	{"mysqlbinlog", 'p', false, NEXT_ALL},
	{"mariadb", 'p', false, NEXT_ALL},
	{"mariadb-dump", 'p', false, NEXT_ALL},
	{"mariadb-admin", 'p', false, NEXT_ALL},
	{"sshpass", 'p', true, NEXT_ALL},
	{"redis-cli", 'a', true, NEXT_ALL},
	{"mongo", 'p', true, NEXT_ALL},
	{"mongosh", 'p', true, NEXT_ALL},
	{"mongodump", 'p', true, NEXT_ALL},
	{"mongorestore", 'p', true, NEXT_ALL},
	{"mongoexport", 'p', true, NEXT_ALL},
	{"mongoimport", 'p', true, NEXT_ALL},
	{"curl", 'u', true, NEXT_AFTER_COLON},
};

struct redact_state {
	char tool[32];	    /* basename of argv[0] */
	enum next_how next; /* how to redact the next argument */
	bool first;
};

static bool has_word(const char *s, size_t n, const char *w)
{
	size_t wl = strlen(w);

	for (size_t i = 0; i + wl <= n; i++)
		if (strncasecmp(s + i, w, wl) == 0)
			return true;
	return false;
}

/* Prefix test within n bytes: arguments are not NUL-terminated. */
static bool starts_with_ci(const char *s, size_t n, const char *w)
{
	size_t wl = strlen(w);

	return n >= wl && strncasecmp(s, w, wl) == 0;
}

static bool ends_with(const char *s, size_t n, const char *w)
{
	size_t wl = strlen(w);

	return n >= wl && strncasecmp(s + n - wl, w, wl) == 0;
}

/* True when one of the name's parts (split at '-', '_', '.') is w. */
static bool has_part(const char *s, size_t n, const char *w, bool last_only)
{
	size_t wl = strlen(w), i = 0;

	while (i < n) {
		size_t j = i;

		while (j < n && s[j] != '-' && s[j] != '_' && s[j] != '.')
			j++;
		if (j - i == wl && strncasecmp(s + i, w, wl) == 0 &&
		    (!last_only || j == n))
			return true;
		i = j + 1;
	}
	return false;
}

/* A flag or variable name (leading dashes included) whose value is a
 * secret. "--password-file", "--no-password", "--password-stdin": the
 * value is a path or nothing, not the secret. */
static bool secret_name(const char *s, size_t n)
{
	static const char *const words[] = {
		"password", "passwd",	  "passphrase", "secret",
		"token",    "credential", "key",
	};

	while (n && *s == '-')
		s++, n--;
	if (!n || starts_with_ci(s, n, "no-") || starts_with_ci(s, n, "no_") ||
	    ends_with(s, n, "file") || ends_with(s, n, "path") ||
	    ends_with(s, n, "stdin") || ends_with(s, n, "prompt"))
		return false;
	for (size_t w = 0; w < ARRAY_SIZE(words); w++)
		if (has_word(s, n, words[w]))
			return true;
	return starts_with_ci(s, n, "pass") || has_part(s, n, "pwd", false) ||
	       has_part(s, n, "pw", false) || has_part(s, n, "auth", true) ||
	       has_part(s, n, "authorization", true) ||
	       has_part(s, n, "cookie", true);
}

static int add_clean(struct strbuf *out, const char *s, size_t n)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		r = strbuf_addch(out, (c < 0x20 || c == 0x7f) ? '?' : (char)c);
	}
	return r;
}

/* "user:pw@rest" → "user:***@rest" (a DSN); without '@', or ':' before it,
 * the whole value is masked unless keep_plain. */
static int add_userinfo(struct strbuf *out, const char *v, size_t n,
			bool keep_plain)
{
	const char *at = NULL, *colon;
	int r;

	for (size_t i = n; i-- > 0;)
		if (v[i] == '@') {
			at = v + i;
			break;
		}
	colon = memchr(v, ':', at ? (size_t)(at - v) : n);
	if (!colon)
		return keep_plain ? add_clean(out, v, n)
				  : strbuf_adds(out, MASK);
	r = add_clean(out, v, (size_t)(colon - v) + 1);
	if (r >= 0)
		r = strbuf_adds(out, MASK);
	if (r >= 0 && at)
		r = add_clean(out, at, (size_t)(v + n - at));
	return r;
}

/* Copies s, masking the password of every "scheme://user:pw@host". */
static int add_urls(struct strbuf *out, const char *s, size_t n)
{
	const char *p = s, *e = s + n;
	int r = 0;

	while (r >= 0 && p < e) {
		const char *sep = memmem(p, (size_t)(e - p), "://", 3);
		const char *auth, *end, *at = NULL, *colon;

		if (!sep)
			return add_clean(out, p, (size_t)(e - p));
		auth = sep + 3;
		end = auth;
		while (end < e && !strchr("/?# ", *end))
			end++;
		for (const char *q = auth; q < end; q++)
			if (*q == '@')
				at = q;
		colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
		if (!colon) {
			r = add_clean(out, p, (size_t)(end - p));
		} else {
			r = add_clean(out, p, (size_t)(colon + 1 - p));
			if (r >= 0)
				r = strbuf_adds(out, MASK);
			if (r >= 0)
				r = add_clean(out, at, (size_t)(end - at));
		}
		p = end;
	}
	return r;
}

/* "Authorization: Bearer x", "X-Api-Key: x": a header-shaped argument
 * whose name is a secret's. Keeps the scheme word of Authorization. */
static int header_arg(struct strbuf *out, const char *a, size_t n)
{
	const char *colon = memchr(a, ':', n), *v, *e = a + n, *sp;
	int r;

	if (!colon || colon == a || colon + 1 >= e || colon[1] != ' ' ||
	    memchr(a, ' ', (size_t)(colon - a)) || memchr(a, '=', n) ||
	    !secret_name(a, (size_t)(colon - a)))
		return 0;
	v = colon + 1;
	while (v < e && *v == ' ')
		v++;
	sp = memchr(v, ' ', (size_t)(e - v));
	if (!sp || !has_word(a, (size_t)(colon - a), "authorization"))
		sp = v;
	r = add_clean(out, a, (size_t)(sp - a));
	if (r >= 0)
		r = strbuf_adds(out, sp == v ? MASK : " " MASK);
	return r < 0 ? r : 1;
}

/* -X<pw> or -X of a client in tool_flags: 1 handled, 0 not. */
static int tool_arg(struct redact_state *st, struct strbuf *out, const char *a,
		    size_t n)
{
	if (n < 2 || a[0] != '-' || a[1] == '-')
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(tool_flags); i++) {
		const struct tool_flag *t = &tool_flags[i];
		int r;

		if (!streq(st->tool, t->tool) || a[1] != t->letter)
			continue;
		if (n == 2) {
			st->next = t->next ? t->how : NEXT_NONE;
			return add_clean(out, a, n) < 0 ? -ENOMEM : 1;
		}
		r = strbuf_add(out, a, 2);
		if (r >= 0)
			r = t->how == NEXT_AFTER_COLON
				    ? add_userinfo(out, a + 2, n - 2, false)
				    : strbuf_adds(out, MASK);
		return r < 0 ? r : 1;
	}
	return 0;
}

/* NAME=value or --flag=value: the value masked when the name is a
 * secret's, its credentials masked when the name is a *_DSN. 1 handled. */
static int assign_arg(struct strbuf *out, const char *a, size_t n)
{
	const char *eq = memchr(a, '=', n);
	size_t kl = eq ? (size_t)(eq - a) : 0;
	int r;

	if (!eq || !kl || memchr(a, ' ', kl))
		return 0;
	if (secret_name(a, kl)) {
		r = add_clean(out, a, kl + 1);
		return r < 0 ? r : strbuf_adds(out, MASK) < 0 ? -ENOMEM : 1;
	}
	if (ends_with(a, kl, "dsn") && !memmem(eq, n - kl, "://", 3)) {
		r = add_clean(out, a, kl + 1);
		if (r >= 0)
			r = add_userinfo(out, eq + 1, n - kl - 1, true);
		return r < 0 ? r : 1;
	}
	return 0;
}

/* Formats one argument into out (a scratch buffer: URLs are masked after). */
static int format_arg(struct redact_state *st, const char *a, size_t n,
		      struct strbuf *out)
{
	enum next_how next = st->next;
	int r;

	st->next = NEXT_NONE;
	/* The value of a secret flag, even one that starts with '-'. */
	if (next == NEXT_ALL)
		return strbuf_adds(out, MASK);
	if (next == NEXT_AFTER_COLON)
		return add_userinfo(out, a, n, false);
	r = tool_arg(st, out, a, n);
	if (r == 0)
		r = header_arg(out, a, n);
	if (r == 0)
		r = assign_arg(out, a, n);
	if (r != 0)
		return r < 0 ? r : 0;
	if (n > 1 && a[0] == '-' && !memchr(a, '=', n) &&
	    !startswith(a, "-D") && secret_name(a, n))
		st->next = NEXT_ALL;
	if (n > 1 && streq(st->tool, "curl") && n == 6 &&
	    strncmp(a, "--user", 6) == 0)
		st->next = NEXT_AFTER_COLON;
	return add_clean(out, a, n);
}

static void set_tool(struct redact_state *st, const char *a, size_t n)
{
	const char *slash = memrchr(a, '/', n);
	const char *b = slash ? slash + 1 : a;
	size_t bl = (size_t)(a + n - b);

	if (bl >= sizeof(st->tool))
		bl = 0;
	memcpy(st->tool, b, bl);
	st->tool[bl] = '\0';
}

static int add_arg(struct redact_state *st, const char *a, size_t n,
		   bool redact, struct strbuf *out)
{
	_cleanup_strbuf_ struct strbuf one = STRBUF_INIT;
	int r;

	if (!redact)
		return add_clean(out, a, n);
	if (st->first)
		set_tool(st, a, n);
	st->first = false;
	strbuf_init(&one, out->max);
	r = format_arg(st, a, n, &one);
	return r < 0 ? r : add_urls(out, one.buf, one.len);
}

int procfs_format_cmdline(const char *buf, size_t len, bool redact,
			  struct strbuf *out)
{
	struct redact_state st = {.first = true};
	const char *p = buf, *e = buf + len;
	bool first = true;
	int r = 0;

	/* A trailing NUL ends the last argument, it does not add one. */
	if (len && buf[len - 1] == '\0')
		e--;
	while (r >= 0 && p <= e && len) {
		const char *z = memchr(p, '\0', (size_t)(e - p));
		size_t n = z ? (size_t)(z - p) : (size_t)(e - p);

		if (!first)
			r = strbuf_addch(out, ' ');
		first = false;
		if (r >= 0)
			r = add_arg(&st, p, n, redact, out);
		if (!z)
			break;
		p = z + 1;
	}
	return r;
}
