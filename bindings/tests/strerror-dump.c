// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * strerror-dump: the C library's own peercgroup_strerror() text for each
 * errno that has one, "ERRNO<TAB>TEXT" per line, for the bindings' parity
 * test (make check-bindings): a Go, Python and C daemon log the same words.
 */
#include <stdio.h>
#include <string.h>

#include "peercgroup.h"

int main(void)
{
	int e;

	for (e = 1; e < 4096; e++) {
		const char *m = peercgroup_strerror(-e);

		if (strcmp(m, strerror(e)) != 0)
			printf("%d\t%s\n", e, m);
	}
	return 0;
}
