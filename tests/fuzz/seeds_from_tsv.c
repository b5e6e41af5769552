/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Writes each path of tests/data/classify.tsv (C escapes undone) into its
 * own file in DIR, as the fuzzer's seeds.  Usage: seeds_from_tsv TSV DIR
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	char *line = NULL, fn[4096];
	size_t cap = 0, n = 0;
	int header = 1;
	ssize_t len;
	FILE *in;

	if (argc != 3 || !(in = fopen(argv[1], "re"))) {
		fprintf(stderr, "usage: seeds_from_tsv TSV DIR\n");
		return 2;
	}
	while ((len = getline(&line, &cap, in)) > 0) {
		char *p, *tab = strchr(line, '\t'), out[70000];
		size_t o = 0;
		FILE *f;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (header || !tab) {	/* the header names the columns; path is first */
			header = 0;
			continue;
		}
		*tab = '\0';
		for (p = line; *p && o < sizeof(out); p++) {
			if (*p != '\\') {
				out[o++] = *p;
				continue;
			}
			p++;
			if (*p == 'x' && p[1] && p[2]) {
				char hex[3] = { p[1], p[2], '\0' };

				out[o++] = (char)strtoul(hex, NULL, 16);
				p += 2;
			} else {
				out[o++] = *p == 't' ? '\t' : *p == 'n' ? '\n' : *p;
			}
		}
		snprintf(fn, sizeof(fn), "%s/tsv%03zu", argv[2], n++);
		f = fopen(fn, "we");
		if (!f || fwrite(out, 1, o, f) != o || fclose(f)) {
			perror(fn);
			return 1;
		}
	}
	free(line);
	fclose(in);
	printf("seeds_from_tsv: %zu seeds\n", n);
	return 0;
}
