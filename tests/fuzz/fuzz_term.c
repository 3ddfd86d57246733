/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target for term_sanitize: whatever the bytes, the output holds no
 * control byte but '\n' (and our SGR when kept), and sanitising it again
 * changes nothing (it is valid UTF-8 without C1). */
#include <stdint.h>
#include <stdlib.h>

#include "base/term.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const uint8_t *data, size_t size, unsigned flags)
{
	struct strbuf a, b;

	strbuf_init(&a, 8 * size + 16);
	strbuf_init(&b, 8 * size + 16);
	if (term_sanitize((const char *)data, size, flags, &a) < 0)
		abort();
	for (size_t i = 0; i < a.len; i++) {
		unsigned char c = (unsigned char)a.buf[i];

		if ((c < 0x20 && c != '\n' && c != '\033') || c == 0x7f ||
		    (c == '\033' && !(flags & TERM_KEEP_SGR)))
			abort();
	}
	if (term_sanitize(a.buf, a.len, flags, &b) < 0 || b.len != a.len ||
	    memcmp(a.buf, b.buf, a.len) != 0)
		abort();
	strbuf_release(&a);
	strbuf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check(data, size, TERM_KEEP_NL);
	check(data, size, TERM_KEEP_NL | TERM_QUESTION);
	check(data, size, TERM_KEEP_NL | TERM_KEEP_SGR);
	return 0;
}
