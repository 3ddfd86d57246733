/* SPDX-License-Identifier: Apache-2.0 */
/* ptcall: inspecting the target (status, maps, libc symbols), memory access
 * and the session's life cycle. The ptrace part is in ptcall_trace.c. */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "base/fileio.h"
#include "base/parse.h"
#include "base/util.h"
#include "ptcall_internal.h"

#define MAPS_MAX (64u << 20)

void ptcall_why(struct ptcall_session *s, bool overwrite, const char *fmt, ...)
{
	va_list ap;

	if (!overwrite && s->rep->reason[0])
		return;
	va_start(ap, fmt);
	vsnprintf(s->rep->reason, sizeof(s->rep->reason), fmt, ap);
	va_end(ap);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool endswith(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && streq(s + n - m, suffix);
}

/* The file name of a mapping without " (deleted)" (a library upgraded
 * under a running process), in buf. */
static const char *file_name(const char *path, char *buf, size_t size)
{
	const char *b = base_name(path);
	size_t n = strlen(b);

	if (endswith(b, " (deleted)"))
		n -= strlen(" (deleted)");
	if (n >= size)
		n = size - 1;
	memcpy(buf, b, n);
	buf[n] = '\0';
	return buf;
}

static bool is_glibc_name(const char *path)
{
	char buf[64];
	const char *b = file_name(path, buf, sizeof(buf));

	/* libc.so.6 since 2.34; libc-2.31.so before */
	return streq(b, "libc.so.6") ||
	       (startswith(b, "libc-2.") && endswith(b, ".so"));
}

static bool is_ldso_name(const char *path)
{
	char buf[64];
	const char *b = file_name(path, buf, sizeof(buf));

	return startswith(b, "ld-linux") || startswith(b, "ld-2.");
}

static bool is_musl_name(const char *path)
{
	char buf[64];
	const char *b = file_name(path, buf, sizeof(buf));

	/* Alpine: ld-musl-x86_64.so.1, libc.musl-x86_64.so.1; Debian:
	 * /usr/lib/x86_64-linux-musl/libc.so */
	return startswith(b, "ld-musl-") || startswith(b, "libc.musl-") ||
	       strstr(path, "-linux-musl/") != NULL;
}

bool ptcall_pc_in_libc(const struct ptcall_session *s, uint64_t pc)
{
	const struct ptvma *v = ptmaps_find(&s->maps, pc);

	return v && (streq(v->path, s->libc_path) || is_ldso_name(v->path));
}

bool ptcall_syscall_unsafe(long nr)
{
	static const long unsafe[] = {
		SYS_mmap,    SYS_munmap, SYS_mremap,	 SYS_mprotect,
		SYS_madvise, SYS_brk,	 SYS_clone,
#ifdef SYS_clone3
		SYS_clone3,
#endif
#ifdef SYS_fork
		SYS_fork,    SYS_vfork,
#endif
		SYS_execve,  SYS_exit,	 SYS_exit_group,
	};

	for (size_t i = 0; i < ARRAY_SIZE(unsafe); i++)
		if (nr == unsafe[i])
			return true;
	return false;
}

/* "Name:\tvalue" in /proc/<pid>/status → a pointer to value, or NULL. */
static const char *status_field(const char *buf, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = buf; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, name, n) == 0 && p[n] == ':') {
			p += n + 1;
			while (*p == '\t' || *p == ' ')
				p++;
			return p;
		}
	}
	return NULL;
}

static int check_status(struct ptcall_session *s)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *p;
	uint64_t tracer = 0, ign = 0;
	int r;

	strbuf_init(&sb, 1u << 20);
	r = read_file_at(s->pid_fd, "status", 1u << 20, &sb);
	if (r < 0)
		return r == -ENOENT ? -ESRCH : r;
	p = status_field(sb.buf, "TracerPid");
	if (!p || scan_u64(&p, &tracer) < 0)
		return -EBADMSG;
	if (tracer != 0) {
		ptcall_why(s, true, "pid %d is already traced by pid %" PRIu64,
			   s->pid, tracer);
		return -EBUSY;
	}
	p = status_field(sb.buf, "State");
	if (p && (*p == 'T' || *p == 't')) {
		ptcall_why(s, true, "pid %d is stopped (state %c)", s->pid, *p);
		return -EBUSY;
	}
	p = status_field(sb.buf, "SigIgn");
	if (p && scan_hex_u64(&p, &ign) == 0 &&
	    (ign & (1ull << (SIGSEGV - 1)))) {
		/* our return fault would reset an ignored SIGSEGV to default */
		ptcall_why(s, true, "pid %d ignores SIGSEGV", s->pid);
		return -ENOTSUP;
	}
	return 0;
}

/* Opens the file behind a mapping: through /proc/<pid>/root (checking the
 * inode), else /proc/<pid>/map_files (deleted or replaced files). */
/* Opens path inside the target's root: its symlinks resolve there, not in
 * ours; a FIFO or device planted there neither blocks nor is read. */
static int open_in_root(struct ptcall_session *s, const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	_cleanup_close_ int root =
		openat(s->pid_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	int fd;

	if (root < 0)
		return -errno;
	fd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* Opens the file behind a mapping: by its path inside the target's root
 * when the inode matches, else through /proc/<pid>/map_files (deleted or
 * replaced files, or no openat2). */
static int open_mapped(struct ptcall_session *s, const struct ptvma *v)
{
	char p[64];
	struct stat st;
	int fd = v->path[0] == '/' ? open_in_root(s, v->path) : -EINVAL;

	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_ino == v->inode)
		return fd;
	if (fd >= 0)
		close(fd);
	snprintf(p, sizeof(p), "map_files/%" PRIx64 "-%" PRIx64, v->start,
		 v->end);
	fd = openat(s->pid_fd, p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

static const struct ptvma *find_libc(struct ptcall_session *s)
{
	const struct ptvma *found = NULL;

	for (size_t i = 0; i < s->maps.n; i++) {
		const struct ptvma *v = &s->maps.v[i];

		if (is_musl_name(v->path)) {
			ptcall_why(s, true, "pid %d uses musl (%s), not glibc",
				   s->pid, v->path);
			return NULL;
		}
		if (!found && is_glibc_name(v->path) && v->offset == 0)
			found = v;
	}
	if (!found)
		ptcall_why(s, true,
			   "pid %d has no glibc libc.so mapped: statically "
			   "linked or another libc",
			   s->pid);
	return found;
}

static int load_libc(struct ptcall_session *s)
{
	const struct ptvma *v = find_libc(s);
	_cleanup_close_ int fd = -1;
	Elf64_Sym sym;
	int r;

	if (!v)
		return -ENOEXEC;
	s->libc_path = v->path;
	fd = open_mapped(s, v);
	if (fd < 0) {
		ptcall_why(s, true, "cannot open %s of pid %d: %s", v->path,
			   s->pid, strerror(-fd));
		return fd;
	}
	r = ptelf_load(fd, &s->libc);
	if (r < 0) {
		ptcall_why(s, true, "%s of pid %d: %s", v->path, s->pid,
			   r == -ENOTSUP ? "not this architecture"
					 : "unreadable ELF symbols");
		return r == -ENOENT ? -ENOEXEC : r;
	}
	r = ptelf_lookup(&s->libc, "gnu_get_libc_version", &sym);
	if (r < 0) {
		ptcall_why(s, true, "%s of pid %d %s", v->path, s->pid,
			   r == -ENOENT ? "is not glibc"
					: "has unreadable ELF symbols");
		return r == -ENOENT ? -ENOEXEC : r;
	}
	s->bias = v->start - (s->libc.load_vaddr - s->libc.load_offset);
	if (ptelf_malloc_zone(&s->libc, &s->zone_lo, &s->zone_hi) == 0) {
		s->zone_lo += s->bias;
		s->zone_hi += s->bias;
	}
	return 0;
}

static int open_pid(struct ptcall_session *s, const struct ptcall_opts *o)
{
	char name[16];

	if (o && o->proc_fd >= 0) {
		s->proc_fd = o->proc_fd;
	} else {
		s->proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (s->proc_fd < 0)
			return -errno;
		s->own_proc_fd = true;
	}
	snprintf(name, sizeof(name), "%d", s->pid);
	s->pid_fd =
		openat(s->proc_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->pid_fd < 0) {
		ptcall_why(s, true, "no process %d", s->pid);
		return errno == ENOENT ? -ESRCH : -errno;
	}
	return 0;
}

static int inspect(struct ptcall_session *s, const struct ptcall_opts *o)
{
	int r;

	if (PTARCH_EM == EM_NONE) {
		ptcall_why(s, true,
			   "ptcall is not implemented on this "
			   "architecture");
		return -ENOTSUP;
	}
	r = open_pid(s, o);
	if (r < 0)
		return r;
	r = check_status(s);
	if (r < 0)
		return r;
	r = read_file_at(s->pid_fd, "maps", MAPS_MAX, &s->maps_sb);
	if (r == -EACCES || r == -EPERM) {
		/* maps needs the same rights as ptrace */
		ptcall_why(s, true,
			   "ptrace of pid %d denied: cannot read its maps "
			   "(needs CAP_SYS_PTRACE or the same uid)",
			   s->pid);
		return -EPERM;
	}
	if (r < 0) {
		ptcall_why(s, false, "cannot read maps of pid %d: %s", s->pid,
			   strerror(-r));
		return r == -ENOENT ? -ESRCH : r;
	}
	r = ptmaps_parse(s->maps_sb.buf, s->maps_sb.len, &s->maps);
	if (r < 0)
		return r;
	return load_libc(s);
}

void ptcall_session_free(struct ptcall_session *s)
{
	ptarch_fp_release(&s->fp);
	s->rep->total_us = now_monotonic_us() - s->start_us;
	ptelf_release(&s->libc);
	ptmaps_release(&s->maps);
	strbuf_release(&s->maps_sb);
	if (s->pid_fd >= 0)
		close(s->pid_fd);
	if (s->own_proc_fd)
		close(s->proc_fd);
	free(s);
}

int ptcall_open(int pid, const struct ptcall_opts *o,
		struct ptcall_session **ret, struct ptcall_report *rep)
{
	struct ptcall_session *s;
	int r;

	if (pid <= 0)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->pid = pid;
	s->proc_fd = s->pid_fd = -1;
	s->rep = rep ? rep : &s->own_rep;
	memset(s->rep, 0, sizeof(*s->rep));
	s->start_us = now_monotonic_us();
	s->timeout_us =
		1000ull * (o && o->timeout_ms ? o->timeout_ms
					      : PTCALL_DEFAULT_TIMEOUT_MS);
	s->deadline_us = s->start_us + s->timeout_us;
	strbuf_init(&s->maps_sb, MAPS_MAX);
	r = inspect(s, o);
	if (r < 0) {
		ptcall_session_free(s); /* never attached yet */
		return r;
	}
	*ret = s;
	return 0;
}

int ptcall_resolve(struct ptcall_session *s, const char *name,
		   uint64_t *ret_addr)
{
	Elf64_Sym sym;
	int r = ptelf_lookup(&s->libc, name, &sym);

	if (r < 0 && r != -ENOENT) {
		ptcall_why(s, true, "cannot look %s up in pid %d's glibc: %s",
			   name, s->pid, strerror(-r));
		return r;
	}
	if (r < 0 || ELF64_ST_TYPE(sym.st_info) == STT_OBJECT) {
		if (streq(name, "mallinfo2"))
			ptcall_why(s, true,
				   "glibc of pid %d has no mallinfo2 "
				   "(glibc < 2.33)",
				   s->pid);
		else
			ptcall_why(s, true, "glibc of pid %d has no %s", s->pid,
				   name);
		return -ENOSYS;
	}
	if (ELF64_ST_TYPE(sym.st_info) == STT_GNU_IFUNC) {
		ptcall_why(s, true, "%s is an IFUNC in pid %d's glibc", name,
			   s->pid);
		return -ENOTSUP;
	}
	*ret_addr = sym.st_value + s->bias;
	return 0;
}

static int object_defines_malloc(struct ptcall_session *s,
				 const struct ptvma *v)
{
	_cleanup_close_ int fd = open_mapped(s, v);
	struct ptelf e;
	Elf64_Sym sym;
	bool defines;

	if (fd < 0 || ptelf_load(fd, &e) < 0)
		return 0; /* not an ELF we can read: cannot interpose */
	defines = ptelf_lookup(&e, "malloc", &sym) == 0;
	ptelf_release(&e);
	return defines;
}

int ptcall_check_glibc_malloc(struct ptcall_session *s)
{
	const char *last = NULL;

	for (size_t i = 0; i < s->maps.n; i++) {
		const struct ptvma *v = &s->maps.v[i];

		/* one check per ELF object: its executable mapping */
		if (v->perms[2] != 'x' || v->path[0] != '/' ||
		    (last && streq(last, v->path)))
			continue;
		last = v->path;
		if (streq(v->path, s->libc_path) || is_ldso_name(v->path))
			continue;
		if (object_defines_malloc(s, v)) {
			ptcall_why(s, true,
				   "malloc of pid %d is not glibc's: %s "
				   "defines it (jemalloc, tcmalloc or a "
				   "sanitizer?)",
				   s->pid, v->path);
			return -ENOTSUP;
		}
	}
	return 0;
}

static int peek_mem(struct ptcall_session *s, uint64_t addr, void *buf,
		    size_t len)
{
	for (size_t i = 0; i < len; i += sizeof(long)) {
		long w;
		size_t n = len - i < sizeof(long) ? len - i : sizeof(long);

		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, s->tid, (void *)(addr + i), NULL);
		if (errno)
			return -errno;
		memcpy((char *)buf + i, &w, n);
	}
	return 0;
}

int ptcall_read_mem(struct ptcall_session *s, uint64_t addr, void *buf,
		    size_t len)
{
	struct iovec l = {buf, len}, rm = {(void *)(uintptr_t)addr, len};
	ssize_t n = process_vm_readv(s->pid, &l, 1, &rm, 1, 0);

	if (n >= 0 && (size_t)n == len)
		return 0;
	if (n >= 0 || errno == EFAULT) {
		ptcall_why(s, false,
			   "cannot read %zu bytes at %#" PRIx64 " in pid %d",
			   len, addr, s->pid);
		return -EFAULT;
	}
	if (!s->attached)
		return -errno;
	return peek_mem(s, addr, buf, len);
}

int ptcall_write_mem(struct ptcall_session *s, uint64_t addr, const void *buf,
		     size_t len)
{
	struct iovec l = {(void *)buf, len};
	struct iovec rm = {(void *)(uintptr_t)addr, len};
	ssize_t n = process_vm_writev(s->pid, &l, 1, &rm, 1, 0);

	if (n >= 0 && (size_t)n == len)
		return 0;
	if (!s->attached || len % sizeof(long))
		return n >= 0 ? -EFAULT : -errno;
	for (size_t i = 0; i < len; i += sizeof(long)) {
		long w;

		memcpy(&w, (const char *)buf + i, sizeof(w));
		if (ptrace(PTRACE_POKEDATA, s->tid, (void *)(addr + i),
			   (void *)w) < 0)
			return -errno;
	}
	return 0;
}

int ptcall_scratch(struct ptcall_session *s, size_t size, uint64_t *ret_addr)
{
	size_t need = (size + 15) & ~(size_t)15;

	if (!s->saved_state)
		return -EINVAL;
	if (need > PTCALL_SCRATCH_MAX - s->scratch_used)
		return -ENOSPC;
	*ret_addr = s->scratch_base + s->scratch_used;
	s->scratch_used += need;
	return 0;
}
