/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: a watch stream cut into lines (the first byte picks the
 * chunk size, so events straddle reads) and each line decoded. */
#include <stdint.h>

#include "kube/kube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_line(const char *line, size_t len, void *ud)
{
	struct kube_watch_event ev;
	unsigned *n = ud;

	if (!line)
		return 0;
	if (kube_watch_event_parse(line, len, &ev) == 0) {
		if (!ev.object || kube_event_type_name(ev.type)[0] == 'U')
			__builtin_trap();
		kube_watch_event_release(&ev);
		(*n)++;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kube_line_splitter s;
	size_t step;
	unsigned n = 0;

	if (size < 1)
		return 0;
	step = 1 + data[0] % 97;
	data++;
	size--;
	kube_line_splitter_init(&s, 4096);
	for (size_t i = 0; i < size; i += step)
		kube_line_splitter_feed(&s, (const char *)data + i,
					size - i < step ? size - i : step,
					on_line, &n);
	kube_line_splitter_release(&s);
	return 0;
}
