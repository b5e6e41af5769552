// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * classify-dump: what the C classifier says about each path on stdin, as a
 * classify.tsv table, for the bindings' differential test (make
 * check-bindings).  One path per line, with the table's C escapes (\\ \t
 * \n \xNN).  Unlike tests/data/classify.tsv, EVERY string column is written
 * escaped the same way, so that any byte the classifier returns survives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peercgroup.h"

static void put_escaped(const char *s, size_t n)
{
	size_t i;

	if (n == 0) {
		fputs("-", stdout);
		return;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\')
			fputs("\\\\", stdout);
		else if (c == '\t')
			fputs("\\t", stdout);
		else if (c == '\n')
			fputs("\\n", stdout);
		else if (c < 0x20 || c >= 0x7f || (i == 0 && n == 1 && c == '-'))
			printf("\\x%02x", c);
		else
			putchar(c);
	}
}

static void put_str(const char *s)
{
	putchar('\t');
	put_escaped(s, strlen(s));
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Undo the escapes in place; returns the length. */
static size_t unescape(char *s)
{
	size_t i, o = 0;

	for (i = 0; s[i]; i++) {
		if (s[i] == '\\' && s[i + 1] == '\\') {
			s[o++] = '\\';
			i++;
		} else if (s[i] == '\\' && s[i + 1] == 't') {
			s[o++] = '\t';
			i++;
		} else if (s[i] == '\\' && s[i + 1] == 'n') {
			s[o++] = '\n';
			i++;
		} else if (s[i] == '\\' && s[i + 1] == 'x' && hexval(s[i + 2]) >= 0 &&
			   hexval(s[i + 3]) >= 0) {
			s[o++] = (char)(hexval(s[i + 2]) << 4 | hexval(s[i + 3]));
			i += 3;
		} else {
			s[o++] = s[i];
		}
	}
	return o;
}

int main(void)
{
	static char line[300000];

	puts("path\tvalid\truntime\tid\tpod\tqos\tuid\tapp\tlauncher\tup\tflags\tsource\tunit\tuser_unit");
	while (fgets(line, sizeof(line), stdin)) {
		struct peercgroup_class c = PEERCGROUP_CLASS_INIT;
		size_t n = strcspn(line, "\n"), len;
		unsigned int bit;
		int r, any = 0;

		line[n] = '\0';
		fputs(line, stdout);	/* already escaped */
		len = unescape(line);
		r = peercgroup_classify_path(line, len, PEERCGROUP_CLASSIFY_INITIAL_NS, &c);
		if (r < 0) {
			puts("\tno\t-\t-\t-\t-\t-\t-\t-\t-\t-\tgen\t-\t-");
			continue;
		}
		printf("\tyes\t%s", peercgroup_runtime_name(c.runtime));
		put_str(c.id);
		put_str(c.pod);
		put_str(c.qos);
		printf("\t%lld", (long long)c.uid);
		put_str(c.app);
		put_str(c.launcher);
		printf("\t%u\t", c.up);
		for (bit = 1; bit; bit <<= 1) {
			if (!(c.flags & bit))
				continue;
			printf("%s%s", any ? "," : "", peercgroup_class_flag_name(bit) ?
			       peercgroup_class_flag_name(bit) : "?");
			any = 1;
		}
		if (!any)
			putchar('-');
		fputs("\tgen", stdout);
		put_str(c.unit);
		put_str(c.user_unit);
		putchar('\n');
	}
	return 0;
}
