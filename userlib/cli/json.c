/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CLI's JSON writer (see json.h). */
#include <string.h>

#include "json.h"

size_t utf8_sequence(const unsigned char *s, size_t n)
{
	unsigned int cp;
	size_t len, i;

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;	/* continuation byte, overlong lead, or > U+10FFFF */
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;	/* overlong, out of range, or a surrogate */
	return len;
}

void json_start(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->depth = -1;
}

/* Before any value: the comma that separates it from the previous one. */
static void value_prefix(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth >= 0) {
		if (!j->first[j->depth])
			fputc(',', j->f);
		j->first[j->depth] = false;
	}
}

static void open_(struct json *j, char c)
{
	value_prefix(j);
	fputc(c, j->f);
	if (j->depth + 1 < JSON_MAX_DEPTH)
		j->first[++j->depth] = true;
}

static void close_(struct json *j, char c)
{
	fputc(c, j->f);
	if (--j->depth < 0)
		fputc('\n', j->f);
}

void json_object_begin(struct json *j) { open_(j, '{'); }
void json_object_end(struct json *j) { close_(j, '}'); }
void json_array_begin(struct json *j) { open_(j, '['); }
void json_array_end(struct json *j) { close_(j, ']'); }

static void put_string(struct json *j, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	fputc('"', j->f);
	while (p < end) {
		size_t len = utf8_sequence(p, (size_t)(end - p));

		if (len == 0) {
			fprintf(j->f, "\\udc%02x", *p++);
			continue;
		}
		if (len > 1) {
			fwrite(p, 1, len, j->f);
		} else if (*p == '"' || *p == '\\') {
			fprintf(j->f, "\\%c", *p);
		} else if (*p == '\n') {
			fputs("\\n", j->f);
		} else if (*p == '\t') {
			fputs("\\t", j->f);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(j->f, "\\u%04x", *p);
		} else {
			fputc(*p, j->f);
		}
		p += len;
	}
	fputc('"', j->f);
}

void json_key(struct json *j, const char *key)
{
	value_prefix(j);
	put_string(j, key, strlen(key));
	fputc(':', j->f);
	j->after_key = true;
}

void json_string_n(struct json *j, const char *s, size_t n)
{
	value_prefix(j);
	put_string(j, s, n);
}

void json_string(struct json *j, const char *s)
{
	if (!s) {
		json_null(j);
		return;
	}
	json_string_n(j, s, strlen(s));
}

void json_int(struct json *j, long long v)
{
	value_prefix(j);
	fprintf(j->f, "%lld", v);
}

void json_uint(struct json *j, unsigned long long v)
{
	value_prefix(j);
	fprintf(j->f, "%llu", v);
}

void json_bool(struct json *j, bool v)
{
	value_prefix(j);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j)
{
	value_prefix(j);
	fputs("null", j->f);
}

void json_kv_string(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_string(j, s);
}

void json_kv_int(struct json *j, const char *key, long long v)
{
	json_key(j, key);
	json_int(j, v);
}

void json_kv_uint(struct json *j, const char *key, unsigned long long v)
{
	json_key(j, key);
	json_uint(j, v);
}

void json_kv_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	json_bool(j, v);
}
