/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the runtimes' unit tests (test_runtime_*.c): reading a
 * fixture file whole, the exe's symbols from a fixture's elf-symbols
 * (`nm -D --defined-only` lines, tests/fixtures/node/README.md), and a
 * /proc/<pid> made of fixture files for the table's sidecar hooks (a
 * fresh directory, never the live /proc). */
#pragma once

#include <criterion/criterion.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/host.h"
#include "base/strbuf.h"
#include "forensics/runtimes/runtime.h"

static inline void fixture_load(const char *path, struct strbuf *sb)
{
	strbuf_init(sb, 64u << 20);
	cr_assert_eq(read_file_at(AT_FDCWD, path, 64u << 20, sb), 0,
		     "cannot read %s", path);
}

/* has_symbol over nm lines "ADDR T name": a defined symbol (T, D, B, R,
 * W or V; not U). ctx is the file's text, NUL-terminated. */
static inline bool fixture_has_symbol(const void *ctx, const char *name)
{
	const char *p = ctx;
	size_t n = strlen(name);

	while ((p = strstr(p, name)) != NULL) {
		bool start = p - (const char *)ctx >= 3 && p[-1] == ' ' &&
			     strchr("TDBRWV", p[-2]) && p[-3] == ' ';
		bool end = p[n] == '\n' || p[n] == '\0';

		if (start && end)
			return true;
		p += n;
	}
	return false;
}

/* A /proc/<pid> of fixture files, with a host whose /proc (for meminfo)
 * is the same directory, and an output directory for a snapshot's
 * processes/<pid>/. */
struct fixture_proc {
	char dir[64], out[64];
	int fd, out_fd;
	struct host h;
};

static inline void fixture_proc_make(struct fixture_proc *p)
{
	strlcpy_safe(p->dir, "/tmp/oomlens-rtproc-XXXXXX", sizeof(p->dir));
	strlcpy_safe(p->out, "/tmp/oomlens-rtsnap-XXXXXX", sizeof(p->out));
	cr_assert(mkdtemp(p->dir) && mkdtemp(p->out));
	p->fd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	p->out_fd = open(p->out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert(p->fd >= 0 && p->out_fd >= 0);
	p->h = (struct host){.root_fd = -1, .proc_fd = p->fd, .cgroup_fd = -1};
}

/* name in the directory: text (len bytes). */
static inline void fixture_proc_put(struct fixture_proc *p, const char *name,
				    const char *text, size_t len)
{
	cr_assert_eq(write_file_atomic_at(p->fd, name, text, len, 0644), 0,
		     "%s", name);
}

/* name in the directory: a copy of the fixture at path. */
static inline void fixture_proc_copy(struct fixture_proc *p, const char *name,
				     const char *path)
{
	struct strbuf sb;

	fixture_load(path, &sb);
	fixture_proc_put(p, name, sb.buf, sb.len);
	strbuf_release(&sb);
}

/* "exe", a symlink (as /proc/<pid>/exe) to a copy of the ELF fixture
 * path named name. */
static inline void fixture_proc_exe(struct fixture_proc *p, const char *path,
				    const char *name)
{
	char target[160];

	fixture_proc_copy(p, name, path);
	snprintf(target, sizeof(target), "%s/%s", p->dir, name);
	cr_assert_eq(symlinkat(target, p->fd, "exe"), 0);
}

static inline struct rt_sight fixture_proc_sight(struct fixture_proc *p,
						 int pid, uint64_t limit)
{
	return (struct rt_sight){
		.h = &p->h, .pid = pid, .proc_fd = p->fd, .limit = limit};
}

/* The snapshot's file path under the output directory, parsed. */
static inline struct json_object *fixture_proc_json(struct fixture_proc *p,
						    const char *path)
{
	struct strbuf sb;
	struct json_object *o;

	strbuf_init(&sb, 1u << 20);
	cr_assert_eq(read_file_at(p->out_fd, path, 1u << 20, &sb), 0, "%s",
		     path);
	o = json_tokener_parse(sb.buf);
	cr_assert_not_null(o, "%s: %s", path, sb.buf);
	strbuf_release(&sb);
	return o;
}

static inline void fixture_proc_done(struct fixture_proc *p)
{
	close(p->fd);
	close(p->out_fd);
	cr_assert_eq(rm_rf_at(AT_FDCWD, p->dir), 0);
	cr_assert_eq(rm_rf_at(AT_FDCWD, p->out), 0);
}
