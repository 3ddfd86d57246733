/* SPDX-License-Identifier: Apache-2.0 */
/* manifest: the one description of a bundle's manifest.json
 * (docs/manifest.md). The agent checks what it wrote against it before
 * the bundle is packed; report.html, `oomlens-agent show` and
 * `kubectl oomlens show` read who was killed through it, so the writer
 * and every reader agree on each field's type. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct json_object;
struct jget_notes;

/* A field's allowed JSON types, as bits of MANIFEST_T_*. */
#define MANIFEST_T_NULL 0x01u
#define MANIFEST_T_STRING 0x02u
#define MANIFEST_T_INT 0x04u
#define MANIFEST_T_BOOL 0x08u
#define MANIFEST_T_OBJECT 0x10u
#define MANIFEST_T_ARRAY 0x20u

struct manifest_field {
	const char *name;
	unsigned types;
	bool required; /* in every bundle the agent writes */
};

/* The top-level fields, and those of "pod" (cluster mode). */
extern const struct manifest_field manifest_fields[];
extern const size_t manifest_n_fields;
extern const struct manifest_field manifest_pod_fields[];
extern const size_t manifest_n_pod_fields;
/* "capture" (forensics/capture.h), and each of its "not_captured". */
extern const struct manifest_field manifest_capture_fields[];
extern const size_t manifest_n_capture_fields;
extern const struct manifest_field manifest_miss_fields[];
extern const size_t manifest_n_miss_fields;

/* Checks man against the description: each known field of another type,
 * and each required one absent, is noted in notes (under "manifest.json").
 * Unknown fields are allowed (a newer writer). Returns the number of
 * findings; 0 for a manifest as documented. */
size_t manifest_check(struct json_object *man, struct jget_notes *notes);

/* Who was killed, as a Kubernetes user names it. Strings are owned by the
 * manifest and "" when absent. */
struct manifest_who {
	const char *namespace, *pod, *container; /* "" in standalone mode */
	const char *node, *cgroup;
	bool in_pod; /* "pod" is an object: the bundle comes from a cluster */
};

void manifest_who(struct json_object *man, struct jget_notes *notes,
		  struct manifest_who *w);

/* "namespace/pod/container" (or "namespace/pod") for a pod's kill, else
 * the cgroup path; into buf (always terminated). */
const char *manifest_who_label(const struct manifest_who *w, char *buf,
			       size_t size);
