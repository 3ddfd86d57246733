/* SPDX-License-Identifier: Apache-2.0 */
/* jvm_parse_container: what a JVM believes of its container, from real
 * `jcmd <pid> VM.info` replies (the VM.info fixtures of tests/fixtures/jvm: JDK
 * 17 and 25 in a cgroup v1 with a 300 MiB limit, without a limit, and with
 * -XX:-UseContainerSupport) and from malformed input. No live JVM. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <json-c/json.h>

#include "base/fileio.h"
#include "inspect/jvm.h"
#include "jvm_fixture.h"

#define KiB 1024ull

static struct jvm_container parse_fixture(const char *name)
{
	struct strbuf sb = fixture(name);
	struct jvm_container c;

	cr_assert_eq(jvm_parse_container(sb.buf, sb.len, &c), 0, "%s", name);
	strbuf_release(&sb);
	return c;
}

static void assert_val(const struct jvm_cval *v, uint64_t want)
{
	cr_assert_eq(v->state, JVM_CVAL_VALUE);
	cr_assert_eq(v->v, want, "%llu != %llu", (unsigned long long)v->v,
		     (unsigned long long)want);
}

/* The cgroup's memory.limit_in_bytes was 314572800 (300 MiB). */
Test(jvm_container, v1_limited_jdk17)
{
	struct jvm_container c = parse_fixture("17-v1-limited-VM.info.txt");
	uint64_t lim = 0;
	bool from = false;

	cr_assert(c.found);
	cr_assert_not(c.not_found_line);
	cr_assert_str_eq(c.type, "cgroupv1");
	assert_val(&c.memory_limit, 307200 * KiB);
	cr_assert_eq(c.memory_limit.v, 314572800ull);
	assert_val(&c.memory_and_swap_limit, 614400 * KiB);
	cr_assert_eq(c.memory_soft_limit.state, JVM_CVAL_UNLIMITED);
	assert_val(&c.memory_usage, 53996 * KiB);
	assert_val(&c.memory_max_usage, 53996 * KiB);
	assert_val(&c.active_processor_count, 2);
	cr_assert_eq(c.cpu_quota.state, JVM_CVAL_UNLIMITED);
	cr_assert(c.has_physical);
	cr_assert_eq(c.physical, 307200 * KiB);
	cr_assert(jvm_container_believed_limit(&c, &lim, &from));
	cr_assert_eq(lim, 314572800ull);
	cr_assert(from);
}

/* Temurin 25 adds lines (cpu_usage_in_micros, rss_usage_in_bytes,
 * memory_throttle_limit_in_bytes: not supported) between the same keys. */
Test(jvm_container, v1_limited_jdk25)
{
	struct jvm_container c = parse_fixture("25-v1-limited-VM.info.txt");

	cr_assert(c.found);
	cr_assert_str_eq(c.type, "cgroupv1");
	assert_val(&c.memory_limit, 314572800ull);
	assert_val(&c.memory_and_swap_limit, 614400 * KiB);
	assert_val(&c.memory_usage, 57536 * KiB);
	assert_val(&c.memory_max_usage, 57796 * KiB);
	cr_assert_eq(c.physical, 307200 * KiB);
}

/* A cgroup without a limit: the JVM sizes itself from the host's RAM. */
Test(jvm_container, v1_unlimited_uses_physical_memory)
{
	struct jvm_container c = parse_fixture("17-v1-unlimited-VM.info.txt");
	uint64_t lim = 0;
	bool from = true;

	cr_assert(c.found);
	cr_assert_eq(c.memory_limit.state, JVM_CVAL_UNLIMITED);
	cr_assert_eq(c.memory_and_swap_limit.state, JVM_CVAL_UNLIMITED);
	assert_val(&c.memory_usage, 66756 * KiB);
	cr_assert_eq(c.physical, 24683584 * KiB);
	cr_assert(jvm_container_believed_limit(&c, &lim, &from));
	cr_assert_eq(lim, 24683584 * KiB);
	cr_assert_not(from);
}

/* -XX:-UseContainerSupport in the same 300 MiB cgroup: no section, and
 * the physical memory is the host's 23.5 GiB, not the limit. */
Test(jvm_container, container_support_off_sees_no_limit)
{
	struct jvm_container c = parse_fixture("17-v1-nocontainer-VM.info.txt");
	uint64_t lim = 0;
	bool from = true;

	cr_assert_not(c.found);
	cr_assert(c.not_found_line);
	cr_assert_eq(c.memory_limit.state, JVM_CVAL_ABSENT);
	cr_assert(jvm_container_believed_limit(&c, &lim, &from));
	cr_assert_eq(lim, 24683584 * KiB);
	cr_assert_not(from);
}

Test(jvm_container, words_plain_bytes_and_unknown_units)
{
	static const char in[] =
		"container (cgroup) information:\n"
		"container_type: cgroupv2\n"
		"memory_limit_in_bytes: 1023\n"
		"memory_and_swap_limit_in_bytes: not supported\n"
		"memory_soft_limit_in_bytes: 12 parsecs\n"
		"memory_usage_in_bytes: 2 M\r\n"
		"memory_max_usage_in_bytes: 99999999999999999999 k\n"
		"\n"
		"memory_usage_in_bytes: 1 k\n"; /* after the section: ignored */
	struct jvm_container c;

	cr_assert_eq(jvm_parse_container(in, sizeof(in) - 1, &c), 0);
	cr_assert_str_eq(c.type, "cgroupv2");
	assert_val(&c.memory_limit, 1023);
	cr_assert_eq(c.memory_and_swap_limit.state, JVM_CVAL_NOT_SUPPORTED);
	cr_assert_eq(c.memory_soft_limit.state, JVM_CVAL_ABSENT);
	assert_val(&c.memory_usage, 2ull << 20);
	cr_assert_eq(c.memory_max_usage.state, JVM_CVAL_ABSENT);
	cr_assert_not(c.has_physical);
}

Test(jvm_container, malformed_leaves_ret_untouched)
{
	static const char *const bad[] = {"", "17:\nNative Memory Tracking:\n",
					  "container (cgroup) informatio",
					  "Memory: 4k page, physical x"};
	struct jvm_container c = {.type = "keep"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(jvm_parse_container(bad[i], strlen(bad[i]), &c),
			     -EBADMSG, "%s", bad[i]);
		cr_assert_str_eq(c.type, "keep");
	}
}

/* A reply cut in the middle of the section (reply_max) and not
 * NUL-terminated: what was read counts, nothing past len is read. */
Test(jvm_container, cut_reply_not_nul_terminated)
{
	struct strbuf sb = fixture("17-v1-limited-VM.info.txt");
	const char *s = strstr(sb.buf, "memory_and_swap_limit_in_bytes");
	size_t len = (size_t)(s - sb.buf) + 5;
	char *copy = malloc(len);
	struct jvm_container c;

	memcpy(copy, sb.buf, len);
	cr_assert_eq(jvm_parse_container(copy, len, &c), 0);
	cr_assert(c.found);
	assert_val(&c.memory_limit, 314572800ull);
	cr_assert_eq(c.memory_and_swap_limit.state, JVM_CVAL_ABSENT);
	cr_assert_not(c.has_physical); /* printed after the section */
	free(copy);
	strbuf_release(&sb);
}

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v;

	cr_assert(json_object_object_get_ex(o, k, &v), "no %s", k);
	return json_object_get_string(v);
}

Test(jvm_container, json_limited_and_unlimited)
{
	struct jvm_container l = parse_fixture("17-v1-limited-VM.info.txt");
	struct jvm_container u = parse_fixture("17-v1-unlimited-VM.info.txt");
	struct json_object *jl = jvm_container_json(&l);
	struct json_object *ju = jvm_container_json(&u);
	struct json_object *v;

	cr_assert(json_object_object_get_ex(jl, "memory_limit", &v));
	cr_assert(json_object_is_type(v, json_type_int));
	cr_assert_eq(json_object_get_uint64(v), 314572800ull);
	cr_assert_str_eq(jstr(jl, "believed_from"), "container");
	cr_assert_str_eq(jstr(jl, "type"), "cgroupv1");
	cr_assert_str_eq(jstr(ju, "memory_limit"), "unlimited");
	cr_assert_str_eq(jstr(ju, "believed_from"), "physical memory");
	cr_assert(json_object_object_get_ex(ju, "believed_limit", &v));
	cr_assert_eq(json_object_get_uint64(v), 24683584 * KiB);
	json_object_put(jl);
	json_object_put(ju);
}
