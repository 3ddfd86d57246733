/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <linux/capability.h>
#include <string.h>

#include "kernel/procfs_access.h"

#define CAP(c) (UINT64_C(1) << (c))

static const char status[] =
	"Name:\thog\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t12\n"
	"Pid:\t12\nUid:\t1000\t1001\t1002\t1003\nGid:\t100\t101\t102\t103\n"
	"Groups:\t\nCapInh:\t0000000000000000\nCapPrm:\t00000000a80425fb\n"
	"CapEff:\t00000000a80425fb\nCapBnd:\t00000000a80425fb\n";

Test(procfs_access, creds_from_status)
{
	struct procfs_creds c;

	cr_assert_eq(procfs_parse_creds(status, strlen(status), &c), 0);
	cr_assert_eq(c.uid[0], 1000);
	cr_assert_eq(c.uid[3], 1003);
	cr_assert_eq(c.gid[1], 101);
	cr_assert_eq(c.cap_prm, 0xa80425fbu);
	cr_assert_eq(c.cap_eff, 0xa80425fbu);
	cr_assert_eq(procfs_parse_creds("Name:\tx\nGid:\t1 1 1 1\n", 21, &c),
		     -EBADMSG);
	cr_assert_eq(procfs_parse_creds("Uid:\t1 1 1\nGid:\t1 1 1 1\n", 24, &c),
		     -EBADMSG);
}

static struct procfs_creds ids(uint32_t uid, uint32_t gid, uint64_t eff)
{
	struct procfs_creds c = {
		.uid = {uid, uid, uid, uid},
		.gid = {gid, gid, gid, gid},
		.cap_prm = eff,
		.cap_eff = eff,
	};
	return c;
}

static const char *why(struct procfs_creds self, struct procfs_creds t)
{
	static char buf[256];

	return procfs_denied_why(&self, &t, buf, sizeof(buf));
}

/* Each shape of docs/sidecar-pod.md names the first rule that fails. */
Test(procfs_access, why_names_what_differs)
{
	uint64_t setid = CAP(CAP_SETUID) | CAP(CAP_SETGID) | CAP(CAP_KILL);
	struct procfs_creds odd = ids(1000, 1000, 0);

	cr_assert_str_eq(why(ids(1000, 1000, 0), ids(0, 0, 0xa80425fb)),
			 "permission denied: uid 0 differs from the sidecar's "
			 "1000 and no CAP_SYS_PTRACE (or CAP_SETUID and "
			 "CAP_SETGID)");
	cr_assert(strstr(why(ids(1000, 0, 0), ids(1000, 1000, 0)),
			 "gid 1000 differs from the sidecar's 0"));
	/* baseline, uid unknown: a root app with the runtime's default
	 * capabilities is out of reach of a root sidecar with three */
	cr_assert_str_eq(why(ids(0, 0, setid), ids(0, 0, 0xa80425fb)),
			 "permission denied: the target holds capabilities "
			 "the sidecar does not (0xa804251b) and no "
			 "CAP_SYS_PTRACE");
	cr_assert(strstr(why(ids(0, 0, setid), ids(1000, 1000, 0)),
			 "not dumpable"));
	odd.uid[1] = 0; /* a setuid program */
	cr_assert(strstr(why(ids(0, 0, setid), odd),
			 "uids (1000 0 1000) or gids (1000 1000 1000) differ"));
	cr_assert(strstr(why(ids(0, 0, CAP(CAP_SYS_PTRACE)), ids(5, 5, 0)),
			 "although the sidecar holds CAP_SYS_PTRACE"));
}

/* The retry gives up on a name with a '/' and leaves the fs ids as they
 * were (this thread's, read back). */
Test(procfs_access, a_refused_path_is_not_retried)
{
	struct procfs_creds before, after;

	cr_assert_eq(procfs_self_creds(&before), 0);
	cr_assert_eq(procfs_open_at(-1, "a/b", 0), -EBADF);
	cr_assert_eq(procfs_self_creds(&after), 0);
	cr_assert_eq(memcmp(&before, &after, sizeof(before)), 0);
}
