/* SPDX-License-Identifier: Apache-2.0 */
/* Logging for programs only: library code returns errors, it never logs.
 * One line per event on stderr, logfmt: ts=… level=… msg="…" key=value. */
#pragma once

#include "base/util.h"

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_set_level(enum log_level level);
void log_set_json(bool json);
void log_set_program(const char *name);
/* Parses "error|warn|info|debug". */
int log_parse_level(const char *s, enum log_level *ret);
/* The name log_parse_level takes for level ("info"). */
const char *log_level_name(enum log_level level);

void log_emit(enum log_level level, const char *fmt, ...) _printf_(2, 3);

#define log_error(...) log_emit(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_emit(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_emit(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_emit(LOG_DEBUG, __VA_ARGS__)
