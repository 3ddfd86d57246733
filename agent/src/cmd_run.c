/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-agent run: the detector. One epoll loop over the cgroup
 * notifications, /dev/kmsg, a short timer and signals; it never waits on
 * the network. */
#include <fcntl.h>
#include <getopt.h>
#include <linux/capability.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#include "agent.h"
#include "forensics/bundle.h"
#include "commands.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/parse.h"
#include "base/memlock.h"
#include "base/strbuf.h"
#include "detector/intake.h"
/* http, metrics and the 1 Hz timeline (hooks marked "obs hook") */
#include "obs/forecast_sampler.h"
#include "obs/http.h"
#include "obs/metrics_agent.h"
/* cluster mode: its state, hooks and sources */
#include "publish/cluster.h"
#include "run_cluster.h"
/* standalone mode's publishing: its target's options */
#include "publish/target_http.h"
#include "run_standalone.h"

/* Capabilities run keeps, measured (docs/privileges.md). It opens
 * /dev/kmsg (CAP_SYSLOG with dmesg_restrict=1) and raises its open-file
 * limit before it drops them; afterwards it reads cgroup files, spools
 * and /proc/<pid>/cgroup, and writes its state directory. */
static const struct privs_spec run_privs = {
	.caps = PRIVS_CAP(CAP_DAC_READ_SEARCH),
	.seccomp = true,
};
/* Cluster mode talks to the API server, standalone mode with
 * --publish-url to its collector (libcurl: sockets, its wakeup
 * socketpair, glibc's resolver). No exec: an exec credential plugin is
 * refused at start (docs/cluster-mode.md). */
static const char *const net_syscalls[] = {
	"socket",     "socketpair",  "connect",	    "getsockopt",
	"setsockopt", "getsockname", "getpeername", "sendto",
	"recvfrom",   "sendmsg",     "recvmsg",	    "sendmmsg",
	"recvmmsg",   "shutdown",    "bind",	    NULL};
static const struct privs_spec net_privs = {
	.caps = PRIVS_CAP(CAP_DAC_READ_SEARCH),
	.seccomp = true,
	.syscalls = net_syscalls,
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: oomlens-agent run --state-dir DIR [--kubeconfig FILE]\n"
		"          [--kubelet-root /var/lib/kubelet] [--namespaces "
		"NS,...]\n"
		"          [--exclude-namespaces NS,...] "
		"[--keep-per-namespace 50]\n"
		"          [--max-age 30d] [--max-bytes-per-namespace 16Mi]\n"
		"          [--retention-interval 10m]\n"
		"          [--host-root /host]   (cluster mode; env "
		"NODE_NAME)\n"
		"       oomlens-agent run --standalone --watch SUBTREE "
		"[--watch ...]\n"
		"          --state-dir DIR [--host-root /] [--spool-dir DIR "
		"...] "
		"[--from-start]\n"
		"          [--publish-url https://HOST/PATH "
		"[--publish-token-file FILE]\n"
		"           [--publish-ca-file FILE]]  "
		"(docs/publish-http.md)\n"
		"       both: [--bundle-max-size SIZE] (cluster 256Ki, "
		"standalone 900Ki)\n"
		"          [--metrics-addr HOST:PORT] [--metrics-insecure]\n"
		"          [--metrics-tls-cert FILE --metrics-tls-key FILE]  "
		"(docs/metrics.md)\n"
		"          [--reports-keep 200] [--reports-max-bytes 256Mi]\n"
		"\n"
		"Cluster mode watches every pod's memory cgroup on the node, "
		"writes one\n"
		"bundle per OOM kill to DIR/reports/ and publishes it as an "
		"OOMReport,\n"
		"an OOMBundle and a Warning Event on the pod. --standalone "
		"watches each\n"
		"SUBTREE of the memory hierarchy and writes bundles; with "
		"--publish-url it\n"
		"also POSTs each kill (its report and bundle) to that "
		"collector, retried\n"
		"until it answers 2xx (the queue survives restarts; "
		"Idempotency-Key per kill).\n"
		"\n"
		"DIR/reports/ keeps at most --reports-keep kills and "
		"--reports-max-bytes\n"
		"bytes (K, M, G suffixes): the oldest kills' files go first, "
		"at start and\n"
		"after each bundle; a bundle the publish queue still needs is "
		"kept.\n");
}

/* "a,b,c" into list (pointers into a copy that lives as long as the
 * process: options are parsed once). */
static int split_list(const char *arg, const char **list, int *n)
{
	char *copy = strdup(arg), *p = copy;

	if (!copy)
		return -ENOMEM;
	while (p && *p) {
		char *comma = strchr(p, ',');

		if (comma)
			*comma = '\0';
		if (*p && *n == CLUSTER_MAX_NS)
			return -E2BIG;
		if (*p)
			list[(*n)++] = p;
		p = comma ? comma + 1 : NULL;
	}
	return 0;
}

/* "30d", "12h", "90m", "3600s", "3600". */
static int parse_age(const char *s, uint64_t *ret)
{
	size_t n = strlen(s);
	uint64_t v, mul = 1;

	if (n && strchr("dhms", s[n - 1])) {
		mul = s[n - 1] == 'd'	? 86400
		      : s[n - 1] == 'h' ? 3600
		      : s[n - 1] == 'm' ? 60
					: 1;
		n--;
	}
	if (parse_u64_n(s, n, &v) < 0 || v == 0)
		return -EINVAL;
	*ret = v * mul;
	return 0;
}

static int opt_error(const char *opt, const char *arg, const char *want)
{
	fprintf(stderr, "run: %s \"%s\": %s\n", opt, arg, want);
	return -EINVAL;
}

/* Within what one API object holds, and room for the essential files. */
static int parse_bundle_max(const char *arg, size_t *ret)
{
	uint64_t v;

	if (parse_size(arg, &v) < 0 || v < BUNDLE_MIN_BYTES ||
	    v > BUNDLE_MAX_BYTES)
		return opt_error("--bundle-max-size", arg,
				 "a size from 64Ki to 900Ki");
	*ret = (size_t)v;
	return 0;
}

static int parse_cluster_opt(int c, const char *arg, struct cluster_opts *k)
{
	unsigned u;

	switch (c) {
	case 'K':
		k->kubeconfig = arg;
		return 0;
	case 'L':
		k->kubelet_root = arg;
		return 0;
	case 'N':
		return split_list(arg, k->namespaces, &k->n_namespaces) < 0
			       ? opt_error("--namespaces", arg,
					   "at most 32 names")
			       : 0;
	case 'X':
		return split_list(arg, k->exclude, &k->n_exclude) < 0
			       ? opt_error("--exclude-namespaces", arg,
					   "at most 32 names")
			       : 0;
	case 'P':
		if (parse_uint(arg, &u) < 0 || u == 0)
			return opt_error("--keep-per-namespace", arg,
					 "a number >= 1");
		k->keep_per_namespace = u;
		return 0;
	case 'A':
		return parse_age(arg, &k->max_age_s) < 0
			       ? opt_error("--max-age", arg,
					   "e.g. 30d, 12h, 90m")
			       : 0;
	case 'I':
		return parse_age(arg, &k->retention_interval_s) < 0
			       ? opt_error("--retention-interval", arg,
					   "e.g. 10m, 30s")
			       : 0;
	case 'Y':
		return parse_size(arg, &k->max_bytes_per_namespace) < 0 ||
				       k->max_bytes_per_namespace < (1u << 20)
			       ? opt_error("--max-bytes-per-namespace", arg,
					   "a size of at least 1Mi, e.g. 16Mi")
			       : 0;
	default:
		return -EINVAL;
	}
}

/* STATE/reports/'s limits, both modes (kill/reports.c). */
#define REPORTS_KEEP 200
#define REPORTS_MAX_BYTES (256ull << 20)

static int parse_reports_opt(int c, const char *arg, struct agent_opts *o)
{
	uint64_t v;
	unsigned u;

	if (c == 'R') {
		if (parse_uint(arg, &u) < 0 || u == 0)
			return opt_error("--reports-keep", arg,
					 "a number of kills >= 1");
		o->reports_keep = u;
		return 0;
	}
	if (parse_size(arg, &v) < 0 || v == 0)
		return opt_error("--reports-max-bytes", arg,
				 "a size > 0, e.g. 256Mi, 1G, 500000");
	o->reports_max_bytes = v;
	return 0;
}

static const struct option longopts[] = {
	{"standalone", no_argument, NULL, 'S'},
	{"watch", required_argument, NULL, 'w'},
	{"state-dir", required_argument, NULL, 'd'},
	{"spool-dir", required_argument, NULL, 's'},
	{"from-start", no_argument, NULL, 'F'},
	{"kubeconfig", required_argument, NULL, 'K'},
	{"kubelet-root", required_argument, NULL, 'L'},
	{"namespaces", required_argument, NULL, 'N'},
	{"exclude-namespaces", required_argument, NULL, 'X'},
	{"keep-per-namespace", required_argument, NULL, 'P'},
	{"max-age", required_argument, NULL, 'A'},
	{"max-bytes-per-namespace", required_argument, NULL, 'Y'},
	{"retention-interval", required_argument, NULL, 'I'},
	{"bundle-max-size", required_argument, NULL, 'Z'},
	{"reports-keep", required_argument, NULL, 'R'},
	{"reports-max-bytes", required_argument, NULL, 'B'},
	{"publish-url", required_argument, NULL, 'U'},
	{"publish-token-file", required_argument, NULL, 'T'},
	{"publish-ca-file", required_argument, NULL, 'C'},
	{"help", no_argument, NULL, 'h'},
	{0}};

/* What run is given: the detector's options, cluster mode's, the HTTP
 * server's. */
struct run_opts {
	struct agent_opts agent;
	struct cluster_opts cluster;	 /* without --standalone */
	struct http_target_opts publish; /* --standalone --publish-url */
	struct agent_http_opts http;
};

/* Standalone mode's publishing: the token and CA files go with a URL
 * (the URL itself is checked when the target is made). */
static int check_publish(const struct http_target_opts *p)
{
	if (!p->url && (p->token_file || p->ca_file)) {
		fprintf(stderr, "run: --publish-token-file and "
				"--publish-ca-file go with --publish-url\n");
		return -EINVAL;
	}
	return 0;
}

/* Checks what each mode needs, with a message per missing piece. */
static int check_mode(struct run_opts *ro)
{
	struct agent_opts *o = &ro->agent;
	struct cluster_opts *k = &ro->cluster;

	if (!o->state_dir) {
		fprintf(stderr, "run: --state-dir is required (a hostPath "
				"in a DaemonSet: bundles and the publish "
				"queue live there)\n");
		return -EINVAL;
	}
	if (!o->bundle_max)
		o->bundle_max =
			o->standalone ? BUNDLE_MAX_BYTES : BUNDLE_DEFAULT_BYTES;
	if (o->standalone) {
		if (!o->n_watch) {
			fprintf(stderr, "run: --standalone needs at least one "
					"--watch SUBTREE\n");
			return -EINVAL;
		}
		return check_publish(&ro->publish);
	}
	if (ro->publish.url || ro->publish.token_file || ro->publish.ca_file) {
		fprintf(stderr, "run: --publish-url, --publish-token-file and "
				"--publish-ca-file are for --standalone; "
				"cluster mode publishes to the API server\n");
		return -EINVAL;
	}
	if (o->n_watch || o->n_spool) {
		fprintf(stderr, "run: --watch and --spool-dir are for "
				"--standalone; cluster mode watches the pods' "
				"cgroups and finds spools by pod\n");
		return -EINVAL;
	}
	k->node = getenv("NODE_NAME");
	if (!k->node || !*k->node) {
		fprintf(stderr,
			"run: NODE_NAME is not set. Cluster mode needs the "
			"node's name from the Downward API:\n"
			"  env: [{name: NODE_NAME, valueFrom: {fieldRef: "
			"{fieldPath: spec.nodeName}}}]\n"
			"(or pass --standalone on a host without "
			"Kubernetes)\n");
		return -EINVAL;
	}
	if (!k->kubelet_root)
		k->kubelet_root = "/var/lib/kubelet";
	if (!k->keep_per_namespace)
		k->keep_per_namespace = 50;
	if (!k->max_age_s)
		k->max_age_s = 30ull * 86400;
	if (!k->retention_interval_s)
		k->retention_interval_s = 600;
	if (!k->max_bytes_per_namespace)
		k->max_bytes_per_namespace = 16ull << 20;
	return 0;
}

static int parse_opts(int argc, char **argv, const struct cli_globals *g,
		      struct run_opts *ro)
{
	struct agent_opts *o = &ro->agent;
	int c;

	o->host_root = g->host_root;
	o->reports_keep = REPORTS_KEEP;
	o->reports_max_bytes = REPORTS_MAX_BYTES;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			o->standalone = true;
			break;
		case 'w':
			if (o->n_watch == AGENT_MAX_WATCH || optarg[0] != '/') {
				fprintf(stderr,
					"run: --watch takes a path "
					"starting with '/', at most %d\n",
					AGENT_MAX_WATCH);
				return -EINVAL;
			}
			o->watch[o->n_watch++] = optarg;
			break;
		case 'd':
			o->state_dir = optarg;
			break;
		case 's':
			if (o->n_spool == AGENT_MAX_SPOOL)
				return -EINVAL;
			o->spool[o->n_spool++] = optarg;
			break;
		case 'F':
			o->from_start = true;
			break;
		case 'Z':
			if (parse_bundle_max(optarg, &o->bundle_max) < 0)
				return -EINVAL;
			break;
		case 'R':
		case 'B':
			if (parse_reports_opt(c, optarg, o) < 0)
				return -EINVAL;
			break;
		case 'U':
			ro->publish.url = optarg;
			break;
		case 'T':
			ro->publish.token_file = optarg;
			break;
		case 'C':
			ro->publish.ca_file = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case '?':
			return -EINVAL;
		default:
			if (parse_cluster_opt(c, optarg, &ro->cluster) < 0)
				return -EINVAL;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return -EINVAL;
	}
	return check_mode(ro);
}

static int read_boot_id(struct agent *a)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	size_t j = 0;
	int r;

	strbuf_init(&sb, 4096);
	r = read_line_at(a->host.root_fd, "proc/sys/kernel/random/boot_id",
			 &sb);
	if (r < 0)
		return r;
	for (size_t i = 0; i < sb.len && j < sizeof(a->boot_id) - 1; i++)
		if (sb.buf[i] != '-')
			a->boot_id[j++] = sb.buf[i];
	a->boot_id[j] = '\0';
	return j ? 0 : -EBADMSG;
}

static int open_state(struct agent *a)
{
	char *abs;
	int r;

	r = mkdir_p_at(AT_FDCWD, a->opts.state_dir, 0750);
	if (r < 0)
		return r;
	abs = realpath(a->opts.state_dir, NULL);
	if (!abs)
		return -errno;
	a->opts.state_dir = abs; /* kept for the process lifetime */
	a->state_fd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (a->state_fd < 0)
		return -errno;
	r = mkdir_p_at(a->state_fd, "reports", 0750);
	if (r < 0)
		return r;
	/* the agent's own directory, but it deletes in it: never through
	 * a symlink put in its place */
	a->reports_fd = openat(a->state_fd, "reports",
			       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return a->reports_fd < 0 ? -errno : 0;
}

/* v1 costs two fds per watched cgroup: take the hard limit. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			log_warn("cannot raise the open-file limit: %s, "
				 "ignoring",
				 strerror(errno));
	}
}

/* Cluster mode watches the pods' cgroups: kubepods (cgroupfs driver)
 * and kubepods.slice (systemd), whichever the node has. */
static int cluster_watch_list(struct agent *a)
{
	static const char *const roots[] = {"/kubepods", "/kubepods.slice"};

	for (size_t i = 0; i < ARRAY_SIZE(roots); i++)
		if (faccessat(a->cgfs.mem_fd, roots[i] + 1, F_OK, 0) == 0)
			a->opts.watch[a->opts.n_watch++] = roots[i];
	if (a->opts.n_watch)
		return 0;
	log_error("no kubepods cgroup (kubepods/ or kubepods.slice/) in the "
		  "memory hierarchy under \"%s\": is --host-root right (the "
		  "DaemonSet mounts the host's / at /host), and does the "
		  "kubelet run with --cgroups-per-qos?",
		  a->opts.host_root);
	return -ENOENT;
}

/* One run: the detector's state, and what the run owns beside it. */
struct run {
	struct agent a;
	struct run_opts o;
	struct run_cluster *cluster; /* NULL: standalone */
	/* NULL: cluster mode, or standalone without --publish-url */
	struct run_standalone *standalone;
	struct agent_http *http; /* NULL: not serving */
};

static int setup(struct run *run)
{
	struct agent *a = &run->a;
	int r;

	raise_nofile();
	r = host_open(a->opts.host_root, &a->host);
	if (r < 0) {
		log_error("cannot open host root \"%s\": %s", a->opts.host_root,
			  strerror(-r));
		return r;
	}
	r = cgroup_fs_open(&a->host, &a->cgfs);
	if (r < 0) {
		log_error("no memory cgroup controller under \"%s\": %s",
			  a->opts.host_root, strerror(-r));
		return r;
	}
	agent_mount_setup(a);
	if (!a->opts.standalone && (r = cluster_watch_list(a)) < 0)
		return r;
	r = correlate_new(a->opts.watch, (size_t)a->opts.n_watch, &a->corr);
	if (r < 0) {
		log_error("kill correlator: %s", strerror(-r));
		return r;
	}
	r = open_state(a);
	if (r < 0) {
		log_error("state dir \"%s\": %s", a->opts.state_dir,
			  strerror(-r));
		return r;
	}
	/* the registry before the publish queue loads: its depth is set
	 * from the files left by the previous run */
	r = agent_metrics_new(&a->metrics);
	if (r < 0) {
		log_error("metrics: %s", strerror(-r));
		return r;
	}
	if (!a->opts.standalone) {
		strlcpy_safe(a->node, run->o.cluster.node, sizeof(a->node));
		if (run_cluster_new(a, &run->o.cluster, &run->cluster) < 0)
			return -EINVAL;
	} else {
		if (gethostname(a->node, sizeof(a->node)) < 0)
			strlcpy_safe(a->node, "unknown", sizeof(a->node));
		if (run_standalone_new(a, &run->o.publish, &run->standalone) <
		    0)
			return -EINVAL;
	}
	r = read_boot_id(a);
	if (r < 0)
		log_warn("cannot read boot_id: %s, ignoring", strerror(-r));
	r = agent_state_load(a);
	if (r < 0)
		log_warn("state file in \"%s\" unreadable (%s), starting fresh",
			 a->opts.state_dir, strerror(-r));
	agent_reports_prune(a); /* limits lowered since the last run */
	return 0;
}

/* A safety net for what inotify cannot say: cgroups whose memory files
 * appeared late, an inotify queue overflow, and on a v1 node whose cgroup
 * mount is read-only the only count of a kill the kernel log missed. */
#define RESCAN_US 5000000

static int setup_watch(struct agent *a)
{
	int r = cgroup_watch_new(&a->cgfs, &a->watch);

	if (r < 0) {
		log_error("cgroup watcher: %s", strerror(-r));
		return r;
	}
	for (int i = 0; i < a->opts.n_watch; i++) {
		r = cgroup_watch_add_tree(a->watch, a->opts.watch[i]);
		if (r < 0) {
			log_error("cannot watch cgroup \"%s\" (%s): %s",
				  a->opts.watch[i],
				  a->cgfs.mode == CGROUP_V2 ? "v2" : "v1",
				  strerror(-r));
			return r;
		}
	}
	r = cgroup_watch_unnotified(a->watch);
	if (r)
		log_warn("cgroup v1 OOM notifications are off: cannot write "
			 "cgroup.event_control (%s; the chart's cgroupReadOnly "
			 "is for cgroup v2 nodes): kills are found through "
			 "the kernel log, and the cgroups' oom_kill counters "
			 "are re-read every %d s",
			 strerror(r), RESCAN_US / 1000000);
	log_info("watching %zu memory cgroups (cgroup %s), state in \"%s\"",
		 cgroup_watch_count(a->watch),
		 a->cgfs.mode == CGROUP_V2 ? "v2" : "v1", a->opts.state_dir);
	return 0;
}

/* Kills with no kernel report that get no bundle of their own
 * (correlate.h, CORR_COUNTED): counted and said, one line a decision. */
static void counted_only(struct agent *a, const struct corr_kill *k)
{
	char since[64] = "at once";

	a->kills_counted_only += k->kills;
	agent_metrics_unreported_kills(a->metrics, false, k->kills);
	if (k->since_bundle_us != UINT64_MAX)
		snprintf(since, sizeof(since), "%.1f s",
			 (double)k->since_bundle_us / 1e6);
	log_warn("%llu kill(s) in \"%s\" counted by the cgroup but no "
		 "kernel report was read, %s after its last such bundle: "
		 "counted, not bundled (one bundle without a kernel report "
		 "a cgroup every %llu s)",
		 (unsigned long long)k->kills, k->cgroup, since,
		 (unsigned long long)(CORR_UNREPORTED_GAP_US / 1000000));
}

static void act_on(struct agent *a, struct corr_kill *k)
{
	const struct oom_report *r = &k->report;
	int q;

	switch (k->outcome) {
	case CORR_UNWATCHED:
		a->reports_ignored++;
		log_debug("oom kill in unwatched cgroup \"%s\", ignoring",
			  k->cgroup);
		return;
	case CORR_UNMATCHED:
		a->reports_ignored++;
		log_warn("kill of pid %d (\"%s\"): %s, ignoring",
			 r->n_victims ? r->victims[0].pid : 0,
			 r->n_victims ? r->victims[0].comm : "", k->reason);
		return;
	case CORR_COUNTED:
		counted_only(a, k);
		return;
	case CORR_CAPTURE:
		break;
	}
	if (k->how_found == CORR_NOTIFICATION) {
		agent_metrics_unreported_kills(a->metrics, true, 1);
		log_warn("kill in \"%s\" counted by the cgroup but no kernel "
			 "report was read; writing the cgroup state alone",
			 k->cgroup);
	} else if (k->how_found != CORR_KERNEL_REPORT)
		log_debug("kill of pid %d: cgroup \"%s\" by %s (%s)",
			  r->n_victims ? r->victims[0].pid : 0, k->cgroup,
			  corr_how_name(k->how_found),
			  corr_confidence_name(k->confidence));
	q = agent_capture(a, k);
	if (q < 0)
		log_error("bundle for kill in \"%s\" failed: %s", k->cgroup,
			  strerror(-q));
	/* after the kill is staged in the publish queue: its bundle is
	 * spared (a failed capture may have left its report) */
	agent_reports_prune(a);
	memlock_give_back(); /* what the pod's files took, freed */
}

/* Acts on every decision of the correlator, in its order. */
static void take_decisions(struct agent *a)
{
	struct corr_kill k;

	while (correlate_pop(a->corr, &k) == 1) {
		/* read first: a kill waiting for its pod's snapshot takes
		 * the report over (run_late_snap.c) */
		uint64_t seq = k.report.seq_last;

		act_on(a, &k);
		intake_save_progress(a, seq);
		corr_kill_release(&k);
	}
}

/* The finished reports, each into the correlator (detector/intake.c),
 * its decisions taken at once. */
static void pop_reports(struct agent *a)
{
	enum intake_pop got;
	bool complete;

	while ((got = intake_pop(a, &complete)) != INTAKE_NONE) {
		agent_metrics_kmsg_report(a->metrics, complete); /* obs hook */
		if (got == INTAKE_TAKEN)
			take_decisions(a);
	}
}

/* Reads /dev/kmsg until it runs dry, each report taken as it finishes.
 * Returns the number of records read. */
static size_t drain_kmsg(struct agent *a)
{
	size_t n = 0;

	while (intake_read(a, &n) == 1)
		pop_reports(a);
	return n;
}

struct loop;
/* What a source's readiness does; true ends the loop (a stop signal). */
typedef bool loop_fn(struct loop *l, void *ud);
/* The loop's sources: each fd in the epoll set and its callback, which
 * the event carries (data.ptr). The detector's own are added by
 * loop_setup(); the forecast sampler and a mode (agent.h, struct
 * agent_source: cluster mode's, run_cluster.c) add theirs. */
#define LOOP_MAX_SOURCES 8
struct loop_source {
	int fd;
	loop_fn *ready;
	void *ud;
};

struct loop {
	struct run *run;
	struct agent *a;
	int ep, sfd, tfd, rescan_fd;
	struct loop_source src[LOOP_MAX_SOURCES];
	size_t n_src;
	bool timer_armed;
	bool oom_seen; /* an OOM notification in this dispatch */
};

static void arm_timer(struct loop *l, uint64_t us)
{
	struct itimerspec its = {
		.it_value = {.tv_sec = (time_t)(us / 1000000u),
			     .tv_nsec = (long)(us % 1000000u) * 1000},
	};

	timerfd_settime(l->tfd, 0, &its, NULL);
	l->timer_armed = true;
}

/* The cgroup's tasks now, while the victim may still be among them. */
static void read_pids(const struct agent *a, const char *cgroup, int *pids,
		      size_t *n)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb, 65536);
	(void)cgroup_read_file(&a->cgfs, cgroup, "cgroup.procs", 65535, &sb);
	cgroup_parse_procs(sb.buf, sb.len, pids, n, CORR_MAX_PIDS);
}

static void on_cgroup_event(const struct cgroup_event *ev, void *ud)
{
	struct agent *a = ((struct loop *)ud)->a;
	struct cgroup_state state;
	int pids[CORR_MAX_PIDS];
	struct corr_notification n = {
		.path = ev->path,
		.mono_us = ev->mono_us,
		.since_us = ev->since_us,
		.oom_kill = ev->oom_kill,
		.delta = ev->oom_kill_delta,
		.pids = pids,
	};

	if (ev->type == CGE_ADDED || ev->type == CGE_REMOVED) {
		log_debug("cgroup %s \"%s\"",
			  ev->type == CGE_ADDED ? "added" : "removed",
			  ev->path);
		return;
	}
	((struct loop *)ud)->oom_seen = true;
	log_debug("oom notification for \"%s\" (oom_kill %llu, +%llu)",
		  ev->path, (unsigned long long)ev->oom_kill,
		  (unsigned long long)ev->oom_kill_delta);
	/* The tasks at every notification: the OOM is signalled before the
	 * kill (delta 0: the v1 eventfd fired before the kill was counted;
	 * the watcher reports the late count as another event). */
	read_pids(a, ev->path, pids, &n.n_pids);
	/* The counters now: the cgroup may be removed soon after. */
	if (ev->oom_kill_delta &&
	    cgroup_read_state(&a->cgfs, ev->path, &state) >= 0)
		n.state = &state;
	if (correlate_notify(a->corr, &n, now_monotonic_us()) < 0)
		log_error("oom notification for \"%s\": out of memory, "
			  "ignoring",
			  ev->path);
}

/* Adds fd to the epoll set; ready(l, ud) is called when it is
 * readable. */
static int loop_add(struct loop *l, int fd, loop_fn *ready, void *ud)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct loop_source *s;

	if (l->n_src == LOOP_MAX_SOURCES)
		return -ENOSPC;
	s = &l->src[l->n_src];
	s->fd = fd;
	s->ready = ready;
	s->ud = ud;
	ev.data.ptr = s;
	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	l->n_src++;
	return 0;
}

static loop_fn on_signal, on_watch, on_kmsg, on_timer, on_rescan;

static int loop_setup(struct loop *l)
{
	sigset_t mask;
	int r;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	l->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	l->rescan_fd =
		timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	if (l->sfd < 0 || l->tfd < 0 || l->rescan_fd < 0 || l->ep < 0)
		return -errno;
	timerfd_settime(l->rescan_fd, 0,
			&(struct itimerspec){
				.it_value = {RESCAN_US / 1000000, 0},
				.it_interval = {RESCAN_US / 1000000, 0},
			},
			NULL);
	if ((r = loop_add(l, l->sfd, on_signal, NULL)) < 0 ||
	    (r = loop_add(l, l->tfd, on_timer, NULL)) < 0 ||
	    (r = loop_add(l, l->rescan_fd, on_rescan, NULL)) < 0 ||
	    (intake_fd(l->a) >= 0 &&
	     (r = loop_add(l, intake_fd(l->a), on_kmsg, NULL)) < 0) ||
	    (r = loop_add(l, cgroup_watch_fd(l->a->watch), on_watch, NULL)) < 0)
		return r;
	return 0;
}

/* A mode's source (struct agent_source). */
static bool on_source(struct loop *l, void *ud)
{
	const struct agent_source *src = ud;

	(void)l;
	src->ready(src->ud);
	return false;
}

/* The mode's sources (cluster mode: pods from the watch, snapshots from
 * the publisher), kept in src for the loop's life. */
static int loop_add_mode(struct loop *l, struct agent_source *src, size_t max)
{
	size_t n = run_cluster_sources(l->run->cluster, src, max);
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++)
		r = loop_add(l, src[i].fd, on_source, &src[i]);
	return r;
}

/* The forecast sampler's 1 Hz tick (obs hook); in cluster mode also when
 * /readyz is judged (the standalone agent is ready once its detector
 * runs). */
static bool on_sample(struct loop *l, void *ud)
{
	(void)ud;
	forecast_sampler_tick(l->a->sampler);
	run_cluster_tick(l->run->cluster);
	return false;
}

/* kmsg ran dry: the report in progress, once closed, taken. */
static void after_drain(struct loop *l, size_t n_read)
{
	if (intake_settle(l->a, n_read))
		pop_reports(l->a);
}

/* The one timer serves, nearest first: polling a report in progress, a
 * report waiting for its notification, notifications waiting for theirs. */
static void rearm(struct loop *l)
{
	uint64_t now = now_monotonic_us(), t = intake_poll_us(l->a);

	if (t) {
		arm_timer(l, t);
		return;
	}
	t = correlate_next_tick(l->a->corr, now);
	if (t != UINT64_MAX)
		arm_timer(l, t > now ? t - now : 1);
}

static bool on_watch(struct loop *l, void *ud)
{
	(void)ud;
	cgroup_watch_dispatch(l->a->watch, on_cgroup_event, l);
	after_drain(l, drain_kmsg(l->a));
	correlate_tick(l->a->corr, now_monotonic_us());
	take_decisions(l->a);
	if (l->oom_seen)
		intake_expect(l->a); /* its report is on the way */
	l->oom_seen = false;
	return false;
}

static bool on_kmsg(struct loop *l, void *ud)
{
	(void)ud;
	after_drain(l, drain_kmsg(l->a));
	return false;
}

static bool on_timer(struct loop *l, void *ud)
{
	uint64_t exp;

	(void)ud;
	if (read(l->tfd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
		log_warn("timerfd: %s, ignoring", strerror(errno));
	l->timer_armed = false;
	/* Notifications the loop has not taken yet come before any deadline
	 * (on_watch ticks after taking them): a late agent must not give up
	 * on what is already there. */
	return on_watch(l, NULL);
}

static bool on_rescan(struct loop *l, void *ud)
{
	uint64_t exp;
	int r;

	(void)ud;
	if (read(l->rescan_fd, &exp, sizeof(exp)) < 0 && errno != EAGAIN)
		return false;
	intake_probe(l->a); /* until one comes back */
	r = cgroup_watch_rescan(l->a->watch);
	if (r < 0)
		log_warn("cgroup rescan: %s, ignoring", strerror(-r));
	return false;
}

static bool on_signal(struct loop *l, void *ud)
{
	struct signalfd_siginfo si;

	(void)ud;
	while (read(l->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP)
			continue;
		log_info("signal %u: finishing", si.ssi_signo);
		return true;
	}
	return false;
}

static int run_loop(struct loop *l)
{
	struct epoll_event evs[8];

	for (;;) {
		int n = epoll_wait(l->ep, evs, 8, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (int i = 0; i < n; i++) {
			struct loop_source *s = evs[i].data.ptr;

			if (s->ready(l, s->ud))
				return 0;
		}
		rearm(l);
	}
}

static void finish(struct agent *a)
{
	/* The bundle in progress: whatever the ring buffer already holds. */
	drain_kmsg(a);
	if (intake_close(a))
		pop_reports(a);
	/* The kills still waiting for a report: decided now, since the
	 * state saved next counts them as seen. */
	correlate_flush(a->corr, now_monotonic_us());
	take_decisions(a);
	agent_state_save(a);
	correlate_free(a->corr);
	a->corr = NULL;
	log_info("stopped: %llu bundles written, %llu kills outside the "
		 "watched cgroups, %llu without a kernel report counted, not "
		 "bundled",
		 (unsigned long long)a->reports_written,
		 (unsigned long long)a->reports_ignored,
		 (unsigned long long)a->kills_counted_only);
}

/* The obs hooks, before seccomp (the threads inherit it): the forecast
 * sampler, its tick a source of the loop (by pod in cluster mode, with
 * OOMPredicted as Events), and the HTTP server. */
static int start_obs(struct loop *l)
{
	struct run *run = l->run;
	struct agent *a = l->a;
	int r;

	r = forecast_sampler_new(a, &a->sampler);
	if (r < 0)
		return r;
	run_cluster_forecast(run->cluster, a->sampler);
	r = loop_add(l, forecast_sampler_fd(a->sampler), on_sample, NULL);
	if (r < 0) {
		log_error("cgroup timeline timer: %s", strerror(-r));
		return r;
	}
	/* /metrics reviews its callers' tokens with the publisher's client
	 * (TokenReview, SubjectAccessReview); without one it answers 503 */
	return agent_http_start(&run->o.http, a->opts.standalone, a->metrics,
				run_cluster_client(run->cluster), &run->http);
}

/* After the loop: the HTTP server, the detector's last kills, cluster
 * mode (what waits for a snapshot is published, the threads stopped),
 * the metrics. */
static void stop(struct run *run)
{
	struct agent *a = &run->a;

	agent_http_stop(run->http); /* obs hook */
	run->http = NULL;
	finish(a);
	forecast_sampler_free(a->sampler);
	a->sampler = NULL;
	run_cluster_free(run->cluster);
	run->cluster = NULL;
	run_standalone_free(run->standalone);
	run->standalone = NULL;
	agent_metrics_free(a->metrics);
	a->metrics = NULL;
}

/* Until the loop runs: everything set up, the privileges dropped, the
 * threads started. */
static int start(struct run *run, struct loop *l, const struct cli_globals *g,
		 struct agent_source *src, size_t max_src)
{
	struct agent *a = &run->a;
	int r;

	memlock_heap_policy(); /* before setup starts the cluster threads */
	if (setup(run) < 0 || setup_watch(a) < 0 || intake_open(a) < 0)
		return -1;
	r = loop_setup(l);
	if (r == 0)
		r = loop_add_mode(l, src, max_src);
	if (r < 0) {
		log_error("event loop: %s", strerror(-r));
		return -1;
	}
	/* resident from here on (before the drop: CAP_IPC_LOCK), and the
	 * right to raise the detector's priority kept past the drop
	 * (CAP_SYS_RESOURCE raises RLIMIT_RTPRIO and RLIMIT_NICE) */
	if ((r = memlock_all(512ull << 20, NULL)) < 0)
		log_info("memory not locked: %s", strerror(-r));
	(void)memlock_allow_priority();
	if (start_obs(l) < 0)
		return -1;
	if (cli_enter_steady_state(run->cluster || run->standalone ? &net_privs
								   : &run_privs,
				   g) < 0)
		return -1;
	/* after the privileges are dropped: threads keep what their
	 * creator had */
	if ((r = run_cluster_start(run->cluster)) < 0) {
		log_error("cluster threads: %s", strerror(-r));
		return -1;
	}
	if ((r = run_standalone_start(run->standalone)) < 0) {
		log_error("publisher thread: %s", strerror(-r));
		return -1;
	}
	return 0;
}

int cmd_run(int argc, char **argv, const struct cli_globals *g)
{
	/* the run's sources' data, for the loop's life */
	struct agent_source src[LOOP_MAX_SOURCES];
	struct run *run = calloc(1, sizeof(*run));
	struct loop l = {.ep = -1, .sfd = -1, .tfd = -1, .rescan_fd = -1};
	int r;

	if (!run)
		return 1;
	run->a.state_fd = run->a.reports_fd = -1;
	l.run = run;
	l.a = &run->a;
	if (agent_http_take_opts(&argc, argv, &run->o.http) < 0 || /* obs */
	    parse_opts(argc, argv, g, &run->o) < 0)
		return 2;
	run->a.opts = run->o.agent;
	if (start(run, &l, g, src, ARRAY_SIZE(src)) < 0)
		return 1;
	/* Last, once every other thread is started (they would inherit it):
	 * the detector wakes at a v1 OOM notification before the kill, and
	 * lists the cgroup's tasks while the victim is still among them. A
	 * wake-up late behind a CPU hog finds the victim gone, and a bare
	 * rate-limited kill line then has only its time to go by. */
	(void)memlock_raise_priority("detector thread");
	log_info("ready");
	r = run_loop(&l);
	stop(run);
	free(run);
	if (r < 0) {
		log_error("event loop failed: %s", strerror(-r));
		return 1;
	}
	return 0;
}
