/* SPDX-License-Identifier: Apache-2.0 */
/* privs: what a program keeps after start-up (docs/privileges.md). Each
 * mode lists the capabilities it needs; everything else leaves the
 * permitted, effective, inheritable, ambient and bounding sets, the
 * no_new_privs bit is set, and the steady state may add a seccomp
 * allow-list (libseccomp): a syscall not on it fails with EPERM (and the
 * kernel logs it: audit type=1326), it does not kill the process. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A capability set as a bit mask: PRIVS_CAP(CAP_SYS_PTRACE) | ... */
#define PRIVS_CAP(c) (UINT64_C(1) << (c))

struct privs_spec {
	uint64_t caps; /* kept in permitted and effective */
	bool seccomp;  /* install the steady-state allow-list */
	/* syscalls the mode needs beyond privs_base_syscalls, by name
	 * (NULL-terminated, may be NULL); names this architecture lacks are
	 * skipped */
	const char *const *syscalls;
	/* socket in syscalls makes AF_UNIX sockets only: no network (the
	 * sidecar's run, whose uploads are another program's) */
	bool unix_sockets_only;
};

enum privs_seccomp_state {
	PRIVS_SECCOMP_ON,
	PRIVS_SECCOMP_OFF,	 /* the spec or --no-seccomp said so */
	PRIVS_SECCOMP_SANITIZER, /* skipped: ASan/valgrind need more */
};

/* True when built with AddressSanitizer or running under valgrind: their
 * runtimes make syscalls (mmap of shadow memory, reading /proc/self/maps,
 * ptrace for LeakSanitizer) no allow-list would name. */
bool privs_under_sanitizer(void);

/* Drops every capability not in spec->caps (bounding set first, while
 * CAP_SETPCAP is still held; capabilities the process never had are
 * ignored), sets PR_SET_NO_NEW_PRIVS, then installs the seccomp filter
 * when spec->seccomp and !no_seccomp and not under a sanitizer (TSYNC:
 * every thread). Call once, after start-up. *ret_seccomp (may be NULL)
 * says what happened to seccomp. Returns 0 or -errno; on failure some
 * steps may already be done (callers exit). */
int privs_enter(const struct privs_spec *spec, bool no_seccomp,
		enum privs_seccomp_state *ret_seccomp);

/* The syscalls every steady state may make (the base allow-list), for
 * docs and tests: a NULL-terminated list of names. */
extern const char *const privs_base_syscalls[];
