/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup_mount: the memory hierarchy's mount found in real and constructed
 * /proc/self/mountinfo captures (tests/fixtures/cgroup/mountinfo/, see its
 * README), and kernel / namespace / mount path translation. */
#include <criterion/criterion.h>
#include <fcntl.h>

#include "kernel/cgroup_mount.h"
#include "base/fileio.h"
#include "base/strbuf.h"
#include "base/util.h"

#define MI "tests/fixtures/cgroup/mountinfo/"
#define LIBPOD                   \
	"/libpod_parent/libpod-" \
	"8d3373437f8297b1e8f9f055f3a1d99d2a6d04cd37ae8c68ee4fbdabdfac46a2"

static char got[CGROUP_MOUNT_PATH_MAX];

/* Parses fixture name for mode/path/mnt_id; returns the parser's result. */
static int find(const char *name, enum cgroup_mode mode, int mnt_id,
		const char *path)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char file[256];
	struct cgroup_mount_query q = {
		.mode = mode, .mnt_id = mnt_id, .path = path};

	snprintf(file, sizeof(file), MI "%s.mountinfo", name);
	strbuf_init(&sb, 1u << 20);
	cr_assert_geq(read_file_at(AT_FDCWD, file, 1u << 20, &sb), 0, "%s",
		      file);
	got[0] = '\0';
	return cgroup_parse_mountinfo(sb.buf, sb.len, &q, got, sizeof(got));
}

static void expect_root(const char *name, enum cgroup_mode mode,
			const char *path, const char *root)
{
	cr_assert_eq(find(name, mode, -1, path), 0, "%s %s", name, path);
	cr_assert_str_eq(got, root, "%s %s", name, path);
}

static void from_kernel(const struct cgroup_mount *m, const char *k, int r,
			const char *want)
{
	char buf[CGROUP_MOUNT_PATH_MAX] = "untouched";

	cr_assert_eq(cgroup_mount_from_kernel(m, k, buf, sizeof(buf)), r,
		     "from_kernel %s", k);
	cr_assert_str_eq(buf, r == 0 ? want : "untouched", "from_kernel %s", k);
}

static void from_ns(const struct cgroup_mount *m, const char *p, int r,
		    const char *want)
{
	char buf[CGROUP_MOUNT_PATH_MAX] = "untouched";

	cr_assert_eq(cgroup_mount_from_ns(m, p, buf, sizeof(buf)), r,
		     "from_ns %s", p);
	cr_assert_str_eq(buf, r == 0 ? want : "untouched", "from_ns %s", p);
}

static void to_kernel(const struct cgroup_mount *m, const char *p, int r,
		      const char *want)
{
	char buf[CGROUP_MOUNT_PATH_MAX] = "untouched";

	cr_assert_eq(cgroup_mount_to_kernel(m, p, buf, sizeof(buf)), r,
		     "to_kernel %s", p);
	cr_assert_str_eq(buf, r == 0 ? want : "untouched", "to_kernel %s", p);
}

/* --- finding the mount ---------------------------------------------------- */

Test(cgroup_mount, host_v1_hybrid_memory_is_the_root)
{
	expect_root("host-v1-hybrid", CGROUP_V1, "/sys/fs/cgroup/memory", "/");
	/* By mount id: 35 is memory, 41 the v2 unified mount. */
	cr_assert_eq(
		find("host-v1-hybrid", CGROUP_V1, 35, "/sys/fs/cgroup/memory"),
		0);
	cr_assert_str_eq(got, "/");
	cr_assert_eq(
		find("host-v1-hybrid", CGROUP_V1, 41, "/sys/fs/cgroup/unified"),
		-EMEDIUMTYPE);
	expect_root("host-v1-hybrid", CGROUP_V2, "/sys/fs/cgroup/unified", "/");
	/* /sys/fs/cgroup itself is a tmpfs here: no v2 hierarchy there. */
	cr_assert_eq(find("host-v1-hybrid", CGROUP_V2, -1, "/sys/fs/cgroup"),
		     -ENOENT);
	/* The cpu hierarchy is not the memory one. */
	cr_assert_eq(
		find("host-v1-hybrid", CGROUP_V1, -1, "/sys/fs/cgroup/cpu"),
		-ENOENT);
}

Test(cgroup_mount, podman_v1_memory_is_the_container_subtree)
{
	expect_root("podman-v1", CGROUP_V1, "/sys/fs/cgroup/memory", LIBPOD);
	cr_assert_eq(find("podman-v1", CGROUP_V1, 90, "/sys/fs/cgroup/memory"),
		     0);
	cr_assert_str_eq(got, LIBPOD);
	/* A directory below the mount point adds its own components. */
	expect_root("podman-v1", CGROUP_V1, "/sys/fs/cgroup/memory/demo/hog",
		    LIBPOD "/demo/hog");
	/* No v2 mount in the container at all. */
	cr_assert_eq(find("podman-v1", CGROUP_V2, -1, "/sys/fs/cgroup"),
		     -ENOENT);
}

Test(cgroup_mount, cgroupns_and_hostpath_captures)
{
	expect_root("podman-v1-cgroupns", CGROUP_V1, "/sys/fs/cgroup/memory",
		    "/");
	expect_root("podman-v1-hostpath", CGROUP_V1,
		    "/host/sys/fs/cgroup/memory", "/");
	expect_root("podman-v1-hostpath-cgroupns", CGROUP_V1,
		    "/host/sys/fs/cgroup/memory", "/../..");
	expect_root("podman-v1-hostpath-cgroupns", CGROUP_V1,
		    "/sys/fs/cgroup/memory", "/");
	expect_root("containerd-v2-cgroupns", CGROUP_V2, "/sys/fs/cgroup", "/");
	expect_root("k8s-hostpath-v2-cgroupns", CGROUP_V2,
		    "/host/sys/fs/cgroup", "/../../../..");
	expect_root("k8s-hostpath-v2-cgroupns", CGROUP_V2, "/sys/fs/cgroup",
		    "/");
}

Test(cgroup_mount, escapes_ties_and_malformed_lines)
{
	static const char buf[] =
		"garbage\n"
		"7 1 0:32 / /a rw - cgroup\n" /* too few fields */
		"8 1 0:32 /x\\040y /mnt/my\\040cg rw - cgroup cgroup "
		"rw,memory\n"
		"9 1 0:32 /first /t rw shared:1 - cgroup cgroup rw,memory\n"
		"10 1 0:32 /second /t rw - cgroup cgroup rw,memory\n"
		"11 1 0:33 /cpu /c rw - cgroup cgroup rw,cpu,cpuacct\n";
	struct cgroup_mount_query q = {
		.mode = CGROUP_V1, .mnt_id = -1, .path = "/mnt/my cg/k"};

	cr_assert_eq(cgroup_parse_mountinfo(buf, sizeof(buf) - 1, &q, got,
					    sizeof(got)),
		     0);
	cr_assert_str_eq(got, "/x y/k");
	/* Mounted over: the later line wins. */
	q.path = "/t";
	cr_assert_eq(cgroup_parse_mountinfo(buf, sizeof(buf) - 1, &q, got,
					    sizeof(got)),
		     0);
	cr_assert_str_eq(got, "/second");
	/* The mount id picks the earlier one when it holds our fd. */
	q.mnt_id = 9;
	cr_assert_eq(cgroup_parse_mountinfo(buf, sizeof(buf) - 1, &q, got,
					    sizeof(got)),
		     0);
	cr_assert_str_eq(got, "/first");
	q.mnt_id = -1;
	q.path = "/c";
	cr_assert_eq(cgroup_parse_mountinfo(buf, sizeof(buf) - 1, &q, got,
					    sizeof(got)),
		     -ENOENT);
	/* Too small an answer buffer. */
	q.path = "/t";
	cr_assert_eq(cgroup_parse_mountinfo(buf, sizeof(buf) - 1, &q, got, 4),
		     -ENAMETOOLONG);
	q.path = "relative";
	cr_assert_eq(cgroup_parse_mountinfo(buf, sizeof(buf) - 1, &q, got,
					    sizeof(got)),
		     -EINVAL);
}

/* --- what is known, and translation --------------------------------------- */

Test(cgroup_mount, podman_v1_maps_kernel_paths_both_ways)
{
	struct cgroup_mount m;

	cr_assert_eq(find("podman-v1", CGROUP_V1, -1, "/sys/fs/cgroup/memory"),
		     0);
	cgroup_mount_resolve(got, false, 1, &m);
	cr_assert_eq(m.state, CGROUP_BASE_KNOWN);
	cr_assert_str_eq(m.base, LIBPOD);
	from_kernel(&m, LIBPOD "/oomlens-demo/hog", 0, "/oomlens-demo/hog");
	from_kernel(&m, LIBPOD, 0, "/");
	from_kernel(&m, LIBPOD "/", 0, "/");
	from_kernel(&m, LIBPOD "x/hog", -EXDEV, NULL); /* a sibling */
	from_kernel(&m, "/oomlens-demo/hog", -EXDEV, NULL);
	from_kernel(&m, "/", -EXDEV, NULL);
	from_kernel(&m, "oomlens-demo", -EINVAL, NULL);
	to_kernel(&m, "/oomlens-demo/hog", 0, LIBPOD "/oomlens-demo/hog");
	to_kernel(&m, "/", 0, LIBPOD);
	/* Host cgroup namespace: /proc/<pid>/cgroup is the kernel's frame. */
	from_ns(&m, LIBPOD "/oomlens-demo/hog", 0, "/oomlens-demo/hog");
	from_ns(&m, "/user.slice", -EXDEV, NULL);
}

Test(cgroup_mount, host_root_is_identity)
{
	struct cgroup_mount m;

	cr_assert_eq(
		find("host-v1-hybrid", CGROUP_V1, 35, "/sys/fs/cgroup/memory"),
		0);
	cgroup_mount_resolve(got, true, 1, &m);
	cr_assert_eq(m.state, CGROUP_BASE_KNOWN);
	from_kernel(&m, "/process_api/9ccf", 0, "/process_api/9ccf");
	from_kernel(&m, "/", 0, "/");
	to_kernel(&m, "/a/b", 0, "/a/b");
	from_ns(&m, "/a/b", 0, "/a/b");
}

Test(cgroup_mount, private_cgroupns_subtree_is_hidden)
{
	struct cgroup_mount m;

	/* podman --cgroupns=private: "/" though not the hierarchy's root. */
	cr_assert_eq(find("podman-v1-cgroupns", CGROUP_V1, -1,
			  "/sys/fs/cgroup/memory"),
		     0);
	for (int ns = -1; ns <= 0; ns++) {
		cgroup_mount_resolve(got, false, ns, &m);
		cr_assert_eq(m.state, CGROUP_BASE_HIDDEN, "init_ns %d", ns);
		cr_assert_str_eq(m.base, "");
		from_kernel(&m, LIBPOD "/demo/hog", -ENXIO, NULL);
		to_kernel(&m, "/demo/hog", -ENXIO, NULL);
		/* /proc/<pid>/cgroup is in our frame: it still maps. */
		from_ns(&m, "/demo/hog", 0, "/demo/hog");
		from_ns(&m, "/../other", -EXDEV, NULL);
	}
	/* containerd on v2: the same, from a constructed capture. */
	cr_assert_eq(
		find("containerd-v2-cgroupns", CGROUP_V2, -1, "/sys/fs/cgroup"),
		0);
	cgroup_mount_resolve(got, false, 0, &m);
	cr_assert_eq(m.state, CGROUP_BASE_HIDDEN);
	from_kernel(&m, "/kubepods.slice/x.scope/app", -ENXIO, NULL);
	/* With the namespace unknown, a subtree that is not "/" is taken as
	 * the kernel's path (the initial namespace). */
	cgroup_mount_resolve("/libpod_parent/x", false, -1, &m);
	cr_assert_eq(m.state, CGROUP_BASE_KNOWN);
	cr_assert_str_eq(m.base, "/libpod_parent/x");
}

Test(cgroup_mount, hostpath_in_a_cgroupns_is_the_root)
{
	struct cgroup_mount m;

	cr_assert_eq(find("podman-v1-hostpath-cgroupns", CGROUP_V1, 100,
			  "/host/sys/fs/cgroup/memory"),
		     0);
	cgroup_mount_resolve(got, true, 0, &m);
	cr_assert_eq(m.state, CGROUP_BASE_KNOWN);
	cr_assert_str_eq(m.base, "/");
	cr_assert_str_eq(m.ns_base, "/../..");
	from_kernel(&m, LIBPOD "/demo/hog", 0, LIBPOD "/demo/hog");
	to_kernel(&m, "/kubepods/pod1/c", 0, "/kubepods/pod1/c");
	/* /proc/<pid>/cgroup of a task outside the namespace: "/.." paths. */
	from_ns(&m, "/../../user.slice/x", 0, "/user.slice/x");
	from_ns(&m, "/../..", 0, "/");
	/* Inside the namespace: the names of its root are not known. */
	from_ns(&m, "/demo/hog", -ENXIO, NULL);
	from_ns(&m, "/../x", -ENXIO, NULL);

	cr_assert_eq(find("k8s-hostpath-v2-cgroupns", CGROUP_V2, 2218,
			  "/host/sys/fs/cgroup"),
		     0);
	cgroup_mount_resolve(got, true, 0, &m);
	cr_assert_eq(m.state, CGROUP_BASE_KNOWN);
	from_kernel(&m, "/kubepods.slice/a.slice/c.scope", 0,
		    "/kubepods.slice/a.slice/c.scope");
	from_ns(&m, "/../../../../system.slice/kubelet.service", 0,
		"/system.slice/kubelet.service");
	/* Same height, other names: outside. */
	cgroup_mount_resolve("/../../a", false, 0, &m);
	from_ns(&m, "/../../b", -EXDEV, NULL);
	from_ns(&m, "/../../a/c", 0, "/c");
}

Test(cgroup_mount, no_mountinfo_is_assumed_identity)
{
	struct cgroup_mount m;

	cgroup_mount_resolve(NULL, false, -1, &m);
	cr_assert_eq(m.state, CGROUP_BASE_ASSUMED);
	cr_assert_str_eq(m.base, "/");
	from_kernel(&m, "/a/b", 0, "/a/b");
	to_kernel(&m, "/a/b", 0, "/a/b");
	from_ns(&m, "/a/b", 0, "/a/b");
}

Test(cgroup_mount, read_on_a_fixture_tree)
{
	struct host h = {.root_fd = -1, .proc_fd = -1, .cgroup_fd = -1};
	struct cgroup_fs fs = {.mem_fd = -1};
	struct cgroup_mount m;

	/* A fixture tree has no proc: nothing to learn, paths kept. */
	cr_assert_eq(host_open("tests/fixtures/cgroup/v1-6.18/root", &h), 0);
	cr_assert_eq(cgroup_fs_open(&h, &fs), 0);
	cr_assert_eq(cgroup_mount_read(&h, &fs, &m), 0);
	cr_assert_neq(m.state, CGROUP_BASE_HIDDEN);
	cr_assert_str_eq(m.base, "/");
	from_kernel(&m, "/oomlens-test/killed", 0, "/oomlens-test/killed");
	cgroup_fs_close(&fs);
	cr_assert_eq(cgroup_mount_read(&h, &fs, &m), -EBADF);
	host_close(&h);
}
