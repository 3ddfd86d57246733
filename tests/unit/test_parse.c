/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "base/parse.h"
#include "base/util.h"

struct u64_case {
	char in[32]; /* by value: Criterion runs each case in a new process */
	int ret;
	uint64_t val;
};

ParameterizedTestParameters(parse, u64_table)
{
	static struct u64_case cases[] = {
		{"0", 0, 0},
		{"42", 0, 42},
		{"18446744073709551615", 0, UINT64_MAX},
		{"18446744073709551616", -ERANGE, 0},
		{"", -EINVAL, 0},
		{"-1", -EINVAL, 0},
		{" 1", -EINVAL, 0},
		{"1 ", -EINVAL, 0},
		{"12a", -EINVAL, 0},
		{"+5", -EINVAL, 0},
	};
	return cr_make_param_array(struct u64_case, cases, ARRAY_SIZE(cases));
}

ParameterizedTest(struct u64_case *c, parse, u64_table)
{
	uint64_t v = 777;

	cr_assert_eq(parse_u64(c->in, &v), c->ret, "input '%s'", c->in);
	cr_assert_eq(v, c->ret == 0 ? c->val : 777,
		     "ret untouched on failure ('%s')", c->in);
}

Test(parse, i64_limits)
{
	int64_t v;

	cr_assert_eq(parse_i64("-9223372036854775808", &v), 0);
	cr_assert_eq(v, INT64_MIN);
	cr_assert_eq(parse_i64("9223372036854775808", &v), -ERANGE);
	cr_assert_eq(parse_i64("-1000", &v), 0);
	cr_assert_eq(v, -1000);
	cr_assert_eq(parse_i64("-", &v), -EINVAL);
}

Test(parse, scan_advances_past_number)
{
	const char *p = "123kB rest";
	uint64_t v;

	cr_assert_eq(scan_u64(&p, &v), 0);
	cr_assert_eq(v, 123);
	cr_assert_str_eq(p, "kB rest");
	cr_assert_eq(scan_u64(&p, &v), -EINVAL);
	cr_assert_str_eq(p, "kB rest");
	p = "7f00dead-";
	cr_assert_eq(scan_hex_u64(&p, &v), 0);
	cr_assert_eq(v, 0x7f00deadull);
}

Test(parse, sizes)
{
	uint64_t v;

	cr_assert_eq(parse_size("512M", &v), 0);
	cr_assert_eq(v, 512ull << 20);
	cr_assert_eq(parse_size("1Gi", &v), 0);
	cr_assert_eq(v, 1ull << 30);
	cr_assert_eq(parse_size("64k", &v), 0);
	cr_assert_eq(v, 65536);
	cr_assert_eq(parse_size("10X", &v), -EINVAL);
	cr_assert_eq(parse_size("99999999999999999999", &v), -ERANGE);
}

Test(parse, cgroup_values_keep_max_apart)
{
	uint64_t v;
	bool unl = false;

	cr_assert_eq(parse_cgroup_value("max\n", 4, &v, &unl), 0);
	cr_assert(unl);
	cr_assert_eq(v, UINT64_MAX);
	cr_assert_eq(parse_cgroup_value("4096\n", 5, &v, &unl), 0);
	cr_assert_not(unl);
	cr_assert_eq(v, 4096);
	cr_assert_eq(parse_cgroup_value("garbage", 7, &v, &unl), -EBADMSG);
}

Test(parse, scan_size_stops_after_its_unit)
{
	const char *p = "262144KB, committed=1M)";
	uint64_t v;

	cr_assert_eq(scan_size(&p, &v), 0);
	cr_assert_eq(v, 262144ull << 10);
	cr_assert_str_eq(p, ", committed=1M)");
	p = "512MiB rest";
	cr_assert_eq(scan_size(&p, &v), 0);
	cr_assert_eq(v, 512ull << 20);
	cr_assert_str_eq(p, " rest");
	p = "12 KB";
	cr_assert_eq(scan_size(&p, &v), 0);
	cr_assert_eq(v, 12);
	cr_assert_str_eq(p, " KB");
	p = "x";
	cr_assert_eq(scan_size(&p, &v), -EINVAL);
}

Test(parse, host_port_forms)
{
	char host[16];
	int port = -1;

	cr_assert_eq(parse_host_port(":9477", host, sizeof(host), &port), 0);
	cr_assert_str_eq(host, "");
	cr_assert_eq(port, 9477);
	cr_assert_eq(
		parse_host_port("10.0.0.1:8443", host, sizeof(host), &port), 0);
	cr_assert_str_eq(host, "10.0.0.1");
	cr_assert_eq(port, 8443);
	cr_assert_eq(parse_host_port("[::1]:0", host, sizeof(host), &port), 0);
	cr_assert_str_eq(host, "::1");
	cr_assert_eq(port, 0);
	port = 7;
	cr_assert_eq(parse_host_port("9477", host, sizeof(host), &port),
		     -EINVAL);
	cr_assert_eq(parse_host_port(":65536", host, sizeof(host), &port),
		     -EINVAL);
	cr_assert_eq(parse_host_port(":x", host, sizeof(host), &port), -EINVAL);
	cr_assert_eq(parse_host_port("a-very-long-host-name:1", host,
				     sizeof(host), &port),
		     -EINVAL);
	cr_assert_eq(port, 7, "untouched on failure");
}

Test(parse, hex_digit_and_dns_label)
{
	cr_assert_eq(parse_hex_digit('0'), 0);
	cr_assert_eq(parse_hex_digit('f'), 15);
	cr_assert_eq(parse_hex_digit('A'), 10);
	cr_assert_eq(parse_hex_digit('g'), -1);
	cr_assert(dns_label_ok("app-1", 5));
	cr_assert(dns_label_ok("abcdefghijklmnopqrstuvwxyz0123456789abcdefghij"
			       "klmnopqrstuvwxyz0",
			       63));
	cr_assert_not(dns_label_ok("abcdefghijklmnopqrstuvwxyz0123456789abcdef"
				   "ghijklmnopqrstuvwxyz01",
				   64));
	cr_assert_not(dns_label_ok("", 0));
	cr_assert_not(dns_label_ok("-app", 4));
	cr_assert_not(dns_label_ok("app-", 4));
	cr_assert_not(dns_label_ok("App", 3));
	cr_assert_not(dns_label_ok("a_b", 3));
}
