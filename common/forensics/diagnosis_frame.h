/* SPDX-License-Identifier: Apache-2.0 */
/* diagnosis_frame: what diagnosis.c and every runtime
 * (runtimes/<name>.c) share to add ledger parts and verdicts: saturating
 * figures, "740 MiB", one part of the ledger, one verdict slot per kind
 * and its evidence and recommendation lines. A module of its own below
 * both, so that diagnosis.c calls the runtimes and the runtimes call
 * this, never each other (scripts/layers.py). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "forensics/diagnosis.h"

#define KiB 1024ull
#define MiB (1024ull * 1024ull)

/* Saturating arithmetic: every figure here comes from files a pod could
 * write, and one that wraps prints as 16 EiB. */
static inline uint64_t sub_sat(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static inline uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static inline uint64_t mul_sat(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

#define KB(x) mul_sat((x), KiB)

static inline uint64_t round_up(uint64_t v, uint64_t to)
{
	return add_sat(v, to - 1) / to * to;
}

static inline double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* "1.1 GiB", "740 MiB", "12 KiB" into buf. */
const char *diag_human(char *buf, size_t n, uint64_t bytes);

#define H(x) diag_human((char[24]){0}, 24, (x))

/* The ledger being built: the anonymous memory not yet attributed. */
struct diag_ledger {
	struct diagnosis *d;
	uint64_t anon_left; /* anonymous bytes not yet attributed */
	int pid;	    /* the process whose parts are being added */
};

/* Adds one part (nothing when bytes is 0 or the table is full); its
 * source ends with the age of its data (d->cur_age_s). */
void diag_part(struct diagnosis *d, int pid, const char *name, uint64_t bytes,
	       bool estimate, const char *fmt, ...) _printf_(6, 7);

/* Takes up to want bytes out of the anonymous memory left. */
uint64_t diag_take_anon(struct diag_ledger *l, uint64_t want);

/* The bytes of the parts named name, summed. */
uint64_t diag_part_bytes(const struct diagnosis *d, const char *name);

/* One verdict per kind (the table has one slot each): a second process
 * with the same cause replaces the first only when more certain, else it
 * is written to a scratch slot and dropped. Cleared, with the kind's
 * basis. */
struct diag_verdict *diag_verdict(struct diagnosis *d, enum diag_kind k,
				  int confidence, uint64_t bytes);

/* The verdict of kind k already found, NULL when none. */
struct diag_verdict *diag_verdict_find(struct diagnosis *d, enum diag_kind k);

void diag_line(char (*lines)[DIAG_LINE], size_t *n, const char *fmt, ...)
	_printf_(3, 4);

#define EVID(v, ...) diag_line((v)->evidence, &(v)->n_evidence, __VA_ARGS__)
#define RECO(v, ...) diag_line((v)->recommend, &(v)->n_recommend, __VA_ARGS__)

/* Peak of the timeline (or the usage at the kill) × 1.25, in 64 MiB
 * steps: the limit that would have held. */
uint64_t diag_suggested_limit(const struct diag_input *in,
			      const struct diagnosis *d);

struct bundle;
struct json_object;

/* The JSON file dir/name of a bundle (dir NULL: the top level), its path
 * in path; in->notes names it for what follows. NULL when absent or not
 * JSON. */
struct json_object *diag_bundle_json(const struct bundle *b, const char *dir,
				     const char *name, struct diag_input *in,
				     char *path, size_t size);
