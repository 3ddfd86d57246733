/* SPDX-License-Identifier: Apache-2.0 */
/* kube: configuration — in-cluster service account, kubeconfig files
 * (libyaml, merged as kubectl merges KUBECONFIG lists), exec credential
 * plugins (client.authentication.k8s.io/v1). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <string.h>
#include <time.h>
#include <yaml.h>

#include "kube_internal.h"
#include "base/fileio.h"
#include "base/parse.h"

int kube_config_dup(const struct kube_config *cfg, struct kube_config **ret);

static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static void exec_free(struct kube_exec_config *e)
{
	if (!e)
		return;
	free(e->command);
	strv_free(e->args);
	strv_free(e->env);
	free(e->api_version);
	free(e);
}

void kube_config_free(struct kube_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->server);
	free(cfg->namespace);
	free(cfg->ca_file);
	free(cfg->ca_data);
	free(cfg->tls_server_name);
	free(cfg->token);
	free(cfg->token_file);
	free(cfg->cert_file);
	free(cfg->key_file);
	free(cfg->cert_data);
	free(cfg->key_data);
	exec_free(cfg->exec);
	free(cfg);
}

static int dup_str(const char *s, char **ret)
{
	*ret = NULL;
	if (!s)
		return 0;
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

static int dup_mem(const char *s, size_t len, char **ret)
{
	*ret = NULL;
	if (!s)
		return 0;
	*ret = malloc(len + 1);
	if (!*ret)
		return -ENOMEM;
	memcpy(*ret, s, len);
	(*ret)[len] = '\0';
	return 0;
}

static int strv_dup(char *const *v, char ***ret)
{
	size_t n = 0;
	char **out;

	*ret = NULL;
	if (!v)
		return 0;
	while (v[n])
		n++;
	out = calloc(n + 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (dup_str(v[i], &out[i]) < 0) {
			strv_free(out);
			return -ENOMEM;
		}
	*ret = out;
	return 0;
}

static int exec_dup(const struct kube_exec_config *e,
		    struct kube_exec_config **ret)
{
	struct kube_exec_config *n;

	*ret = NULL;
	if (!e)
		return 0;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	if (dup_str(e->command, &n->command) < 0 ||
	    strv_dup(e->args, &n->args) < 0 || strv_dup(e->env, &n->env) < 0 ||
	    dup_str(e->api_version, &n->api_version) < 0) {
		exec_free(n);
		return -ENOMEM;
	}
	*ret = n;
	return 0;
}

int kube_config_dup(const struct kube_config *cfg, struct kube_config **ret)
{
	struct kube_config *n = calloc(1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	n->insecure = cfg->insecure;
	n->ca_data_len = cfg->ca_data_len;
	n->cert_data_len = cfg->cert_data_len;
	n->key_data_len = cfg->key_data_len;
	if (dup_str(cfg->server, &n->server) < 0 ||
	    dup_str(cfg->namespace, &n->namespace) < 0 ||
	    dup_str(cfg->ca_file, &n->ca_file) < 0 ||
	    dup_mem(cfg->ca_data, cfg->ca_data_len, &n->ca_data) < 0 ||
	    dup_str(cfg->tls_server_name, &n->tls_server_name) < 0 ||
	    dup_str(cfg->token, &n->token) < 0 ||
	    dup_str(cfg->token_file, &n->token_file) < 0 ||
	    dup_str(cfg->cert_file, &n->cert_file) < 0 ||
	    dup_str(cfg->key_file, &n->key_file) < 0 ||
	    dup_mem(cfg->cert_data, cfg->cert_data_len, &n->cert_data) < 0 ||
	    dup_mem(cfg->key_data, cfg->key_data_len, &n->key_data) < 0 ||
	    exec_dup(cfg->exec, &n->exec) < 0) {
		kube_config_free(n);
		return -ENOMEM;
	}
	/* a trailing slash would double the one every path starts with */
	while (n->server && *n->server &&
	       n->server[strlen(n->server) - 1] == '/')
		n->server[strlen(n->server) - 1] = '\0';
	*ret = n;
	return 0;
}

/* ---- in-cluster ---- */

static int read_small(const char *dir, const char *name, char **ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *path = NULL;
	int r;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	strbuf_init(&sb, 1 << 20);
	r = read_file_at(AT_FDCWD, path, 1 << 20, &sb);
	if (r < 0)
		return r;
	while (sb.len > 0 && strchr(" \t\r\n", sb.buf[sb.len - 1]))
		sb.buf[--sb.len] = '\0';
	*ret = strbuf_detach(&sb, NULL);
	return *ret ? 0 : -ENOMEM;
}

int kube_config_in_cluster(const struct kube_incluster_options *o,
			   struct kube_config **ret)
{
	static const struct kube_incluster_options none;
	const char *dir, *host, *port;
	struct kube_config *cfg;
	int r;

	o = o ? o : &none;
	dir = o->sa_dir ? o->sa_dir
			: "/var/run/secrets/kubernetes.io/serviceaccount";
	host = o->host ? o->host : getenv("KUBERNETES_SERVICE_HOST");
	port = o->port ? o->port : getenv("KUBERNETES_SERVICE_PORT");
	if (!host || !*host || !port || !*port)
		return -ENOENT;
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return -ENOMEM;
	r = -ENOMEM;
	/* an IPv6 service address needs brackets in a URL */
	if (asprintf(&cfg->server,
		     strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s",
		     host, port) < 0) {
		cfg->server = NULL;
		goto fail;
	}
	if (asprintf(&cfg->token_file, "%s/token", dir) < 0 ||
	    asprintf(&cfg->ca_file, "%s/ca.crt", dir) < 0) {
		cfg->token_file = cfg->ca_file = NULL;
		goto fail;
	}
	if (access(cfg->token_file, R_OK) < 0) {
		r = -ENOENT;
		goto fail;
	}
	if (read_small(dir, "namespace", &cfg->namespace) < 0)
		cfg->namespace = strdup("default");
	if (!cfg->namespace)
		goto fail;
	*ret = cfg;
	return 0;
fail:
	kube_config_free(cfg);
	return r;
}

/* ---- YAML → json-c ---- */

static struct json_object *yaml_node_to_json(yaml_document_t *doc,
					     yaml_node_t *n, int depth)
{
	struct json_object *o;

	if (!n || depth > 64)
		return NULL;
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return json_object_new_string_len(
			(const char *)n->data.scalar.value,
			(int)n->data.scalar.length);
	case YAML_SEQUENCE_NODE:
		o = json_object_new_array();
		for (yaml_node_item_t *i = n->data.sequence.items.start;
		     o && i < n->data.sequence.items.top; i++) {
			struct json_object *v = yaml_node_to_json(
				doc, yaml_document_get_node(doc, *i),
				depth + 1);

			if (!v || json_object_array_add(o, v) < 0) {
				json_object_put(v);
				json_object_put(o);
				return NULL;
			}
		}
		return o;
	case YAML_MAPPING_NODE:
		o = json_object_new_object();
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
		     o && p < n->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(doc, p->key);
			struct json_object *v;

			if (!k || k->type != YAML_SCALAR_NODE)
				continue;
			v = yaml_node_to_json(
				doc, yaml_document_get_node(doc, p->value),
				depth + 1);
			if (!v)
				v = json_object_new_string("");
			json_object_object_add(
				o, (const char *)k->data.scalar.value, v);
		}
		return o;
	default:
		return NULL;
	}
}

/* Parses YAML (JSON is YAML) into a json-c tree of strings, arrays and
 * objects. An empty document is an empty object. */
static int yaml_to_json(const char *buf, size_t len, struct json_object **ret,
			struct kube_error *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct json_object *o;
	yaml_node_t *root;

	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		int r = kube_error_set(err, -EINVAL,
				       "kubeconfig: YAML error at line %zu: %s",
				       parser.problem_mark.line + 1,
				       parser.problem ? parser.problem : "?");

		yaml_parser_delete(&parser);
		return r;
	}
	root = yaml_document_get_root_node(&doc);
	o = root ? yaml_node_to_json(&doc, root, 0) : json_object_new_object();
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (!o)
		return -ENOMEM;
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return kube_error_set(err, -EINVAL,
				      "kubeconfig: not a mapping");
	}
	*ret = o;
	return 0;
}

/* ---- kubeconfig ---- */

/* Makes a relative path field absolute against base_dir. */
static int absolutize(struct json_object *o, const char *key,
		      const char *base_dir, bool only_with_slash)
{
	const char *v = kube_json_str(o, key, NULL, NULL);
	_cleanup_free_ char *abs = NULL;

	if (!v || !*v || v[0] == '/' || !base_dir)
		return 0;
	if (only_with_slash && !strchr(v, '/'))
		return 0; /* a command looked up in PATH */
	if (asprintf(&abs, "%s/%s", base_dir, v) < 0)
		return -ENOMEM;
	return kube_json_set_str(o, key, abs);
}

static int absolutize_file(struct json_object *kc, const char *base_dir)
{
	struct json_object *arr;
	int r = 0;

	if (json_object_object_get_ex(kc, "clusters", &arr) &&
	    json_object_is_type(arr, json_type_array))
		for (size_t i = 0; r == 0 && i < json_object_array_length(arr);
		     i++) {
			struct json_object *c = kube_json_path(
				json_object_array_get_idx(arr, i), "cluster",
				NULL, NULL);

			r = absolutize(c, "certificate-authority", base_dir,
				       false);
		}
	if (json_object_object_get_ex(kc, "users", &arr) &&
	    json_object_is_type(arr, json_type_array))
		for (size_t i = 0; r == 0 && i < json_object_array_length(arr);
		     i++) {
			struct json_object *u = kube_json_path(
				json_object_array_get_idx(arr, i), "user", NULL,
				NULL);

			if (absolutize(u, "client-certificate", base_dir,
				       false) < 0 ||
			    absolutize(u, "client-key", base_dir, false) < 0 ||
			    absolutize(u, "tokenFile", base_dir, false) < 0)
				r = -ENOMEM;
			else
				r = absolutize(
					kube_json_path(u, "exec", NULL, NULL),
					"command", base_dir, true);
		}
	return r;
}

/* Finds the entry of list `key` (clusters/users/contexts) named name and
 * returns its inner object (cluster/user/context). Borrowed. */
static struct json_object *named(struct json_object *kc, const char *key,
				 const char *inner, const char *name)
{
	struct json_object *arr;

	if (!name || !json_object_object_get_ex(kc, key, &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *n = kube_json_str(e, "name", NULL, NULL);

		if (n && streq(n, name))
			return kube_json_path(e, inner, NULL, NULL);
	}
	return NULL;
}

/* Merges src into dst: the first file that defines a name keeps it. */
static int merge_into(struct json_object *dst, struct json_object *src)
{
	static const char *const lists[] = {"clusters", "users", "contexts"};
	const char *cc = kube_json_str(src, "current-context", NULL, NULL);
	const char *dcc = kube_json_str(dst, "current-context", NULL, NULL);

	if (cc && *cc && (!dcc || !*dcc) &&
	    kube_json_set_str(dst, "current-context", cc) < 0)
		return -ENOMEM;
	for (size_t l = 0; l < ARRAY_SIZE(lists); l++) {
		struct json_object *sa, *da;

		if (!json_object_object_get_ex(src, lists[l], &sa) ||
		    !json_object_is_type(sa, json_type_array))
			continue;
		if (!json_object_object_get_ex(dst, lists[l], &da)) {
			da = json_object_new_array();
			if (!da || json_object_object_add(dst, lists[l], da))
				return -ENOMEM;
		}
		for (size_t i = 0; i < json_object_array_length(sa); i++) {
			struct json_object *e =
				json_object_array_get_idx(sa, i);
			const char *n = kube_json_str(e, "name", NULL, NULL);
			bool seen = false;

			for (size_t j = 0;
			     n && j < json_object_array_length(da); j++) {
				const char *m = kube_json_str(
					json_object_array_get_idx(da, j),
					"name", NULL, NULL);

				seen = seen || (m && streq(m, n));
			}
			if (n && !seen &&
			    json_object_array_add(da, json_object_get(e)) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

static int decode_data(struct json_object *o, const char *key, char **ret,
		       size_t *ret_len, struct kube_error *err)
{
	const char *v = kube_json_str(o, key, NULL, NULL);
	unsigned char *d;
	size_t n;
	int r;

	if (!v)
		return 0;
	r = kube_base64_decode(v, strlen(v), &d, &n);
	if (r < 0)
		return kube_error_set(err, -EINVAL,
				      "kubeconfig: %s is not base64", key);
	free(*ret);
	*ret = malloc(n + 1);
	if (!*ret) {
		free(d);
		return -ENOMEM;
	}
	memcpy(*ret, d, n);
	(*ret)[n] = '\0';
	*ret_len = n;
	free(d);
	return 0;
}

static int strv_from_json(struct json_object *arr, char ***ret)
{
	size_t n;
	char **v;

	*ret = NULL;
	if (!arr || !json_object_is_type(arr, json_type_array))
		return 0;
	n = json_object_array_length(arr);
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		const char *s = json_object_get_string(e);
		const char *name = kube_json_str(e, "name", NULL, NULL);
		const char *val = kube_json_str(e, "value", NULL, NULL);
		int r;

		/* env entries are {name, value}; args are strings */
		if (name)
			r = asprintf(&v[i], "%s=%s", name, val ? val : "");
		else
			r = asprintf(&v[i], "%s", s ? s : "");
		if (r < 0) {
			v[i] = NULL;
			strv_free(v);
			return -ENOMEM;
		}
	}
	*ret = v;
	return 0;
}

static int resolve_exec(struct json_object *ex, struct kube_config *cfg,
			struct kube_error *err)
{
	struct kube_exec_config *e;
	const char *api = kube_json_str(ex, "apiVersion", NULL, NULL);

	if (!kube_json_str(ex, "command", NULL, NULL))
		return kube_error_set(err, -EINVAL,
				      "kubeconfig: exec without command");
	if (api && !streq(api, "client.authentication.k8s.io/v1") &&
	    !streq(api, "client.authentication.k8s.io/v1beta1"))
		return kube_error_set(err, -EINVAL,
				      "kubeconfig: exec apiVersion '%s' "
				      "not supported",
				      api);
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	cfg->exec = e;
	if (kube_json_dup(ex, "command", NULL, NULL, &e->command) < 0 ||
	    dup_str(api ? api : "client.authentication.k8s.io/v1",
		    &e->api_version) < 0 ||
	    strv_from_json(kube_json_path(ex, "args", NULL, NULL), &e->args) <
		    0 ||
	    strv_from_json(kube_json_path(ex, "env", NULL, NULL), &e->env) < 0)
		return -ENOMEM;
	return 0;
}

static int resolve_user(struct json_object *u, struct kube_config *cfg,
			struct kube_error *err)
{
	struct json_object *ex = kube_json_path(u, "exec", NULL, NULL);
	int r;

	if (kube_json_dup(u, "token", NULL, NULL, &cfg->token) < 0 ||
	    kube_json_dup(u, "tokenFile", NULL, NULL, &cfg->token_file) < 0 ||
	    kube_json_dup(u, "client-certificate", NULL, NULL,
			  &cfg->cert_file) < 0 ||
	    kube_json_dup(u, "client-key", NULL, NULL, &cfg->key_file) < 0)
		return -ENOMEM;
	r = decode_data(u, "client-certificate-data", &cfg->cert_data,
			&cfg->cert_data_len, err);
	if (r == 0)
		r = decode_data(u, "client-key-data", &cfg->key_data,
				&cfg->key_data_len, err);
	if (r == 0 && ex)
		r = resolve_exec(ex, cfg, err);
	return r;
}

static int resolve_cluster(struct json_object *cl, struct kube_config *cfg,
			   struct kube_error *err)
{
	const char *ins =
		kube_json_str(cl, "insecure-skip-tls-verify", NULL, NULL);

	if (!kube_json_str(cl, "server", NULL, NULL))
		return kube_error_set(err, -EINVAL,
				      "kubeconfig: cluster without server");
	cfg->insecure = ins && streq(ins, "true");
	if (kube_json_dup(cl, "server", NULL, NULL, &cfg->server) < 0 ||
	    kube_json_dup(cl, "certificate-authority", NULL, NULL,
			  &cfg->ca_file) < 0 ||
	    kube_json_dup(cl, "tls-server-name", NULL, NULL,
			  &cfg->tls_server_name) < 0)
		return -ENOMEM;
	return decode_data(cl, "certificate-authority-data", &cfg->ca_data,
			   &cfg->ca_data_len, err);
}

/* Picks the context and builds the configuration from a merged tree. */
static int resolve(struct json_object *kc,
		   const struct kube_kubeconfig_options *o,
		   struct kube_config **ret, struct kube_error *err)
{
	const char *name =
		o && o->context
			? o->context
			: kube_json_str(kc, "current-context", NULL, NULL);
	struct json_object *ctx, *cl, *u;
	struct kube_config *cfg, *out;
	const char *ns;
	int r;

	if (!name || !*name)
		return kube_error_set(err, -ENOENT,
				      "kubeconfig: no current-context");
	ctx = named(kc, "contexts", "context", name);
	if (!ctx)
		return kube_error_set(err, -ENOENT,
				      "kubeconfig: no context '%s'", name);
	cl = named(kc, "clusters", "cluster",
		   kube_json_str(ctx, "cluster", NULL, NULL));
	if (!cl)
		return kube_error_set(err, -ENOENT,
				      "kubeconfig: context '%s' has no cluster",
				      name);
	u = named(kc, "users", "user", kube_json_str(ctx, "user", NULL, NULL));
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return -ENOMEM;
	ns = o && o->namespace ? o->namespace
			       : kube_json_str(ctx, "namespace", NULL, NULL);
	r = dup_str(ns && *ns ? ns : "default", &cfg->namespace);
	if (r == 0)
		r = resolve_cluster(cl, cfg, err);
	if (r == 0 && u)
		r = resolve_user(u, cfg, err);
	if (r == 0)
		r = kube_config_dup(cfg, &out); /* normalises server */
	kube_config_free(cfg);
	if (r < 0)
		return r;
	*ret = out;
	return 0;
}

int kube_config_parse_kubeconfig(const char *buf, size_t len,
				 const char *base_dir,
				 const struct kube_kubeconfig_options *o,
				 struct kube_config **ret,
				 struct kube_error *err)
{
	struct json_object *kc;
	int r;

	r = yaml_to_json(buf, len, &kc, err);
	if (r < 0)
		return r;
	r = absolutize_file(kc, base_dir);
	if (r == 0)
		r = resolve(kc, o, ret, err);
	json_object_put(kc);
	return r;
}

static int load_one(const char *path, struct json_object *merged,
		    struct kube_error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct json_object *kc;
	char dir[4096];
	int r;

	if (strlcpy_safe(dir, path, sizeof(dir)) >= sizeof(dir))
		return -ENAMETOOLONG;
	strbuf_init(&sb, 16 << 20);
	r = read_file_at(AT_FDCWD, path, 16 << 20, &sb);
	if (r < 0)
		return r;
	r = yaml_to_json(sb.buf, sb.len, &kc, err);
	if (r < 0)
		return r;
	r = absolutize_file(kc, dirname(dir));
	if (r == 0)
		r = merge_into(merged, kc);
	json_object_put(kc);
	return r;
}

/* The files o names (or $KUBECONFIG, or ~/.kube/config) merged into one
 * object, *ret_merged (the caller's) on success. */
static int load_merged(const struct kube_kubeconfig_options *o,
		       struct json_object **ret_merged, struct kube_error *err)
{
	_cleanup_free_ char *paths = NULL, *home_cfg = NULL;
	const char *list = o && o->paths ? o->paths : getenv("KUBECONFIG");
	struct json_object *merged;
	unsigned loaded = 0;
	char *save = NULL;
	int r = 0;

	if (!list || !*list) {
		const char *home = getenv("HOME");

		if (!home || asprintf(&home_cfg, "%s/.kube/config", home) < 0)
			return kube_error_set(err, -ENOENT, "no kubeconfig");
		list = home_cfg;
	}
	paths = strdup(list);
	merged = json_object_new_object();
	if (!paths || !merged) {
		json_object_put(merged);
		return -ENOMEM;
	}
	for (char *p = strtok_r(paths, ":", &save); p && r >= 0;
	     p = strtok_r(NULL, ":", &save)) {
		r = load_one(p, merged, err);
		if (r == -ENOENT)
			r = 0; /* kubectl skips missing files of a list */
		else if (r == 0)
			loaded++;
		else if (r != -EINVAL)
			kube_error_set(err, r, "kubeconfig '%s': %s", p,
				       strerror(-r));
	}
	if (r == 0 && loaded == 0)
		r = kube_error_set(err, -ENOENT, "no kubeconfig file in '%s'",
				   list);
	if (r < 0) {
		json_object_put(merged);
		return r;
	}
	*ret_merged = merged;
	return 0;
}

int kube_config_load_kubeconfig(const struct kube_kubeconfig_options *o,
				struct kube_config **ret,
				struct kube_error *err)
{
	struct json_object *merged;
	int r = load_merged(o, &merged, err);

	if (r < 0)
		return r;
	r = resolve(merged, o, ret, err);
	json_object_put(merged);
	return r;
}

int kube_config_list_contexts(const struct kube_kubeconfig_options *o,
			      struct json_object **ret_names,
			      struct kube_error *err)
{
	struct json_object *merged, *arr, *names;
	int r = load_merged(o, &merged, err);

	if (r < 0)
		return r;
	names = json_object_new_array();
	if (!names) {
		json_object_put(merged);
		return -ENOMEM;
	}
	if (json_object_object_get_ex(merged, "contexts", &arr) &&
	    json_object_is_type(arr, json_type_array))
		for (size_t i = 0; i < json_object_array_length(arr); i++) {
			const char *n =
				kube_json_str(json_object_array_get_idx(arr, i),
					      "name", NULL, NULL);

			if (n)
				json_object_array_add(
					names, json_object_new_string(n));
		}
	json_object_put(merged);
	*ret_names = names;
	return 0;
}

/* ---- exec credential plugins ---- */

void kube_exec_credential_release(struct kube_exec_credential *c)
{
	free(c->token);
	free(c->cert_pem);
	free(c->key_pem);
	memset(c, 0, sizeof(*c));
}

/* RFC 3339 → unix seconds. */
static int parse_rfc3339(const char *s, uint64_t *ret)
{
	struct tm tm = {0};
	const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	int64_t off = 0;
	time_t t;

	if (!p)
		return -EINVAL;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
		uint64_t hh, mm;

		if (parse_u64_n(p + 1, 2, &hh) < 0 ||
		    parse_u64_n(p + 4, 2, &mm) < 0)
			return -EINVAL;
		off = (int64_t)(hh * 3600 + mm * 60) * (*p == '+' ? 1 : -1);
	} else if (!streq(p, "Z") && !streq(p, "z")) {
		return -EINVAL;
	}
	t = timegm(&tm);
	if (t == (time_t)-1 || (int64_t)t - off < 0)
		return -EINVAL;
	*ret = (uint64_t)((int64_t)t - off);
	return 0;
}

int kube_exec_credential_parse(const char *buf, size_t len,
			       struct kube_exec_credential *ret)
{
	struct kube_exec_credential c = {0};
	struct json_object *o;
	const char *kind, *exp;
	int r;

	r = kube_json_parse(buf, len, &o);
	if (r < 0)
		return r;
	kind = kube_json_str(o, "kind", NULL, NULL);
	exp = kube_json_str(o, "status", "expirationTimestamp", NULL);
	r = -EBADMSG;
	if (!kind || !streq(kind, "ExecCredential") ||
	    (exp && parse_rfc3339(exp, &c.expires_s) < 0))
		goto out;
	r = -ENOMEM;
	if (kube_json_dup(o, "status", "token", NULL, &c.token) < 0 ||
	    kube_json_dup(o, "status", "clientCertificateData", NULL,
			  &c.cert_pem) < 0 ||
	    kube_json_dup(o, "status", "clientKeyData", NULL, &c.key_pem) < 0)
		goto out;
	r = -EBADMSG;
	if (!c.token && !(c.cert_pem && c.key_pem))
		goto out;
	*ret = c;
	memset(&c, 0, sizeof(c));
	r = 0;
out:
	kube_exec_credential_release(&c);
	json_object_put(o);
	return r;
}
