/* SPDX-License-Identifier: Apache-2.0 */
/* bench_kube: the kube client's two numbers.
 *   bench_kube decode N          — decode a watch stream of N pod events
 *                                  (golden pod, varied): events/s, peak RSS
 *   bench_kube hold N URL CA     — create N pods on a fake API server and
 *                                  hold a watch on them: client RSS */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "base/fileio.h"
#include "kube/kube.h"
#include "base/parse.h"

static long rss_kib(const char *field)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *p;
	uint64_t v = 0;

	strbuf_init(&sb, 1 << 16);
	if (read_file_at(AT_FDCWD, "/proc/self/status", 1 << 16, &sb) < 0)
		return -1;
	p = strstr(sb.buf, field);
	if (!p)
		return -1;
	p += strlen(field);
	while (*p == ' ' || *p == '\t')
		p++;
	if (scan_u64(&p, &v) < 0)
		return -1;
	return (long)v;
}

/* The pod of every event: a real API server's watch event of an
 * OOMKilled pod with what a kubelet-run pod carries beside it (env,
 * volumes, conditions, three managers' managedFields), 5.9 KB; its README
 * says how it was made. Each event gets its own name, uid,
 * resourceVersion, restart count and container ID. */
#define POD_EVENT "tests/fixtures/kube/watch-pod-kubelet.jsonl"

static int set_str(struct json_object *o, const char *key, const char *v)
{
	return json_object_object_add(o, key, json_object_new_string(v));
}

static int add_event(struct strbuf *s, struct json_object *ev, const char *type,
		     int i)
{
	struct json_object *obj, *md, *st, *cs;
	const char *text;
	char buf[96];

	if (!json_object_object_get_ex(ev, "object", &obj) ||
	    !json_object_object_get_ex(obj, "metadata", &md) ||
	    !json_object_object_get_ex(obj, "status", &st) ||
	    !json_object_object_get_ex(st, "containerStatuses", &cs) ||
	    !(cs = json_object_array_get_idx(cs, 0)))
		return -EBADMSG;
	set_str(ev, "type", type);
	snprintf(buf, sizeof(buf), "victim-%d", i / 4);
	set_str(md, "name", buf);
	snprintf(buf, sizeof(buf), "8ecffab6-8dbd-4b41-a315-%012d", i / 4);
	set_str(md, "uid", buf);
	snprintf(buf, sizeof(buf), "%d", 1000 + i);
	set_str(md, "resourceVersion", buf);
	json_object_object_add(cs, "restartCount", json_object_new_int(i % 4));
	snprintf(buf, sizeof(buf), "containerd://%064d", i);
	set_str(cs, "containerID", buf);
	/* plain, '/' unescaped: as the API server writes it */
	text = json_object_to_json_string_ext(
		ev, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (strbuf_adds(s, text) < 0)
		return -E2BIG;
	return strbuf_addch(s, '\n');
}

static int make_stream(struct strbuf *s, int n)
{
	static const char *types[] = {"ADDED", "MODIFIED", "MODIFIED",
				      "DELETED"};
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	struct json_object *ev;
	int r = 0;

	strbuf_init(&text, 1 << 20);
	if (read_file_at(AT_FDCWD, POD_EVENT, 1 << 20, &text) < 0 ||
	    !(ev = json_tokener_parse(text.buf))) {
		fprintf(stderr, "cannot read %s\n", POD_EVENT);
		return -ENOENT;
	}
	for (int i = 0; r == 0 && i < n; i++)
		r = add_event(s, ev, types[i % 4], i);
	json_object_put(ev);
	return r;
}

struct decode {
	struct kube_event_decoder *dec; /* NULL: a json-c tree per event */
	unsigned events, oomkilled;
	unsigned straight; /* lines read straight into a pod */
	double cpu_s;
	uint64_t wall_us;
	long peak_kib;
};

/* What the pod watch does with a line (kube_watch with pod_fn, as
 * kube_pod_watch and the agent call it): the pod read straight from the
 * line, else the projection's object decoded. */
static int decode_line(const char *line, size_t len, void *ud)
{
	struct decode *d = ud;
	struct kube_watch_event ev;
	struct kube_pod *p = NULL;
	int r;

	if (!line)
		return -EBADMSG;
	r = d->dec ? kube_event_decoder_parse_pod(d->dec, line, len, &ev, &p)
		   : kube_watch_event_parse(line, len, &ev);
	if (r < 0)
		return r;
	d->straight += p != NULL;
	if (p || kube_pod_decode(ev.object, &p) == 0) {
		d->oomkilled += p->containers[0].last_terminated_reason != NULL;
		kube_pod_free(p);
	}
	kube_watch_event_release(&ev);
	d->events++;
	return 0;
}

static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void decode_stream(const struct strbuf *s, struct decode *d)
{
	struct kube_line_splitter sp;
	struct rusage ru;
	uint64_t t0;
	double c0;

	kube_line_splitter_init(&sp, 0);
	t0 = now_monotonic_us();
	c0 = cpu_now();
	/* 16 KiB reads, as a socket would hand them over */
	for (size_t i = 0; i < s->len; i += 16384)
		kube_line_splitter_feed(&sp, s->buf + i,
					s->len - i < 16384 ? s->len - i : 16384,
					decode_line, d);
	d->cpu_s = cpu_now() - c0;
	d->wall_us = now_monotonic_us() - t0;
	kube_line_splitter_release(&sp);
	getrusage(RUSAGE_SELF, &ru);
	d->peak_kib = ru.ru_maxrss;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define PASSES 5

/* The pod watch's decoder, five passes over the stream (the
 * median: a pass is 0.1 s, and the machine's load moves one by a tenth or
 * more), then, on the same stream in the same run, json-c's whole tree of
 * each event, the decode before it. */
static int bench_decode(int n)
{
	_cleanup_strbuf_ struct strbuf s = STRBUF_INIT;
	struct decode d = {0}, t = {0};
	double cpu[PASSES], mib;
	bool ok = true;

	strbuf_init(&s, 256u << 20);
	if (make_stream(&s, n) < 0 ||
	    kube_event_decoder_new(kube_pod_keep, &d.dec) < 0)
		return 1;
	mib = s.len / 1048576.0;
	for (int i = 0; i < PASSES; i++) {
		d.events = d.oomkilled = d.straight = 0;
		decode_stream(&s, &d);
		cpu[i] = d.cpu_s;
		/* every line read straight: none left to the projection */
		ok = ok && d.events == (unsigned)n &&
		     d.oomkilled == (unsigned)n && d.straight == (unsigned)n;
	}
	qsort(cpu, PASSES, sizeof(cpu[0]), cmp_double);
	kube_event_decoder_free(d.dec);
	decode_stream(&s, &t);
	printf("kube decode: %u pod watch events (%.1f MiB) in %.3f s = %.0f "
	       "events/s, %.1f MiB/s; peak RSS %ld KiB (stream buffer "
	       "included)\n",
	       d.events, mib, d.wall_us / 1e6, d.events / (d.wall_us / 1e6),
	       mib / (d.wall_us / 1e6), d.peak_kib);
	/* the CPU time of the decode: the wall time moves with the load of
	 * the machine, this less */
	printf("kube decode: %.3f s of CPU = %.0f events per CPU second "
	       "(median of %d passes; %.0f-%.0f)\n"
	       "kube decode, json-c's tree of each event: %.3f s of CPU = "
	       "%.0f events per CPU second (%.1fx less), peak RSS %ld KiB\n"
	       "metric: kube.decode_events_per_s %.0f\n"
	       "metric: kube.decode_events_per_cpu_s %.0f\n",
	       cpu[PASSES / 2], n / cpu[PASSES / 2], PASSES,
	       n / cpu[PASSES - 1], n / cpu[0], t.cpu_s, t.events / t.cpu_s,
	       t.cpu_s / cpu[PASSES / 2], t.peak_kib,
	       d.events / (d.wall_us / 1e6), n / cpu[PASSES / 2]);
	return ok && t.events == (unsigned)n && t.oomkilled == (unsigned)n ? 0
									   : 1;
}

struct hold {
	struct kube_client *c;
	struct kube_cancel *cancel;
	int added;
	int ret;
};

static int count(void *ud, enum kube_event_type t, const struct kube_pod *p)
{
	struct hold *h = ud;

	(void)p;
	if (t == KUBE_EVENT_ADDED)
		__atomic_add_fetch(&h->added, 1, __ATOMIC_RELAXED);
	return 0;
}

static void *hold_thread(void *ud)
{
	struct hold *h = ud;
	struct kube_pod_watch_options o = {
		.list = {.node = "node1", .cancel = h->cancel},
		.fn = count,
		.userdata = h,
		.timeout_s = 300};

	h->ret = kube_pod_watch(h->c, &o, NULL);
	return NULL;
}

static int create_pods(struct kube_client *admin, int n)
{
	struct kube_call k = {.res = &kube_res_pods};
	struct kube_error e;
	char buf[512];

	for (int i = 0; i < n; i++) {
		struct json_object *o;
		int r;

		snprintf(buf, sizeof(buf),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
			 "{\"name\":\"hold-%d\"},\"spec\":{\"nodeName\":"
			 "\"node1\",\"containers\":[{\"name\":\"c\",\"image\":"
			 "\"busybox\"}]}}",
			 i);
		o = json_tokener_parse(buf);
		r = kube_create(admin, &k, o, NULL, &e);
		json_object_put(o);
		if (r < 0) {
			fprintf(stderr, "create: %s\n", e.message);
			return r;
		}
	}
	return 0;
}

static struct kube_client *client(const char *url, const char *ca,
				  const char *token)
{
	struct kube_config cfg = {.server = (char *)url,
				  .ca_file = (char *)ca,
				  .token = (char *)token};
	struct kube_client_options o = {.qps = -1};
	struct kube_client *c = NULL;

	if (kube_client_new(&cfg, &o, &c) < 0)
		return NULL;
	return c;
}

static int bench_hold(int n, const char *url, const char *ca)
{
	struct kube_client *admin = client(url, ca, "admin-token-0123456789");
	struct hold h = {0};
	long before, during;
	pthread_t th;
	uint64_t t0;

	if (!admin || create_pods(admin, n) < 0)
		return 1;
	kube_client_free(admin);
	before = rss_kib("VmRSS:");
	h.c = client(url, ca, "agent-token-0123456789");
	if (!h.c || kube_cancel_new(&h.cancel) < 0)
		return 1;
	t0 = now_monotonic_us();
	pthread_create(&th, NULL, hold_thread, &h);
	for (int i = 0;
	     i < 3000 && __atomic_load_n(&h.added, __ATOMIC_RELAXED) < n; i++)
		usleep(5000);
	t0 = now_monotonic_us() - t0;
	usleep(500000); /* settled inside the watch request */
	during = rss_kib("VmRSS:");
	kube_cancel_trigger(h.cancel);
	pthread_join(th, NULL);
	printf("kube hold: watch on %d pods listed in %.2f s; client RSS %ld "
	       "KiB before, %ld KiB holding the watch (+%ld KiB); peak %ld "
	       "KiB\n",
	       h.added, t0 / 1e6, before, during, during - before,
	       rss_kib("VmHWM:"));
	kube_client_free(h.c);
	kube_cancel_free(h.cancel);
	return h.added == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	int n = 0;

	if (argc >= 3 && streq(argv[1], "decode") &&
	    parse_int(argv[2], &n) == 0)
		return bench_decode(n);
	if (argc == 5 && streq(argv[1], "hold") && parse_int(argv[2], &n) == 0)
		return bench_hold(n, argv[3], argv[4]);
	fprintf(stderr, "usage: bench_kube decode N | hold N URL CA\n");
	return 2;
}
