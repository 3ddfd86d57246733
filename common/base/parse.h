/* SPDX-License-Identifier: Apache-2.0 */
/* The one checked number parser. Every number read from the kernel, a file
 * or the command line goes through here. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Parses a whole string as an unsigned decimal (base 10, or base 0 for
 * parse_u64_base). No sign, no spaces, no trailing junk. Returns 0,
 * -EINVAL (not a number), -ERANGE (overflow). ret untouched on failure. */
int parse_u64(const char *s, uint64_t *ret);
int parse_u64_base(const char *s, int base, uint64_t *ret);
int parse_i64(const char *s, int64_t *ret);
int parse_int(const char *s, int *ret);
int parse_uint(const char *s, unsigned *ret);

/* Like the above but for the first len bytes of s (need not be
 * NUL-terminated). */
int parse_u64_n(const char *s, size_t len, uint64_t *ret);
int parse_i64_n(const char *s, size_t len, int64_t *ret);

/* Reads a number at *p (decimal, optional leading '-' for the signed one),
 * advances *p past it. For scanning kernel text. */
int scan_u64(const char **p, uint64_t *ret);
int scan_i64(const char **p, int64_t *ret);
int scan_hex_u64(const char **p, uint64_t *ret);

/* Reads a size at *p: a number with an optional K/M/G/T unit (any case),
 * then an optional "i" and "B" ("64k", "512MiB", "262144KB"); advances *p
 * past it. Returns 0, -EINVAL, -ERANGE. */
int scan_size(const char **p, uint64_t *ret);

/* "1024", "64k", "512M", "2G", "1Gi" → bytes: the whole string is one
 * size. Returns -EINVAL/-ERANGE. */
int parse_size(const char *s, uint64_t *ret);

/* A cgroup value: "max" → UINT64_MAX with *ret_unlimited = true. */
int parse_cgroup_value(const char *s, size_t len, uint64_t *ret,
		       bool *ret_unlimited);

/* A listen address: "HOST:PORT", ":PORT" (host "": every address) or
 * "[V6]:PORT" (brackets removed). host gets the host part (size bytes),
 * *ret_port the port (0-65535). -EINVAL for no port, a bad port, or a host
 * too long. Pure. */
int parse_host_port(const char *addr, char *host, size_t size, int *ret_port);

/* The value of one hex digit c, or -1. Pure. */
int parse_hex_digit(char c);

/* Whether the n bytes of s are an RFC 1123 (DNS) label: 1-63 of [a-z0-9-],
 * not starting or ending with '-' (what a container's name may be). */
bool dns_label_ok(const char *s, size_t n);
