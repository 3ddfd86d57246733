/* SPDX-License-Identifier: Apache-2.0 */
/* report: the bundle's report.html — self-contained (inline CSS and SVG,
 * no script, no network): verdict, ledger bar, timeline, processes, top
 * mappings, the kernel report folded at the end; and the same summary as
 * terminal text for `oomlens-agent show`. Both read only the bundle's own
 * files (manifest.json, diagnosis.json, timeline.json, processes/…,
 * kernel/oom.txt), so they work on any bundle, old or new. */
#pragma once

#include <stdbool.h>

#include "base/strbuf.h"

struct bundle;

/* Appends the HTML page to out. Returns 0, -ENOMEM, -E2BIG; -EBADMSG when
 * the bundle has no manifest.json. */
int report_render_html(const struct bundle *b, struct strbuf *out);

/* Appends the terminal summary; colour with ANSI escapes when colour. */
int report_render_text(const struct bundle *b, bool colour, struct strbuf *out);

/* Appends s HTML-escaped (& < > " ' and control characters). */
int report_html_escape(struct strbuf *out, const char *s);
