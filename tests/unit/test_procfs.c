/* SPDX-License-Identifier: Apache-2.0 */
/* procfs parsers on captured files and tables; no live /proc. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <fcntl.h>

#include "base/fileio.h"
#include "kernel/procfs.h"

static void load(const char *path, struct strbuf *sb)
{
	strbuf_init(sb, 1u << 20);
	cr_assert_eq(read_file_at(AT_FDCWD, path, 1u << 20, sb), 0,
		     "cannot read %s", path);
}

Test(procfs, status_retention)
{
	struct strbuf sb;
	struct proc_status st;

	load("tests/fixtures/smaps/retention/status", &sb);
	cr_assert_eq(procfs_parse_status(sb.buf, sb.len, &st), 0);
	cr_assert_str_eq(st.name, "retention");
	cr_assert_eq(st.threads, 5);
	cr_assert(st.has_mm);
	cr_assert_gt(st.vm_rss_kb, 30000);
	cr_assert_eq(st.vm_rss_kb,
		     st.rss_anon_kb + st.rss_file_kb + st.rss_shmem_kb);
	cr_assert_eq(st.nspid, st.pid);
	cr_assert_eq(st.state, 'T'); /* captured while stopped */
	strbuf_release(&sb);
}

Test(procfs, status_hostile_name)
{
	struct strbuf sb;
	struct proc_status st;

	load("tests/fixtures/smaps/hostile/status", &sb);
	cr_assert_eq(procfs_parse_status(sb.buf, sb.len, &st), 0);
	/* The kernel escapes the newline; the rest is kept as is. */
	cr_assert_str_eq(st.name, "a b) (c\\nd");
	cr_assert_gt(st.pid, 0);
	strbuf_release(&sb);
}

Test(procfs, status_kernel_thread_and_garbage)
{
	static const char kthread[] = "Name:\tkworker/0:1\nState:\tI (idle)\n"
				      "Pid:\t12\nThreads:\t1\n";
	struct proc_status st;

	cr_assert_eq(procfs_parse_status(kthread, sizeof(kthread) - 1, &st), 0);
	cr_assert_not(st.has_mm);
	cr_assert_eq(st.pid, 12);
	cr_assert_eq(procfs_parse_status("junk\n", 5, &st), -EBADMSG);
	cr_assert_eq(procfs_parse_status("Name:\tx\nPid:\tabc\n", 17, &st),
		     -EBADMSG);
}

Test(procfs, status_nspid_last_field)
{
	static const char s[] = "Name:\tjava\nPid:\t4242\nNSpid:\t4242\t7\n"
				"SigCgt:\t0000000000000004\nVmRSS:\t10 kB\n";
	struct proc_status st;

	cr_assert_eq(procfs_parse_status(s, sizeof(s) - 1, &st), 0);
	cr_assert_eq(st.nspid, 7);
	cr_assert_eq(st.sig_cgt, 4);
	cr_assert_eq(st.vm_rss_kb, 10);
}

struct redact_case {
	char in[160];
	size_t len;
	char out[160];
};

#define RC(s, o)                    \
	{                           \
		s, sizeof(s) - 1, o \
	}

ParameterizedTestParameters(procfs, cmdline_redaction)
{
	static struct redact_case cases[] = {
		RC("app\0--password=hunter2\0", "app --password=***"),
		RC("app\0--api-key\0sekrit\0-v\0", "app --api-key *** -v"),
		RC("java\0-Djavax.net.ssl.keyStorePassword=x\0-Xmx1g\0",
		   "java -Djavax.net.ssl.keyStorePassword=*** -Xmx1g"),
		RC("env\0DB_TOKEN=abc\0run\0", "env DB_TOKEN=*** run"),
		/* A secret flag's value is the next argument, even when it
		 * starts with '-' (it may: "--password -dashvalue"). */
		RC("x\0--Secret\0--verbose\0", "x --Secret ***"),
		RC("app\0--password\0-dashvalue\0-v\0",
		   "app --password *** -v"),
		/* The list of issue 13, printed in clear before. */
		RC("app\0--db-url=postgres://admin:dbpass@db/x\0",
		   "app --db-url=postgres://admin:***@db/x"),
		RC("mysql\0-uroot\0-pMYSQLPASS\0shop\0",
		   "mysql -uroot -p*** shop"),
		RC("/usr/bin/mysqldump\0-pMYSQLPASS\0shop\0",
		   "/usr/bin/mysqldump -p*** shop"),
		RC("app\0--pass=x1\0", "app --pass=***"),
		RC("app\0--pwd=x1\0", "app --pwd=***"),
		RC("app\0--passphrase=x1\0", "app --passphrase=***"),
		RC("app\0--auth=user:pw\0", "app --auth=***"),
		RC("curl\0-H\0Authorization: Bearer eyJ.abc\0https://x/\0",
		   "curl -H Authorization: Bearer *** https://x/"),
		RC("env\0DATABASE_URL=mysql://u:pw@h\0",
		   "env DATABASE_URL=mysql://u:***@h"),
		/* More of the same shapes. */
		RC("app\0DB_DSN=user:pw@tcp(h:3306)/db\0",
		   "app DB_DSN=user:***@tcp(h:3306)/db"),
		RC("psql\0postgresql://app:s3cr3t@db:5432/shop\0",
		   "psql postgresql://app:***@db:5432/shop"),
		RC("sh\0-c\0mongosh mongodb://u:p@h/x\0",
		   "sh -c mongosh mongodb://u:***@h/x"),
		RC("curl\0-u\0alice:pw\0-H\0X-Api-Key: k1\0",
		   "curl -u alice:*** -H X-Api-Key: ***"),
		RC("redis-cli\0-a\0pw\0get\0k\0", "redis-cli -a *** get k"),
		RC("sshpass\0-pPW\0ssh\0h\0", "sshpass -p*** ssh h"),
		RC("app\0MYSQL_PWD=x\0PGPASSWORD=y\0",
		   "app MYSQL_PWD=*** PGPASSWORD=***"),
		/* Security review (issue 26): forms that were kept in clear. */
		RC("curl\0-H\0Bearer eyJ.abc\0https://x/\0",
		   "curl -H Bearer *** https://x/"),
		RC("app\0--header\0bearer\0eyJ.abc\0-v\0",
		   "app --header bearer *** -v"),
		RC("curl\0-H\0Authorization:Basic dXNlcjpwYXNz\0",
		   "curl -H Authorization:Basic ***"),
		RC("curl\0-H\0authorization:dXNlcjpwYXNz\0",
		   "curl -H authorization:***"),
		RC("app\0--db-pass\0x1\0-v\0", "app --db-pass *** -v"),
		RC("app\0--dbpass=x1\0", "app --dbpass=***"),
		RC("java\0-jar\0a.jar\0"
		   "jdbc:postgresql://h/db?user=a&password=s3cret&ssl=1\0",
		   "java -jar a.jar "
		   "jdbc:postgresql://h/db?user=a&password=***&ssl=1"),
		RC("app\0--url=jdbc:sqlserver://h;user=a;password=s3cret;\0",
		   "app --url=jdbc:sqlserver://h;user=a;password=***;"),
		RC("psql\0host=h password=s3cret dbname=x\0",
		   "psql host=h password=*** dbname=x"),
		RC("psql\0host=h password='s3 cret' dbname=x\0",
		   "psql host=h password=*** dbname=x"),
		RC("app\0Server=h;User Id=a;Password=s3 cret;Database=d\0",
		   "app Server=h;User Id=a;Password=***;Database=d"),
		RC("sh\0-c\0FOO=1 API_TOKEN=abc ./run\0",
		   "sh -c FOO=1 API_TOKEN=*** ./run"),
		RC("curl\0-H\0Cookie: session=abc; id=2\0",
		   "curl -H Cookie: ***"),
		RC("curl\0-H\0Set-Cookie:session=abc\0",
		   "curl -H Set-Cookie:***"),
		RC("htpasswd\0-b\0/etc/h\0alice\0s3cret\0",
		   "htpasswd -b /etc/h alice ***"),
		RC("/usr/bin/htpasswd\0-B\0-C\0"
		   "12\0-cb\0/etc/h\0al\0pw\0",
		   "/usr/bin/htpasswd -B -C 12 -cb /etc/h al ***"),
		RC("htpasswd\0-nbB\0alice\0s3cret\0",
		   "htpasswd -nbB alice ***"),
		RC("openssl\0enc\0-aes-256-cbc\0-k\0s3cret\0-in\0f\0",
		   "openssl enc -aes-256-cbc -k *** -in f"),
		/* Not secrets: kept as they are. */
		RC("mysql\0-p\0shop\0", "mysql -p shop"),
		RC("nc\0-p\08080\0-pX\0", "nc -p 8080 -pX"),
		RC("app\0--password-file=/run/secrets/db\0",
		   "app --password-file=/run/secrets/db"),
		RC("git\0clone\0ssh://git@github.com/o/r\0",
		   "git clone ssh://git@github.com/o/r"),
		RC("app\0--auth-type=basic\0--bypass=1\0",
		   "app --auth-type=basic --bypass=1"),
		RC("app\0--url=https://h:8443/x\0",
		   "app --url=https://h:8443/x"),
		RC("htpasswd\0-c\0/etc/h\0alice\0", "htpasswd -c /etc/h alice"),
		RC("openssl\0enc\0-kfile\0/run/k\0",
		   "openssl enc -kfile /run/k"),
		RC("java\0-cp\0/app/keystore.jar:/app/x.jar\0",
		   "java -cp /app/keystore.jar:/app/x.jar"),
		RC("app\0--mode=compass\0q=1&user=a\0",
		   "app --mode=compass q=1&user=a"),
		RC("sh\0-c\0echo a\nb\0", "sh -c echo a?b"),
		RC("plain\0args\0here", "plain args here"),
		RC("", ""),
	};

	return cr_make_param_array(struct redact_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct redact_case *c, procfs, cmdline_redaction)
{
	struct strbuf out;

	strbuf_init(&out, 4096);
	cr_assert_eq(procfs_format_cmdline(c->in, c->len, true, &out), 0);
	cr_assert_str_eq(out.buf, c->out);
	strbuf_release(&out);
}

Test(procfs, cmdline_fixture_redacted)
{
	struct strbuf sb, out;

	load("tests/fixtures/smaps/hostile/cmdline", &sb);
	strbuf_init(&out, 4096);
	cr_assert_eq(procfs_format_cmdline(sb.buf, sb.len, true, &out), 0);
	cr_assert_str_eq(out.buf, "/usr/bin/python3 /tmp/hostile.py "
				  "--password=*** --api-key *** -Dx.token=***");
	strbuf_reset(&out);
	cr_assert_eq(procfs_format_cmdline(sb.buf, sb.len, false, &out), 0);
	cr_assert(strstr(out.buf, "hunter2") != NULL);
	strbuf_release(&out);
	strbuf_release(&sb);
}

Test(procfs, cgroup_lines)
{
	static const char v1[] = "9:name=systemd:/\n8:pids:/\n"
				 "4:memory:/demo/app\n0::/\n";
	static const char v2[] = "0::/kubepods/pod1/ctr\n";
	static const char multi[] = "5:cpu,memory,blkio:/x y/(z)\n";
	char path[64];

	cr_assert_eq(
		procfs_parse_cgroup(v1, sizeof(v1) - 1, path, sizeof(path)), 0);
	cr_assert_str_eq(path, "/demo/app");
	cr_assert_eq(
		procfs_parse_cgroup(v2, sizeof(v2) - 1, path, sizeof(path)), 0);
	cr_assert_str_eq(path, "/kubepods/pod1/ctr");
	cr_assert_eq(procfs_parse_cgroup(multi, sizeof(multi) - 1, path,
					 sizeof(path)),
		     0);
	cr_assert_str_eq(path, "/x y/(z)");
	cr_assert_eq(procfs_parse_cgroup("3:cpu:/a\n", 9, path, sizeof(path)),
		     -ENOENT);
	cr_assert_eq(procfs_parse_cgroup(v1, sizeof(v1) - 1, path, 4),
		     -ENAMETOOLONG);
}
