/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <json-c/json.h>

#include "forensics/bundle.h"
#include "forensics/report.h"
#include "base/strbuf.h"

static const char diag[] =
	"{\"verdict\":\"glibc-retention\",\"summary\":\"glibc-retention, 201 "
	"MiB of the 256 MiB limit\",\"usage_bytes\":268435456,\"limit_bytes\":"
	"268435456,\"unreconciled_bytes\":0,\"ledger\":[{\"name\":\"glibc "
	"retention\",\"bytes\":210763776,\"source\":\"pid 7 <arenas>\","
	"\"estimate\":false},{\"name\":\"other anonymous\",\"bytes\":57671680,"
	"\"source\":\"rest\",\"estimate\":true}],\"verdicts\":[{\"verdict\":"
	"\"glibc-retention\",\"confidence\":94,\"bytes\":210763776,"
	"\"evidence\":"
	"[\"glibc keeps 201 "
	"MiB\"],\"recommendations\":[\"MALLOC_ARENA_MAX=2\"]},"
	"{\"verdict\":\"spike\",\"confidence\":45,\"bytes\":1,\"evidence\":"
	"[\"went up\"],\"recommendations\":[]}]}";

static const char timeline[] =
	"{\"samples\":[{\"t_ms\":1000,\"usage\":10485760,\"limit\":268435456,"
	"\"procs\":[{\"pid\":7,\"anon_kb\":9000,\"file_kb\":100,\"shmem_kb\":0}"
	"]},"
	"{\"t_ms\":2000,\"usage\":209715200,\"limit\":268435456,\"procs\":"
	"[{\"pid\":7,\"anon_kb\":200000,\"file_kb\":100,\"shmem_kb\":0}]}],"
	"\"snapshots\":[{\"t_ms\":1500,\"reason\":\"threshold-80\"}]}";

static const char pmap[] =
	"7:   ./app --token ***\n"
	"         Address Perm   Offset Device   Inode   Size    Rss Mapping\n"
	"    7f0000000000 rw-p 00000000  00:00       0  65536  53000 \n"
	"    5600000000 rw-p 00000000  00:00       0    132    100 [heap]\n"
	"    7f1000000000 r-xp 00000000  fe:00     123   1000    900 libc "
	"with space.so\n"
	"                                             ====== ====== \n"
	"                                              66668  54000 KB \n";

static const char arenas[] =
	"{\"heaps\":[{\"start\":\"0x7f0000000000\",\"rss_kb\":53000}]}";

static struct bundle *make(void)
{
	struct bundle *b;
	struct json_object *m, *victims, *v;

	cr_assert_eq(bundle_new("oom-1", &b), 0);
	m = bundle_manifest(b);
	json_object_object_add(m, "cgroup", json_object_new_string("/a<b>"));
	json_object_object_add(m, "killed_at_ms", json_object_new_int64(2500));
	victims = json_object_new_array();
	v = json_object_new_object();
	json_object_object_add(v, "pid", json_object_new_int(7));
	json_object_object_add(v, "comm",
			       json_object_new_string("x\"<script>"));
	json_object_array_add(victims, v);
	json_object_object_add(m, "victims", victims);
	bundle_add(b, "diagnosis.json", diag, sizeof(diag) - 1, 0);
	bundle_add(b, "timeline.json", timeline, sizeof(timeline) - 1, 1);
	bundle_add(b, "processes/7/pmap.txt", pmap, sizeof(pmap) - 1, 3);
	bundle_add(b, "processes/7/arenas.json", arenas, sizeof(arenas) - 1, 2);
	bundle_add(b, "kernel/oom.txt", "Killed process 7 (x<y)", 22, 0);
	return b;
}

Test(report, html_has_every_section_and_escapes_names)
{
	struct bundle *b = make();
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	strbuf_init(&out, 0);
	cr_assert_eq(report_render_html(b, &out), 0);
	cr_assert(strstr(out.buf, "x&quot;&lt;script&gt;"));
	cr_assert_null(strstr(out.buf, "<script"), "no script, not even "
						   "the victim's name");
	cr_assert(strstr(out.buf, "/a&lt;b&gt;"));
	cr_assert(strstr(out.buf, "confidence 94%"));
	cr_assert(strstr(out.buf, "MALLOC_ARENA_MAX=2"));
	cr_assert(strstr(out.buf, "201 MiB")); /* the ledger's part */
	cr_assert(strstr(out.buf, "pid 7 &lt;arenas&gt;"));
	cr_assert(strstr(out.buf, "(estimate)"));
	cr_assert(strstr(out.buf, "Timeline: the last 2 s"));
	cr_assert(strstr(out.buf, "snapshot threshold-80"));
	/* the arena heap is named, the file name with a space kept whole */
	cr_assert(strstr(out.buf, "[glibc arena heap]"));
	cr_assert(strstr(out.buf, "libc with space.so"));
	cr_assert(strstr(out.buf, "52 MiB")); /* 53000 kB RSS */
	cr_assert(strstr(out.buf, "Killed process 7 (x&lt;y)"));
	cr_assert(strstr(out.buf, "also: <b>spike</b>"));
	cr_assert(strstr(out.buf, "Content-Security-Policy"));
	bundle_free(b);
}

Test(report, text_summary_without_colour)
{
	struct bundle *b = make();
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	strbuf_init(&out, 0);
	cr_assert_eq(report_render_text(b, false, &out), 0);
	cr_assert(strstr(out.buf, "verdict glibc-retention (confidence 94%)"),
		  "%s", out.buf);
	cr_assert(strstr(out.buf, "  > MALLOC_ARENA_MAX=2"));
	cr_assert(strstr(out.buf, "glibc retention"));
	cr_assert_null(strstr(out.buf, "\033["));
	strbuf_reset(&out);
	cr_assert_eq(report_render_text(b, true, &out), 0);
	cr_assert(strstr(out.buf, "\033[1m"));
	bundle_free(b);
}

Test(report, empty_bundle_still_renders)
{
	struct bundle *b;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	cr_assert_eq(bundle_new("bare", &b), 0);
	strbuf_init(&out, 0);
	cr_assert_eq(report_render_html(b, &out), 0);
	cr_assert(strstr(out.buf, "no diagnosis"));
	cr_assert(strstr(out.buf, "No flight recorder timeline"));
	cr_assert(strstr(out.buf, "</html>"));
	bundle_free(b);
}
