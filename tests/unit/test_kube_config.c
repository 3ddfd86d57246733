/* SPDX-License-Identifier: Apache-2.0 */
/* kube: kubeconfig variants, KUBECONFIG merging, exec plugins, in-cluster
 * configuration. Files live in a temporary directory. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "kube/kube.h"

static char tmp[64];

static void setup(void)
{
	strlcpy_safe(tmp, "/tmp/oomlens-kubecfg-XXXXXX", sizeof(tmp));
	cr_assert_not_null(mkdtemp(tmp));
}

static void teardown(void)
{
	rm_rf_at(AT_FDCWD, tmp);
}

/* One suite owns the temporary directory (cppcheck does not know
 * Criterion's designated-initialiser macros). */
// cppcheck-suppress unknownMacro
TestSuite(kube_files, .init = setup, .fini = teardown);

static void put(const char *name, const char *text, unsigned mode)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", tmp, name);
	cr_assert_eq(
		write_file_atomic_at(AT_FDCWD, p, text, strlen(text), mode), 0);
}

/* "-----BEGIN CERTIFICATE-----\nMIIB\n" in base64 */
#define CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIK"

static const char kc_token[] =
	"apiVersion: v1\n"
	"kind: Config\n"
	"current-context: agent\n"
	"clusters:\n"
	"- name: fake\n"
	"  cluster:\n"
	"    server: https://127.0.0.1:6443/\n"
	"    certificate-authority-data: " CA_B64 "\n"
	"- name: other\n"
	"  cluster: {server: 'https://10.0.0.1', insecure-skip-tls-verify: "
	"true}\n"
	"users:\n"
	"- name: agent\n"
	"  user: {token: agent-token-0123456789}\n"
	"- name: certs\n"
	"  user:\n"
	"    client-certificate: certs/client.crt\n"
	"    client-key: /abs/client.key\n"
	"    tokenFile: tok\n"
	"contexts:\n"
	"- name: agent\n"
	"  context: {cluster: fake, user: agent, namespace: oom-system}\n"
	"- name: certs\n"
	"  context: {cluster: other, user: certs}\n";

Test(kube_kubeconfig, token_ca_data_namespace)
{
	struct kube_config *c = NULL;
	struct kube_error e;

	cr_assert_eq(kube_config_parse_kubeconfig(kc_token,
						  sizeof(kc_token) - 1, "/base",
						  NULL, &c, &e),
		     0);
	cr_assert_str_eq(c->server, "https://127.0.0.1:6443",
			 "trailing slash dropped");
	cr_assert_str_eq(c->token, "agent-token-0123456789");
	cr_assert_str_eq(c->namespace, "oom-system");
	cr_assert_eq(c->ca_data_len, 33);
	cr_assert_str_eq(c->ca_data, "-----BEGIN CERTIFICATE-----\nMIIB\n");
	cr_assert(!c->insecure);
	cr_assert_null(c->exec);
	kube_config_free(c);
}

Test(kube_kubeconfig, named_context_relative_paths_insecure)
{
	struct kube_kubeconfig_options o = {.context = "certs",
					    .namespace = "ns2"};
	struct kube_config *c = NULL;
	struct kube_error e;

	cr_assert_eq(kube_config_parse_kubeconfig(kc_token,
						  sizeof(kc_token) - 1, "/base",
						  &o, &c, &e),
		     0);
	cr_assert_str_eq(c->server, "https://10.0.0.1");
	cr_assert(c->insecure);
	cr_assert_str_eq(c->cert_file, "/base/certs/client.crt");
	cr_assert_str_eq(c->key_file, "/abs/client.key");
	cr_assert_str_eq(c->token_file, "/base/tok");
	cr_assert_null(c->token);
	cr_assert_str_eq(c->namespace, "ns2", "option overrides");
	kube_config_free(c);
}

Test(kube_kubeconfig, errors_are_values)
{
	struct kube_kubeconfig_options o = {.context = "nope"};
	struct kube_config *c = (void *)1;
	struct kube_error e;
	static const char bad[] = "clusters: [\n  - {name: x\n";
	static const char nocluster[] =
		"current-context: a\ncontexts:\n- name: a\n  context: "
		"{cluster: gone}\n";
	static const char baddata[] =
		"current-context: a\ncontexts:\n- {name: a, context: {cluster: "
		"c}}\nclusters:\n- {name: c, cluster: {server: 'https://x', "
		"certificate-authority-data: '%%%'}}\n";

	cr_assert_eq(kube_config_parse_kubeconfig(
			     kc_token, sizeof(kc_token) - 1, NULL, &o, &c, &e),
		     -ENOENT);
	cr_assert(strstr(e.message, "nope"));
	cr_assert_eq(kube_config_parse_kubeconfig(bad, sizeof(bad) - 1, NULL,
						  NULL, &c, &e),
		     -EINVAL);
	cr_assert(strstr(e.message, "YAML"), "%s", e.message);
	cr_assert_eq(kube_config_parse_kubeconfig(nocluster,
						  sizeof(nocluster) - 1, NULL,
						  NULL, &c, &e),
		     -ENOENT);
	cr_assert_eq(kube_config_parse_kubeconfig(baddata, sizeof(baddata) - 1,
						  NULL, NULL, &c, &e),
		     -EINVAL);
	cr_assert(strstr(e.message, "base64"));
	cr_assert_eq(kube_config_parse_kubeconfig("", 0, NULL, NULL, &c, &e),
		     -ENOENT);
	cr_assert_eq(c, (void *)1, "untouched on failure");
}

Test(kube_kubeconfig, client_cert_data)
{
	static const char kc[] =
		"current-context: a\n"
		"contexts: [{name: a, context: {cluster: c, user: u}}]\n"
		"clusters: [{name: c, cluster: {server: 'https://h:1'}}]\n"
		"users: [{name: u, user: {client-certificate-data: " CA_B64
		", client-key-data: " CA_B64 "}}]\n";
	struct kube_config *c;
	struct kube_error e;

	cr_assert_eq(kube_config_parse_kubeconfig(kc, sizeof(kc) - 1, NULL,
						  NULL, &c, &e),
		     0);
	cr_assert_eq(c->cert_data_len, 33);
	cr_assert_eq(c->key_data_len, 33);
	cr_assert_eq(memcmp(c->key_data, "-----BEGIN", 10), 0);
	cr_assert_str_eq(c->namespace, "default");
	kube_config_free(c);
}

Test(kube_files, kubeconfig_kubeconfig_list_merges_first_wins)
{
	/* file 1: current-context + user "u" (token one); file 2: another
	 * current-context, user "u" again (ignored), cluster and context */
	char paths[256];
	struct kube_kubeconfig_options o = {.paths = paths};
	struct kube_config *c;
	struct kube_error e;

	put("one",
	    "current-context: ctx\nusers:\n- {name: u, user: {token: "
	    "one}}\n",
	    0600);
	put("two",
	    "current-context: other\nusers:\n- {name: u, user: {token: "
	    "two}}\nclusters:\n- {name: c, cluster: {server: "
	    "'https://two:6443', certificate-authority: ca.crt}}\n"
	    "contexts:\n- {name: ctx, context: {cluster: c, user: u}}\n"
	    "- {name: other, context: {cluster: c, user: u, namespace: "
	    "x}}\n",
	    0600);
	snprintf(paths, sizeof(paths), "%s/one:%s/missing:%s/two", tmp, tmp,
		 tmp);
	cr_assert_eq(kube_config_load_kubeconfig(&o, &c, &e), 0, "%s",
		     e.message);
	cr_assert_str_eq(c->token, "one", "first definition of u wins");
	cr_assert_str_eq(c->server, "https://two:6443");
	cr_assert_str_eq(c->namespace, "default", "context ctx, not other");
	{
		char want[128];

		snprintf(want, sizeof(want), "%s/ca.crt", tmp);
		cr_assert_str_eq(c->ca_file, want,
				 "relative to the file naming it");
	}
	kube_config_free(c);
	snprintf(paths, sizeof(paths), "%s/missing", tmp);
	cr_assert_eq(kube_config_load_kubeconfig(&o, &c, &e), -ENOENT);
}

Test(kube_files, kubeconfig_contexts_listed_merged_in_order)
{
	char paths[256];
	struct kube_kubeconfig_options o = {.paths = paths};
	struct json_object *names = NULL;
	struct kube_error e;

	put("c1", "contexts:\n- {name: b, context: {cluster: c}}\n", 0600);
	put("c2",
	    "contexts:\n- {name: a, context: {cluster: c}}\n"
	    "- {name: b, context: {cluster: d}}\n- {context: {}}\n",
	    0600);
	snprintf(paths, sizeof(paths), "%s/c1:%s/missing:%s/c2", tmp, tmp, tmp);
	cr_assert_eq(kube_config_list_contexts(&o, &names, &e), 0, "%s",
		     e.message);
	cr_assert_str_eq(
		json_object_to_json_string_ext(names, JSON_C_TO_STRING_PLAIN),
		"[\"b\",\"a\"]",
		"first file first, b once, "
		"the nameless one left out");
	json_object_put(names);
	put("c3", "current-context: x\n", 0600);
	snprintf(paths, sizeof(paths), "%s/c3", tmp);
	cr_assert_eq(kube_config_list_contexts(&o, &names, &e), 0);
	cr_assert_eq(json_object_array_length(names), 0);
	json_object_put(names);
	snprintf(paths, sizeof(paths), "%s/missing", tmp);
	names = NULL;
	cr_assert_eq(kube_config_list_contexts(&o, &names, &e), -ENOENT);
	cr_assert_null(names, "untouched on failure");
}

Test(kube_files, kubeconfig_env_kubeconfig_is_used)
{
	char paths[256];
	struct kube_config *c;
	struct kube_error e;

	put("cfg", kc_token, 0600);
	snprintf(paths, sizeof(paths), "%s/cfg", tmp);
	setenv("KUBECONFIG", paths, 1);
	cr_assert_eq(kube_config_load_kubeconfig(NULL, &c, &e), 0);
	unsetenv("KUBECONFIG");
	cr_assert_str_eq(c->token, "agent-token-0123456789");
	kube_config_free(c);
}

static const char plugin[] =
	"#!/bin/sh\n"
	"# counts its runs, checks the exec info, prints a credential\n"
	"echo run >> \"$(dirname \"$0\")/runs\"\n"
	"case \"$KUBERNETES_EXEC_INFO\" in *ExecCredential*) ;; *) exit 3;; "
	"esac\n"
	"[ \"$1\" = --flag ] || { echo 'bad args' >&2; exit 4; }\n"
	"echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
	"\"kind\":\"ExecCredential\",\"status\":{\"token\":\"'\"$PLUGIN_"
	"TOKEN\"'\","
	"\"expirationTimestamp\":\"2030-01-02T03:04:05Z\"}}'\n";

Test(kube_files, exec_plugin_from_kubeconfig_returns_token_and_expiry)
{
	char kc[1024];
	struct kube_exec_credential cred = {0};
	struct kube_config *c;
	struct kube_error e;

	put("plugin.sh", plugin, 0755);
	snprintf(kc, sizeof(kc),
		 "current-context: a\n"
		 "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
		 "clusters: [{name: c, cluster: {server: 'https://h:1'}}]\n"
		 "users:\n- name: u\n  user:\n    exec:\n"
		 "      apiVersion: client.authentication.k8s.io/v1\n"
		 "      command: ./plugin.sh\n"
		 "      args: [--flag]\n"
		 "      env: [{name: PLUGIN_TOKEN, value: tok-123}]\n"
		 "      interactiveMode: Never\n");
	cr_assert_eq(
		kube_config_parse_kubeconfig(kc, strlen(kc), tmp, NULL, &c, &e),
		0, "%s", e.message);
	cr_assert_not_null(c->exec);
	cr_assert_str_eq(c->exec->args[0], "--flag");
	cr_assert_str_eq(c->exec->env[0], "PLUGIN_TOKEN=tok-123");
	cr_assert_eq(kube_exec_run(c->exec, &cred, &e), 0, "%s", e.message);
	cr_assert_str_eq(cred.token, "tok-123");
	cr_assert_eq(cred.expires_s, 1893553445);
	kube_exec_credential_release(&cred);
	free(c->exec->args[0]);
	c->exec->args[0] = strdup("--wrong");
	cr_assert_eq(kube_exec_run(c->exec, &cred, &e), -EACCES);
	cr_assert(strstr(e.message, "bad args"), "%s", e.message);
	kube_config_free(c);
}

Test(kube_files, exec_missing_plugin_and_bad_output)
{
	char cmd[128];
	struct kube_exec_config x = {.command = cmd};
	struct kube_exec_credential cred = {0};
	struct kube_error e;

	snprintf(cmd, sizeof(cmd), "%s/none", tmp);
	cr_assert_lt(kube_exec_run(&x, &cred, &e), 0);
	put("junk.sh", "#!/bin/sh\necho not-json\n", 0755);
	snprintf(cmd, sizeof(cmd), "%s/junk.sh", tmp);
	cr_assert_eq(kube_exec_run(&x, &cred, &e), -EBADMSG);
	cr_assert_null(cred.token);
}

Test(kube_exec, credential_parse)
{
	struct kube_exec_credential c = {0};
	static const char ok[] =
		"{\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\","
		"\"expirationTimestamp\":\"2030-01-02T04:04:05.5+01:00\"}}";
	static const char noexp[] =
		"{\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\"}}";
	static const char badexp[] =
		"{\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\","
		"\"expirationTimestamp\":\"tomorrow\"}}";
	static const char notoken[] =
		"{\"kind\":\"ExecCredential\",\"status\":{}}";

	cr_assert_eq(kube_exec_credential_parse(ok, sizeof(ok) - 1, &c), 0);
	cr_assert_eq(c.expires_s, 1893553445);
	kube_exec_credential_release(&c);
	cr_assert_eq(kube_exec_credential_parse(noexp, sizeof(noexp) - 1, &c),
		     0);
	cr_assert_eq(c.expires_s, 0);
	kube_exec_credential_release(&c);
	cr_assert_eq(kube_exec_credential_parse(badexp, sizeof(badexp) - 1, &c),
		     -EBADMSG);
	cr_assert_eq(
		kube_exec_credential_parse(notoken, sizeof(notoken) - 1, &c),
		-EBADMSG);
}

Test(kube_files, incluster_service_account_dir)
{
	struct kube_incluster_options o = {
		.sa_dir = tmp, .host = "10.96.0.1", .port = "443"};
	struct kube_config *c = (void *)1;
	char want[128];

	cr_assert_eq(kube_config_in_cluster(&o, &c), -ENOENT, "no token");
	cr_assert_eq(c, (void *)1);
	put("token", "sa-token\n", 0600);
	put("namespace", "oom-system\n", 0644);
	cr_assert_eq(kube_config_in_cluster(&o, &c), 0);
	cr_assert_str_eq(c->server, "https://10.96.0.1:443");
	cr_assert_str_eq(c->namespace, "oom-system");
	snprintf(want, sizeof(want), "%s/token", tmp);
	cr_assert_str_eq(c->token_file, want, "kept as a path: re-read");
	snprintf(want, sizeof(want), "%s/ca.crt", tmp);
	cr_assert_str_eq(c->ca_file, want);
	kube_config_free(c);
	o.host = "fd00::1";
	cr_assert_eq(kube_config_in_cluster(&o, &c), 0);
	cr_assert_str_eq(c->server, "https://[fd00::1]:443");
	kube_config_free(c);
	o.host = NULL;
	unsetenv("KUBERNETES_SERVICE_HOST");
	cr_assert_eq(kube_config_in_cluster(&o, &c), -ENOENT);
}
