/* SPDX-License-Identifier: Apache-2.0 */
/* kube_project: the projection of watch events held to json-c on the real
 * API server's bodies (tests/fixtures/kube/), and on what a hostile pod
 * spec can put in an event: truncations, bad escapes, nesting bombs, NUL
 * bytes, odd numbers, json-c's extensions. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "kube/kube.h"

#define FIX "tests/fixtures/kube/"

static void load(const char *name, struct strbuf *sb)
{
	strbuf_init(sb, 1 << 22);
	cr_assert_geq(read_file_at(AT_FDCWD, name, 1 << 22, sb), 0,
		      "cannot read %s", name);
}

static struct json_object *json_c(const char *s, size_t n)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o = json_tokener_parse_ex(tok, s, (int)n);

	cr_assert_eq(json_tokener_get_error(tok), json_tokener_success,
		     "json-c: %.60s", s);
	json_tokener_free(tok);
	return o;
}

static int project(const char *s, size_t n, const struct kube_keep *keep,
		   struct json_object **ret)
{
	struct json_tokener *tok = json_tokener_new();
	int r = kube_json_project(tok, s, n, keep, ret);

	json_tokener_free(tok);
	return r;
}

/* kube_keep_all builds json-c's tree of s. */
static void check_whole(const char *what, const char *s, size_t n)
{
	struct json_object *p = NULL, *t = json_c(s, n);

	cr_assert_eq(project(s, n, kube_keep_all, &p), 0, "%s", what);
	cr_assert(json_object_equal(p, t), "%s: %s", what,
		  json_object_to_json_string(p));
	json_object_put(p);
	json_object_put(t);
}

Test(kube_project, every_body_of_the_real_server_whole)
{
	glob_t g;
	unsigned n = 0;

	cr_assert_eq(glob(FIX "*.json*", 0, NULL, &g), 0);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		const char *line = NULL;

		load(g.gl_pathv[i], &sb);
		/* .json: one body; .jsonl: a body a line */
		for (char *s = sb.buf, *nl; *s; s = nl + 1) {
			nl = strchr(s, '\n');
			if (!nl)
				nl = s + strlen(s);
			line = s;
			check_whole(g.gl_pathv[i], line, (size_t)(nl - s));
			n++;
			if (!*nl)
				break;
		}
	}
	globfree(&g);
	/* 14 bodies in .json files, 12 watch lines (the list body is one) */
	cr_assert_geq(n, 25, "%u bodies", n);
}

/* Lines kube_event_decoder_parse_pod() read straight into a pod. */
static unsigned straight;

/* kube_event_decoder_parse_pod() of the line against json-c's event b
 * (rb its rc, db and pb its pod's decode): the same answer, and the same
 * pod whether read straight or from the projection. */
static void check_pod_event(struct kube_event_decoder *d, const char *s,
			    size_t n, int rb, const struct kube_watch_event *b,
			    int db, const struct kube_pod *pb)
{
	struct kube_watch_event c = {0};
	struct kube_pod *pc = NULL;
	int rc = kube_event_decoder_parse_pod(d, s, n, &c, &pc);
	int dc;

	cr_assert_eq(rc, rb, "straight: %.80s (len %zu)", s, n);
	if (rc < 0) {
		cr_assert_null(pc);
		return;
	}
	cr_assert_eq(c.type, b->type);
	cr_assert_str_eq(c.resource_version, b->resource_version);
	if (pc) {
		straight++;
		cr_assert_null(c.object);
		cr_assert_eq(db, 0, "read straight, refused by json-c: %.80s",
			     s);
		cr_assert(pb && kube_pod_equal(pc, pb), "straight: %.80s", s);
		kube_pod_free(pc);
		return;
	}
	dc = kube_pod_decode(c.object, &pc);
	cr_assert_eq(dc, db, "%.80s", s);
	if (dc == 0) {
		cr_assert(kube_pod_equal(pc, pb), "%.80s", s);
		kube_pod_free(pc);
	}
	kube_watch_event_release(&c);
}

/* The decoder's event and kube_watch_event_parse()'s: the same answer, the
 * same pod (the projection's and the one read straight from the line).
 * Returns the decoder's rc. */
static int check_event(struct kube_event_decoder *d, const char *s, size_t n)
{
	struct kube_watch_event a = {0}, b = {0};
	struct kube_pod *pa, *pb = NULL;
	int ra = kube_event_decoder_parse(d, s, n, &a);
	int rb = kube_watch_event_parse(s, n, &b);
	int da, db = -EBADMSG;

	cr_assert_eq(ra, rb, "%.80s (len %zu)", s, n);
	if (ra == 0) {
		cr_assert_eq(a.type, b.type);
		cr_assert_str_eq(a.resource_version, b.resource_version);
		da = kube_pod_decode(a.object, &pa);
		db = kube_pod_decode(b.object, &pb);
		cr_assert_eq(da, db, "%.80s", s);
		if (da == 0) {
			cr_assert(kube_pod_equal(pa, pb), "%.80s", s);
			kube_pod_free(pa);
		}
	}
	check_pod_event(d, s, n, rb, &b, db, pb);
	kube_pod_free(pb);
	kube_watch_event_release(&a);
	kube_watch_event_release(&b);
	return ra;
}

static struct kube_event_decoder *pod_decoder(void)
{
	struct kube_event_decoder *d;

	cr_assert_eq(kube_event_decoder_new(kube_pod_keep, &d), 0);
	return d;
}

Test(kube_project, golden_watch_decodes_the_same_pods)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct kube_event_decoder *d = pod_decoder();
	unsigned n = 0;

	load(FIX "watch-pods.jsonl", &sb);
	for (char *s = sb.buf, *nl; (nl = strchr(s, '\n')); s = nl + 1) {
		cr_assert_eq(check_event(d, s, (size_t)(nl - s)), 0);
		n++;
	}
	cr_assert_eq(n, 8);
	/* all but the two BOOKMARKs, read straight */
	cr_assert_eq(straight, 6);
	kube_event_decoder_free(d);
}

Test(kube_project, kubelet_pod_keeps_what_is_read_only)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct kube_event_decoder *d = pod_decoder();
	struct kube_watch_event ev;
	struct json_object *md, *spec, *c;
	struct kube_pod *p;

	load(FIX "watch-pod-kubelet.jsonl", &sb);
	cr_assert_eq(check_event(d, sb.buf, sb.len - 1), 0);
	cr_assert_eq(kube_event_decoder_parse(d, sb.buf, sb.len - 1, &ev), 0);
	cr_assert_eq(ev.type, KUBE_EVENT_MODIFIED);
	cr_assert_str_eq(ev.resource_version, "226");
	/* managedFields, generateName, env, volumes... not built */
	cr_assert(json_object_object_get_ex(ev.object, "metadata", &md));
	cr_assert_eq(json_object_object_length(md), 7);
	cr_assert_not(json_object_object_get_ex(md, "managedFields", NULL));
	cr_assert(json_object_object_get_ex(ev.object, "spec", &spec));
	cr_assert_eq(json_object_object_length(spec), 2); /* nodeName */
	c = json_object_array_get_idx(
		json_object_object_get(spec, "containers"), 0);
	cr_assert_eq(json_object_object_length(c), 3);
	cr_assert_not(json_object_object_get_ex(c, "env", NULL));
	cr_assert_eq(kube_pod_decode(ev.object, &p), 0);
	cr_assert_str_eq(p->name, "victim-3");
	cr_assert_str_eq(p->owner_kind, "ReplicaSet");
	cr_assert_str_eq(p->owner_name, "victim-3-7d4b9c6f5");
	cr_assert_str_eq(p->node, "node1");
	cr_assert_eq(p->n_containers, 1);
	cr_assert_eq(p->containers[0].limit_memory, 16u << 20);
	cr_assert_str_eq(p->containers[0].last_terminated_reason, "OOMKilled");
	cr_assert_eq(p->containers[0].last_exit_code, 137);
	cr_assert_eq(p->containers[0].restart_count, 1);
	cr_assert_str_eq(kube_pod_annotation(p, "oomlens.io/capture"), "true");
	cr_assert_eq(json_object_object_length(p->labels), 3);
	kube_pod_free(p);
	kube_watch_event_release(&ev);
	/* and read straight, with the controller's apiVersion */
	cr_assert_eq(
		kube_event_decoder_parse_pod(d, sb.buf, sb.len - 1, &ev, &p),
		0);
	cr_assert_not_null(p);
	cr_assert_null(ev.object);
	cr_assert_eq(ev.type, KUBE_EVENT_MODIFIED);
	cr_assert_str_eq(ev.resource_version, "226");
	cr_assert_str_eq(p->owner_api_version, "apps/v1");
	cr_assert(p->owner_controller);
	cr_assert_str_eq(p->containers[0].limit_memory_s, "16Mi");
	cr_assert_str_eq(p->containers[0].last_terminated_reason, "OOMKilled");
	kube_pod_free(p);
	kube_event_decoder_free(d);
}

/* Every cut of a real event is refused, by both, until the whole line. */
Test(kube_project, every_cut_of_an_event)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct kube_event_decoder *d = pod_decoder();

	load(FIX "watch-pod-kubelet.jsonl", &sb);
	for (size_t n = 0; n < sb.len - 1; n++)
		cr_assert_eq(check_event(d, sb.buf, n), -EBADMSG, "cut at %zu",
			     n);
	cr_assert_eq(check_event(d, sb.buf, sb.len - 1), 0);
	kube_event_decoder_free(d);
}

Test(kube_project, error_event_keeps_the_whole_status)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct kube_event_decoder *d = pod_decoder();
	struct kube_watch_event ev;
	struct kube_error e;
	const char *s;

	load(FIX "watch-expired.jsonl", &sb);
	cr_assert_eq(kube_event_decoder_parse(d, sb.buf, sb.len - 1, &ev), 0);
	cr_assert_eq(ev.type, KUBE_EVENT_ERROR);
	s = json_object_to_json_string(ev.object);
	cr_assert_eq(kube_status_parse(s, strlen(s), 410, &e), -ESTALE);
	cr_assert_str_eq(e.reason, "Expired");
	cr_assert_neq(e.message[0], '\0');
	kube_watch_event_release(&ev);
	kube_event_decoder_free(d);
}

#define EV(md) "{\"type\":\"ADDED\",\"object\":{\"metadata\":" md "}}"
#define CASE(what, text, projected, decoded)                     \
	{                                                        \
		what, text, sizeof(text) - 1, projected, decoded \
	}

struct bad_case {
	const char *what, *text;
	size_t len;
	int projected; /* kube_json_project() as the pod decoder calls it */
	int decoded;   /* the decoder and kube_watch_event_parse() */
};

/* The decoded column is json-c's answer, which the decoder must give. */
static const struct bad_case bad_cases[] = {
	CASE("truncated string", EV("{\"name\":\"ab"), -EBADMSG, -EBADMSG),
	CASE("truncated in a skipped member",
	     EV("{\"name\":\"a\",\"managedFields\":[{\"f:x\":\"ab"), -EBADMSG,
	     -EBADMSG),
	CASE("bad escape", EV("{\"name\":\"a\",\"x\":\"\\x\"}"), -EBADMSG,
	     -EBADMSG),
	CASE("bad \\u", EV("{\"name\":\"a\",\"x\":\"\\u12g4\"}"), -EBADMSG,
	     -EBADMSG),
	CASE("short \\u", EV("{\"name\":\"a\",\"x\":\"\\u12\"}"), -EBADMSG,
	     -EBADMSG),
	CASE("NUL in a skipped string", EV("{\"name\":\"a\",\"x\":\"a\0b\"}"),
	     -EBADMSG, -EBADMSG),
	CASE("NUL between tokens", EV("{\"name\":\"a\",\0\"x\":1}"), -EBADMSG,
	     -EBADMSG),
	CASE("nesting too deep (33 levels)",
	     EV("{\"name\":\"a\",\"x\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[0]]]]]]]]]"
		"]]]]]]]]]]]]]]]]]]]]]}"),
	     -EBADMSG, -EBADMSG),
	CASE("leading zero", EV("{\"name\":\"a\",\"x\":01}"), -EBADMSG, 0),
	CASE("no digits after the point", EV("{\"name\":\"a\",\"x\":1.}"),
	     -EBADMSG, 0),
	CASE("point first", EV("{\"name\":\"a\",\"x\":.5}"), -EBADMSG,
	     -EBADMSG),
	CASE("bare minus", EV("{\"name\":\"a\",\"x\":-}"), -EBADMSG, -EBADMSG),
	CASE("empty exponent", EV("{\"name\":\"a\",\"x\":1e}"), -EBADMSG, 0),
	CASE("plus sign", EV("{\"name\":\"a\",\"x\":+1}"), -EBADMSG, -EBADMSG),
	CASE("number of 65 characters",
	     EV("{\"name\":\"a\",\"x\":12345678901234567890123456789012345678"
		"901234567890123456789012345}"),
	     -EBADMSG, 0),
	CASE("raw control byte", EV("{\"name\":\"a\",\"x\":\"\x01\"}"),
	     -EBADMSG, 0),
	CASE("lone surrogate", EV("{\"name\":\"a\\ud800\"}"), -EBADMSG, 0),
	CASE("trailing comma", EV("{\"name\":\"a\",}"), -EBADMSG, 0),
	CASE("single quotes", EV("{'name':'a'}"), -EBADMSG, 0),
	CASE("comment", EV("{\"name\":\"a\"/* c */}"), -EBADMSG, 0),
	CASE("NaN", EV("{\"name\":\"a\",\"x\":NaN}"), -EBADMSG, 0),
	CASE("True", EV("{\"name\":\"a\",\"x\":True}"), -EBADMSG, 0),
	CASE("vertical tab", EV("{\"name\":\"a\"\v}"), -EBADMSG, -EBADMSG),
	CASE("escaped key that is metadata",
	     "{\"type\":\"ADDED\",\"object\":{\"metad\\u0061ta\":{\"name\":"
	     "\"a\"}}}",
	     -EBADMSG, 0),
	CASE("garbage after the event", EV("{\"name\":\"a\"}") "x", -EBADMSG,
	     -EBADMSG),
	CASE("two events on a line", EV("{\"name\":\"a\"}") EV("{}"), -EBADMSG,
	     -EBADMSG),
	CASE("blanks around", " \t" EV("{\"name\":\"a\"}") "\r ", 0, 0),
	CASE("not an object", "[1]", -EBADMSG, -EBADMSG),
	CASE("cut after a container's comma",
	     "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"},"
	     "\"spec\":{\"containers\":[{\"name\":\"c\"},",
	     -EBADMSG, -EBADMSG),
	CASE("unknown type", "{\"type\":\"NEW\",\"object\":{}}", 0, -EBADMSG),
	CASE("object not an object", "{\"type\":\"ADDED\",\"object\":[]}", 0,
	     -EBADMSG),
};

static const struct kube_keep event_keep[] = {{"type", NULL, false},
					      {"object", kube_pod_keep, false},
					      {NULL, NULL, false}};

/* Criterion's parameters may not carry pointers to static strings: a
 * table. */
Test(kube_project, hostile_text_answered_as_json_c_answers)
{
	struct kube_event_decoder *d = pod_decoder();

	for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];
		size_t n = c->len;
		struct json_object *o = NULL;
		/* a buffer of the text's size: a read past it is ASan's */
		char *t = malloc(n);
		int r;

		cr_assert_not_null(t);
		memcpy(t, c->text, n);
		r = project(t, n, event_keep, &o);
		cr_assert_eq(r, c->projected, "%s: projected %d", c->what, r);
		json_object_put(o);
		r = check_event(d, t, n);
		cr_assert_eq(r, c->decoded, "%s: decoded %d", c->what, r);
		free(t);
	}
	kube_event_decoder_free(d);
}

Test(kube_project, nesting_bomb_refused_in_one_pass)
{
	static const char head[] =
		"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"x\":";
	struct kube_event_decoder *d = pod_decoder();
	size_t n = 8u << 20;
	char *s = malloc(n);
	struct json_object *o;

	cr_assert_not_null(s);
	memcpy(s, head, sizeof(head) - 1);
	memset(s + sizeof(head) - 1, '[', n - sizeof(head) + 1);
	cr_assert_eq(project(s, n, kube_pod_keep, &o), -EBADMSG);
	cr_assert_eq(check_event(d, s, n), -EBADMSG);
	free(s);
	kube_event_decoder_free(d);
}

/* json-c takes a value 32 levels deep, not 33: scalars count, keys not. */
static void check_depth(int arrays, const char *inner, bool ok)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o = NULL, *t;

	/* top, object, metadata, labels: 4 levels, then the arrays */
	strbuf_init(&sb, 0);
	strbuf_adds(&sb, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{"
			 "\"name\":\"n\",\"labels\":{\"a\":");
	for (int i = 0; i < arrays; i++)
		strbuf_addch(&sb, '[');
	strbuf_adds(&sb, inner);
	for (int i = 0; i < arrays; i++)
		strbuf_addch(&sb, ']');
	strbuf_adds(&sb, "}}}}");
	t = json_tokener_parse_ex(tok, sb.buf, (int)sb.len);
	cr_assert_eq(t != NULL, ok, "json-c on %d arrays around \"%s\"", arrays,
		     inner);
	cr_assert_eq(project(sb.buf, sb.len, kube_keep_all, &o),
		     ok ? 0 : -EBADMSG, "%d arrays around \"%s\"", arrays,
		     inner);
	if (ok)
		cr_assert(json_object_equal(o, t));
	json_object_put(o);
	json_object_put(t);
	json_tokener_free(tok);
}

Test(kube_project, depth_as_json_c)
{
	check_depth(28, "", true);
	check_depth(27, "[]", true);
	check_depth(28, "[]", false);
	check_depth(27, "0", true);
	check_depth(28, "0", false);
	check_depth(27, "{}", true);
	check_depth(27, "{\"k\":1}", false);
	check_depth(26, "{\"k\":1}", true);
	check_depth(27, "\"s\"", true);
	check_depth(28, "\"s\"", false);
	check_depth(29, "", false);
}

Test(kube_project, escapes_numbers_and_repeats_as_json_c)
{
	static const char s[] =
		"{\"k\\u0000x\":\"v\",\"a\\u00e9\\n\\\"\\/"
		"\\t\":\"\\u20ac\\b\\f\\r\","
		"\"n\":[0,-0,-12,123456789012345678,1234567890123456789,"
		"-9223372036854775809,18446744073709551616,1.5,-2e-3,1E+2,"
		"1e999],\"d\":1,\"d\":{\"x\":null},\"e\":{},\"f\":[],"
		"\"b\":[true,false,null]}";
	struct json_object *o, *v;

	check_whole("escapes", s, strlen(s));
	cr_assert_eq(project(s, strlen(s), kube_keep_all, &o), 0);
	/* a key is cut at a NUL, as json-c cuts it */
	cr_assert_str_eq(json_object_get_string(json_object_object_get(o, "k")),
			 "v");
	cr_assert_str_eq(json_object_get_string(
				 json_object_object_get(o, "a\xc3\xa9\n\"/\t")),
			 "\xe2\x82\xac\b\f\r");
	/* the last of a repeated key */
	cr_assert(json_object_object_get_ex(o, "d", &v));
	cr_assert(json_object_is_type(v, json_type_object));
	v = json_object_object_get(o, "n");
	cr_assert_eq(json_object_get_int64(json_object_array_get_idx(v, 3)),
		     123456789012345678);
	json_object_put(o);
}

#define POD(spec, status)                                                 \
	"{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{" \
	"\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"u\"},\"spec\":{"    \
	"\"containers\":[{\"name\":\"c\"" spec "}]},\"status\":{"         \
	"\"containerStatuses\":[{\"name\":\"c\"" status "}]}}}"

struct pod_case {
	const char *what, *text;
	bool straight; /* read straight, else left to the projection */
};

/* What the straight reader takes and what it leaves to the projection
 * and kube_pod_decode(): either way the pod json-c's tree gives. */
static const struct pod_case pod_cases[] = {
	{"plain", POD("", ",\"restartCount\":2"), true},
	{"restartCount a string (0, as kube_json_int() reads it)",
	 POD("", ",\"restartCount\":\"3\""), true},
	{"restartCount a fraction (0)", POD("", ",\"restartCount\":1.5"), true},
	{"exitCode below zero",
	 POD("", ",\"lastState\":{\"terminated\":{\"exitCode\":-1}}"), true},
	{"lastState not an object", POD("", ",\"lastState\":[1]"), true},
	{"restartCount of 19 digits",
	 POD("", ",\"restartCount\":1234567890123456789"), false},
	{"memory of a limit",
	 POD(",\"resources\":{\"limits\":{\"memory\":"
	     "\"1Gi\"},\"requests\":{\"memory\":7}}",
	     ""),
	 true},
	{"a kept member repeated",
	 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\","
	 "\"name\":\"b\"}}}",
	 false},
	{"a kept key with an escape",
	 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\","
	 "\"n\\u0061mespace\":\"x\"}}}",
	 false},
	{"an escape and a NUL in a value",
	 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":"
	 "\"a\\u0000b\",\"uid\":\"\\u00e9\\n\"}}}",
	 true},
	{"status before spec",
	 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"},"
	 "\"status\":{\"containerStatuses\":[{\"name\":\"c\","
	 "\"restartCount\":1}]},\"spec\":{\"containers\":[{\"name\":"
	 "\"c\"}]}}}",
	 false},
	{"a container without a name (no pod)",
	 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"},"
	 "\"spec\":{\"containers\":[{\"image\":\"i\"}]}}}",
	 false},
	{"another kind (no pod)",
	 "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Service\","
	 "\"metadata\":{\"name\":\"a\"}}}",
	 false},
	{"kind not a string",
	 "{\"type\":\"ADDED\",\"object\":{\"kind\":7,\"metadata\":{"
	 "\"name\":\"a\"}}}",
	 true},
	{"metadata an array",
	 "{\"type\":\"ADDED\",\"object\":{\"metadata\":[]}}", false},
	{"controller a string (json-c reads it true)",
	 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\","
	 "\"ownerReferences\":[{\"kind\":\"K\",\"name\":\"x\"},{\"kind\":"
	 "\"R\",\"name\":\"y\",\"controller\":\"true\"}]}}}",
	 false},
	{"the last controller, else the first owner",
	 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\","
	 "\"ownerReferences\":[{\"kind\":\"K\",\"name\":\"x\"},{\"kind\":"
	 "\"R\",\"name\":\"y\",\"controller\":true,\"apiVersion\":"
	 "\"apps/v1\"},{\"kind\":\"S\",\"controller\":false}]}}}",
	 true},
	{"an owner not an object",
	 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\","
	 "\"ownerReferences\":[\"x\"]}}}",
	 false},
	{"deletionTimestamp null, labels an array, share a string",
	 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\","
	 "\"deletionTimestamp\":null,\"labels\":[1]},\"spec\":{"
	 "\"shareProcessNamespace\":\"true\",\"containers\":{}}}}",
	 true},
	{"deleting, shared, annotations",
	 "{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\","
	 "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\",\"annotations\":{"
	 "\"k\":\"v\",\"k\":\"w\"}},\"spec\":{\"shareProcessNamespace\":"
	 "true,\"containers\":[]}}}",
	 true},
	{"the type repeated",
	 "{\"type\":\"ADDED\",\"type\":\"DELETED\",\"object\":{"
	 "\"metadata\":{\"name\":\"a\"}}}",
	 false},
	{"blanks everywhere",
	 " { \"type\" : \"ADDED\" , \"object\" : { \"metadata\" : { "
	 "\"name\" : \"a\" , \"x\" : [ 1 , { } ] } } } ",
	 true},
};

Test(kube_project, pods_read_straight_or_left_to_the_projection)
{
	struct kube_event_decoder *d = pod_decoder();

	for (size_t i = 0; i < ARRAY_SIZE(pod_cases); i++) {
		const struct pod_case *c = &pod_cases[i];
		unsigned before = straight;

		cr_assert_eq(check_event(d, c->text, strlen(c->text)), 0, "%s",
			     c->what);
		cr_assert_eq(straight - before, c->straight ? 1u : 0u,
			     "%s: read straight %u", c->what,
			     straight - before);
	}
	kube_event_decoder_free(d);
}
