/* SPDX-License-Identifier: Apache-2.0 */
/* What a publish target gives the durable queue (pubqueue.h): its name,
 * its steps in order, what a failed step means (retried with backoff, or
 * given up into queue/failed/), and the fields of its own that an item
 * keeps in its file. The queue knows no target: it runs an item's steps
 * one after the other, saves the item after each, and removes its file
 * once the last is done. A target is one file (target_kube.c,
 * target_http.c); docs/architecture.md, "Adding a publish target". */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The error of a step: the project's one HTTP client's (common/kube's
 * libcurl transport, whichever server it talks to): the HTTP status when
 * one came, a message, whether the server called it transient. */
#include "kube/kube.h"

/* What an item carries for its target beside the kill (struct pub_item,
 * ext): a target's own struct, at most this large. */
#define PUB_EXT_MAX 1024
/* The most steps a target may have. */
#define PUB_MAX_STEPS 8

struct pub_item {
	char id[96];	       /* the kill's id: the file's and the target's */
	char bundle_file[128]; /* under the state dir: reports/<id>.tar.gz */
	/* the kill, as every target tells it */
	char node[254], killed_at[32], comm[32];
	char cgroup[512];     /* the victim's memory cgroup, under our mount */
	int64_t killed_at_ms; /* the kill, wall ms; 0 unknown */
	int64_t pid, anon_rss, file_rss, shmem_rss, limit, usage;
	char verdict[32], summary[320];
	/* progress */
	unsigned step;	   /* index into the target's steps; n_steps: done */
	unsigned attempts; /* failures of the current step */
	uint64_t next_ms;  /* not before (monotonic ms); not persisted */
	uint64_t added_ms; /* wall ms, keeps the kill order across restarts */
	char last_error[160];
	/* the target's own (its struct, read through its fields table) */
	_Alignas(8) unsigned char ext[PUB_EXT_MAX];
};

enum pub_outcome {
	PUB_ADVANCE, /* the step is done: the next one */
	PUB_RETRY,   /* again after a backoff */
	PUB_GIVE_UP, /* into queue/failed/, logged */
};

struct pub_step {
	/* kept in the item's file while the item waits at it: never
	 * renamed, or the files of an older agent no longer load */
	const char *name;
	/* Does the step for it (its fields may change: they are saved after
	 * it). >= 0 done, 1 when it had been done before (a run that stopped
	 * before it saved the step, a lost answer); < 0 failed, err filled.
	 * Blocks on the target's calls; the publisher thread. */
	int (*run)(void *ud, struct pub_item *it, struct kube_error *err);
};

enum pub_field_kind { PUB_STR, PUB_I64, PUB_U64, PUB_BOOL, PUB_UINT };

/* A field of the target's struct (at ext + off) kept in the item's file
 * under name. */
struct pub_field {
	const char *name;
	size_t off, size; /* size: a string's buffer */
	enum pub_field_kind kind;
};

struct pub_target {
	/* "kubernetes", "http": in logs, and in each item's file (an item
	 * another target staged is not run by this one) */
	const char *name;
	void *ud; /* given to each step */
	const struct pub_step *steps;
	size_t n_steps;
	/* The step whose success delivers the kill (the publish latency is
	 * observed then, once a kill). */
	size_t delivered;
	/* A new item: sets its own fields' first values and returns the
	 * step it starts at. NULL: step 0, ext as given. Pure; any thread
	 * (the detector stages items). */
	size_t (*first)(struct pub_item *it);
	/* A failed step (r < 0, e as the step filled it): retried or given
	 * up. Pure. */
	enum pub_outcome (*classify)(const struct pub_item *it, int r,
				     const struct kube_error *e);
	/* Makes the steps' blocking calls return -ECANCELED at once, now
	 * and later (the agent stopping). Any thread. */
	void (*cancel)(void *ud);
	const struct pub_field *fields; /* the ext's, in the file */
	size_t n_fields;
};
