/* SPDX-License-Identifier: Apache-2.0 */
/* The JVM runtime's own data (runtimes/jvm.c, diag_input.rt_data[its
 * row]): what joined after the seam. The older JVM facts stay in struct
 * diag_input (diag_proc's JVM fields, in->jvms). Today: each JVM's class
 * histogram, processes/<pid>/jvm/class_histogram.json, written by the
 * sidecar (docs/timeline.md, "The class histogram"), read here as the
 * pod's: every field typed, names cleaned again, figures checked against
 * the totals. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "forensics/diagnosis.h"
#include "inspect/jvm.h"

struct json_object;
struct jget_notes;

struct jvm_rt_class {
	char name[JVM_HISTO_NAME_MAX]; /* as the JVM names it, "[B" */
	uint64_t instances, bytes;
};

struct jvm_rt_histo {
	int pid;
	bool taken;
	char why[200];	  /* not taken: why (cleaned) */
	char trigger[32]; /* the snapshot's reason, "threshold-80" */
	double age_s;	  /* before the kill, < 0 unknown */
	uint64_t heap_used, estimate_ms, budget_ms;
	bool have_wall, have_pause;
	uint64_t wall_us, pause_us;
	uint64_t classes, total_instances, total_bytes;
	bool total_known;
	size_t n; /* top[]: largest first, each at most the total */
	struct jvm_rt_class top[JVM_HISTO_TOP];
};

struct jvm_rt_facts {
	struct jvm_rt_histo histo[DIAG_MAX_JVMS];
	size_t n_histo;
};

/* One class_histogram.json object o into ret (zeroed first; pid from the
 * file, kill_ms to age it, 0: unknown). Fields of a wrong type are noted
 * in notes (may be NULL) and left out; a row without a class name or
 * with bytes above the total, or out of order, is dropped and noted; at
 * most JVM_HISTO_TOP rows. Returns 0, -ENOENT when o is not an object,
 * -EBADMSG when it has no boolean "taken" (ret is then zeroed). Pure. */
int jvm_rt_histo_from_json(struct json_object *o, uint64_t kill_ms,
			   struct jget_notes *notes, struct jvm_rt_histo *ret);
