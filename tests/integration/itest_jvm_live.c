/* SPDX-License-Identifier: Apache-2.0 */
/* LIVE: the jvm library API against a real openjdk-17 JVM started here:
 * detect, raw v1 operations, the reply cap, jvm_snapshot's files and
 * jvm_trim_snapshot's jvm/trim.json. Needs root and java/javac (skips with
 * the reason otherwise). The victims are compiled into
 * $OOMLENS_BUILD/victims/java when missing. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "base/fileio.h"
#include "itest_spawn.h"
#include "base/host.h"
#include "inspect/jvm.h"

#define JAVA "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"

static char classes[512];

/* Compiles the Java victims unless their classes exist. */
static bool have_classes(void)
{
	const char *b = getenv("OOMLENS_BUILD");
	char cls[600], cmd[2048];

	snprintf(classes, sizeof(classes), "%s/victims/java", b ? b : "build");
	snprintf(cls, sizeof(cls), "%s/NativeChurn.class", classes);
	if (access(cls, R_OK) == 0)
		return true;
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s' && javac -nowarn -d '%s' "
		 "tests/victims/java/*.java >/dev/null 2>&1",
		 classes, classes);
	return system(cmd) == 0 && access(cls, R_OK) == 0;
}

/* Starts `java -XX:NativeMemoryTracking=summary NativeChurn 4 16` and
 * waits for its "ready" line. */
static pid_t start_jvm(void)
{
	char *const argv[] = {JAVA,
			      "-Xmx64m",
			      "-XX:+UseSerialGC",
			      "-XX:NativeMemoryTracking=summary",
			      "-cp",
			      classes,
			      "NativeChurn",
			      "4",
			      "16",
			      NULL};

	return itest_spawn_until(argv, NULL, "ready");
}

static void stop_jvm(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

static bool file_has(int dirfd, const char *path, const char *needle)
{
	struct strbuf sb;
	bool ok;

	strbuf_init(&sb, 1u << 20);
	ok = read_file_at(dirfd, path, 1u << 20, &sb) == 0 &&
	     strstr(sb.buf, needle);
	strbuf_release(&sb);
	return ok;
}

static void skip_unless_ready(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root");
	if (access(JAVA, X_OK) != 0)
		cr_skip_test("no openjdk-17 at " JAVA);
	if (!have_classes())
		cr_skip_test("javac could not build tests/victims/java");
}

static void check_detect_and_execute(const struct host *h, pid_t pid)
{
	const char *none[1] = {NULL};
	struct jvm_attach_opts small = {.reply_max = 64};
	struct jvm_info i;
	struct jvm_target t;
	struct jvm_reply rep;

	cr_assert_eq(jvm_detect(h, pid, &i), 0);
	cr_assert(i.libjvm && i.hsperfdata && i.sigquit_handled);
	cr_assert_eq(i.attach_capable, 1);
	cr_assert_eq(i.nspid, pid);
	cr_assert_eq(i.uid, 0);
	cr_assert_eq(jvm_attach(h, pid, NULL, &t), 0);
	cr_assert_eq(t.protocol, 1);
	/* A plain v1 operation, not jcmd. */
	cr_assert_eq(jvm_execute(&t, "properties", none, 0, &rep), 0);
	cr_assert_eq(rep.status, 0);
	cr_assert(strstr(rep.text.buf, "java.vm.specification.version=17"),
		  "%s", rep.text.buf);
	jvm_reply_release(&rep);
	cr_assert_eq(jvm_attach(h, pid, &small, &t), 0);
	cr_assert_eq(jvm_jcmd(&t, "help", &rep), 0);
	cr_assert(rep.truncated);
	cr_assert_eq(rep.text.len, 64);
	cr_assert_eq(strlen(rep.text.buf), 64);
	jvm_reply_release(&rep);
}

Test(jvm_live, attach_execute_snapshot_trim)
{
	char dir[] = "/tmp/oomlens-test-jvm-XXXXXX";
	struct jvm_trim_result res;
	struct host h;
	int dfd;
	pid_t pid;

	skip_unless_ready();
	cr_assert_eq(host_open("/", &h), 0);
	pid = start_jvm();
	check_detect_and_execute(&h, pid);
	cr_assert_not_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_eq(jvm_snapshot(&h, pid, dfd, NULL), 0);
	cr_assert(file_has(dfd, "jvm/native_memory.json", "\"enabled\":true"));
	cr_assert(file_has(dfd, "jvm/native_memory.txt", "Total: reserved="));
	cr_assert(file_has(dfd, "jvm/heap_info.json",
			   "\"collector\":\"Serial\""));
	cr_assert(file_has(dfd, "jvm/attach.json", "\"protocol\":1"));
	cr_assert_eq(faccessat(dfd, "jvm/native_heap_info.xml", F_OK, 0), -1,
		     "JDK 17 has no System.native_heap_info");
	cr_assert_eq(jvm_trim_snapshot(&h, pid, dfd, NULL, &res), 0);
	/* 4 threads x 16 MiB freed but retained by glibc: most comes back. */
	cr_assert_gt(res.rss_before, res.rss_after + (40ull << 20),
		     "before %" PRIu64 " after %" PRIu64, res.rss_before,
		     res.rss_after);
	cr_assert(file_has(dfd, "jvm/trim.json", "\"rss_before\":"));
	stop_jvm(pid);
	cr_assert_eq(jvm_trim_snapshot(&h, pid, dfd, NULL, NULL), -ESRCH);
	rm_rf_at(AT_FDCWD, dir);
	close(dfd);
	host_close(&h);
}

Test(jvm_live, not_a_jvm_writes_nothing)
{
	char dir[] = "/tmp/oomlens-test-jvm-XXXXXX";
	struct jvm_info i;
	struct host h;
	int dfd;

	cr_assert_eq(host_open("/", &h), 0);
	cr_assert_not_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_eq(jvm_detect(&h, getpid(), &i), 0);
	cr_assert_not(jvm_info_is_jvm(&i));
	cr_assert_eq(jvm_snapshot(&h, getpid(), dfd, NULL), -JVM_E_NOT_JVM);
	cr_assert_eq(jvm_trim_snapshot(&h, getpid(), dfd, NULL, NULL),
		     -JVM_E_NOT_JVM);
	cr_assert_eq(faccessat(dfd, "jvm", F_OK, 0), -1, "no jvm/ dir");
	rm_rf_at(AT_FDCWD, dir);
	close(dfd);
	host_close(&h);
}
