/* SPDX-License-Identifier: Apache-2.0 */
/* procfs: one process's status, cmdline (redacted), cgroup and
 * smaps_rollup, read through a /proc/<pid> directory fd
 * (host_open_pid()). Pure parsers on buffers beside readers on dirfds.
 * A process that exits mid-read is normal: readers return -ESRCH when
 * nothing could be read, or what was read with a truncated flag. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/smaps.h"
#include "base/strbuf.h"

#define PROC_NAME_MAX 64 /* comm is 16; escapes can make it longer */

struct proc_status {
	char name[PROC_NAME_MAX]; /* as printed: the kernel escapes \n, \\ */
	char state;		  /* 'R', 'S', 'Z'… */
	int pid, tgid, ppid;
	int nspid; /* last NSpid field: the pid in its own namespace */
	int threads;
	uint32_t uid, euid, gid, egid;
	uint64_t vm_peak_kb, vm_size_kb, vm_hwm_kb, vm_rss_kb;
	uint64_t rss_anon_kb, rss_file_kb, rss_shmem_kb;
	uint64_t vm_data_kb, vm_stk_kb, vm_swap_kb;
	uint64_t sig_cgt, sig_ign; /* signal masks (hex in the file) */
	bool has_mm;		   /* VmRSS present (not a kernel thread or
				      zombie) */
};

/* Pure: parses /proc/<pid>/status text. Unknown lines are ignored, a
 * malformed known line is skipped. Returns 0, or -EBADMSG when there is no
 * Name: or Pid: line. */
int procfs_parse_status(const char *buf, size_t len, struct proc_status *ret);
/* Reads pid_fd/status. -ESRCH when the process is gone. */
int procfs_read_status(int pid_fd, struct proc_status *ret);

/* Pure: turns a NUL-separated cmdline into one line, arguments joined by
 * spaces, control characters replaced by '?'. With redact, secrets become
 * "***" (procfs_redact.c; the table in tests/unit/test_procfs.c):
 * the password of any "scheme://user:pw@host"; the value of NAME=value,
 * --flag=value and of the argument after a --flag whose name looks secret
 * (password, passwd, passphrase, secret, token, credential, key, pass*,
 * *pass, pwd, pw, *auth, cookie; any case), even when that argument starts with
 * '-'; "user:pw@…" of *_DSN=; the value of "Authorization: Bearer x"-like
 * arguments (also "Authorization:Basic x", "Cookie: a=b") and of a bare
 * "Bearer x"; secret-named pairs inside an argument (URL queries, JDBC,
 * libpq "password=x", ADO.NET "Password=x;"); the password flags of known
 * clients by argv[0]'s basename (mysql-family -p<pw>, sshpass -p,
 * redis-cli -a, mongo* -p, curl -u user:pw, openssl -k, htpasswd -b's
 * password). Names ending in file/path/stdin/prompt, or starting "no-",
 * keep their value (a path, not the secret). Appends to out. Returns 0,
 * -ENOMEM, -E2BIG. */
int procfs_format_cmdline(const char *buf, size_t len, bool redact,
			  struct strbuf *out);
/* Reads pid_fd/cmdline (≤ 64 KiB) and formats it. An empty cmdline (a
 * kernel thread or zombie) gives "". -ESRCH when gone. */
int procfs_read_cmdline(int pid_fd, bool redact, struct strbuf *out);

/* Pure: the memory cgroup path from /proc/<pid>/cgroup text: the v1 line
 * naming "memory" when there is one, else the v2 "0::" line. Returns 0,
 * -ENOENT (no such line), -ENAMETOOLONG. */
int procfs_parse_cgroup(const char *buf, size_t len, char *ret, size_t size);
int procfs_read_cgroup(int pid_fd, char *ret, size_t size);

/* Reads pid_fd/smaps_rollup into ret (one row, "[rollup]"), which must be
 * initialised. -ESRCH when gone, -ENOENT on kernels before 4.14. */
int procfs_read_rollup(int pid_fd, struct smaps *ret);
