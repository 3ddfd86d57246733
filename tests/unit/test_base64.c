/* SPDX-License-Identifier: Apache-2.0 */
/* kube_base64_*: OpenSSL's EVP_EncodeBlock/EVP_DecodeBlock, kept strict
 * (canonical padded base64 only, as the API server sends it). */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "kube/kube.h"
#include "base/strbuf.h"

Test(base64, known_vectors_both_ways)
{
	static const char *const plain[] = {"",	    "f",     "fo",    "foo",
					    "foob", "fooba", "foobar"};
	static const char *const enc[] = {
		"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};

	for (size_t i = 0; i < ARRAY_SIZE(plain); i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		unsigned char *out;
		size_t len;

		strbuf_init(&sb, 0);
		cr_assert_eq(strbuf_adds(&sb, "x"), 0); /* appends */
		cr_assert_eq(
			kube_base64_encode(plain[i], strlen(plain[i]), &sb), 0);
		cr_assert_eq(sb.len, 1 + strlen(enc[i]));
		cr_assert_str_eq(sb.buf + 1, enc[i]);
		cr_assert_eq(
			kube_base64_decode(enc[i], strlen(enc[i]), &out, &len),
			0);
		cr_assert_eq(len, strlen(plain[i]));
		cr_assert_eq(memcmp(out, plain[i], len), 0);
		free(out);
	}
}

Test(base64, binary_round_trip)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	unsigned char data[1000], *out;
	size_t len;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 131 + 7);
	strbuf_init(&sb, 0);
	cr_assert_eq(kube_base64_encode(data, sizeof(data), &sb), 0);
	cr_assert_eq(kube_base64_decode(sb.buf, sb.len, &out, &len), 0);
	cr_assert_eq(len, sizeof(data));
	cr_assert_eq(memcmp(out, data, len), 0);
	free(out);
}

Test(base64, refuses_what_is_not_canonical)
{
	static const char *const bad[] = {"Zg=",      "Zg==\n", " Zm8",
					  "Zm8 ",     "Z=g=",	"=Zm8",
					  "Zm9v!A==", "====",	"Zm\n9v"};
	unsigned char *out = NULL;
	size_t len;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		cr_assert_eq(
			kube_base64_decode(bad[i], strlen(bad[i]), &out, &len),
			-EBADMSG, "%s", bad[i]);
	cr_assert_null(out);
}
