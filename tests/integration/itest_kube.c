/* SPDX-License-Identifier: Apache-2.0 */
/* kube client against the fake API server (tests/fakeapi/fakeapi.py) over
 * TLS on loopback: every call, every error path, watch survival, token
 * rotation, exec plugins, client certificates, cancellation. Each test
 * starts its own fake on port 0 and stops it. */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "base/fileio.h"
#include "kube/kube.h"
#include "base/parse.h"

#define AGENT "agent-token-0123456789"
#define ADMIN "admin-token-0123456789"

static struct fake {
	pid_t pid;
	char dir[64];
	char url[64];
	char ca[128];
	int port, cport;
} F;

static int read_port(const char *name)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char p[128];
	int port = -1;

	snprintf(p, sizeof(p), "%s/%s", F.dir, name);
	strbuf_init(&sb, 4096);
	if (read_line_at(AT_FDCWD, p, &sb) < 0 || parse_int(sb.buf, &port) < 0)
		return -1;
	return port;
}

static void fake_spawn(const char *tokens)
{
	char tls[96], ready[96], ctl[96], log[96];

	snprintf(tls, sizeof(tls), "%s/tls", F.dir);
	snprintf(ready, sizeof(ready), "%s/ready", F.dir);
	snprintf(ctl, sizeof(ctl), "%s/control", F.dir);
	snprintf(log, sizeof(log), "%s/log", F.dir);
	unlink(ready);
	F.pid = fork();
	cr_assert_geq(F.pid, 0);
	if (F.pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);

		dup2(fd, 1);
		dup2(fd, 2);
		execlp("python3", "python3", "tests/fakeapi/fakeapi.py",
		       "--port", "0", "--tls-dir", tls, "--ready-file", ready,
		       "--control-file", ctl, tokens ? "--tokens" : NULL,
		       tokens, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 600 && (F.port = read_port("ready")) <= 0; i++)
		usleep(50000);
	if (F.port <= 0) {
		kill(F.pid, SIGKILL);
		waitpid(F.pid, NULL, 0);
		F.pid = 0;
	}
	if (F.port <= 0)
		cr_skip_test("fake API server did not start (python3 + openssl "
			     "needed), see %s",
			     log);
	F.cport = read_port("control");
	snprintf(F.url, sizeof(F.url), "https://127.0.0.1:%d", F.port);
	snprintf(F.ca, sizeof(F.ca), "%s/tls/ca.crt", F.dir);
}

static void fake_start(void)
{
	strlcpy_safe(F.dir, "/tmp/oomlens-itest-kube-XXXXXX", sizeof(F.dir));
	cr_assert_not_null(mkdtemp(F.dir));
	fake_spawn(NULL);
}

static void fake_stop(void)
{
	if (F.pid > 0) {
		kill(F.pid, SIGTERM);
		waitpid(F.pid, NULL, 0);
		F.pid = 0;
	}
	rm_rf_at(AT_FDCWD, F.dir);
}

// cppcheck-suppress unknownMacro
TestSuite(kube_fake, .init = fake_start, .fini = fake_stop, .timeout = 90);

static size_t discard(char *d, size_t s, size_t n, void *u)
{
	(void)d;
	(void)u;
	return s * n;
}

/* POSTs a control action to the fake; returns the HTTP status. */
static long ctl(const char *action, const char *json)
{
	CURL *e = curl_easy_init();
	char url[128];
	long code = 0;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/%s", F.cport, action);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, json);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_perform(e);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(e);
	return code;
}

static struct kube_client *client_opts(const char *token,
				       struct kube_client_options *o)
{
	struct kube_config cfg = {.server = F.url,
				  .ca_file = F.ca,
				  .token = (char *)token,
				  .namespace = "default"};
	struct kube_client_options def = {.qps = -1};
	struct kube_client *c = NULL;

	cr_assert_eq(kube_client_new(&cfg, o ? o : &def, &c), 0);
	return c;
}

static struct kube_client *client(const char *token)
{
	return client_opts(token, NULL);
}

static void create_pod(struct kube_client *admin, const char *name,
		       const char *node)
{
	char buf[512];
	struct json_object *o;
	struct kube_call k = {.res = &kube_res_pods};
	struct kube_error e;

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
		 "\"name\":\"%s\",\"annotations\":{\"oomlens.io/capture\":"
		 "\"true\"}},\"spec\":{\"nodeName\":\"%s\",\"containers\":[{"
		 "\"name\":\"c\",\"image\":\"busybox\",\"resources\":{"
		 "\"limits\":{\"memory\":\"16Mi\"}}}]}}",
		 name, node);
	o = json_tokener_parse(buf);
	cr_assert_eq(kube_create(admin, &k, o, NULL, &e), 0, "%s", e.message);
	json_object_put(o);
}

static void label_pod(struct kube_client *admin, const char *name,
		      const char *v)
{
	char buf[128];
	struct json_object *o;
	struct kube_call k = {.res = &kube_res_pods, .name = name};
	struct kube_error e;

	snprintf(buf, sizeof(buf), "{\"metadata\":{\"labels\":{\"l\":\"%s\"}}}",
		 v);
	o = json_tokener_parse(buf);
	cr_assert_eq(kube_merge_patch(admin, &k, o, NULL, &e), 0, "%s",
		     e.message);
	json_object_put(o);
}

static struct kube_oomreport report(const char *name, const char *node)
{
	struct kube_oomreport r = {
		.name = (char *)name,
		.namespace = "default",
		.pod = "victim-1",
		.pod_uid = "3f1c2a8e-5d6b-4c1e-9a0f-7b2d4e6f8a01",
		.container = "c",
		.node = (char *)node,
		.killed_at = "2026-11-30T09:22:00Z",
		.pid = 4242,
		.comm = "java",
		.anon_rss = 15990784,
		.limit = 16777216,
		.usage = 16773120,
		.verdict = "heap-growth",
		.summary = "java (pid 4242) anon RSS 15.2 MiB",
		.bundle = (char *)name,
	};

	r.labels = json_object_new_object();
	json_object_object_add(r.labels, "oomlens.io/node",
			       json_object_new_string(node));
	return r;
}

Test(kube_fake, oomreport_create_get_list_patch_apply_delete)
{
	struct kube_client *c = client(AGENT);
	struct kube_oomreport r1 = report("r1", "node1"),
			      r2 = report("r2", "node2");
	struct kube_write_options apply = {.mode = KUBE_WRITE_APPLY,
					   .field_manager = "oomlens-agent"};
	struct kube_oomreport *got, **list;
	struct kube_error e;
	size_t n;

	cr_assert_eq(kube_oomreport_write(c, &r1, NULL, &got, &e), 0, "%s",
		     e.message);
	cr_assert_not_null(got->uid);
	cr_assert_not_null(got->resource_version);
	cr_assert_eq(got->anon_rss, 15990784);
	cr_assert_eq(kube_oomreport_write(c, &r2, NULL, NULL, &e), 0);
	/* create again: 409 AlreadyExists */
	cr_assert_eq(kube_oomreport_write(c, &r1, NULL, NULL, &e), -EEXIST);
	cr_assert_eq(e.http_status, 409);
	cr_assert_str_eq(e.reason, "AlreadyExists");
	cr_assert(!e.retryable);
	cr_assert_eq(kube_oomreport_list(c, "default", "oomlens.io/node=node1",
					 &list, &n, &e),
		     0);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(list[0]->name, "r1");
	kube_oomreports_free(list, n);
	cr_assert_eq(kube_oomreport_patch_status(c, "default", "r1", "Ready",
						 "bundle stored", true, &e),
		     0, "%s", e.message);
	{
		/* the conditions survive the CRD's schema (pruning) */
		struct kube_call k = {.res = &kube_res_oomreports,
				      .namespace = "default",
				      .name = "r1"};
		struct json_object *o = NULL, *st, *conds;

		cr_assert_eq(kube_get(c, &k, &o, &e), 0, "%s", e.message);
		st = json_object_object_get(o, "status");
		conds = json_object_object_get(st, "conditions");
		cr_assert_eq(json_object_array_length(conds), 2);
		for (size_t i = 0; i < 2; i++) {
			struct json_object *ci =
				json_object_array_get_idx(conds, i);
			const char *type = json_object_get_string(
				json_object_object_get(ci, "type"));

			cr_assert_str_eq(type, i ? "BundleStored" : "Ready");
			cr_assert_str_eq(
				json_object_get_string(
					json_object_object_get(ci, "status")),
				"True");
			cr_assert_str_eq(
				json_object_get_string(
					json_object_object_get(ci, "reason")),
				i ? "Stored" : "Published");
			cr_assert_not_null(json_object_object_get(
				ci, "lastTransitionTime"));
		}
		json_object_put(o);
	}
	kube_oomreport_free(got);
	{
		struct json_object *p = json_tokener_parse(
			"{\"metadata\":{\"labels\":{\"seen\":\"yes\"}}}");

		cr_assert_eq(
			kube_oomreport_patch(c, "default", "r1", p, &got, &e),
			0, "%s", e.message);
		json_object_put(p);
		cr_assert_str_eq(json_object_get_string(json_object_object_get(
					 got->labels, "seen")),
				 "yes");
		kube_oomreport_free(got);
	}
	r1.verdict = "allocator-retention";
	cr_assert_eq(kube_oomreport_write(c, &r1, &apply, &got, &e), 0, "%s",
		     e.message);
	cr_assert_str_eq(got->verdict, "allocator-retention");
	cr_assert_str_eq(got->phase, "Ready");
	kube_oomreport_free(got);
	/* apply of a missing name creates it */
	r2.name = "r3";
	cr_assert_eq(kube_oomreport_write(c, &r2, &apply, NULL, &e), 0);
	cr_assert_eq(kube_oomreport_get(c, "default", "r3", &got, &e), 0);
	cr_assert_str_eq(got->node, "node2");
	/* delete with the wrong uid: 409 Conflict, then the right one */
	cr_assert_eq(kube_oomreport_delete(c, "default", "r3", "wrong-uid", &e),
		     -EBUSY);
	cr_assert_str_eq(e.reason, "Conflict");
	cr_assert_eq(kube_oomreport_delete(c, "default", "r3", got->uid, &e),
		     0);
	kube_oomreport_free(got);
	cr_assert_eq(kube_oomreport_get(c, "default", "r3", &got, &e), -ENOENT);
	cr_assert_eq(e.http_status, 404);
	cr_assert_str_eq(e.reason, "NotFound");
	json_object_put(r1.labels);
	json_object_put(r2.labels);
	kube_client_free(c);
}

Test(kube_fake, update_stale_resource_version_is_conflict)
{
	struct kube_client *c = client(AGENT);
	struct kube_oomreport r = report("r1", "node1");
	struct kube_call k = {.res = &kube_res_oomreports, .name = "r1"};
	struct json_object *o, *o2;
	struct kube_error e;

	cr_assert_eq(kube_oomreport_write(c, &r, NULL, NULL, &e), 0);
	cr_assert_eq(kube_get(c, &k, &o, &e), 0);
	json_object_object_add(json_object_object_get(o, "spec"), "summary",
			       json_object_new_string("changed"));
	cr_assert_eq(kube_update(c, &k, o, &o2, &e), 0, "%s", e.message);
	cr_assert_str_eq(
		json_object_get_string(json_object_object_get(
			json_object_object_get(o2, "spec"), "summary")),
		"changed");
	json_object_put(o2);
	/* o still carries the old resourceVersion */
	cr_assert_eq(kube_update(c, &k, o, NULL, &e), -EBUSY);
	cr_assert_eq(e.http_status, 409);
	cr_assert_str_eq(e.reason, "Conflict");
	json_object_put(o);
	json_object_put(r.labels);
	kube_client_free(c);
}

Test(kube_fake, auth_errors_401_403)
{
	struct kube_client *bad = client("no-such-token");
	struct kube_client *anon = client(NULL);
	struct kube_client *agent = client(AGENT);
	const struct kube_resource secrets = {"", "v1", "secrets", "Secret",
					      true};
	struct kube_call pods = {.res = &kube_res_pods};
	struct kube_call sec = {.res = &secrets};
	struct json_object *o;
	struct kube_error e;

	cr_assert_eq(kube_list(bad, &pods, NULL, &o, &e), -EACCES);
	cr_assert_eq(e.http_status, 401);
	cr_assert_str_eq(e.reason, "Unauthorized");
	cr_assert_eq(kube_list(anon, &pods, NULL, &o, &e), -EPERM);
	cr_assert_eq(e.http_status, 403);
	cr_assert(strstr(e.message, "system:anonymous"), "%s", e.message);
	cr_assert_eq(kube_list(agent, &sec, NULL, &o, &e), -EPERM);
	cr_assert_str_eq(e.reason, "Forbidden");
	cr_assert(!e.retryable);
	cr_assert_eq(kube_list(agent, &pods, NULL, &o, &e), 0);
	json_object_put(o);
	kube_client_free(bad);
	kube_client_free(anon);
	kube_client_free(agent);
}

Test(kube_fake, invalid_object_422)
{
	struct kube_client *c = client(AGENT);
	struct kube_call k = {.res = &kube_res_oomreports};
	struct json_object *o = json_tokener_parse(
		"{\"apiVersion\":\"oomlens.io/"
		"v1alpha1\",\"kind\":\"OOMReport\","
		"\"metadata\":{\"name\":\"bad\"},\"spec\":{\"pod\":\"p\","
		"\"container\":\"c\",\"process\":{\"pid\":\"string\"},"
		"\"limit\":\"string\"}}");
	struct kube_error e;

	cr_assert_eq(kube_create(c, &k, o, NULL, &e), -EINVAL);
	cr_assert_eq(e.http_status, 422);
	cr_assert_str_eq(e.reason, "Invalid");
	cr_assert(strstr(e.message, "spec.limit"), "%s", e.message);
	json_object_put(o);
	kube_client_free(c);
}

static int write_bundle(struct kube_client *c, const char *name, size_t size,
			struct kube_error *e)
{
	struct kube_oombundle b = {
		.name = (char *)name, .namespace = "default", .sha256 = "00"};
	int r;

	b.data = malloc(size);
	for (size_t i = 0; i < size; i++)
		b.data[i] = (unsigned char)(i * 2654435761u >> 13);
	b.size = size;
	r = kube_oombundle_write(c, &b, NULL, e);
	if (r == 0) {
		struct kube_oombundle *got;

		cr_assert_eq(kube_oombundle_get(c, "default", name, &got, e),
			     0);
		cr_assert_eq(got->size, size);
		cr_assert_eq(memcmp(got->data, b.data, size), 0);
		kube_oombundle_free(got);
	}
	free(b.data);
	return r;
}

Test(kube_fake, bundle_sizes_201_500_413)
{
	struct kube_client *c = client(AGENT);
	struct kube_error e;

	struct kube_oombundle **bl;
	size_t n;

	cr_assert_eq(write_bundle(c, "b900k", 900 << 10, &e), 0, "%s",
		     e.message);
	cr_assert_eq(kube_oombundle_list(c, "default", NULL, &bl, &n, &e), 0);
	cr_assert_eq(n, 1);
	cr_assert_eq(bl[0]->size, 900 << 10);
	cr_assert_str_eq(bl[0]->name, "b900k");
	kube_oombundles_free(bl, n);
	/* a per-call cap stops the read of an object a pod may have made
	 * huge: 900 KiB is 1.2 MB of base64 */
	{
		struct kube_call g = {.res = &kube_res_oombundles,
				      .namespace = "default",
				      .name = "b900k",
				      .max_response = 1u << 20};
		struct json_object *o = NULL;

		cr_assert_eq(kube_get(c, &g, &o, &e), -E2BIG);
		cr_assert_null(o);
		g.max_response = 2u << 20;
		cr_assert_eq(kube_get(c, &g, &o, &e), 0, "%s", e.message);
		json_object_put(o);
	}
	/* 1.6 MB of base64: over etcd's 1.5 MiB request limit */
	cr_assert_eq(write_bundle(c, "b1m2", 1200 << 10, &e), -E2BIG);
	cr_assert_eq(e.http_status, 500);
	cr_assert_str_eq(e.reason, "");
	cr_assert(!e.retryable);
	/* 3.6 MB body: the apiserver's 3 MiB limit */
	cr_assert_eq(write_bundle(c, "b2m7", 2700 << 10, &e), -E2BIG);
	cr_assert_eq(e.http_status, 413);
	cr_assert_str_eq(e.reason, "RequestEntityTooLarge");
	kube_client_free(c);
}

/* The server says 100 Continue and then the connection goes: seen against
 * the real apiserver as "HTTP status 100"; it is a transport error. */
Test(kube_fake, continue_then_cut_is_transport_error)
{
	struct kube_client *c = client(AGENT);
	struct kube_error e;

	cr_assert_eq(ctl("cut-after-continue", "{\"count\":1}"), 200);
	/* over 1 MiB: libcurl asks Expect: 100-continue */
	cr_assert_eq(write_bundle(c, "bcut", 1200 << 10, &e), -ECONNRESET, "%s",
		     e.message);
	cr_assert_eq(e.http_status, 0, "status %ld", e.http_status);
	cr_assert(e.retryable);
	/* the connection after it is a fresh one and works */
	cr_assert_eq(write_bundle(c, "bok", 1 << 10, &e), 0, "%s", e.message);
	kube_client_free(c);
}

Test(kube_fake, throttled_429_honours_retry_after)
{
	struct kube_client_options once = {.qps = -1, .no_retries = true};
	struct kube_client *c = client(AGENT), *c1 = client_opts(AGENT, &once);
	struct kube_call k = {.res = &kube_res_pods};
	struct json_object *o;
	struct kube_error e;
	uint64_t t0;

	cr_assert_eq(ctl("throttle", "{\"count\":1,\"retry_after\":1}"), 200);
	cr_assert_eq(kube_list(c1, &k, NULL, &o, &e), -EAGAIN);
	cr_assert_eq(e.http_status, 429);
	cr_assert_eq(e.retry_after_s, 1);
	cr_assert(e.retryable);
	cr_assert(strstr(e.message, "Too many requests"));
	cr_assert_eq(ctl("throttle", "{\"count\":2,\"retry_after\":1}"), 200);
	t0 = now_monotonic_us();
	cr_assert_eq(kube_list(c, &k, NULL, &o, &e), 0, "%s", e.message);
	json_object_put(o);
	cr_assert_geq(now_monotonic_us() - t0, 1900000, "waited 2 x 1 s");
	/* 503 with Retry-After is retried; 500 without is not */
	cr_assert_eq(ctl("fail", "{\"count\":1,\"code\":503,\"reason\":"
				 "\"ServiceUnavailable\",\"retry_after\":1}"),
		     200);
	cr_assert_eq(kube_list(c, &k, NULL, &o, &e), 0);
	json_object_put(o);
	cr_assert_eq(ctl("fail", "{\"count\":1,\"code\":500,\"message\":"
				 "\"boom\"}"),
		     200);
	cr_assert_eq(kube_list(c, &k, NULL, &o, &e), -EIO);
	cr_assert_eq(e.http_status, 500);
	cr_assert(e.retryable);
	kube_client_free(c);
	kube_client_free(c1);
}

Test(kube_fake, pods_list_pages_selectors_and_expired_continue)
{
	struct kube_client *admin = client(ADMIN), *c = client(AGENT);
	struct kube_pod_list_options lo = {.node = "node1"};
	struct kube_call k = {.res = &kube_res_pods, .all_namespaces = true};
	struct kube_list_options page = {
		.field_selector = "spec.nodeName=node1", .limit = 1};
	struct kube_pod **pods, *p;
	struct json_object *o;
	_cleanup_free_ char *rv = NULL, *cont = NULL;
	struct kube_error e;
	size_t n;

	create_pod(admin, "v1", "node1");
	create_pod(admin, "v2", "node1");
	create_pod(admin, "v3", "node1");
	create_pod(admin, "other", "node2");
	cr_assert_eq(kube_pod_list(c, &lo, &pods, &n, &rv, &e), 0);
	cr_assert_eq(n, 3);
	for (size_t i = 0; i < n; i++)
		cr_assert_str_eq(pods[i]->node, "node1");
	cr_assert_eq(pods[0]->containers[0].limit_memory, 16u << 20);
	cr_assert_not_null(rv);
	kube_pods_free(pods, n);
	cr_assert_eq(kube_pod_get(c, "default", "other", &p, &e), 0);
	cr_assert_str_eq(kube_pod_annotation(p, "oomlens.io/capture"), "true");
	kube_pod_free(p);
	/* one page of one, then all pages */
	cr_assert_eq(kube_list(c, &k, &page, &o, &e), 0);
	cr_assert_eq(
		json_object_array_length(json_object_object_get(o, "items")),
		1);
	cont = strdup(json_object_get_string(json_object_object_get(
		json_object_object_get(o, "metadata"), "continue")));
	json_object_put(o);
	page.all_pages = true;
	cr_assert_eq(kube_list(c, &k, &page, &o, &e), 0);
	cr_assert_eq(
		json_object_array_length(json_object_object_get(o, "items")),
		3);
	json_object_put(o);
	/* after a compaction the old continue token is 410 Expired */
	create_pod(admin, "v4", "node1");
	cr_assert_eq(ctl("compact", "{}"), 200);
	page.all_pages = false;
	page.continue_token = cont;
	cr_assert_eq(kube_list(c, &k, &page, &o, &e), -ESTALE);
	cr_assert_eq(e.http_status, 410);
	cr_assert_str_eq(e.reason, "Expired");
	kube_client_free(admin);
	kube_client_free(c);
}

Test(kube_fake, event_repeat_bumps_count)
{
	struct kube_client *admin = client(ADMIN), *c = client(AGENT);
	struct kube_event_options ev = {.involved_name = "victim-2",
					.involved_uid = "u-2",
					.field_path = "spec.containers{c}",
					.reason = "OOMKilled",
					.message = "container c OOM-killed",
					.component = "oomlens-agent",
					.host = "node1"};
	struct kube_call k = {.res = &kube_res_events};
	struct kube_list_options lo = {.field_selector =
					       "involvedObject.name=victim-2"};
	struct json_object *o, *it;
	struct kube_error e;
	unsigned count = 0;

	cr_assert_eq(kube_event_post(c, &ev, &count, &e), 0, "%s", e.message);
	cr_assert_eq(count, 1);
	cr_assert_eq(kube_event_post(c, &ev, &count, &e), 0, "%s", e.message);
	cr_assert_eq(count, 2);
	ev.message = "another message";
	cr_assert_eq(kube_event_post(c, &ev, &count, &e), 0);
	cr_assert_eq(count, 1);
	cr_assert_eq(kube_list(admin, &k, &lo, &o, &e), 0);
	cr_assert_eq(
		json_object_array_length(json_object_object_get(o, "items")),
		2);
	it = json_object_array_get_idx(json_object_object_get(o, "items"), 0);
	cr_assert_eq(json_object_get_int(json_object_object_get(it, "count")),
		     2);
	cr_assert_str_eq(
		json_object_get_string(json_object_object_get(it, "type")),
		"Warning");
	json_object_put(o);
	kube_client_free(admin);
	kube_client_free(c);
}

Test(kube_fake, token_review_and_subject_access_review)
{
	struct kube_client *c = client(AGENT);
	struct kube_token_review tr;
	struct kube_access_review a = {
		.user = "system:serviceaccount:oom-system:oom-agent",
		.groups = (const char *const[]){"system:serviceaccounts", NULL},
		.verb = "get",
		.group = "oomlens.io",
		.resource = "oombundles",
		.namespace = "default"};
	_cleanup_free_ char *reason = NULL;
	struct kube_error e;
	bool allowed = false;

	cr_assert_eq(kube_token_review(c, AGENT, &tr, &e), 0, "%s", e.message);
	cr_assert(tr.authenticated);
	cr_assert_str_eq(tr.username,
			 "system:serviceaccount:oom-system:oom-agent");
	cr_assert_not_null(tr.groups[0]);
	kube_token_review_release(&tr);
	cr_assert_eq(kube_token_review(c, "bogus", &tr, &e), 0);
	cr_assert(!tr.authenticated);
	cr_assert_not_null(tr.error);
	kube_token_review_release(&tr);
	cr_assert_eq(kube_subject_access_review(c, &a, &allowed, &reason, &e),
		     0, "%s", e.message);
	cr_assert(allowed);
	cr_assert_not_null(reason);
	a.resource = "secrets";
	a.group = "";
	cr_assert_eq(kube_subject_access_review(c, &a, &allowed, NULL, &e), 0);
	cr_assert(!allowed);
	kube_client_free(c);
}

/* ---- watch ---- */

struct seen {
	pthread_mutex_t lock;
	char ev[64][48];
	int n;
	int synced;	   /* complete lists reported */
	int at_first_sync; /* events delivered when the first was */
};

static void on_synced(void *ud)
{
	struct seen *s = ud;

	pthread_mutex_lock(&s->lock);
	if (s->synced++ == 0)
		s->at_first_sync = s->n;
	pthread_mutex_unlock(&s->lock);
}

static int record(void *ud, enum kube_event_type t, struct json_object *obj)
{
	struct seen *s = ud;
	struct json_object *md = json_object_object_get(obj, "metadata");

	pthread_mutex_lock(&s->lock);
	if (s->n < 64)
		snprintf(s->ev[s->n++], 48, "%s %s", kube_event_type_name(t),
			 json_object_get_string(
				 json_object_object_get(md, "name")));
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* the same for a pod watch (kube_watch_options.pod_fn) */
static int record_pod(void *ud, enum kube_event_type t,
		      const struct kube_pod *p)
{
	struct seen *s = ud;

	pthread_mutex_lock(&s->lock);
	if (s->n < 64)
		snprintf(s->ev[s->n++], 48, "%s %s", kube_event_type_name(t),
			 p->name);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static void wait_events(struct seen *s, int n)
{
	for (int i = 0; i < 400; i++) {
		int have;

		pthread_mutex_lock(&s->lock);
		have = s->n;
		pthread_mutex_unlock(&s->lock);
		if (have >= n)
			return;
		usleep(50000);
	}
	cr_assert_fail("waited for %d events, got %d (last '%s')", n, s->n,
		       s->n ? s->ev[s->n - 1] : "");
}

struct watcher {
	struct kube_client *c;
	struct kube_watch_options o;
	struct kube_error e;
	int ret;
};

static void *watch_thread(void *ud)
{
	struct watcher *w = ud;

	w->ret = kube_watch(w->c, &w->o, &w->e);
	return NULL;
}

static uint64_t stop_watch(pthread_t th, struct kube_cancel *cancel)
{
	uint64_t t0 = now_monotonic_us();

	kube_cancel_trigger(cancel);
	pthread_join(th, NULL);
	return now_monotonic_us() - t0;
}

/* A watch through a dropped connection, a compaction and a restart (410
 * and relist): each change once. pods: a pod watch, which reads its
 * lines straight into pods and its lists by kube_pod_decode(). */
static void survive_drop_410_restart(bool pods)
{
	struct kube_client *admin = client(ADMIN), *c = client(AGENT);
	struct seen s = {.lock = PTHREAD_MUTEX_INITIALIZER};
	struct kube_watch_stats st = {0};
	struct kube_cancel *cancel;
	struct kube_call del = {.res = &kube_res_pods, .name = "p1"};
	struct kube_delete_options now = {.set_grace_period = true};
	struct watcher w = {.c = c};
	/* the delete (grace 0) is MODIFIED then DELETED, both served from
	 * the watch cache across the compaction */
	static const char *want[] = {
		"ADDED p1",    "ADDED p2",   "MODIFIED p1", "MODIFIED p2",
		"MODIFIED p1", "DELETED p1", "ADDED p3"};
	struct kube_error e;
	pthread_t th;

	cr_assert_eq(kube_cancel_new(&cancel), 0);
	w.o = (struct kube_watch_options){.call = {.res = &kube_res_pods,
						   .all_namespaces = true,
						   .cancel = cancel},
					  .field_selector =
						  "spec.nodeName=node1",
					  .timeout_s = 30,
					  .backoff_min_ms = 100,
					  .backoff_max_ms = 800,
					  .fn = pods ? NULL : record,
					  .pod_fn = pods ? record_pod : NULL,
					  .userdata = &s,
					  .stats = &st,
					  .synced = on_synced};
	create_pod(admin, "p1", "node1");
	pthread_create(&th, NULL, watch_thread, &w);
	wait_events(&s, 1);
	create_pod(admin, "p2", "node1");
	create_pod(admin, "q", "node2"); /* filtered out */
	wait_events(&s, 2);
	label_pod(admin, "p1", "a");
	wait_events(&s, 3);
	/* 1: the connection drops; the change after it comes once */
	cr_assert_eq(ctl("close-watches", "{}"), 200);
	label_pod(admin, "p2", "b");
	wait_events(&s, 4);
	/* 2: the re-watch is held while p1 goes and the RVs are compacted:
	 * as on a real 1.20 server the watch cache still serves it (no
	 * 410): one DELETED */
	cr_assert_eq(ctl("stall", "{\"seconds\":2,\"count\":1,\"path\":"
				  "\"/api/v1/pods\"}"),
		     200);
	cr_assert_eq(ctl("close-watches", "{}"), 200);
	cr_assert_eq(kube_delete(admin, &del, &now, NULL, &e), 0);
	cr_assert_eq(ctl("compact", "{}"), 200);
	wait_events(&s, 6);
	/* 3: the server restarts (2 s away, watch cache expired); a write
	 * the selector filters out leaves the client's RV behind, so the
	 * re-watch is too old: 410 again */
	create_pod(admin, "q2", "node2");
	cr_assert_eq(ctl("down", "{\"seconds\":2,\"expire\":true}"), 200);
	usleep(2500000);
	create_pod(admin, "p3", "node1");
	wait_events(&s, 7);
	usleep(1000000); /* anything repeated would show now */
	cr_assert_lt(stop_watch(th, cancel), 1000000, "cancel < 1 s");
	cr_assert_eq(w.ret, -ECANCELED);
	cr_assert_eq(s.n, 7, "no event repeated (%d)", s.n);
	for (int i = 0; i < 7; i++)
		cr_assert_str_eq(s.ev[i], want[i], "event %d", i);
	cr_assert_geq(st.expired, 1,
		      "410 after the restart: expired %u relists %u "
		      "connects %u",
		      st.expired, st.relists, st.connects);
	cr_assert_geq(st.relists, 2);
	cr_assert_geq(st.connects, 4);
	/* each complete list said so, the first after p1 was delivered */
	cr_assert_eq((unsigned)s.synced, st.relists);
	cr_assert_eq(s.at_first_sync, 1);
	kube_cancel_free(cancel);
	kube_client_free(admin);
	kube_client_free(c);
}

Test(kube_fake, watch_survives_drop_410_and_restart_exactly_once)
{
	survive_drop_410_restart(false);
}

Test(kube_fake, pod_watch_survives_drop_410_and_restart_exactly_once)
{
	survive_drop_410_restart(true);
}

static int count_pods(void *ud, enum kube_event_type t,
		      const struct kube_pod *p)
{
	int *n = ud;

	if (t == KUBE_EVENT_ADDED && p->n_containers == 1)
		(*n)++;
	return 0;
}

struct pod_watcher {
	struct kube_client *c;
	struct kube_pod_watch_options o;
	int ret;
};

static void *pod_watch_thread(void *ud)
{
	struct pod_watcher *w = ud;

	w->ret = kube_pod_watch(w->c, &w->o, NULL);
	return NULL;
}

Test(kube_fake, pod_watch_cancel_and_shutdown_under_1s)
{
	struct kube_client *admin = client(ADMIN), *c = client(AGENT);
	struct kube_cancel *cancel;
	struct pod_watcher w = {.c = c};
	int added = 0;
	pthread_t th;
	uint64_t t0;

	cr_assert_eq(kube_cancel_new(&cancel), 0);
	create_pod(admin, "a", "node1");
	w.o = (struct kube_pod_watch_options){
		.list = {.node = "node1", .cancel = cancel},
		.fn = count_pods,
		.userdata = &added,
		.timeout_s = 300};
	pthread_create(&th, NULL, pod_watch_thread, &w);
	for (int i = 0; i < 100 && !added; i++)
		usleep(50000);
	cr_assert_eq(added, 1);
	usleep(300000); /* idle inside the watch request */
	t0 = now_monotonic_us();
	kube_cancel_trigger(cancel);
	pthread_join(th, NULL);
	cr_assert_lt(now_monotonic_us() - t0, 1000000);
	cr_assert_eq(w.ret, -ECANCELED);
	/* the same through the client-wide shutdown, during a backoff */
	kube_cancel_reset(cancel);
	cr_assert_eq(ctl("down", "{\"seconds\":5}"), 200);
	pthread_create(&th, NULL, pod_watch_thread, &w);
	usleep(700000);
	t0 = now_monotonic_us();
	kube_client_shutdown(c);
	pthread_join(th, NULL);
	cr_assert_lt(now_monotonic_us() - t0, 1000000);
	cr_assert_eq(w.ret, -ECANCELED);
	kube_cancel_free(cancel);
	kube_client_free(admin);
	kube_client_free(c);
}

/* ---- credentials ---- */

static void put(const char *name, const char *text, unsigned mode)
{
	char p[160];

	snprintf(p, sizeof(p), "%s/%s", F.dir, name);
	cr_assert_eq(
		write_file_atomic_at(AT_FDCWD, p, text, strlen(text), mode), 0);
}

static int list_pods(struct kube_client *c, struct kube_error *e)
{
	struct kube_call k = {.res = &kube_res_pods};
	struct json_object *o = NULL;
	int r = kube_list(c, &k, NULL, &o, e);

	json_object_put(o);
	return r;
}

Test(kube_fake, token_file_rotation_without_restart)
{
	char path[128];
	struct kube_config cfg = {
		.server = F.url, .ca_file = F.ca, .token_file = path};
	struct kube_client_options o = {.qps = -1};
	struct kube_client *c;
	struct kube_error e;

	snprintf(path, sizeof(path), "%s/token", F.dir);
	put("token", "rot-A\n", 0600);
	cr_assert_eq(ctl("tokens", "{\"add\":{\"rot-A\":{\"user\":\"a\"},"
				   "\"rot-B\":{\"user\":\"b\"}}}"),
		     200);
	cr_assert_eq(kube_client_new(&cfg, &o, &c), 0);
	cr_assert_eq(list_pods(c, &e), 0, "%s", e.message);
	/* the kubelet rotates the projected token; the old one dies */
	put("token", "rot-B\n", 0600);
	cr_assert_eq(ctl("tokens", "{\"remove\":[\"rot-A\"]}"), 200);
	cr_assert_eq(list_pods(c, &e), 0, "%s", e.message);
	put("token", "rot-gone\n", 0600);
	cr_assert_eq(list_pods(c, &e), -EACCES);
	cr_assert_eq(e.http_status, 401);
	kube_client_free(c);
}

Test(kube_fake, exec_plugin_token_cached_until_expiry)
{
	char kc[1024], runs[128];
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct kube_client_options o = {.qps = -1};
	struct kube_config *cfg;
	struct kube_client *c;
	struct kube_error e;

	put("plugin.sh",
	    "#!/bin/sh\necho run >> \"$(dirname \"$0\")/runs\"\n"
	    "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
	    "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"'$TOK'\","
	    "\"expirationTimestamp\":\"'$EXP'\"}}'\n",
	    0755);
	snprintf(kc, sizeof(kc),
		 "current-context: a\n"
		 "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
		 "clusters: [{name: c, cluster: {server: '%s', "
		 "certificate-authority: tls/ca.crt}}]\n"
		 "users:\n- name: u\n  user:\n    exec:\n"
		 "      apiVersion: client.authentication.k8s.io/v1\n"
		 "      command: ./plugin.sh\n"
		 "      env: [{name: TOK, value: " AGENT "}, {name: EXP, "
		 "value: '%s'}]\n",
		 F.url, "2099-01-01T00:00:00Z");
	cr_assert_eq(kube_config_parse_kubeconfig(kc, strlen(kc), F.dir, NULL,
						  &cfg, &e),
		     0, "%s", e.message);
	cr_assert_eq(kube_client_new(cfg, &o, &c), 0);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(list_pods(c, &e), 0, "%s", e.message);
	snprintf(runs, sizeof(runs), "%s/runs", F.dir);
	strbuf_init(&sb, 4096);
	cr_assert_eq(read_file_at(AT_FDCWD, runs, 4096, &sb), 0);
	cr_assert_eq(sb.len, 4, "one run for three requests: cached");
	kube_client_free(c);
	/* an expired credential is fetched again for every request */
	free(cfg->exec->env[1]);
	cfg->exec->env[1] = strdup("EXP=2001-01-01T00:00:00Z");
	cr_assert_eq(kube_client_new(cfg, &o, &c), 0);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(list_pods(c, &e), 0, "%s", e.message);
	strbuf_reset(&sb);
	cr_assert_eq(read_file_at(AT_FDCWD, runs, 4096, &sb), 0);
	cr_assert_eq(sb.len, 12, "two more runs");
	kube_client_free(c);
	kube_config_free(cfg);
}

Test(kube_fake, client_certificate_from_kubeconfig)
{
	char cmd[512], kc[1024];
	struct kube_client_options o = {.qps = -1};
	struct kube_config *cfg;
	struct kube_client *c;
	struct kube_error e;

	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import sys; sys.path.insert(0, "
		 "\"tests/fakeapi\"); import fakeapi; "
		 "fakeapi.make_client_cert(\"%s/tls\", \"admin-client\", "
		 "\"admin\", [\"system:masters\"])' >/dev/null 2>&1",
		 F.dir);
	cr_assert_eq(system(cmd), 0, "make_client_cert");
	snprintf(kc, sizeof(kc),
		 "current-context: a\n"
		 "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
		 "clusters: [{name: c, cluster: {server: '%s', "
		 "certificate-authority: tls/ca.crt}}]\n"
		 "users: [{name: u, user: {client-certificate: "
		 "tls/admin-client.crt, client-key: tls/admin-client.key}}]\n",
		 F.url);
	cr_assert_eq(kube_config_parse_kubeconfig(kc, strlen(kc), F.dir, NULL,
						  &cfg, &e),
		     0, "%s", e.message);
	cr_assert_eq(kube_client_new(cfg, &o, &c), 0);
	/* the agent's token may not create pods; the certificate's user may */
	create_pod(c, "by-cert", "node1");
	kube_client_free(c);
	/* the same certificate handed over by an exec plugin */
	kube_config_free(cfg);
	put("certplugin.sh",
	    "#!/bin/sh\nexec python3 -c 'import json, sys; d = sys.argv[1]; "
	    "print(json.dumps({\"apiVersion\": "
	    "\"client.authentication.k8s.io/v1\", \"kind\": "
	    "\"ExecCredential\", \"status\": {\"clientCertificateData\": "
	    "open(d + \"/admin-client.crt\").read(), \"clientKeyData\": "
	    "open(d + \"/admin-client.key\").read()}}))' \"$(dirname "
	    "\"$0\")/tls\"\n",
	    0755);
	snprintf(kc, sizeof(kc),
		 "current-context: a\n"
		 "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
		 "clusters: [{name: c, cluster: {server: '%s', "
		 "certificate-authority: tls/ca.crt}}]\n"
		 "users: [{name: u, user: {exec: {apiVersion: "
		 "client.authentication.k8s.io/v1, command: "
		 "./certplugin.sh}}}]\n",
		 F.url);
	cr_assert_eq(kube_config_parse_kubeconfig(kc, strlen(kc), F.dir, NULL,
						  &cfg, &e),
		     0, "%s", e.message);
	cr_assert_eq(kube_client_new(cfg, &o, &c), 0);
	create_pod(c, "by-exec-cert", "node1");
	kube_client_free(c);
	kube_config_free(cfg);
	snprintf(kc, sizeof(kc),
		 "current-context: a\n"
		 "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
		 "clusters: [{name: c, cluster: {server: '%s', "
		 "certificate-authority: tls/ca.crt}}]\n"
		 "users: [{name: u, user: {client-key: tls/admin-client.key}}]"
		 "\n",
		 F.url);
	cr_assert_eq(kube_config_parse_kubeconfig(kc, strlen(kc), F.dir, NULL,
						  &cfg, &e),
		     0, "%s", e.message);
	/* without the certificate: anonymous, 403 */
	cr_assert_eq(kube_client_new(cfg, &o, &c), 0);
	cr_assert_eq(list_pods(c, &e), -EPERM);
	kube_client_free(c);
	kube_config_free(cfg);
}

Test(kube_fake, client_side_rate_limit)
{
	struct kube_client_options o = {.qps = 5, .burst = 2};
	struct kube_client *c = client_opts(AGENT, &o);
	struct kube_error e;
	uint64_t t0 = now_monotonic_us(), dt;

	for (int i = 0; i < 6; i++)
		cr_assert_eq(list_pods(c, &e), 0);
	dt = now_monotonic_us() - t0;
	/* 2 at once, then 4 at 5/s: 0.8 s */
	cr_assert_geq(dt, 750000, "%llu us", (unsigned long long)dt);
	cr_assert_lt(dt, 3000000);
	kube_client_free(c);
}

Test(kube_fake, tls_server_name_and_verification)
{
	struct kube_config cfg = {.server = F.url,
				  .ca_file = F.ca,
				  .token = AGENT,
				  .tls_server_name = "localhost"};
	struct kube_client_options o = {.qps = -1, .no_retries = true};
	struct kube_client *c;
	struct kube_error e;

	/* the certificate names 127.0.0.1 and localhost */
	cr_assert_eq(kube_client_new(&cfg, &o, &c), 0);
	cr_assert_eq(list_pods(c, &e), 0, "%s", e.message);
	kube_client_free(c);
	cfg.tls_server_name = "not-in-the-cert.example";
	cr_assert_eq(kube_client_new(&cfg, &o, &c), 0);
	cr_assert_eq(list_pods(c, &e), -EPROTO, "%s", e.message);
	cr_assert_eq(e.http_status, 0);
	kube_client_free(c);
	/* no CA: the system store does not know the test CA; insecure does */
	cfg.tls_server_name = NULL;
	cfg.ca_file = NULL;
	cr_assert_eq(kube_client_new(&cfg, &o, &c), 0);
	cr_assert_eq(list_pods(c, &e), -EPROTO, "%s", e.message);
	kube_client_free(c);
	cfg.insecure = true;
	cr_assert_eq(kube_client_new(&cfg, &o, &c), 0);
	cr_assert_eq(list_pods(c, &e), 0, "%s", e.message);
	kube_client_free(c);
}

Test(kube_fake, watch_server_timeouts_reconnect_without_repeats)
{
	struct kube_client *admin = client(ADMIN), *c = client(AGENT);
	struct seen s = {.lock = PTHREAD_MUTEX_INITIALIZER};
	struct kube_watch_stats st = {0};
	struct kube_cancel *cancel;
	struct watcher w = {.c = c};
	pthread_t th;

	cr_assert_eq(kube_cancel_new(&cancel), 0);
	w.o = (struct kube_watch_options){
		.call = {.res = &kube_res_pods, .cancel = cancel},
		.timeout_s = 2,
		.fn = record,
		.userdata = &s,
		.stats = &st};
	create_pod(admin, "only", "node1");
	pthread_create(&th, NULL, watch_thread, &w);
	usleep(5500000);
	label_pod(admin, "only", "x");
	wait_events(&s, 2);
	cr_assert_lt(stop_watch(th, cancel), 1000000);
	cr_assert_eq(s.n, 2);
	cr_assert_str_eq(s.ev[0], "ADDED only");
	cr_assert_str_eq(s.ev[1], "MODIFIED only");
	cr_assert_geq(st.connects, 3, "a new watch every 2 s: %u", st.connects);
	cr_assert_eq(st.relists, 1, "a clean end resumes, no relist");
	kube_cancel_free(cancel);
	kube_client_free(admin);
	kube_client_free(c);
}
