/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup_mount: where the memory hierarchy we read sits in the kernel's.
 *
 * Three frames name one cgroup:
 *  - the kernel's: from the root of the whole hierarchy. The OOM report
 *    (oom_memcg=, task_memcg=) always prints this, whatever namespace the
 *    reader is in.
 *  - ours (the mount): from the directory cgroup_fs_open() opened. Inside a
 *    container that directory is often a subtree
 *    (/libpod_parent/libpod-<id> in the kernel's frame), so a cgroup made
 *    there as /demo/hog is /libpod_parent/libpod-<id>/demo/hog to the
 *    kernel. Watched subtrees, bundle paths and spools use this frame.
 *  - the namespace's: from the root of the reader's cgroup namespace.
 *    /proc/<pid>/cgroup and the root field of /proc/self/mountinfo use it;
 *    a cgroup above that root reads "/..", "/../x".
 *
 * What can be known from inside:
 *  - whether our directory IS the hierarchy's root: only the root carries
 *    release_agent (v1) and only non-root cgroups carry cgroup.type (v2).
 *    Then its kernel path is "/", in any namespace (e.g. a hostPath mount
 *    of /sys/fs/cgroup in a pod with a private cgroup namespace, whose
 *    mountinfo root reads "/../..").
 *  - whether we are in the initial cgroup namespace: its inode is fixed
 *    (PROC_CGROUP_INIT_INO, "cgroup:[4026531835]" from
 *    /proc/self/ns/cgroup). There the mountinfo root IS the kernel path.
 *  - in any other cgroup namespace, the namespace's own root has no name
 *    we can read: mountinfo and /proc/self/cgroup both start from it (a
 *    container's own cgroup reads "0::/"). A subtree mount there has no
 *    known kernel path (CGROUP_BASE_HIDDEN). Its namespace-frame path is
 *    still known, so /proc/<pid>/cgroup paths still map. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/host.h"
#include "kernel/cgroup.h"

#define CGROUP_MOUNT_PATH_MAX 512

/* The inode of the initial cgroup namespace (include/linux/proc_ns.h). */
#define CGROUP_INIT_NS_INO 0xEFFFFFFBu

enum cgroup_base_state {
	/* No cgroup mount holds our directory (a fixture tree, or no /proc to
	 * ask): taken to be the hierarchy's root, paths are not translated. */
	CGROUP_BASE_ASSUMED = 0,
	CGROUP_BASE_KNOWN,  /* the kernel path of our directory is known */
	CGROUP_BASE_HIDDEN, /* below a cgroup namespace root we cannot name */
};

struct cgroup_mount {
	enum cgroup_base_state state;
	/* The kernel's path of our directory ("/" for the root); "" when
	 * HIDDEN. */
	char base[CGROUP_MOUNT_PATH_MAX];
	/* The same in the namespace frame (mountinfo's root field plus the
	 * part of our directory below its mount point); may start with "/..".
	 * "/" when ASSUMED. */
	char ns_base[CGROUP_MOUNT_PATH_MAX];
	bool is_root; /* our directory has the hierarchy root's own files */
	int init_ns;  /* 1 initial cgroup namespace, 0 another, -1 unknown */
};

/* What cgroup_parse_mountinfo() looks for. */
struct cgroup_mount_query {
	enum cgroup_mode mode; /* v1: "cgroup" with "memory" in its super
				  options; v2: "cgroup2" */
	int mnt_id;	       /* the mount holding our directory, -1 unknown */
	const char *path;      /* our directory as our mount namespace names it
				  ("/sys/fs/cgroup/memory", unescaped) */
};

/* Pure: finds the mount of q->path in /proc/self/mountinfo text: the line
 * with q->mnt_id when known, else, among the lines of q->mode's hierarchy,
 * the one whose mount point is the longest prefix of q->path (the last
 * one listed on a tie: it is mounted over the others). Copies its root
 * field (field 4, octal escapes undone) joined with the part of q->path
 * below the mount point into ret. Returns 0; -ENOENT when no line fits;
 * -EMEDIUMTYPE when the q->mnt_id line is not q->mode's cgroup hierarchy;
 * -ENAMETOOLONG when ret is too small. Malformed lines are skipped. */
int cgroup_parse_mountinfo(const char *buf, size_t len,
			   const struct cgroup_mount_query *q, char *ret,
			   size_t size);

/* Pure: the mount from what was learned. ns_root is cgroup_parse_
 * mountinfo()'s answer (NULL: none), is_root and init_ns as in struct
 * cgroup_mount. Never fails: what cannot be known is HIDDEN. */
void cgroup_mount_resolve(const char *ns_root, bool is_root, int init_ns,
			  struct cgroup_mount *ret);

/* Learns fs's mount from h's proc (self/fd, self/fdinfo, self/mountinfo,
 * self/ns/cgroup: the reader is this process) and from fs's directory.
 * Returns 0 (ret set, ASSUMED when h has no proc or no cgroup mount holds
 * the directory) or -errno when fs is not open. Blocks on file reads. */
int cgroup_mount_read(const struct host *h, const struct cgroup_fs *fs,
		      struct cgroup_mount *ret);

/* Kernel path (an OOM report's oom_memcg/task_memcg) → our path, in buf.
 * -EXDEV when the cgroup lies outside what is mounted; -ENXIO when m is
 * HIDDEN (it cannot be told); -EINVAL for a path not starting with '/';
 * -ENAMETOOLONG when buf is too small. */
int cgroup_mount_from_kernel(const struct cgroup_mount *m, const char *path,
			     char *buf, size_t size);

/* Our path → the kernel's path, in buf. -ENXIO when m is HIDDEN; -EINVAL,
 * -ENAMETOOLONG as above. */
int cgroup_mount_to_kernel(const struct cgroup_mount *m, const char *path,
			   char *buf, size_t size);

/* Namespace-frame path (from /proc/<pid>/cgroup, read by this process) →
 * our path, in buf. -EXDEV when outside what is mounted; -ENXIO when it is
 * inside but the names between cannot be known (the mount reaches above
 * our cgroup namespace's root, "/../..", and path lies below that root);
 * -EINVAL, -ENAMETOOLONG as above. */
int cgroup_mount_from_ns(const struct cgroup_mount *m, const char *path,
			 char *buf, size_t size);
