/* SPDX-License-Identifier: Apache-2.0 */
/* kube: running an exec credential plugin (client.authentication.k8s.io).
 * The plugin gets KUBERNETES_EXEC_INFO, no stdin, and 30 s; its stdout is
 * the ExecCredential, its stderr becomes the error message. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>

#include "kube_internal.h"

extern char **environ;

#define EXEC_TIMEOUT_US (30ull * 1000000)

static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* environ + the plugin's env + KUBERNETES_EXEC_INFO. */
static char **exec_env(const struct kube_exec_config *e)
{
	size_t n = 0, m = 0, k = 0;
	char **v;

	while (environ[n])
		n++;
	while (e->env && e->env[m])
		m++;
	v = calloc(n + m + 2, sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!startswith(environ[i], "KUBERNETES_EXEC_INFO=") &&
		    !(v[k++] = strdup(environ[i])))
			goto fail;
	for (size_t i = 0; i < m; i++)
		if (!(v[k++] = strdup(e->env[i])))
			goto fail;
	if (asprintf(&v[k],
		     "KUBERNETES_EXEC_INFO={\"apiVersion\":\"%s\","
		     "\"kind\":\"ExecCredential\","
		     "\"spec\":{\"interactive\":false}}",
		     e->api_version ? e->api_version
				    : "client.authentication.k8s.io/v1") < 0) {
		v[k] = NULL;
		goto fail;
	}
	return v;
fail:
	strv_free(v);
	return NULL;
}

static char **exec_argv(const struct kube_exec_config *e)
{
	size_t n = 0;
	char **v;

	while (e->args && e->args[n])
		n++;
	v = calloc(n + 2, sizeof(*v));
	if (!v)
		return NULL;
	v[0] = e->command;
	for (size_t i = 0; i < n; i++)
		v[i + 1] = e->args[i];
	return v;
}

static int spawn(const struct kube_exec_config *e, int out_w, int err_w,
		 pid_t *ret)
{
	posix_spawn_file_actions_t fa;
	_cleanup_free_ char **argv = exec_argv(e);
	char **env = exec_env(e);
	int r;

	if (!argv || !env) {
		strv_free(env);
		return -ENOMEM;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out_w, 1);
	posix_spawn_file_actions_adddup2(&fa, err_w, 2);
	r = posix_spawnp(ret, e->command, &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	strv_free(env);
	return -r;
}

/* Reads both pipes to EOF or the deadline. */
static int collect(int out_r, int err_r, struct strbuf *out,
		   struct strbuf *errb)
{
	struct pollfd p[2] = {{.fd = out_r, .events = POLLIN},
			      {.fd = err_r, .events = POLLIN}};
	uint64_t end = now_monotonic_us() + EXEC_TIMEOUT_US;
	char buf[4096];

	while (p[0].fd >= 0 || p[1].fd >= 0) {
		uint64_t now = now_monotonic_us();

		if (now >= end)
			return -ETIMEDOUT;
		if (poll(p, 2, (int)((end - now) / 1000 + 1)) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			n = read(p[i].fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				p[i].fd = -1;
				continue;
			}
			/* past the cap the rest is dropped, still drained */
			(void)strbuf_add(i ? errb : out, buf, (size_t)n);
		}
	}
	return 0;
}

static int wait_child(pid_t pid, bool kill_it)
{
	int st;

	if (kill_it)
		kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int kube_exec_run(const struct kube_exec_config *e,
		  struct kube_exec_credential *ret, struct kube_error *err)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT, errb = STRBUF_INIT;
	_cleanup_close_ int out_r = -1, out_w = -1, err_r = -1, err_w = -1;
	int po[2], pe[2], r, st;
	pid_t pid;

	if (!e || !e->command)
		return -EINVAL;
	if (pipe2(po, O_CLOEXEC) < 0)
		return -errno;
	out_r = po[0], out_w = po[1];
	if (pipe2(pe, O_CLOEXEC) < 0)
		return -errno;
	err_r = pe[0], err_w = pe[1];
	strbuf_init(&out, 1 << 20);
	strbuf_init(&errb, 4096);
	r = spawn(e, out_w, err_w, &pid);
	if (r < 0)
		return kube_error_set(err, r, "exec plugin '%s': %s",
				      e->command, strerror(-r));
	close(TAKE_FD(out_w));
	close(TAKE_FD(err_w));
	r = collect(out_r, err_r, &out, &errb);
	st = wait_child(pid, r < 0);
	if (r < 0)
		return kube_error_set(err, r, "exec plugin '%s': %s",
				      e->command, strerror(-r));
	if (st != 0)
		return kube_error_set(err, -EACCES,
				      "exec plugin '%s' exited %d: %.200s",
				      e->command, st, errb.buf);
	r = kube_exec_credential_parse(out.buf, out.len, ret);
	if (r < 0)
		return kube_error_set(err, r,
				      "exec plugin '%s': no ExecCredential "
				      "with a token in its output",
				      e->command);
	return 0;
}
