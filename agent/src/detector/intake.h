/* SPDX-License-Identifier: Apache-2.0 */
/* The detector's intake of the kernel log: /dev/kmsg read into the report
 * assembler, its clock measured against CLOCK_MONOTONIC, the report in
 * progress closed once nothing more of it may come, and each finished
 * report handed to the correlator (its paths as mounted, /proc read for a
 * bare kill line), the progress saved in the state directory.
 *
 * It takes no decision and counts no metric: the caller (../cmd_run.c's
 * loop) pops the finished reports one at a time with intake_pop(), takes
 * the correlator's decisions after each one handed on and counts the
 * reports itself.
 * Detector thread; the reads of /dev/kmsg never block. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct agent;
struct kmsg_reader;
struct kmsg_assembler;

/* The intake's state, in struct agent (agent.h) as intake. */
struct intake {
	struct kmsg_reader *kmsg;    /* NULL: no kernel log */
	struct kmsg_assembler *asm_; /* the reports being put together */
	uint64_t quiet_since;	     /* mono µs when kmsg last ran dry while
				      * a report may be open, 0 = idle */
	uint64_t done_seq;	     /* the newest report handled, maybe
				      * ahead of the state saved */
	bool have_done_seq;
	bool have_offset;     /* agent's kmsg_offset_us is measured */
	uint64_t offset_mono; /* when it was measured */
	char probe[96];	      /* clock probe in flight, "" when none */
	uint64_t probe_mono;  /* when it was written */
	unsigned probes;      /* written so far */
};

/* Opens /dev/kmsg under the host root (a->host) where the state left off
 * (a->last_seq) and makes the assembler; on a first start without state
 * and without --from-start, skips what the ring buffer holds and saves
 * that place. No /dev/kmsg (absent, refused) is not an error: the intake
 * then has no kernel log (logged) and intake_fd() is -1. Sends the first
 * clock probe. 0 or -errno: another failure to open is logged, a failed
 * skip of the ring buffer or a failed allocation (-ENOMEM) is not. */
int intake_open(struct agent *a);

/* The fd to poll for kmsg records, -1 without a kernel log. */
int intake_fd(const struct agent *a);

/* Reads /dev/kmsg until a report is finished or it runs dry, adding the
 * records read to *n_read. Returns 1 when finished reports wait for
 * intake_pop() (call it until INTAKE_NONE, then intake_read() again), 0
 * when kmsg ran dry, a read failed (logged; an overrun is logged and read
 * past) or there is no kernel log. Never blocks. */
int intake_read(struct agent *a, size_t *n_read);

/* What intake_pop() did. */
enum intake_pop {
	INTAKE_NONE,	/* no report is finished */
	INTAKE_DROPPED, /* its cgroup lies outside the mount: not reported */
	INTAKE_TAKEN,	/* handed to the correlator: take its decisions */
};

/* Takes one finished report in: its paths mapped (detector/cgmap.c), a
 * bare kill line's counters and /proc read now, then handed to the
 * correlator, whose decisions the caller then takes (INTAKE_TAKEN); a
 * report outside the mount is dropped (a->reports_ignored) and its
 * progress saved (INTAKE_DROPPED). Either way *ret_complete says whether
 * the report was whole, for the caller's count. */
enum intake_pop intake_pop(struct agent *a, bool *ret_complete);

/* After a read of n_read records: whether the report in progress is to
 * be closed now (true: pop it with intake_pop()). A plain kill's report
 * closes with its last line; one that may still grow (a memory.oom.group
 * kill whose cgroup lists a task without its line, or one still to be
 * announced) waits for quiet, up to a bound, intake_poll_us() saying how
 * soon to read again meanwhile. Reads the group's cgroup files. */
bool intake_settle(struct agent *a, size_t n_read);

/* At a stop: closes the report in progress (one with a victim), whatever
 * more of it may still come. True when there is one to pop. */
bool intake_close(struct agent *a);

/* An OOM was notified: its report is on the way, poll kmsg for it. */
void intake_expect(struct agent *a);

/* How soon kmsg must be read again, in µs (the kernel defers waking its
 * readers to the next tick): 0 while no report is open or expected. */
uint64_t intake_poll_us(const struct agent *a);

/* Measures kmsg's clock against CLOCK_MONOTONIC again when it is due: a
 * marker written to /dev/kmsg, read back by intake_read(). Dropped probes
 * (rate limit) are retried at the next call, a bounded number of times;
 * an unwritable kmsg is logged once and never retried. */
void intake_probe(struct agent *a);

/* A decision on the report whose last record was seq (UINT64_MAX: none)
 * was acted on: saves the state's kmsg place, never past a report the
 * correlator still holds. A failed save is logged. */
void intake_save_progress(struct agent *a, uint64_t seq);
