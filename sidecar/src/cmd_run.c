/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-sidecar run: the flight recorder. A sampler thread samples the
 * watched processes every interval (every fast interval near the limit);
 * this thread, the worker, snapshots them when usage crosses a threshold,
 * the limit is seconds away or the growth predicts it, and learns each
 * JVM's configuration at first sight. */
#include <getopt.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

#include "commands.h"
#include "base/log.h"
#include "base/memlock.h"
#include "base/parse.h"
#include "base/util.h"
#include "inspect/ptcall.h"
#include "kernel/procfs_access.h"
#include "run.h"
#include "pod.h" /* pod mode: hooks marked "pod hook" */

/* What run keeps after its start-up (docs/privileges.md): the JVM's
 * capabilities and the calls of its probes and attaches beyond the base
 * list (unix sockets only: the uploads are oomlens-sidecar-upload's,
 * pod_upload.c), and setfsuid/setfsgid for the /proc retry
 * (kernel/procfs_access.h). */
static const char *const run_syscalls[] = {
	"ptrace",    "process_vm_readv", "process_vm_writev",
	"wait4",     "waitid",		 "kill",
	"socket",    "connect",		 "setresuid",
	"setresgid", "setuid",		 "setgid",
	"setgroups", "setfsuid",	 "setfsgid",
	"prctl",     "pidfd_open",	 "pidfd_send_signal",
	NULL};
static const struct privs_spec run_privs = {
	.caps = JVM_CAPS,
	.seccomp = true,
	.syscalls = run_syscalls,
	.unix_sockets_only = true,
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void run_usage(FILE *f)
{
	fprintf(f,
		"usage: oomlens-sidecar run --standalone (--pid PID... | "
		"--cgroup PATH) --spool DIR\n"
		"         [--interval-ms 1000] [--thresholds 80,90,95] "
		"[--limit BYTES]\n"
		"         [--predict-s 10] [--host-root /] [--no-redact]\n"
		"         [--fast-interval-ms 100] [--ttl-s 5] [--no-mlock]\n"
		"         [--allocator-probe off|ptrace] "
		"[--trim off|test|on-pressure]\n"
		"         [--jvm-histogram] [--jvm-histogram-max-pause-ms "
		"1000]\n"
		"--cgroup PATH is a path in the memory hierarchy "
		"(\"/demo/app\"),"
		" v1 or v2.\n--limit overrides the cgroup's limit (needed with "
		"--pid for thresholds).\n--predict-s 0 turns the growth "
		"prediction off.\n--fast-interval-ms: the rate above the first "
		"threshold or when the limit is predicted (0: off).\n--ttl-s: "
		"snapshot when the limit is this many seconds away (0: off)."
		"\n--trim test trims each JVM's C heap once at "
		"the top threshold\n(jvm/trim.json: RSS before and after); "
		"on-pressure at every threshold.\nWith --allocator-probe "
		"ptrace, "
		"other glibc processes too (malloc_trim, trim.json).\n"
		"--jvm-histogram takes each JVM's class histogram once, at "
		"the first threshold\n(jvm/class_histogram.json: the top "
		"classes by bytes), unless its walk, estimated\nfrom the "
		"heap's used size, would stop the JVM longer than "
		"--jvm-histogram-max-pause-ms\nor than the snapshot's time "
		"left.\n");
}

static int add_pid(struct run_cfg *c, const char *s)
{
	int pid;

	if (parse_int(s, &pid) < 0 || pid <= 0 || c->n_pids == RUN_MAX_PIDS)
		return -EINVAL;
	c->pids[c->n_pids++] = pid;
	return 0;
}

static int parse_opt(struct run_cfg *c, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case 'p':
		return add_pid(c, arg);
	case 'c':
		c->cgroup = arg;
		return 0;
	case 's':
		c->spool = arg;
		return 0;
	case 'i':
		if (parse_u64(arg, &v) < 0 || v < 10 || v > 3600000)
			return -EINVAL;
		c->interval_ms = (unsigned)v;
		return 0;
	case 't':
		return rec_thresholds_parse(arg, &c->th);
	case 'l':
		return parse_size(arg, &c->limit);
	case 'P':
		if (parse_u64(arg, &v) < 0 || v > 3600)
			return -EINVAL;
		c->predict_s = (double)v;
		return 0;
	case 'n':
		c->redact = false;
		return 0;
	case 'A': /* off|ptrace: allocator.json in each snapshot */
		if (!streq(arg, "off") && !streq(arg, "ptrace"))
			return -EINVAL;
		c->allocator_probe = streq(arg, "ptrace");
		return 0;
	case 'T':
		if (streq(arg, "off"))
			c->trim = RUN_TRIM_OFF;
		else if (streq(arg, "test"))
			c->trim = RUN_TRIM_TEST;
		else if (streq(arg, "on-pressure"))
			c->trim = RUN_TRIM_ON_PRESSURE;
		else
			return -EINVAL;
		return 0;
	case 'F':
		if (parse_u64(arg, &v) < 0 || (v && v < 10) || v > 3600000)
			return -EINVAL;
		c->fast_interval_ms = (unsigned)v;
		return 0;
	case 'L':
		if (parse_u64(arg, &v) < 0 || v > 3600)
			return -EINVAL;
		c->ttl_s = (double)v;
		return 0;
	case 'M':
		c->no_mlock = true;
		return 0;
	case 'H':
		c->jvm_histogram = true;
		return 0;
	case 'X':
		if (parse_u64(arg, &v) < 0 || v == 0 || v > 600000)
			return -EINVAL;
		c->jvm_histogram_max_pause_ms = (unsigned)v;
		return 0;
	case 'S':
		return 0;
	}
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct run_cfg *c)
{
	static const struct option opts[] = {
		{"standalone", no_argument, NULL, 'S'},
		{"pid", required_argument, NULL, 'p'},
		{"cgroup", required_argument, NULL, 'c'},
		{"spool", required_argument, NULL, 's'},
		{"interval-ms", required_argument, NULL, 'i'},
		{"thresholds", required_argument, NULL, 't'},
		{"limit", required_argument, NULL, 'l'},
		{"predict-s", required_argument, NULL, 'P'},
		{"no-redact", no_argument, NULL, 'n'},
		{"allocator-probe", required_argument, NULL, 'A'},
		{"trim", required_argument, NULL, 'T'},
		{"fast-interval-ms", required_argument, NULL, 'F'},
		{"ttl-s", required_argument, NULL, 'L'},
		{"no-mlock", no_argument, NULL, 'M'},
		{"jvm-histogram", no_argument, NULL, 'H'},
		{"jvm-histogram-max-pause-ms", required_argument, NULL, 'X'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	bool standalone = false;
	int o;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (o == 'h')
			return 1;
		if (o == 'S')
			standalone = true;
		if (o == '?' || parse_opt(c, o, optarg) < 0) {
			if (o != '?')
				fprintf(stderr, "run: bad option value '%s'\n",
					optarg ? optarg : "");
			return -EINVAL;
		}
	}
	/* Extra arguments after --pid are more pids (--pid 1 2 3). */
	for (; optind < argc; optind++)
		if (c->n_pids == 0 || add_pid(c, argv[optind]) < 0)
			return -EINVAL;
	if (!standalone)
		return pod_args(c); /* pod hook */
	if (!c->spool || (!c->cgroup) == (c->n_pids == 0))
		return -EINVAL;
	return 0;
}

/* The worker: snapshots the sampler asked for, and new processes' JVM
 * facts. Waits on st->wake (a request, or 200 ms for new pids and the
 * signal flag). */
static void worker_loop(struct run_state *st)
{
	int news[64];

	for (;;) {
		struct run_snap_req req = {0};
		struct timespec ts;
		size_t n_new;
		int r;

		pthread_mutex_lock(&st->mu);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 200 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (!st->n_req && !st->n_new && !st->stop)
			pthread_cond_timedwait(&st->wake, &st->mu, &ts);
		if (stop_requested)
			st->stop = true;
		if (st->stop) {
			pthread_mutex_unlock(&st->mu);
			return;
		}
		if (st->n_req) {
			req = st->req[0];
			memmove(&st->req[0], &st->req[1],
				(--st->n_req) * sizeof(st->req[0]));
			/* A kill came first, or nobody is left: pre-kill
			 * data cannot be had any more. */
			if (st->oom_kills > req.oom_kills || !st->n_alive) {
				log_info("snapshot (%s) dropped: %s",
					 req.reason,
					 st->n_alive ? "a kill came first"
						     : "no process left");
				req.pending = false;
			}
			st->snapping = req.pending;
		}
		n_new = st->n_new;
		memcpy(news, st->new_pids, n_new * sizeof(int));
		st->n_new = 0;
		/* pod hook: annotations change the sampler's thresholds */
		pod_tick(st);
		pthread_mutex_unlock(&st->mu);
		for (size_t i = 0; i < n_new; i++) {
			run_jvm_first_sight(st, news[i]);
			run_runtimes_first_sight(st, news[i]);
		}
		run_jvm_poll(st);
		/* a process killed during a probe is reaped by its parent
		 * only once we waited for it */
		ptcall_reap();
		if (!req.pending)
			continue;
		r = run_take_snapshot(st, &req);
		if (r < 0)
			log_warn("snapshot (%s) failed: %s, ignoring",
				 req.reason, strerror(-r));
		else
			log_info("snapshot taken: reason=%s in %llu ms%s",
				 req.reason,
				 (unsigned long long)((now_monotonic_us() -
						       req.mono_us) /
						      1000),
				 r > 0 ? " (completed after a kill)" : "");
		if (r >= 0)
			pod_on_snapshot(st); /* pod hook */
		pthread_mutex_lock(&st->mu);
		st->snapping = false;
		pthread_mutex_unlock(&st->mu);
	}
}

/* The manifest's "capture": the credentials the steady state holds and
 * what they cannot reach before any snapshot tells. */
static void capture_start(struct run_state *st)
{
	const struct run_cfg *c = st->cfg;
	struct procfs_creds self;
	bool ptrace = false;

	capture_init(&st->capture);
	if (c->pod_security)
		strlcpy_safe(st->capture.pod_security, c->pod_security,
			     sizeof(st->capture.pod_security));
	st->capture.have_ids = true;
	st->capture.uid = (uint32_t)geteuid();
	st->capture.gid = (uint32_t)getegid();
	if (procfs_self_creds(&self) == 0) {
		capture_set_caps(&st->capture, self.cap_prm);
		ptrace = self.cap_prm & PRIVS_CAP(CAP_SYS_PTRACE);
	}
	if (c->cgroup_why[0])
		run_note_missing(st, "cgroup", 0, c->cgroup_why);
	if (!c->allocator_probe) {
		char why[CAPTURE_WHY_MAX];

		snprintf(why, sizeof(why), "%s%s",
			 pod_mode(c)
				 ? "off in pod mode (no annotation turns it "
				   "on)"
				 : "off (--allocator-probe ptrace)",
			 ptrace ? ""
				: "; without CAP_SYS_PTRACE ptrace reaches "
				  "only processes of the sidecar's own uid "
				  "and gid");
		run_note_missing(st, "allocator probe", 0, why);
	}
}

static int run_loop(struct run_state *st)
{
	pthread_t sampler, flusher;
	int r = run_spool_open(st);

	if (r < 0) {
		log_error("cannot open spool \"%s\": %s", st->cfg->spool,
			  strerror(-r));
		return 1;
	}
	capture_start(st);
	st->manifest_dirty = true;
	log_info("recording %s%s into \"%s\" every %u ms (%u ms near the "
		 "limit)",
		 st->cfg->cgroup ? "cgroup " : "pids",
		 st->cfg->cgroup ? st->cfg->cgroup : "", st->cfg->spool,
		 st->cfg->interval_ms, st->cfg->fast_interval_ms);
	r = run_threads_start(st, &sampler, &flusher);
	if (r < 0) {
		log_error("cannot start the sampler: %s", strerror(-r));
		return 1;
	}
	worker_loop(st);
	pthread_mutex_lock(&st->mu);
	st->stop = true;
	pthread_cond_broadcast(&st->flush);
	pthread_mutex_unlock(&st->mu);
	pthread_join(sampler, NULL);
	pthread_join(flusher, NULL);
	pthread_mutex_lock(&st->mu);
	st->manifest_dirty = st->timeline_dirty = true;
	pthread_mutex_unlock(&st->mu);
	(void)run_flush(st);
	log_info("stopped: %s", stop_requested	  ? "signal"
				: st->cfg->cgroup ? "cgroup removed"
						  : "all processes exited");
	return 0;
}

/* Before the privilege drop: the limits that let the sampler raise its
 * priority later, and the lock of our own memory (earlyoom's way). */
static void residency(const struct run_cfg *c)
{
	bool future = false;
	int r;

	memlock_heap_policy();
	(void)memlock_allow_priority();
	if (c->no_mlock)
		return;
	r = memlock_all(RUN_MEMLOCK_MAX, &future);
	if (r < 0)
		log_info("memory not locked (needs CAP_IPC_LOCK or "
			 "RLIMIT_MEMLOCK): %s",
			 strerror(-r));
	else if (!future)
		log_info("memory locked as mapped now; later mappings are not "
			 "(RLIMIT_MEMLOCK below %llu MiB: raise it, or grant "
			 "CAP_SYS_RESOURCE at start)",
			 (unsigned long long)(RUN_MEMLOCK_MAX >> 20));
}

static int setup(struct run_state *st)
{
	int r;

	if (st->cfg->host_root_fd >= 0) {
		r = host_adopt(st->cfg->host_root_fd, st->cfg->host_root,
			       &st->h);
		st->cfg->host_root_fd = -1;
	} else {
		r = host_open(st->cfg->host_root, &st->h);
	}

	if (r < 0) {
		log_error("cannot open host root \"%s\": %s",
			  st->cfg->host_root, strerror(-r));
		return r;
	}
	if (!st->cfg->cgroup)
		return 0;
	r = cgroup_fs_open(&st->h, &st->fs);
	if (r < 0) {
		log_error("no memory cgroup hierarchy under \"%s\": %s",
			  st->cfg->host_root, strerror(-r));
		return r;
	}
	st->have_fs = true;
	r = run_sample_open(st);
	if (r < 0)
		log_warn("cannot open cgroup \"%s\": %s", st->cfg->cgroup,
			 strerror(-r));
	return 0;
}

int cmd_run(int argc, char **argv, const struct cli_globals *g)
{
	static struct run_cfg cfg;
	/* On the heap, not static and cleared: 420 KiB (the per-pid
	 * arrays), above M_MMAP_THRESHOLD, so mmap'd zero pages of which only
	 * those the run touches become resident (and locked); the static one
	 * was made resident whole by its memset (docs/build.md, the sampler) */
	_cleanup_free_ struct run_state *st = NULL;
	struct sigaction sa = {.sa_handler = on_signal};
	pthread_condattr_t ca;
	int r;

	cfg = (struct run_cfg){.interval_ms = 1000,
			       .host_root = g->host_root,
			       .predict_s = RUN_PREDICT_S,
			       .fast_interval_ms = RUN_FAST_INTERVAL_MS,
			       .ttl_s = RUN_TTL_S,
			       .host_root_fd = -1,
			       .redact = true};
	(void)rec_thresholds_parse("80,90,95", &cfg.th);
	r = parse_args(argc, argv, &cfg);
	if (r != 0) {
		run_usage(r > 0 ? stdout : stderr);
		return r > 0 ? 0 : 2;
	}
	if (pod_mode(&cfg) && pod_setup(&cfg, g) < 0) /* pod hook */
		return 2;
	st = calloc(1, sizeof(*st));
	if (!st) {
		log_error("cannot start: %s", strerror(ENOMEM));
		return 1;
	}
	st->cfg = &cfg;
	st->spool_fd = -1;
	st->cg_fd = -1;
	st->ttl_armed = true;
	st->started_us = now_realtime_us();
	recorder_init(&st->rec);
	pthread_mutex_init(&st->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->wake, &ca);
	pthread_cond_init(&st->flush, &ca);
	pthread_condattr_destroy(&ca);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	r = setup(st);
	if (r == 0)
		residency(&cfg);
	r = r < 0 || cli_enter_steady_state(&run_privs, g) < 0 ? 1
							       : run_loop(st);
	pod_stop(&cfg); /* pod hook */
	run_jvm_release(st);
	recorder_release(&st->rec);
	if (st->tl_chunk.buf)
		strbuf_release(&st->tl_chunk);
	if (st->have_fs)
		cgroup_fs_close(&st->fs);
	host_close(&st->h);
	closep(&st->spool_fd);
	closep(&st->cg_fd);
	return r;
}
