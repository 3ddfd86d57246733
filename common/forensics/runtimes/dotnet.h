/* SPDX-License-Identifier: Apache-2.0 */
/* .NET (CoreCLR): is a process a .NET runtime, how large may its GC heap
 * grow, how much of its RSS is that heap, and what to say when it
 * outgrew its container. The parsers below are pure; dotnet.c's table
 * entry, rt_dotnet, reads /proc/PID/{maps,smaps} and the GC's keys alone
 * of its environ in the sidecar, writes processes/<pid>/dotnet/facts.json,
 * and makes the ".NET heap" ledger row and the dotnet-heap verdict from
 * it (docs/diagnosis.md, ".NET").
 *
 * The rules, from .NET's documentation of its GC settings: the knobs are
 * read from DOTNET_<name>, else COMPlus_<name>, as hexadecimal (an
 * optional 0x); GCHeapHardLimit wins over GCHeapHardLimitPercent; with
 * neither, in a container with a memory limit (.NET Core 3.0 and later)
 * the GC limits its heap to the larger of 20 MiB and 75 % of that limit.
 * The GC reserves its address space up front and commits inside it:
 * regions (.NET 7 and later) reserve 256 GiB by default, segments (before
 * 7) 256 MiB per workstation segment; so its heap shows as a run of
 * adjacent anonymous mappings, committed rw-p among reserved ---p,
 * spanning 256 MiB or more. Debian 12 and npm carry no .NET runtime: the
 * fixtures (tests/fixtures/dotnet/) are built from these documented
 * patterns, not captured. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "forensics/runtimes/rtproc.h"

struct smaps;

/* Whether libcoreclr.so is mapped (maps or smaps text; a NativeAOT
 * program has no libcoreclr and is not detected). Returns 1, 0, -EBADMSG
 * (no mapping), -ENOMEM. */
int dotnet_detect(const char *maps, size_t maps_len);

enum dotnet_knob_state {
	DOTNET_KNOB_UNSET = 0,
	DOTNET_KNOB_SET,
	DOTNET_KNOB_BAD, /* set, not a hexadecimal number */
};

struct dotnet_knob {
	enum dotnet_knob_state state;
	uint64_t v;
	char from[12]; /* "DOTNET_" or "COMPlus_" */
};

struct dotnet_facts {
	struct dotnet_knob hard_limit; /* GCHeapHardLimit, bytes */
	struct dotnet_knob limit_pct;  /* GCHeapHardLimitPercent */
	struct dotnet_knob gen0size;   /* GCgen0size, bytes */
	bool in_container;	       /* DOTNET_RUNNING_IN_CONTAINER=true */
};

/* Reads the GC's keys, and only those, from an environ buffer
 * (NUL-separated NAME=value). Returns 0. */
int dotnet_parse_facts(const char *env, size_t env_len,
		       struct dotnet_facts *ret);

enum dotnet_limit_from {
	DOTNET_LIMIT_NONE = 0, /* no container limit known, no knob */
	DOTNET_LIMIT_HARD,     /* GCHeapHardLimit */
	DOTNET_LIMIT_PERCENT,  /* GCHeapHardLimitPercent of the limit */
	DOTNET_LIMIT_DEFAULT,  /* max(20 MiB, 75 % of the limit) */
};

struct dotnet_gc_limit {
	enum dotnet_limit_from from;
	uint64_t bytes; /* 0 with DOTNET_LIMIT_NONE */
};

/* The GC heap's limit for facts in a container of limit bytes (0 or
 * UINT64_MAX: none known). */
void dotnet_gc_limit(const struct dotnet_facts *f, uint64_t limit,
		     struct dotnet_gc_limit *ret);

/* kB, as smaps counts. */
struct dotnet_rss {
	uint64_t gc_heap_kb;	 /* committed rw-p inside GC reservations */
	uint64_t gc_reserved_kb; /* the reservations' span */
	size_t reservations;
	uint64_t native_kb; /* other anonymous memory */
	uint64_t file_kb;
	uint64_t total_kb;
	struct rtproc_ranges reserved; /* the reservations, most RSS first */
};

int dotnet_classify(const struct smaps *s, struct dotnet_rss *ret);

struct dotnet_figures {
	uint64_t limit; /* the container's, bytes; 0 unknown */
	uint64_t usage; /* at the kill; 0 unknown */
	uint64_t gc_heap_rss, nonheap_rss; /* bytes */
	struct dotnet_gc_limit gc;
	const struct dotnet_facts *facts; /* may be NULL */
};

/* The hard limit to set: 90 % of the container's limit less the RSS
 * measured outside the GC heap, bytes rounded down to MiB; 0 when that
 * leaves under 16 MiB. */
uint64_t dotnet_recommend_limit(uint64_t limit, uint64_t nonheap);

/* The dotnet-heap verdict: the GC heap is at least half of the usage (of
 * the RSS when unknown). Confidence 80 when the GC was allowed a heap
 * that cannot fit beside the rest (its limit plus the non-heap RSS over
 * the container's limit, or no limit at all), else 65. Remedies: the
 * DOTNET_GCHeapHardLimit (hex) or GCHeapHardLimitPercent to set, and
 * dotnet-gcdump / dotnet-counters. Returns true and fills ret when it
 * holds. */
bool dotnet_verdict(const struct dotnet_figures *fig,
		    struct rtproc_verdict *ret);

/* The facts of one .NET process in a bundle
 * (processes/<pid>/dotnet/facts.json). */
struct dotnet_proc {
	int pid;
	struct dotnet_facts facts;
	uint64_t gc_heap_rss, rss; /* bytes */
	double age_s; /* the snapshot's age at the kill, < 0 unknown */
};

#define DOTNET_MAX_PROCS 8

struct dotnet_procs {
	struct dotnet_proc p[DOTNET_MAX_PROCS];
	size_t n;
};
