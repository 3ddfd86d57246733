/* SPDX-License-Identifier: Apache-2.0 */
/* rtelf: whether an executable defines a dynamic symbol, the ELF fact
 * the runtimes' detection asks for (node.h NODE_SYMBOL, python.h
 * PYTHON_SYMBOL). Asked of its symbol hash table, .gnu.hash (else the
 * older .hash), as the dynamic linker does: the ELF header, the section
 * headers (at most 4096), the table's header, one bucket, that bucket's
 * chain (at most 4096 entries), the symbols on it and their names, each
 * with a bounded pread; never the whole .dynsym (Node's is 1.8 MB of
 * 75,000 symbols). Pure: the bytes come through a read callback (a
 * file's pread in the sidecar, a buffer in a test or a fuzz target). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads len bytes at off into buf: the bytes read, or -errno. */
typedef ssize_t (*rtelf_pread_fn)(void *ctx, void *buf, size_t len,
				  uint64_t off);

/* Whether the 64-bit little-endian ELF file read through rd (size bytes)
 * defines the dynamic symbol name (not merely imports it). Returns 1, 0
 * (absent or undefined), -ENOEXEC (not a 64-bit little-endian ELF),
 * -ENOENT (no dynamic symbol hash table), -EBADMSG (headers pointing
 * outside the file, wrong entry sizes, a chain past the caps), -ENOMEM,
 * or the reader's -errno. */
int rtelf_has_symbol(rtelf_pread_fn rd, void *ctx, uint64_t size,
		     const char *name);

/* The same over a file in memory. */
int rtelf_has_symbol_mem(const void *buf, size_t len, const char *name);
