/* SPDX-License-Identifier: Apache-2.0 */
/* Node.js: is a process Node, how large may its V8 heap grow, how much of
 * its RSS is that heap, and what to say when it outgrew its container.
 * The parsers below are pure; node.c's table entry, rt_node, reads
 * /proc/PID/{exe,maps,smaps,cmdline} and NODE_OPTIONS alone of its
 * environ in the sidecar, writes processes/<pid>/node/facts.json, and
 * makes the "node heap" ledger row and the node-heap verdict from it
 * (docs/diagnosis.md, "Node.js").
 *
 * The default heap limit (node_heap_limit) is the rule V8 applies to
 * the memory Node reports to it, which since Node 12 is the cgroup's
 * limit when one is set below the machine's memory (libuv's
 * uv_get_constrained_memory): old space = half of it, at least 256 MiB, at
 * most 2 GiB (4 GiB from 16 GiB of memory); young generation = 3
 * semi-spaces of old/128, 1 to 16 MiB (1 MiB at 512 MiB of memory and
 * below). Measured on Node 20.20.2 (V8 11.3) in cgroups of 64 MiB to
 * 32 GiB (docs/diagnosis.md, "Node.js"). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "forensics/runtimes/rtproc.h"

struct smaps;

/* Exported by every Node.js binary since 8 (N-API), whatever its name. */
#define NODE_SYMBOL "napi_create_object"

enum node_how {
	NODE_NOT = 0,
	NODE_BY_LIBNODE, /* libnode.so is mapped (Debian's, embedders') */
	NODE_BY_SYMBOL,	 /* the exe exports NODE_SYMBOL */
};

struct node_detect {
	enum node_how how;
	/* anonymous mappings at 256 KiB boundaries, V8's page size:
	 * supporting evidence, never enough alone */
	size_t v8_pages;
};

/* Whether the process whose maps (or smaps) text this is runs Node.js:
 * libnode mapped, or the exe exporting NODE_SYMBOL (asked through
 * has_symbol, which may be NULL). Returns 1 (Node), 0 (not), -EBADMSG (no
 * mapping in maps), -ENOMEM. ret is filled on 0 and 1. */
int node_detect(const char *maps, size_t maps_len,
		rtproc_has_symbol_fn has_symbol, const void *ctx,
		struct node_detect *ret);

/* The heap options that decide how far the V8 heap may grow. */
struct node_facts {
	bool has_max_old;	  /* --max-old-space-size given */
	uint64_t max_old_mib;	  /* its value, MiB */
	char max_old_from[16];	  /* "command line" or "NODE_OPTIONS" */
	bool node_options;	  /* NODE_OPTIONS is set */
	bool near_limit_snapshot; /* --heapsnapshot-near-heap-limit given */
	bool bad_value;		  /* a --max-old-space-size that is no number */
};

/* Reads the options from cmdline (NUL-separated, /proc/PID/cmdline) and
 * NODE_OPTIONS, the one key read from env (an environ buffer, may be
 * NULL).
 * Node's own options are those before the script (the arguments after
 * it are the script's); the command line overrides NODE_OPTIONS. Both
 * spellings (--max-old-space-size, --max_old_space_size) count. Returns
 * 0. */
int node_parse_facts(const char *cmdline, size_t cmdline_len, const char *env,
		     size_t env_len, struct node_facts *ret);

struct node_heap_limit {
	uint64_t old_space; /* bytes */
	uint64_t young;	    /* bytes: 3 semi-spaces */
	uint64_t total;	    /* old_space + young: V8's heap_size_limit */
	bool from_flag;	    /* --max-old-space-size, else V8's default */
};

/* The heap limit V8 applies: facts' --max-old-space-size, else the
 * default for the memory Node sees (the container's limit when it is
 * below host_mem, else host_mem; 0 means unknown for either). node_major
 * is Node's major version, 0 when unknown (taken as 12 or later; before
 * 12 the default ignored cgroups: 1400 MiB old space on 64-bit). Returns
 * false when neither a flag nor a memory size is known. */
bool node_heap_limit(const struct node_facts *f, uint64_t limit,
		     uint64_t host_mem, unsigned node_major,
		     struct node_heap_limit *ret);

/* A Node process's RSS split: V8 heap pages (anonymous, at a 256 KiB
 * boundary, a whole number of 256 KiB: regular pages; or larger: a large
 * object's page) against the rest. kB as smaps counts. */
struct node_rss {
	uint64_t v8_heap_kb, v8_pages;
	uint64_t native_kb; /* other anonymous memory (malloc, stacks) */
	uint64_t file_kb;   /* code and data of files, shmem */
	uint64_t total_kb;
	struct rtproc_ranges pages; /* the V8 pages with the most RSS */
};

/* Classifies smaps (kernel/smaps.h, parsed) by node_rss. Returns 0,
 * -ENOMEM. */
int node_classify(const struct smaps *s, struct node_rss *ret);

/* The figures of one Node process at or near the kill. */
struct node_figures {
	uint64_t limit;	      /* the container's limit, bytes; 0 unknown */
	uint64_t usage;	      /* the container's usage at the kill */
	uint64_t heap_rss;    /* V8 heap RSS (node_rss.v8_heap_kb), bytes */
	uint64_t nonheap_rss; /* the process's other RSS, bytes */
	bool have_limit_rule;
	struct node_heap_limit heap;	/* node_heap_limit()'s answer */
	const struct node_facts *facts; /* may be NULL */
};

/* The node-heap verdict: the V8 heap is at least half of the usage (of
 * the process's RSS when the usage is unknown). Confidence 85 when V8
 * was allowed a heap that cannot fit (heap limit + non-heap RSS over the
 * container's limit), else 60 (the heap reached its own limit first:
 * Node would have thrown "JavaScript heap out of memory"). Remedies: the
 * --max-old-space-size to set (90 % of the limit less the non-heap RSS
 * measured and the young generation, in MiB), a snapshot near the limit
 * and a heap profile. Returns true and fills ret when it holds. */
bool node_verdict(const struct node_figures *fig, struct rtproc_verdict *ret);

/* The --max-old-space-size to set, in MiB, for a container limit, the
 * non-heap RSS measured and the young generation (bytes); 0 when the
 * non-heap part alone leaves under 16 MiB. */
uint64_t node_recommend_old_mib(uint64_t limit, uint64_t nonheap,
				uint64_t young);

/* The facts of one Node process in a bundle
 * (processes/<pid>/node/facts.json): its heap options, the host's memory
 * (for V8's default) and its RSS at the snapshot. */
struct node_proc {
	int pid;
	struct node_facts facts;
	uint64_t host_mem;	/* bytes, 0 unknown */
	uint64_t heap_rss, rss; /* bytes: V8 pages, every mapping */
	double age_s; /* the snapshot's age at the kill, < 0 unknown */
};

#define NODE_MAX_PROCS 8

struct node_procs {
	struct node_proc p[NODE_MAX_PROCS];
	size_t n;
};
