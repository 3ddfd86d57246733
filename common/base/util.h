/* SPDX-License-Identifier: Apache-2.0 */
/* Small helpers shared by every module: cleanup attributes, TAKE_PTR,
 * array sizes. Header only. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* A macro's value as a string literal: STR_OF(4096) is "4096". */
#define STR_OF_(x) #x
#define STR_OF(x) STR_OF_(x)

#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _warn_unused_ __attribute__((warn_unused_result))

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Returns the pointer and leaves NULL behind: ownership moves to the caller. */
#define TAKE_PTR(p)                      \
	({                               \
		__typeof__(p) _p_ = (p); \
		(p) = NULL;              \
		_p_;                     \
	})

#define TAKE_FD(fd)              \
	({                       \
		int _fd_ = (fd); \
		(fd) = -1;       \
		_fd_;            \
	})

static inline bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static inline bool startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Copies at most size-1 bytes and always terminates. Returns the length of
 * src so callers can detect truncation (>= size). */
size_t strlcpy_safe(char *dst, const char *src, size_t size);

/* Writes v in decimal to buf (at least 21 bytes: 20 digits and a NUL) as
 * printf's "%" PRIu64 would, without printf's cost. Returns the length. */
size_t fmt_u64(char *buf, uint64_t v);

/* Monotonic and realtime clocks in microseconds. */
uint64_t now_monotonic_us(void);
uint64_t now_realtime_us(void);
