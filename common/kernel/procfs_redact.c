/* SPDX-License-Identifier: Apache-2.0 */
/* A process's command line made safe to store: arguments joined by spaces,
 * control characters replaced, and secrets replaced by "***". Secrets are
 * recognised by shape (URL credentials, Authorization-like headers, a bare
 * "Bearer x", NAME=value and --flag value with a secret-looking name, and
 * such pairs inside connection strings: URL queries, libpq, ADO.NET) and,
 * for a few well-known clients, by their password flags (mysql's -p<pw>,
 * openssl's -k, htpasswd -b's last argument). Redacting too much costs a
 * line of context; too little, a password in a bundle. */
#include <ctype.h>
#include <strings.h>

#include "kernel/procfs.h"
#include "base/util.h"

#define MASK "***"

enum next_how { NEXT_NONE, NEXT_ALL, NEXT_AFTER_COLON };

enum tool_form {
	TF_ATTACHED = 1, /* "-Xpw" */
	TF_NEXT = 2,	 /* "-X pw": where the flag has no prompt form */
};

/* Clients whose short flag takes a password, in the forms of tool_form. */
struct tool_flag {
	const char *tool;
	char letter;
	unsigned forms;	   /* enum tool_form */
	enum next_how how; /* what of the value is secret */
};

static const struct tool_flag tool_flags[] = {
	/* mysql's "-p" alone prompts: the next argument is a database. */
	{"mysql", 'p', TF_ATTACHED, NEXT_ALL},
	{"mysqldump", 'p', TF_ATTACHED, NEXT_ALL},
	{"mysqladmin", 'p', TF_ATTACHED, NEXT_ALL},
	{"mysqlimport", 'p', TF_ATTACHED, NEXT_ALL},
	{"mysqlshow", 'p', TF_ATTACHED, NEXT_ALL},
	{"mysqlcheck", 'p', TF_ATTACHED, NEXT_ALL},
	{"mysqlpump", 'p', TF_ATTACHED, NEXT_ALL},
	{"mysqlbinlog", 'p', TF_ATTACHED, NEXT_ALL},
	{"mariadb", 'p', TF_ATTACHED, NEXT_ALL},
	{"mariadb-dump", 'p', TF_ATTACHED, NEXT_ALL},
	{"mariadb-admin", 'p', TF_ATTACHED, NEXT_ALL},
	{"sshpass", 'p', TF_ATTACHED | TF_NEXT, NEXT_ALL},
	{"redis-cli", 'a', TF_ATTACHED | TF_NEXT, NEXT_ALL},
	{"mongo", 'p', TF_ATTACHED | TF_NEXT, NEXT_ALL},
	{"mongosh", 'p', TF_ATTACHED | TF_NEXT, NEXT_ALL},
	{"mongodump", 'p', TF_ATTACHED | TF_NEXT, NEXT_ALL},
	{"mongorestore", 'p', TF_ATTACHED | TF_NEXT, NEXT_ALL},
	{"mongoexport", 'p', TF_ATTACHED | TF_NEXT, NEXT_ALL},
	{"mongoimport", 'p', TF_ATTACHED | TF_NEXT, NEXT_ALL},
	{"curl", 'u', TF_ATTACHED | TF_NEXT, NEXT_AFTER_COLON},
	/* openssl's -kfile is a path: only "-k pw" */
	{"openssl", 'k', TF_NEXT, NEXT_ALL},
};

struct redact_state {
	char tool[32];	    /* basename of argv[0] */
	enum next_how next; /* how to redact the next argument */
	bool first;
	/* htpasswd: -b seen, -n seen, a -C/-r value next, positionals */
	bool hp_batch, hp_nofile, hp_value;
	unsigned hp_pos;
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

/* "dbpass", "db-pass", "rootpass": a name ending in "pass" that is not a
 * word of its own. */
static bool pass_suffix(const char *s, size_t n)
{
	static const char *const words[] = {
		"bypass",    "compass", "multipass", "overpass",
		"underpass", "surpass", "trespass",
	};

	if (!ends_with(s, n, "pass"))
		return false;
	for (size_t w = 0; w < ARRAY_SIZE(words); w++)
		if (ends_with(s, n, words[w]))
			return false;
	return true;
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
	return starts_with_ci(s, n, "pass") || pass_suffix(s, n) ||
	       has_part(s, n, "pass", false) || has_part(s, n, "pwd", false) ||
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

/* A header's name: letters, digits, '-' and '_' (not "/app/key.jar"). */
static bool header_name(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return false;
	return n > 0;
}

/* "Authorization: Bearer x", "X-Api-Key: x", "Cookie: a=b", and without
 * the space ("Authorization:Basic x") when the name is a header's: a
 * header-shaped argument whose name is a secret's. Keeps the scheme word
 * of Authorization. */
static int header_arg(struct strbuf *out, const char *a, size_t n)
{
	const char *colon = memchr(a, ':', n), *v, *e = a + n, *sp;
	size_t nl = colon ? (size_t)(colon - a) : 0;
	int r;

	if (!colon || colon == a || colon + 1 >= e ||
	    (colon[1] != ' ' && !header_name(a, nl)) || memchr(a, ' ', nl) ||
	    memchr(a, '=', nl) || !secret_name(a, nl))
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

		if (!streq(st->tool, t->tool) || a[1] != t->letter ||
		    (n > 2 && !(t->forms & TF_ATTACHED)))
			continue;
		if (n == 2) {
			st->next = (t->forms & TF_NEXT) ? t->how : NEXT_NONE;
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

/* htpasswd -b [-c…] FILE USER PASS, htpasswd -nb USER PASS: the password
 * is the third positional argument, the second with -n (hp_pos counts
 * argv[0] too); -C and -r take a value. Flags count only before the first
 * positional. 1 handled. */
static int htpasswd_arg(struct redact_state *st, struct strbuf *out,
			const char *a, size_t n)
{
	if (!streq(st->tool, "htpasswd"))
		return 0;
	if (st->hp_value) {
		st->hp_value = false;
		return 0;
	}
	if (n > 1 && a[0] == '-' && st->hp_pos == 1) {
		st->hp_batch |= memchr(a, 'b', n) != NULL;
		st->hp_nofile |= memchr(a, 'n', n) != NULL;
		st->hp_value = a[n - 1] == 'C' || a[n - 1] == 'r';
		return 0;
	}
	st->hp_pos++;
	if (!st->hp_batch || st->hp_pos != (st->hp_nofile ? 3u : 4u))
		return 0;
	return strbuf_adds(out, MASK) < 0 ? -ENOMEM : 1;
}

/* "Bearer x", "Basic x": a header's value alone, its scheme kept. */
static int scheme_arg(struct strbuf *out, const char *a, size_t n)
{
	static const char *const schemes[] = {"bearer ", "basic "};
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(schemes); i++) {
		size_t sl = strlen(schemes[i]);

		if (n <= sl || strncasecmp(a, schemes[i], sl) != 0)
			continue;
		r = add_clean(out, a, sl);
		return r < 0 ? r : strbuf_adds(out, MASK) < 0 ? -ENOMEM : 1;
	}
	return 0;
}

/* What ends a pair's value in s: a URL's query ("?user=a&password=x",
 * JDBC's ";password=x"), ADO.NET's "Password=x;" (spaces are the value's),
 * or libpq's "host=h password=x". */
static const char *pair_ends(const char *s, size_t n)
{
	if (memmem(s, n, "://", 3))
		return "&;# ";
	return memchr(s, ';', n) ? ";" : " ";
}

/* The value starting at s[v]: to the first of ends, or past its closing
 * quote when quoted (libpq's 'a b', ADO.NET's "a;b"). Returns its end. */
static size_t value_end(const char *s, size_t n, size_t v, const char *ends)
{
	const char *q;

	if (v < n && (s[v] == '\'' || s[v] == '"')) {
		q = memchr(s + v + 1, s[v], n - v - 1);
		return q ? (size_t)(q - s) + 1 : n;
	}
	while (v < n && !strchr(ends, s[v]))
		v++;
	return v;
}

/* Copies s, masking the value of every secret-named key=value pair in it
 * (a key runs back from its '=' to a space, ';', '&', '?', ',' or '='). */
static int add_pairs(struct strbuf *out, const char *s, size_t n)
{
	const char *ends = pair_ends(s, n), *eq;
	size_t i = 0, done = 0;
	int r = 0;

	while (r >= 0 && i < n && (eq = memchr(s + i, '=', n - i))) {
		size_t v = (size_t)(eq - s) + 1, k = v - 1;

		while (k > 0 && !strchr(" ;&?,=", s[k - 1]))
			k--;
		i = v;
		if (!secret_name(s + k, v - 1 - k))
			continue;
		r = add_clean(out, s + done, v - done);
		if (r >= 0)
			r = strbuf_adds(out, MASK);
		done = i = value_end(s, n, v, ends);
	}
	return r < 0 ? r : add_clean(out, s + done, n - done);
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
	r = htpasswd_arg(st, out, a, n);
	if (r == 0)
		r = tool_arg(st, out, a, n);
	if (r == 0)
		r = header_arg(out, a, n);
	if (r == 0)
		r = scheme_arg(out, a, n);
	if (r == 0)
		r = assign_arg(out, a, n);
	if (r != 0)
		return r < 0 ? r : 0;
	if (n > 1 && a[0] == '-' && !memchr(a, '=', n) &&
	    !startswith(a, "-D") && secret_name(a, n))
		st->next = NEXT_ALL;
	/* "Bearer" then the token, as two arguments */
	if (n == 6 && strncasecmp(a, "bearer", 6) == 0)
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
	_cleanup_strbuf_ struct strbuf two = STRBUF_INIT;
	int r;

	if (!redact)
		return add_clean(out, a, n);
	if (st->first)
		set_tool(st, a, n);
	st->first = false;
	strbuf_init(&one, out->max);
	strbuf_init(&two, out->max);
	r = format_arg(st, a, n, &one);
	if (r >= 0)
		r = add_pairs(&two, one.buf, one.len);
	return r < 0 ? r : add_urls(out, two.buf, two.len);
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
