/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A small JSON writer: one object per line, always valid UTF-8.
 *
 * Strings are byte strings (cgroup names are bytes).  Valid UTF-8 passes
 * through; '"', '\\' and control characters are escaped; every byte that
 * is not part of a valid UTF-8 sequence is written as the lone surrogate
 * \udcXX (XX: the byte), the convention of Python's "surrogateescape":
 * json.loads() then .encode("utf-8", "surrogateescape") gives back the
 * exact bytes; decoders that reject lone surrogates see U+FFFD.
 */
#ifndef PEERCGROUP_CLI_JSON_H
#define PEERCGROUP_CLI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 8

struct json {
	FILE *f;
	int depth;
	bool first[JSON_MAX_DEPTH];	/* nothing written yet at this depth */
	bool after_key;			/* a key was written; its value is next */
};

void json_start(struct json *j, FILE *f);
void json_object_begin(struct json *j);
void json_object_end(struct json *j);	/* the outermost one ends the line */
void json_array_begin(struct json *j);
void json_array_end(struct json *j);
void json_key(struct json *j, const char *key);
void json_string(struct json *j, const char *s);
void json_string_n(struct json *j, const char *s, size_t n);
void json_int(struct json *j, long long v);
void json_uint(struct json *j, unsigned long long v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);

/* A member: key and value in one call. */
void json_kv_string(struct json *j, const char *key, const char *s);
void json_kv_int(struct json *j, const char *key, long long v);
void json_kv_uint(struct json *j, const char *key, unsigned long long v);
void json_kv_bool(struct json *j, const char *key, bool v);

/* Length of the valid UTF-8 sequence at @s (at most @n bytes), 0 if none. */
size_t utf8_sequence(const unsigned char *s, size_t n);

#endif
