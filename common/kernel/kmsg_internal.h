/* SPDX-License-Identifier: Apache-2.0 */
/* Private to common/kernel/kmsg*.c: the single-line parsers of an OOM report
 * (kmsg_lines.c), shared by the assembler and the unit tests. Each takes
 * one decoded, NUL-terminated record text. Returns 0 or -EBADMSG. */
#pragma once

#include "kernel/kmsg.h"

#define KMSG_MAX_COLS 24

/* s + strlen(prefix) when s starts with prefix, else NULL. */
const char *kmsg_after(const char *s, const char *prefix);

int kmsg_parse_trigger(const char *line, struct oom_report *r);
int kmsg_parse_cpu_line(const char *line, struct oom_report *r);
int kmsg_parse_usage(const char *line, struct oom_report *r);
/* victim_comm: the comm of the "Killed process" line when known (NULL
 * otherwise); *ret_pid: the pid the line names. */
int kmsg_parse_oom_kill(const char *line, const char *victim_comm,
			struct oom_report *r, int *ret_pid);
int kmsg_parse_task_in(const char *line, struct oom_report *r);
int kmsg_parse_group(const char *line, struct oom_report *r);
int kmsg_parse_killed(const char *line, struct kmsg_victim *ret);
int kmsg_parse_task_header(const char *line, unsigned *cols, size_t *n_cols,
			   unsigned *ret_mask);
int kmsg_parse_task_row(const char *line, const unsigned *cols, size_t n_cols,
			struct kmsg_task *ret);
/* "name value" → a strdup'd name (caller frees). -ENOMEM too. */
int kmsg_parse_stat_line(const char *s, size_t len, char **ret_name,
			 uint64_t *ret_value);
