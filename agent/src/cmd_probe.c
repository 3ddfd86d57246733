/* SPDX-License-Identifier: Apache-2.0 */
/* oomlens-agent probe: one GET of the agent's own endpoint, the way
 * `helm test` checks /readyz from a pod. With metrics.tls the port is
 * HTTPS only, and busybox 1.35's wget cannot speak to it (its TLS client
 * offers only SHA-1 signatures, which OpenSSL 3 refuses), so the test pod
 * runs the agent's image and this. */
#include <curl/curl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/parse.h"
#include "base/strbuf.h"
#include "base/static_nss.h"
#include "commands.h"

/* /readyz answers a line; anything larger is not ours. */
#define PROBE_MAX_BODY (64u << 10)

static const char usage[] =
	"usage: oomlens-agent probe [--ca FILE | --insecure] [--timeout "
	"SECONDS "
	"(5)] URL\n"
	"GETs URL and prints the body; exit 0: 200, 1: another answer or "
	"none, 2: usage\n";

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
	struct strbuf *sb = ud;

	/* a short count makes curl stop: the body is over the cap */
	return strbuf_add(sb, data, size * n) < 0 ? 0 : size * n;
}

static int get(const char *url, const char *ca, bool insecure, long secs)
{
	_cleanup_strbuf_ struct strbuf body = STRBUF_INIT;
	CURL *c = curl_easy_init();
	long status = 0;
	CURLcode rc;

	if (!c) {
		fprintf(stderr, "probe: cannot start libcurl\n");
		return 1;
	}
	strbuf_init(&body, PROBE_MAX_BODY);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_TIMEOUT, secs);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
	if (ca)
		curl_easy_setopt(c, CURLOPT_CAINFO, ca);
	if (insecure) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	if (rc != CURLE_OK) {
		fprintf(stderr, "probe: %s: %s\n", url, curl_easy_strerror(rc));
		return 1;
	}
	fwrite(body.buf, 1, body.len, stdout);
	if (status != 200) {
		fprintf(stderr, "probe: %s: HTTP %ld\n", url, status);
		return 1;
	}
	return 0;
}

int cmd_probe(int argc, char **argv, const struct cli_globals *g)
{
	static const struct option longopts[] = {
		{"ca", required_argument, NULL, 'c'},
		{"insecure", no_argument, NULL, 'k'},
		{"timeout", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *ca = NULL;
	bool insecure = false;
	uint64_t secs = 5;
	int opt, r;

	(void)g;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			ca = optarg;
			break;
		case 'k':
			insecure = true;
			break;
		case 't':
			if (parse_u64(optarg, &secs) < 0 || !secs ||
			    secs > 3600) {
				fprintf(stderr, "probe: --timeout: 1 to 3600 "
						"seconds\n");
				return 2;
			}
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind != argc - 1 || (ca && insecure)) {
		fputs(usage, stderr);
		return 2;
	}
	static_nss_pin(); /* the endpoint's name: files and dns */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "probe: cannot start libcurl\n");
		return 1;
	}
	r = get(argv[optind], ca, insecure, (long)secs);
	curl_global_cleanup();
	return r;
}
