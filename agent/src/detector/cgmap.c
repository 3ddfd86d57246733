/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel names cgroups from the root of the whole hierarchy; the agent
 * may see only a subtree of it (inside a container). Every kernel path
 * that meets our view is turned into ours here, once, as the report is
 * read: correlation, watching and bundles all use the mounted path. */
#include <sys/stat.h>

#include "agent.h"
#include "base/log.h"
#include "base/util.h"

static const char *state_name(enum cgroup_base_state s)
{
	return s == CGROUP_BASE_KNOWN	 ? "known"
	       : s == CGROUP_BASE_HIDDEN ? "hidden"
					 : "assumed";
}

/* The initial pid namespace's inode (PROC_PID_INIT_INO): the kernel's OOM
 * report names pids as seen there. */
#define PID_NS_INIT_INO 0xEFFFFFFCull

/* Warns when we see pids through another pid namespace than the kernel's
 * report: the victims' pids are then the host's, not ours. */
static void check_pid_ns(void)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) == 0 &&
	    (unsigned long long)st.st_ino != PID_NS_INIT_INO)
		log_warn("running in a pid namespace of its own: victims' "
			 "pids are the kernel's (the host's), not as seen "
			 "here; run with the host's pid namespace (hostPID, "
			 "--pid=host) to match them with processes");
}

void agent_mount_setup(struct agent *a)
{
	struct cgroup_mount *m = &a->cgmount;
	int r = cgroup_mount_read(&a->host, &a->cgfs, m);

	check_pid_ns();

	if (r < 0) {
		cgroup_mount_resolve(NULL, false, -1, m);
		log_warn("cannot learn the memory cgroup mount: %s, taking it "
			 "as the hierarchy's root",
			 strerror(-r));
		return;
	}
	if (m->state == CGROUP_BASE_HIDDEN) {
		log_warn("the memory cgroup mount is below a cgroup namespace "
			 "root whose kernel path cannot be read (mountinfo "
			 "root \"%s\"): kernel cgroup paths are used as "
			 "printed; run the agent in the host's cgroup "
			 "namespace or give it the host's /sys/fs/cgroup",
			 m->ns_base);
		return;
	}
	log_info("memory cgroup mount: kernel path \"%s\" (%s), namespace "
		 "path \"%s\", hierarchy root %s",
		 m->base, state_name(m->state), m->ns_base,
		 m->is_root ? "yes" : "no");
}

/* Logs a kill outside our mount once per cgroup (the latest few kept). */
static void log_outside(struct agent *a, const struct oom_report *r,
			const char *kpath)
{
	for (size_t i = 0; i < a->n_outside && i < AGENT_MAX_OUTSIDE; i++)
		if (streq(a->outside[i], kpath))
			return;
	strlcpy_safe(a->outside[a->n_outside++ % AGENT_MAX_OUTSIDE], kpath,
		     KMSG_PATH_MAX);
	log_warn("kill of pid %d (\"%s\") in cgroup \"%s\" (kernel path), "
		 "outside the memory cgroup mount \"%s\" (kernel path of our "
		 "\"/\"): not reported; later kills there are not logged",
		 r->n_victims ? r->victims[0].pid : 0,
		 r->n_victims ? r->victims[0].comm : "", kpath,
		 a->cgmount.base);
}

bool agent_map_report(struct agent *a, const struct oom_report *r,
		      struct corr_paths *ret)
{
	/* An ancestor that holds the limit may lie above our mount (a pod's
	 * limit seen from a container): it is then not named. */
	if (correlate_map_paths(&a->cgmount, r, ret) == -EXDEV) {
		log_outside(a, r, oom_report_victim_memcg(r));
		return false;
	}
	return true;
}

bool agent_kernel_path(const struct agent *a, const char *path, char *buf,
		       size_t size)
{
	return path && path[0] &&
	       cgroup_mount_to_kernel(&a->cgmount, path, buf, size) == 0;
}
