/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for the pasted-text line parser alone (dmesg, journalctl,
 * syslog and RFC 3339 prefixes), each line copied to a buffer of its own
 * size so ASan sees any read past it, with every hint combination.
 * Invariants: the prefix never claims more than the line; a kernel line
 * becomes one record whose text is the line after the prefix without its
 * CR/LF; another program's line is refused with *ret untouched. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_line(const char *line, size_t len, unsigned flags,
		       struct strbuf *scratch)
{
	struct kmsg_text_prefix t;
	struct kmsg_record rec = {.seq = 7};
	size_t trimmed = len;
	int r;

	while (trimmed &&
	       (line[trimmed - 1] == '\n' || line[trimmed - 1] == '\r'))
		trimmed--;
	if (kmsg_parse_text_prefix(line, trimmed, flags, &t) != 0 ||
	    t.skip > trimmed || t.prio < -1 || (t.foreign && !t.syslog))
		abort();
	r = kmsg_parse_text_line(line, len, flags, scratch, &rec);
	if (r == 0) {
		if (!t.foreign || rec.seq != 7)
			abort();
		return;
	}
	if (r != 1 || t.foreign || rec.seq != UINT64_MAX ||
	    rec.usec != t.usec || rec.prio != t.prio ||
	    rec.text_len != trimmed - t.skip ||
	    memcmp(rec.text, line + t.skip, rec.text_len) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf scratch;
	size_t at = 0;

	strbuf_init(&scratch, 64u << 20);
	while (at < size) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t len = nl ? (size_t)(nl - data - at) + 1 : size - at;
		char *line = malloc(len ? len : 1);

		if (!line)
			abort();
		memcpy(line, data + at, len);
		for (unsigned f = 0; f < 4; f++)
			check_line(line, len, f, &scratch);
		free(line);
		at += len;
	}
	strbuf_release(&scratch);
	return 0;
}
