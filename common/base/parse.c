/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <limits.h>

#include "base/parse.h"
#include "base/util.h"

static int digit_value(char c, int base)
{
	int v;

	if (c >= '0' && c <= '9')
		v = c - '0';
	else if (c >= 'a' && c <= 'z')
		v = c - 'a' + 10;
	else if (c >= 'A' && c <= 'Z')
		v = c - 'A' + 10;
	else
		return -1;
	return v < base ? v : -1;
}

/* Parses digits in [s, s+len); base 0 detects 0x prefix. The single place
 * where numbers are converted. */
static int parse_digits(const char *s, size_t len, int base, uint64_t *ret)
{
	uint64_t v = 0;
	size_t i = 0;

	if (base == 0) {
		base = 10;
		if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
			base = 16;
			i = 2;
		}
	}
	if (i >= len)
		return -EINVAL;
	for (; i < len; i++) {
		int d = digit_value(s[i], base);

		if (d < 0)
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return -ERANGE;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	*ret = v;
	return 0;
}

int parse_u64_n(const char *s, size_t len, uint64_t *ret)
{
	return parse_digits(s, len, 10, ret);
}

int parse_u64_base(const char *s, int base, uint64_t *ret)
{
	return parse_digits(s, strlen(s), base, ret);
}

int parse_u64(const char *s, uint64_t *ret)
{
	return parse_digits(s, strlen(s), 10, ret);
}

int parse_i64_n(const char *s, size_t len, int64_t *ret)
{
	bool neg = len > 0 && s[0] == '-';
	uint64_t v;
	int r;

	r = parse_digits(s + neg, len - neg, 10, &v);
	if (r < 0)
		return r;
	if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
		return -ERANGE;
	*ret = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

int parse_i64(const char *s, int64_t *ret)
{
	return parse_i64_n(s, strlen(s), ret);
}

int parse_int(const char *s, int *ret)
{
	int64_t v;
	int r = parse_i64(s, &v);

	if (r < 0)
		return r;
	if (v < INT_MIN || v > INT_MAX)
		return -ERANGE;
	*ret = (int)v;
	return 0;
}

int parse_uint(const char *s, unsigned *ret)
{
	uint64_t v;
	int r = parse_u64(s, &v);

	if (r < 0)
		return r;
	if (v > UINT_MAX)
		return -ERANGE;
	*ret = (unsigned)v;
	return 0;
}

static int scan_base(const char **p, int base, bool allow_neg, int64_t *ret_s,
		     uint64_t *ret_u)
{
	const char *s = *p, *e;
	bool neg = false;
	uint64_t v;
	int r;

	if (allow_neg && *s == '-') {
		neg = true;
		s++;
	}
	for (e = s; digit_value(*e, base) >= 0; e++)
		;
	r = parse_digits(s, (size_t)(e - s), base, &v);
	if (r < 0)
		return r;
	if (ret_s) {
		if (v > (uint64_t)INT64_MAX + neg)
			return -ERANGE;
		*ret_s = neg ? (int64_t)(0 - v) : (int64_t)v;
	} else {
		*ret_u = v;
	}
	*p = e;
	return 0;
}

int scan_u64(const char **p, uint64_t *ret)
{
	return scan_base(p, 10, false, NULL, ret);
}

int scan_i64(const char **p, int64_t *ret)
{
	return scan_base(p, 10, true, ret, NULL);
}

int scan_hex_u64(const char **p, uint64_t *ret)
{
	return scan_base(p, 16, false, NULL, ret);
}

int scan_size(const char **p, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v, mul = 1;
	int r = scan_u64(&s, &v);

	if (r < 0)
		return r;
	switch (toupper((unsigned char)*s)) {
	case 'K':
		mul = 1ull << 10;
		break;
	case 'M':
		mul = 1ull << 20;
		break;
	case 'G':
		mul = 1ull << 30;
		break;
	case 'T':
		mul = 1ull << 40;
		break;
	}
	if (mul > 1) {
		s++;
		if (*s == 'i')
			s++;
	}
	if (*s == 'B')
		s++;
	if (v > UINT64_MAX / mul)
		return -ERANGE;
	*ret = v * mul;
	*p = s;
	return 0;
}

int parse_size(const char *s, uint64_t *ret)
{
	const char *p = s;
	uint64_t v;
	int r = scan_size(&p, &v);

	if (r < 0)
		return r;
	if (*p)
		return -EINVAL;
	*ret = v;
	return 0;
}

int parse_cgroup_value(const char *s, size_t len, uint64_t *ret,
		       bool *ret_unlimited)
{
	uint64_t v;
	int r;

	while (len && (s[len - 1] == '\n' || s[len - 1] == ' '))
		len--;
	if (len == 3 && memcmp(s, "max", 3) == 0) {
		*ret = UINT64_MAX;
		if (ret_unlimited)
			*ret_unlimited = true;
		return 0;
	}
	r = parse_u64_n(s, len, &v);
	if (r < 0)
		return r == -EINVAL ? -EBADMSG : r;
	*ret = v;
	if (ret_unlimited)
		*ret_unlimited = false;
	return 0;
}

int parse_host_port(const char *addr, char *host, size_t size, int *ret_port)
{
	const char *colon = strrchr(addr, ':');
	const char *h = addr;
	size_t hl;
	uint64_t port;

	if (!colon || parse_u64(colon + 1, &port) < 0 || port > 65535)
		return -EINVAL;
	hl = (size_t)(colon - addr);
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (hl >= size)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	*ret_port = (int)port;
	return 0;
}

int parse_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool dns_label_ok(const char *s, size_t n)
{
	if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}
