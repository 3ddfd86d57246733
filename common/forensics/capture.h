/* SPDX-License-Identifier: Apache-2.0 */
/* capture: what the sidecar could and could not capture, and why — the
 * "capture" object of its spool's manifest.json, copied by the agent into
 * the bundle's manifest.json (docs/manifest.md, "capture"). Which
 * credentials the sidecar ran with (uid, gid, capabilities), the Pod
 * Security level it was injected for, and a bounded list of what it did
 * not get ({what, pid, why}). Pure; no I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;
struct jget_notes;

#define CAPTURE_MAX_MISSES 16 /* entries kept; the rest only counted */
#define CAPTURE_MAX_CAPS 64
#define CAPTURE_WHAT_MAX 32
#define CAPTURE_WHY_MAX 240

struct capture_miss {
	char what[CAPTURE_WHAT_MAX]; /* "smaps", "jvm attach", "cgroup", … */
	int pid;		     /* in the sidecar's namespace; 0: none */
	char why[CAPTURE_WHY_MAX];
};

struct capture_notes {
	char pod_security[16]; /* privileged|baseline|restricted, "" unknown */
	bool have_ids;
	uint32_t uid, gid; /* the sidecar's effective ids */
	size_t n_caps;	   /* permitted capabilities, "SYS_PTRACE" */
	char caps[CAPTURE_MAX_CAPS][24];
	size_t n; /* misses kept, in the order first seen */
	struct capture_miss miss[CAPTURE_MAX_MISSES];
	uint64_t more; /* misses past CAPTURE_MAX_MISSES, counted */
};

void capture_init(struct capture_notes *c);

/* The OOMLENS_POD_SECURITY value: 0 and *ret the level's name for
 * "privileged", "baseline" or "restricted" (exactly); -ENOENT for NULL or
 * ""; -EINVAL for anything else (ret untouched). */
int capture_parse_pod_security(const char *s, const char **ret);

/* Records the capabilities of a mask (bit c: capability c) by their
 * Kubernetes names ("SYS_PTRACE"), lowest first. */
void capture_set_caps(struct capture_notes *c, uint64_t mask);

/* Records that what (of pid, 0 for none) was not captured, and why. One
 * entry per (what, pid): a repeat keeps the first why and returns false.
 * Past CAPTURE_MAX_MISSES an entry is only counted in c->more. Strings
 * are cut to their fields' sizes. Returns true when it was new. */
bool capture_note(struct capture_notes *c, const char *what, int pid,
		  const char *why);

/* The "capture" object; NULL on ENOMEM. */
struct json_object *capture_to_json(const struct capture_notes *c);

/* Reads a "capture" object someone else wrote (a pod's spool, a bundle)
 * into ret: fields of a wrong type are noted in notes (may be NULL) and
 * left out, strings cut, at most CAPTURE_MAX_MISSES entries kept (the
 * rest and "not_captured_more" counted in ret->more), capability names
 * only of [A-Z0-9_]. Returns 0, or -ENOENT when o is not an object (ret
 * initialised either way). */
int capture_from_json(struct json_object *o, struct jget_notes *notes,
		      struct capture_notes *ret);
