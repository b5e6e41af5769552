/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The CLI's JSON writer: structure, escapes, and valid UTF-8 out of any
 * bytes in (invalid bytes as \udcXX).  python3's json module, where there
 * is one, checks that the output parses and round-trips.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "json.h"

static char *buf;
static size_t size;

static struct json *start(void)
{
	static struct json j;
	FILE *f = open_memstream(&buf, &size);

	assert_non_null(f);
	json_start(&j, f);
	return &j;
}

static const char *finish(struct json *j)
{
	fclose(j->f);
	return buf;
}

static void string_is(const char *in, size_t n, const char *want)
{
	struct json *j = start();

	json_string_n(j, in, n);
	assert_string_equal(finish(j), want);
	free(buf);
}

static void test_structure(void **state)
{
	struct json *j = start();

	(void)state;
	json_object_begin(j);
	json_key(j, "a");
	json_int(j, -1);
	json_key(j, "b");
	json_array_begin(j);
	json_string(j, "x");
	json_bool(j, true);
	json_null(j);
	json_object_begin(j);
	json_object_end(j);
	json_array_end(j);
	json_key(j, "c");
	json_uint(j, 18446744073709551615ULL);
	json_key(j, "d");
	json_string(j, NULL);
	json_kv_string(j, "e", "f");
	json_kv_int(j, "g", 1);
	json_kv_uint(j, "h", 2);
	json_kv_bool(j, "i", false);
	json_object_end(j);
	assert_string_equal(finish(j),
			    "{\"a\":-1,\"b\":[\"x\",true,null,{}],\"c\":18446744073709551615,\"d\":null,"
			    "\"e\":\"f\",\"g\":1,\"h\":2,\"i\":false}\n");
	free(buf);
}

static void test_escapes(void **state)
{
	(void)state;
	string_is("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
	string_is("\n\t\x01\x1f\x7f", 5, "\"\\n\\t\\u0001\\u001f\\u007f\"");
	string_is("", 0, "\"\"");
	string_is("a\0b", 3, "\"a\\u0000b\"");
	/* valid UTF-8 passes: é, €, U+10348, U+10FFFF */
	string_is("caf\xc3\xa9 \xe2\x82\xac \xf0\x90\x8d\x88 \xf4\x8f\xbf\xbf", 19,
		  "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x90\x8d\x88 \xf4\x8f\xbf\xbf\"");
	/* invalid: latin-1 é, lone continuation, overlong '/', surrogate
	 * U+D800, above U+10FFFF, truncated sequence at the end */
	string_is("caf\xe9", 4, "\"caf\\udce9\"");
	string_is("\x80", 1, "\"\\udc80\"");
	string_is("\xc0\xaf", 2, "\"\\udcc0\\udcaf\"");
	string_is("\xed\xa0\x80", 3, "\"\\udced\\udca0\\udc80\"");
	string_is("\xf4\x90\x80\x80", 4, "\"\\udcf4\\udc90\\udc80\\udc80\"");
	string_is("a\xe2\x82", 3, "\"a\\udce2\\udc82\"");
	string_is("\xe0\x80\x80", 3, "\"\\udce0\\udc80\\udc80\"");	/* overlong 3-byte */
}

/* Every single byte and every byte pair: the output is valid UTF-8. */
static void test_any_bytes_valid_utf8(void **state)
{
	unsigned int a, b;

	(void)state;
	for (a = 0; a < 256; a++)
		for (b = 0; b < 256; b++) {
			char in[2] = { (char)a, (char)b };
			struct json *j = start();
			const unsigned char *p;
			size_t left;

			json_string_n(j, in, 2);
			finish(j);
			for (p = (const unsigned char *)buf, left = size; left;) {
				size_t n = utf8_sequence(p, left);

				assert_true(n > 0);
				assert_true(*p >= 0x20);	/* no raw control characters */
				p += n;
				left -= n;
			}
			free(buf);
		}
}

/* python3's json.loads() parses it, and surrogateescape gives the bytes back. */
static void test_python_round_trip(void **state)
{
	static const char in[] = "/lxc.payload.caf\xe9/\"q\"\\\n\x01\xc3\xa9\xff";
	char fn[] = "/tmp/test_json.XXXXXX", hex[2 * sizeof(in) + 1], cmd[512];
	struct json *j;
	size_t i;
	FILE *f;
	int fd;

	(void)state;
	if (system("python3 -c 1 2>/dev/null") != 0) {
		print_message("python3 not found: round trip skipped\n");
		skip();
	}
	j = start();
	json_object_begin(j);
	json_key(j, "path");
	json_string_n(j, in, sizeof(in) - 1);
	json_object_end(j);
	finish(j);
	fd = mkstemp(fn);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fwrite(buf, 1, size, f);
	fclose(f);
	for (i = 0; i < sizeof(in) - 1; i++)
		sprintf(hex + 2 * i, "%02x", (unsigned char)in[i]);
	snprintf(cmd, sizeof(cmd), "python3 -c 'import json,sys; "
		 "d=json.load(open(sys.argv[1],encoding=\"utf-8\",errors=\"strict\")); "
		 "sys.exit(d[\"path\"].encode(\"utf-8\",\"surrogateescape\").hex()!=sys.argv[2])' %s %s",
		 fn, hex);
	assert_int_equal(system(cmd), 0);
	unlink(fn);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_structure),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_any_bytes_valid_utf8),
		cmocka_unit_test(test_python_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
