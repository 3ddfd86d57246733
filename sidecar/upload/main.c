/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-sidecar-upload: the sidecar's network half, a program apart so
 * that the sidecar, which reads what the pod's processes write, holds no
 * TLS stack, no service account token and no socket to the API server,
 * and its tools (pmap, jcmd, ...) start without relocating OpenSSL's
 * tables (docs/build.md). `oomlens-sidecar run` in a pod starts it once
 * (sidecar/src/pod_upload.c), before its own seccomp filter, with a socket
 * as its stdin: a byte on it is "a snapshot is new", its end is "the
 * sidecar stops". It keeps no capability and has a seccomp allow-list of
 * its own. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/log.h"
#include "base/util.h"
#include "kube/kube.h"
#include "upload.h"

#define UPLOAD_GAP_US (10ull * 1000000)

/* The calls of an HTTPS client (libcurl, OpenSSL, glibc's resolver)
 * beyond the base list, which has those on sockets already open; no
 * capability. */
static const char *const upload_syscalls[] = {"socket", "socketpair", "connect",
					      "sendmmsg", NULL};
static const struct privs_spec upload_privs = {
	.caps = 0,
	.seccomp = true,
	.syscalls = upload_syscalls,
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: oomlens-sidecar-upload run --namespace NS --pod "
		"NAME --uid UID --container NAME\n"
		"         --spool DIR --cgroup PATH [--node NAME]\n"
		"Started by `oomlens-sidecar run` in a pod, with a socket "
		"as stdin: each byte\nread says a snapshot is new (OOMBundle "
		"snap-NAME upserted, at most every 10 s);\nend of file: what "
		"is pending is uploaded, then it exits.\n");
}

static int cmd_run(int argc, char **argv, const struct cli_globals *g)
{
	static const struct option opts[] = {
		{"namespace", required_argument, NULL, 'n'},
		{"pod", required_argument, NULL, 'p'},
		{"uid", required_argument, NULL, 'u'},
		{"node", required_argument, NULL, 'N'},
		{"container", required_argument, NULL, 'c'},
		{"spool", required_argument, NULL, 's'},
		{"cgroup", required_argument, NULL, 'g'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct upload_pod p = {.node = ""};
	struct kube_config *cfg = NULL;
	struct kube_client *kube = NULL;
	struct sigaction ign = {.sa_handler = SIG_IGN};
	int o, r;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'n':
			p.ns = optarg;
			break;
		case 'p':
			p.pod = optarg;
			break;
		case 'u':
			p.uid = optarg;
			break;
		case 'N':
			p.node = optarg;
			break;
		case 'c':
			p.container = optarg;
			break;
		case 's':
			p.spool = optarg;
			break;
		case 'g':
			p.cgroup = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "run: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	if (!p.ns || !p.pod || !p.uid || !p.container || !p.spool ||
	    !p.cgroup) {
		fprintf(stderr, "run: --namespace, --pod, --uid, --container, "
				"--spool and --cgroup are all needed\n");
		usage(stderr);
		return 2;
	}
	/* it ends when the sidecar closes its socket, not on the terminal's
	 * or the runtime's signal to the sidecar: what is pending goes out */
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGTERM, &ign, NULL);
	r = kube_config_in_cluster(NULL, &cfg);
	if (r == -ENOENT) {
		log_info("no service account in this pod: snapshots stay in "
			 "the spool (the agent reads it through the node)");
		return 0;
	}
	if (r == 0)
		r = kube_client_new(cfg, NULL, &kube);
	kube_config_free(cfg);
	if (r < 0) {
		log_warn("cannot upload snapshots: %s, ignoring", strerror(-r));
		return 0;
	}
	if (cli_enter_steady_state(&upload_privs, g) < 0) {
		kube_client_free(kube);
		return 1;
	}
	log_info("snapshots go to OOMBundle %s/snap-%s as well, if this "
		 "service account may write it (the chart's upload fallback)",
		 p.ns, p.pod);
	r = upload_loop(&p, kube, STDIN_FILENO, UPLOAD_GAP_US);
	kube_client_free(kube);
	return r;
}

static const struct cli_command commands[] = {
	{.name = "run",
	 .fn = cmd_run,
	 .help = "upload the sidecar's snapshots as OOMBundle snap-<pod>"},
};

int main(int argc, char **argv)
{
	log_set_program("oomlens-sidecar-upload");
	return cli_dispatch("oomlens-sidecar-upload", commands,
			    ARRAY_SIZE(commands), argc, argv);
}
