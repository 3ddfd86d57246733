/* SPDX-License-Identifier: Apache-2.0 */
/* bundle: one forensic bundle, a gzip'd tar with one directory <id>/.
 * Files are collected in memory with a priority (looked up by a hash index);
 * bundle_write() fits the whole into a size cap (default 900 KiB
 * compressed, one API object) by dropping the least important files first,
 * decided from per-file compressed sizes so that the archive is compressed
 * once (twice when the estimate was short), lists what it dropped in
 * manifest.truncated[], and writes the archive atomically. Reading back
 * (bundle_read/bundle_load) treats the archive as hostile: see the caps. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

#define BUNDLE_SCHEMA "oomlens.io/bundle/v1"
/* The most one bundle may be: one API object's data (etcd's request limit
 * is 1.5 MiB, the base64 of 900 KiB is 1.2 MB). */
#define BUNDLE_MAX_BYTES (900u * 1024u)
/* What the agent fills a kill's bundle to unless told otherwise
 * (--bundle-max-size): every bundle sits decoded in the API server's watch
 * cache and in etcd; docs/cluster-mode.md has the measurement. */
#define BUNDLE_DEFAULT_BYTES (256u * 1024u)
/* The least a budget may be: the essential files of a large report. */
#define BUNDLE_MIN_BYTES (64u * 1024u)

/* Caps for reading an archive, each checked before allocating: the file on
 * disk, the number of entries, one entry's bytes, all entries' bytes, and
 * the inflate ratio (total inflated ≤ ratio × archive size, but at least
 * the floor, so small bundles of text are never refused). */
#define BUNDLE_READ_MAX_ARCHIVE (16u << 20)
#define BUNDLE_READ_MAX_ENTRIES 20000u
#define BUNDLE_READ_MAX_ENTRY (32u << 20)
#define BUNDLE_READ_MAX_TOTAL (64u << 20)
#define BUNDLE_READ_MAX_RATIO 100u
#define BUNDLE_READ_RATIO_FLOOR (4u << 20)

/* Priorities: lower is kept longer. */
enum bundle_prio {
	BUNDLE_ESSENTIAL =
		0,	   /* manifest, diagnosis, kernel report: never cut */
	BUNDLE_HIGH = 1,   /* parsed JSON, cgroup files, timelines */
	BUNDLE_VICTIM = 2, /* the killed process's own files, maps included */
	BUNDLE_NORMAL = 3, /* other processes' summaries, jvm outputs */
	BUNDLE_LOW = 4,	   /* other processes' pmap tables, raw dumps */
};

struct bundle;

/* id: [A-Za-z0-9._-]+, used as the top directory. Returns 0, -EINVAL,
 * -ENOMEM. The bundle owns a manifest object (bundle_manifest()) that the
 * caller fills; "schema", "id", "files" and "truncated" are set by
 * bundle_write(). */
int bundle_new(const char *id, struct bundle **ret);
void bundle_free(struct bundle *b);
const char *bundle_id(const struct bundle *b);
struct json_object *bundle_manifest(struct bundle *b);

/* Adds (or replaces) a file at path inside the bundle ("kernel/oom.txt").
 * The data is copied. path must be relative, without "..". */
int bundle_add(struct bundle *b, const char *path, const void *data, size_t len,
	       enum bundle_prio prio);
/* Adds a json-c object serialized pretty-printed. */
int bundle_add_json(struct bundle *b, const char *path, struct json_object *obj,
		    enum bundle_prio prio);
/* Copies the regular file dirfd/src (at most max bytes; larger files are
 * cut and listed as truncated). Never follows symlinks. */
int bundle_add_file_at(struct bundle *b, const char *path, int dirfd,
		       const char *src, size_t max, enum bundle_prio prio);
/* Copies a directory tree dirfd/src under prefix (regular files only, no
 * symlinks followed, depth ≤ 8). */
int bundle_add_tree_at(struct bundle *b, const char *prefix, int dirfd,
		       const char *src, enum bundle_prio prio);
/* Raises every file whose path starts with prefix to prio when it is kept
 * less long now (never lowers one). Returns how many were raised. */
size_t bundle_raise_prio(struct bundle *b, const char *prefix,
			 enum bundle_prio prio);
/* Records that something was cut before it reached the bundle. */
int bundle_note_truncated(struct bundle *b, const char *path, const char *why);

/* What was noted so far ({path, reason} objects; the bundle's, not a new
 * reference): manifest.truncated[] before the write adds its drops. */
struct json_object *bundle_truncated(const struct bundle *b);
/* True when path has been added. */
bool bundle_has(const struct bundle *b, const char *path);
/* Returns the data of a file added earlier (not a copy), or NULL. */
const char *bundle_get(const struct bundle *b, const char *path,
		       size_t *ret_len);

/* The most json-c may take for one file's tree (jget_tree_cost()): a
 * pod's file that asks for more is kept but not parsed. A full timeline
 * (600 samples) of 20 processes is 1.2 MB of text, 23 MiB by the
 * estimate (17 MiB parsed); past ~27 processes it is not parsed whole
 * (the diagnosis and report.html read it one sample at a time:
 * jget_scan_each()). */
#define BUNDLE_JSON_MAX_TREE (32u << 20)

/* Parses the file at path as JSON: a new reference, or NULL when the file
 * is absent, not JSON, or would take over BUNDLE_JSON_MAX_TREE to parse
 * (logged once per file and listed in truncated[]). */
struct json_object *bundle_get_json(const struct bundle *b, const char *path);

/* Calls fn for every file added so far, in order; stops at fn's first
 * negative return and returns it. */
int bundle_foreach(const struct bundle *b,
		   int (*fn)(const char *path, const char *data, size_t len,
			     void *userdata),
		   void *userdata);

/* Serialises to tar.gz within max_bytes (0 = BUNDLE_MAX_BYTES) and writes
 * dirfd/path atomically (temp, fsync, rename). Returns the archive size or
 * -errno (-E2BIG when even the essential files do not fit). */
long bundle_write(struct bundle *b, int dirfd, const char *path,
		  size_t max_bytes);
/* Decides what bundle_write(max_bytes) would drop, from the per-file
 * estimates alone (no compression of the archive): the files are marked
 * dropped and listed in truncated[], so that what is written after (a
 * report.html saying what was left out) can say it. Returns the number
 * dropped now (≥ 0) or -errno. bundle_write() may still drop more when
 * the archive comes out larger than estimated. */
int bundle_fit(struct bundle *b, size_t max_bytes);
/* How many times the last bundle_write() compressed the whole archive:
 * 1, or 2 when the estimate from the per-file sizes was short. */
unsigned bundle_write_passes(const struct bundle *b);

/* Loads a bundle archive into a new struct bundle (files as written,
 * manifest.json among them; the id from the top directory). For `show`
 * and tests. Returns 0, -EBADMSG, -errno. */
int bundle_load(int dirfd, const char *path, struct bundle **ret);

/* Reads a bundle archive back: calls fn for each regular file in it, named
 * "<id>/<path>". The archive is untrusted: it must be gzip'd tar whose
 * entries are all under one top directory <id>/ (no absolute names, no
 * ".."), regular files or directories only, within the BUNDLE_READ_* caps.
 * Returns 0, fn's first negative return, or -EBADMSG (not a tar.gz,
 * damaged, cut short), -EXDEV (a name outside <id>/), -ELOOP (symlink or
 * hardlink), -EPERM (device, FIFO, socket), -EFBIG (a size cap or the
 * inflate ratio), -EMLINK (too many entries), -errno from opening.
 * For `show`, tests and the agent's merge of snapshots. */
int bundle_read(int dirfd, const char *path,
		int (*fn)(const char *name, const char *data, size_t len,
			  void *userdata),
		void *userdata);

/* bundle_read() with the inflated total capped at max_total (at most
 * BUNDLE_READ_MAX_TOTAL): past it, -EFBIG. For a pod's own upload, read
 * within the pod's budget. */
int bundle_read_max(int dirfd, const char *path, uint64_t max_total,
		    int (*fn)(const char *name, const char *data, size_t len,
			      void *userdata),
		    void *userdata);

/* A bundle in progress saved whole, for a later process to finish: each
 * file with its priority and whether a fit dropped it, the manifest object
 * and the truncated notes, as they are (no fit, nothing generated). A
 * tar.gz whose first entry, <id>/.unfinished.json, holds the rest; for the
 * agent's own state directory, not a bundle for readers. Written
 * atomically (0600). Returns its size, -EFBIG when it would be too large
 * to load back (half of BUNDLE_READ_MAX_TOTAL), or -errno. */
long bundle_save_unfinished(struct bundle *b, int dirfd, const char *path);
/* What bundle_save_unfinished() wrote, back into a new struct bundle,
 * through bundle_read()'s caps; every field's type is checked and each
 * entry must be the state's next file. 0, -EBADMSG, or bundle_read()'s
 * errors. */
int bundle_load_unfinished(int dirfd, const char *path, struct bundle **ret);

/* A sentence for an error of bundle_read()/bundle_load(). Never NULL. */
const char *bundle_strerror(int r);
