/* SPDX-License-Identifier: Apache-2.0 */
/* The sidecar's pod-mode parsers: the Downward API annotations file (Go
 * %q quoting as kubelet writes it), the oomlens.io settings with bad
 * values falling back to defaults, and /proc/<pid>/cgroup → container and
 * pod for both drivers, v1 and v2, containerd/CRI-O/docker and crun. The
 * sidecar's sources are not in liboomlens: the module is compiled in. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "../../sidecar/src/pod_parse.c"

Test(pod_parse, unquote_escapes)
{
	char out[64];
	const char *q = "\"a\\\"b\\\\c\\n\\t\\x41\\101\\u00e9\\U0001F600'\"";
	const char *want = "a\"b\\c\n\tAAé😀'";

	cr_assert_eq(pod_unquote(q, strlen(q), out, sizeof(out)),
		     (int)strlen(want));
	cr_assert_eq(strlen(want), 16);
	cr_assert_str_eq(out, want);
	cr_assert_eq(pod_unquote("\"\"", 2, out, sizeof(out)), 0);
	cr_assert_str_eq(out, "");
	/* raw UTF-8 passes as it is (%q keeps printable runes) */
	cr_assert_eq(pod_unquote("\"é\"", strlen("\"é\""), out, sizeof(out)),
		     2);
}

Test(pod_parse, unquote_refuses)
{
	char out[8];
	const char *bad[] = {
		"abc",	     "\"abc",	    "abc\"",	       "\"a\"b\"",
		"\"\\q\"",   "\"\\x4\"",    "\"\\u12\"",       "\"\\x00\"",
		"\"\\000\"", "\"\\ud800\"", "\"\\U00110000\"", "\"\\\"",
		"\"",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(
			pod_unquote(bad[i], strlen(bad[i]), out, sizeof(out)),
			-EBADMSG, "%s", bad[i]);
	cr_assert_eq(pod_unquote("\"12345678\"", 10, out, sizeof(out)), -E2BIG);
}

/* As kubelet 1.20 wrote it for a pod here (sorted keys, %q values). */
static const char file[] = "kubectl.kubernetes.io/"
			   "last-applied-configuration=\"{\\\"a\\\":1}\\n\"\n"
			   "oomlens.io/capture=\"true\"\n"
			   "oomlens.io/containers=\"app, worker\"\n"
			   "oomlens.io/jvm=\"off\"\n"
			   "oomlens.io/thresholds=\"70,85\"\n"
			   "oomlens.io/trim=\"test\"\n";

Test(pod_parse, annotations_file)
{
	struct pod_annotations a;
	struct pod_settings s;

	cr_assert_eq(pod_parse_annotations(file, strlen(file), &a), 0);
	cr_assert_eq(a.n, 5);
	cr_assert_eq(a.bad_lines, 0);
	cr_assert_str_eq(pod_annotation(&a, "oomlens.io/capture"), "true");
	cr_assert_null(pod_annotation(
		&a, "kubectl.kubernetes.io/last-applied-configuration"));
	cr_assert_eq(pod_settings_from(&a, &s), 0);
	cr_assert_str_eq(s.errors, "");
	cr_assert_eq(s.th.n, 2);
	cr_assert_eq(s.th.pct[0], 70);
	cr_assert_eq(s.th.pct[1], 85);
	cr_assert_not(s.jvm);
	cr_assert_eq(s.trim, POD_TRIM_TEST);
	cr_assert_eq(s.n_containers, 2);
	cr_assert(pod_container_selected(&s, "worker"));
	cr_assert_not(pod_container_selected(&s, "oomlens"));
	cr_assert_not(s.capture_off);
}

Test(pod_parse, jvm_histogram)
{
	static const char on[] = "oomlens.io/jvm-histogram=\"true\"\n"
				 "oomlens.io/jvm-histogram-max-pause-ms="
				 "\"2500\"\n";
	static const char bad[] = "oomlens.io/jvm-histogram=\"yes\"\n"
				  "oomlens.io/jvm-histogram-max-pause-ms="
				  "\"2.5s\"\n";
	struct pod_annotations a;
	struct pod_settings s;

	cr_assert_eq(pod_parse_annotations(file, strlen(file), &a), 0);
	cr_assert_eq(pod_settings_from(&a, &s), 0);
	cr_assert_not(s.jvm_histogram, "off unless asked for");
	cr_assert_eq(s.jvm_histogram_max_pause_ms, 0);
	cr_assert_eq(pod_parse_annotations(on, strlen(on), &a), 0);
	cr_assert_eq(pod_settings_from(&a, &s), 0);
	cr_assert(s.jvm_histogram);
	cr_assert_eq(s.jvm_histogram_max_pause_ms, 2500);
	cr_assert_eq(pod_parse_annotations(bad, strlen(bad), &a), 0);
	cr_assert_eq(pod_settings_from(&a, &s), 2);
	cr_assert_not(s.jvm_histogram);
	cr_assert_eq(s.jvm_histogram_max_pause_ms, 0);
	cr_assert(strstr(s.errors, "oomlens.io/jvm-histogram=\"yes\": "
				   "expected true or false"),
		  "%s", s.errors);
	cr_assert(strstr(s.errors, "expected milliseconds"), "%s", s.errors);
}

Test(pod_parse, bad_values_fall_back)
{
	static const char f[] = "oomlens.io/thresholds=\"80,x\"\n"
				"oomlens.io/jvm=\"yes\"\n"
				"oomlens.io/trim=\"always\"\n"
				"oomlens.io/containers=\"App,\"\n"
				"oomlens.io/capture=\"false\"\n"
				"garbage line\n"
				"oomlens.io/broken=\"unterminated\n"
				"\n";
	struct pod_annotations a;
	struct pod_settings s;

	cr_assert_eq(pod_parse_annotations(f, strlen(f), &a), 0);
	cr_assert_eq(a.n, 5);
	cr_assert_eq(a.bad_lines, 2);
	cr_assert_str_eq(a.first_bad, "garbage line");
	cr_assert_eq(pod_settings_from(&a, &s), 4);
	cr_assert_eq(s.th.n, 3);
	cr_assert_eq(s.th.pct[2], 95);
	cr_assert(s.jvm);
	cr_assert_eq(s.trim, POD_TRIM_OFF);
	cr_assert_eq(s.n_containers, 0);
	cr_assert(s.capture_off);
	cr_assert(strstr(s.errors, "oomlens.io/thresholds=\"80,x\""));
	cr_assert(strstr(s.errors, "oomlens.io/containers=\"App,\""));
	cr_assert(strstr(s.errors, "expected off, test or on-pressure"));
}

struct cg_case {
	const char *name, *proc, *id, *uid;
};

Test(pod_parse, proc_cgroup)
{
	static const struct cg_case cases[] = {
		{"cgroupfs v1 burstable (measured here)",
		 "12:pids:/kubepods/burstable/pod1d2a-33/abc\n"
		 "9:memory:/kubepods/burstable/"
		 "pod6b0b7f4e-1b9e-4f6e-9c1e-1b2c3d4e5f60/"
		 "3f1c0ffee0123456789abcdef0123456789abcdef0123456789abcdef0123"
		 "\n"
		 "0::/\n",
		 "3f1c0ffee0123456789abcdef0123456789abcdef0123456789abcdef012"
		 "3",
		 "6b0b7f4e-1b9e-4f6e-9c1e-1b2c3d4e5f60"},
		{"cgroupfs v2 guaranteed", "0::/kubepods/podaa-bb/deadbeef\n",
		 "deadbeef", "aa-bb"},
		{"systemd containerd v1",
		 "4:cpu,cpuacct:/x\n"
		 "7:memory:/kubepods.slice/kubepods-burstable.slice/"
		 "kubepods-burstable-pod12_34_56.slice/"
		 "cri-containerd-0a1b2c.scope\n",
		 "0a1b2c", "12-34-56"},
		{"systemd crio v2 guaranteed",
		 "0::/kubepods.slice/kubepods-pod9_9.slice/crio-77ff.scope\n",
		 "77ff", "9-9"},
		{"systemd docker besteffort",
		 "0::/kubepods.slice/kubepods-besteffort.slice/"
		 "kubepods-besteffort-podab_cd.slice/docker-1234.scope\n",
		 "1234", "ab-cd"},
		{"crun container leaf",
		 "0::/kubepods.slice/kubepods-burstable.slice/"
		 "kubepods-burstable-podf_f.slice/crio-55aa.scope/container\n",
		 "55aa", "f-f"},
		{"podman cgroupfs v1 (measured here)",
		 "10:memory:/libpod_parent/3476/libpod-c2dbbb01\n"
		 "1:name=systemd:/libpod_parent/3476/libpod-c2dbbb01\n",
		 "c2dbbb01", ""},
		{"podman (no pod uid)",
		 "0::/machine.slice/libpod-c0ffee.scope/container\n", "c0ffee",
		 ""},
	};
	char id[128], uid[64], path[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cg_case *c = &cases[i];

		cr_assert_eq(pod_parse_proc_cgroup(c->proc, strlen(c->proc), id,
						   sizeof(id), uid, sizeof(uid),
						   path, sizeof(path)),
			     0, "%s", c->name);
		cr_assert_str_eq(id, c->id, "%s", c->name);
		cr_assert_str_eq(uid, c->uid, "%s", c->name);
		cr_assert_eq(path[0], '/');
	}
	cr_assert_eq(pod_parse_proc_cgroup("0::/\n", 5, id, sizeof(id), uid,
					   sizeof(uid), path, sizeof(path)),
		     -ENOENT);
	cr_assert_eq(pod_parse_proc_cgroup("garbage", 7, id, sizeof(id), uid,
					   sizeof(uid), path, sizeof(path)),
		     -ENOENT);
}

Test(pod_parse, limit_env_name)
{
	char n[64];

	pod_limit_env_name("my-app.v2", n, sizeof(n));
	cr_assert_str_eq(n, "OOMLENS_LIMIT_MY_APP_V2");
	pod_limit_env_name("abcdefghij", n, 20);
	cr_assert_str_eq(n, "OOMLENS_LIMIT_ABCDE");
}
