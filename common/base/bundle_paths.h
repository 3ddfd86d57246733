/* SPDX-License-Identifier: Apache-2.0 */
/* Every path of a bundle and of a sidecar snapshot, named once
 * (docs/manifest.md and docs/timeline.md say what each holds). In base/
 * so that every layer that writes or reads one (inspect/ writing a JVM's
 * files, forensics/ reading them, the programs) names it the same.
 *
 * A bundle's top level: BP_*. A process's directory in it is
 * processes/<pid>/ (BP_PROCESSES, BP_PROC_DIR_FMT); the names below it,
 * BP_P_*, are relative to that directory, the way a snapshot writes them
 * (at its pid_dirfd). A runtime's files are under processes/<pid>/<its
 * name>/ (BP_JVM_*, BP_GO_*, BP_NODE_*, BP_PYTHON_*, BP_DOTNET_*). */
#pragma once

/* ---- the bundle's top level ---- */
#define BP_MANIFEST "manifest.json"
#define BP_DIAGNOSIS "diagnosis.json"
#define BP_TIMELINE "timeline.json"
#define BP_AGENT_TIMELINE "agent/timeline.json"
#define BP_KERNEL_OOM "kernel/oom.txt"
#define BP_SPOOL_SNAPSHOT "spool/snapshot.json"
#define BP_SPOOL_MANIFEST "spool/manifest.json"
#define BP_PROCESSES "processes/"
/* a spool snapshot's own account (snapshots/<time>/snapshot.json in the
 * spool; spool/snapshot.json in a bundle) */
#define BP_SNAP_META "snapshot.json"
/* processes/<pid>, for snprintf with the pid */
#define BP_PROC_DIR_FMT "processes/%d"

/* ---- a process's directory (processes/<pid>/) ---- */
#define BP_P_STATUS "status"
#define BP_P_SNAPSHOT "snapshot.json"
#define BP_P_CMDLINE "cmdline.txt"
#define BP_P_PMAP "pmap.txt"
#define BP_P_PMAP_JSON "pmap.json"
#define BP_P_CLASSES "classes.json"
#define BP_P_ARENAS "arenas.json"
#define BP_P_ALLOCATOR "allocator.json"
#define BP_P_TRIM "trim.json" /* a glibc process trimmed through ptrace */

/* ---- the JVM's (processes/<pid>/jvm/) ---- */
#define BP_JVM_DIR "jvm"
#define BP_JVM_TRIM "jvm/trim.json"
#define BP_JVM_HEAP_INFO "jvm/heap_info.txt"
#define BP_JVM_HEAP_INFO_JSON "jvm/heap_info.json"
#define BP_JVM_FLAGS "jvm/flags.txt"
#define BP_JVM_FLAGS_JSON "jvm/flags.json"
#define BP_JVM_NMT "jvm/native_memory.txt"
#define BP_JVM_NMT_JSON "jvm/native_memory.json"
#define BP_JVM_NATIVE_HEAP "jvm/native_heap_info.xml"
#define BP_JVM_NATIVE_HEAP_JSON "jvm/native_heap_info.json"
#define BP_JVM_ATTACH "jvm/attach.json"
#define BP_JVM_HEAP_RSS "jvm/heap_rss.json"
#define BP_JVM_NMT_HISTORY "jvm/nmt_history.json"
/* GC.class_histogram's top classes, or why it was not taken */
#define BP_JVM_CLASS_HISTO "jvm/class_histogram.json"

/* ---- Go's (processes/<pid>/go/) ---- */
#define BP_GO_DIR "go"
#define BP_GO_FACTS "go/facts.json"

/* ---- Node.js's, CPython's and .NET's (processes/<pid>/<name>/) ---- */
#define BP_NODE_DIR "node"
#define BP_NODE_FACTS "node/facts.json"
#define BP_PYTHON_DIR "python"
#define BP_PYTHON_FACTS "python/facts.json"
#define BP_DOTNET_DIR "dotnet"
#define BP_DOTNET_FACTS "dotnet/facts.json"
