/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-sidecar run: the flight recorder. Samples the watched processes
 * every interval, snapshots them when usage crosses a threshold or the
 * growth predicts the limit within 10 s, and keeps the spool current. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

#include "commands.h"
#include "base/log.h"
#include "base/parse.h"
#include "base/util.h"
#include "run.h"
#include "pod.h" /* pod mode: hooks marked "pod hook" */

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
		"         [--allocator-probe off|ptrace] "
		"[--trim off|test|on-pressure]\n"
		"--cgroup PATH is a path in the memory hierarchy "
		"(\"/demo/app\"),"
		" v1 or v2.\n--limit overrides the cgroup's limit (needed with "
		"--pid for thresholds).\n--predict-s 0 turns the growth "
		"prediction off.\n--trim test trims each JVM's C heap once at "
		"the top threshold\n(jvm/trim.json: RSS before and after); "
		"on-pressure at every threshold.\nWith --allocator-probe "
		"ptrace, "
		"other glibc processes too (malloc_trim, trim.json).\n");
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

/* Decides whether this sample calls for a snapshot; fills reason. */
static bool want_snapshot(struct run_state *st, char *reason, size_t size)
{
	const struct rec_sample *s =
		recorder_sample(&st->rec, st->rec.count - 1);
	uint64_t now = now_monotonic_us();
	unsigned crossed;
	double eta;

	/* Nothing to snapshot (the victim is gone, memory not yet freed). */
	if (!s || !s->limit || st->n_alive == 0)
		return false;
	crossed = rec_thresholds_update(&st->cfg->th, 100.0 * (double)s->usage /
							      (double)s->limit);
	if (crossed) {
		snprintf(reason, size, "threshold-%u", crossed);
		return true;
	}
	if (st->cfg->predict_s <= 0)
		return false;
	if (st->rec.any_snapshot &&
	    now - st->rec.last_snapshot_mono_us < RUN_PREDICT_GAP_US)
		return false;
	eta = recorder_predict_s(&st->rec, REC_PREDICT_WINDOW);
	if (eta < 0 || eta >= st->cfg->predict_s)
		return false;
	snprintf(reason, size, "predicted");
	return true;
}

static void flush_spool(struct run_state *st, bool force)
{
	int r;

	if (st->manifest_dirty) {
		r = run_write_manifest(st);
		if (r < 0)
			log_warn("cannot write manifest: %s, ignoring",
				 strerror(-r));
	}
	if (!st->timeline_dirty)
		return;
	if (!force && now_monotonic_us() - st->last_timeline_mono_us < 1000000)
		return;
	r = run_write_timeline(st);
	if (r < 0)
		log_warn("cannot write timeline: %s, ignoring", strerror(-r));
}

static void one_round(struct run_state *st)
{
	char reason[32];
	int r;

	pod_tick(st); /* pod hook */
	r = run_sample(st);

	if (r < 0) {
		log_warn("sampling failed: %s, ignoring", strerror(-r));
		return;
	}
	if (!want_snapshot(st, reason, sizeof(reason)))
		return;
	r = run_take_snapshot(st, reason);
	if (r < 0)
		log_warn("snapshot (%s) failed: %s, ignoring", reason,
			 strerror(-r));
	else
		log_info("snapshot taken: reason=%s pids=%zu", reason,
			 st->n_alive);
	if (r >= 0)
		pod_on_snapshot(st); /* pod hook */
}

static bool finished(const struct run_state *st)
{
	if (stop_requested)
		return true;
	if (st->cfg->cgroup)
		return st->cgroup_gone;
	return st->n_alive == 0 && st->rec.count > 0;
}

static void sleep_until(uint64_t mono_us)
{
	struct timespec ts = {.tv_sec = (time_t)(mono_us / 1000000),
			      .tv_nsec = (long)(mono_us % 1000000) * 1000};

	while (!stop_requested &&
	       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
		       EINTR)
		;
}

static int run_loop(struct run_state *st)
{
	uint64_t next = now_monotonic_us();
	int r = run_spool_open(st);

	if (r < 0) {
		log_error("cannot open spool \"%s\": %s", st->cfg->spool,
			  strerror(-r));
		return 1;
	}
	st->manifest_dirty = true;
	log_info("recording %s%s into \"%s\" every %u ms",
		 st->cfg->cgroup ? "cgroup " : "pids",
		 st->cfg->cgroup ? st->cfg->cgroup : "", st->cfg->spool,
		 st->cfg->interval_ms);
	while (!finished(st)) {
		one_round(st);
		flush_spool(st, false);
		next += (uint64_t)st->cfg->interval_ms * 1000;
		if (next < now_monotonic_us())
			next = now_monotonic_us();
		if (!finished(st))
			sleep_until(next);
	}
	st->manifest_dirty = true;
	flush_spool(st, true);
	log_info("stopped: %s", stop_requested	  ? "signal"
				: st->cfg->cgroup ? "cgroup removed"
						  : "all processes exited");
	return 0;
}

static int setup(struct run_state *st)
{
	int r = host_open(st->cfg->host_root, &st->h);

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
	return 0;
}

int cmd_run(int argc, char **argv, const struct cli_globals *g)
{
	static struct run_cfg cfg;
	static struct run_state st;
	struct sigaction sa = {.sa_handler = on_signal};
	int r;

	cfg = (struct run_cfg){.interval_ms = 1000,
			       .host_root = g->host_root,
			       .predict_s = RUN_PREDICT_S,
			       .redact = true};
	(void)rec_thresholds_parse("80,90,95", &cfg.th);
	r = parse_args(argc, argv, &cfg);
	if (r != 0) {
		run_usage(r > 0 ? stdout : stderr);
		return r > 0 ? 0 : 2;
	}
	if (pod_mode() && pod_setup(&cfg, g) < 0) /* pod hook */
		return 2;
	memset(&st, 0, sizeof(st));
	st.cfg = &cfg;
	st.spool_fd = -1;
	st.started_us = now_realtime_us();
	recorder_init(&st.rec);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	r = setup(&st) < 0 || cli_enter_steady_state(&sidecar_run_privs, g) < 0
		    ? 1
		    : run_loop(&st);
	pod_stop(); /* pod hook */
	recorder_release(&st.rec);
	if (st.have_fs)
		cgroup_fs_close(&st.fs);
	host_close(&st.h);
	closep(&st.spool_fd);
	return r;
}
