/* SPDX-License-Identifier: Apache-2.0 */
/* The sidecar's pod mode, the pure parts (docs/sidecar-pod.md): the
 * Downward API annotations file, the oomlens.io/ settings in it, and
 * which container a process belongs to from its /proc/<pid>/cgroup. No
 * I/O: pod.c reads the files. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "forensics/recorder.h"

#define POD_ANN_MAX 32
#define POD_KEY_MAX 254
#define POD_VALUE_MAX 1024

struct pod_annotation {
	char key[POD_KEY_MAX];
	char value[POD_VALUE_MAX];
};

/* The oomlens.io/ annotations of the file (others are skipped). */
struct pod_annotations {
	struct pod_annotation a[POD_ANN_MAX];
	size_t n;
	unsigned bad_lines;  /* lines that are not key="value" */
	char first_bad[128]; /* the first of them, for the log */
};

/* Decodes a Go-quoted string (strconv.Quote: \a \b \f \n \r \t \v \\ \"
 * \' \xHH \ooo \uHHHH \UHHHHHHHH, the runes as UTF-8) from s[0..len),
 * which must start and end with '"'. NUL bytes are refused. Returns the
 * decoded length (< size, NUL-terminated) or -EBADMSG / -E2BIG. */
int pod_unquote(const char *s, size_t len, char *out, size_t size);

/* Parses the Downward API annotations file: one key="value" per line.
 * Bad lines are counted, not fatal. Returns 0. */
int pod_parse_annotations(const char *buf, size_t len,
			  struct pod_annotations *ret);

/* The value of key, or NULL. */
const char *pod_annotation(const struct pod_annotations *a, const char *key);

enum pod_trim { POD_TRIM_OFF, POD_TRIM_TEST, POD_TRIM_ON_PRESSURE };

#define POD_MAX_CONTAINERS 16
#define POD_NAME_MAX 64

struct pod_settings {
	struct rec_thresholds th;
	bool jvm;	    /* oomlens.io/jvm: auto (true) or off */
	enum pod_trim trim; /* oomlens.io/trim */
	bool jvm_histogram; /* oomlens.io/jvm-histogram: "true" */
	/* oomlens.io/jvm-histogram-max-pause-ms; 0: the default */
	unsigned jvm_histogram_max_pause_ms;
	char containers[POD_MAX_CONTAINERS][POD_NAME_MAX];
	size_t n_containers; /* 0: every container but the sidecar's */
	bool capture_off;    /* oomlens.io/capture: "false" */
	char errors[512];    /* "key: why; ..." for bad values, "" if none */
};

/* The settings of the annotations; a bad value leaves that setting at its
 * default (80,90,95 / auto / off / all / false / 1000) and is described in
 * ret->errors. Returns the number of bad values. */
unsigned pod_settings_from(const struct pod_annotations *a,
			   struct pod_settings *ret);

/* True when name is selected by s (no list: every container). */
bool pod_container_selected(const struct pod_settings *s, const char *name);

/* From /proc/<pid>/cgroup: the container ID (64 hex, or whatever the last
 * path component holds once the runtime's decoration is removed) and the
 * pod UID (with '-', or "" when the path names none) of the memory
 * hierarchy's line (v1) or the unified one (v2). Handles the cgroupfs
 * driver (/kubepods[/qos]/pod<uid>/<id>), the systemd one
 * (kubepods-<qos>-pod<uid_>.slice/{cri-containerd,crio,docker}-<id>.scope)
 * and crun's "/container" leaf. Returns 0, -ENOENT (no such line, or the
 * root "/": not in a container). */
int pod_parse_proc_cgroup(const char *buf, size_t len, char *id, size_t id_size,
			  char *pod_uid, size_t uid_size, char *path,
			  size_t path_size);

/* The env name of a container's Downward API memory limit:
 * OOMLENS_LIMIT_<NAME>, upper case, '-' and '.' as '_'. */
void pod_limit_env_name(const char *container, char *out, size_t size);
