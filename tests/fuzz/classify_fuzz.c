/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: peercgroup_classify() on arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "peercgroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct peercgroup_container ct;
	int r = peercgroup_classify((const char *)data, size, &ct);

	/* Invariants every answer keeps. */
	if (r != 0 && ct.runtime != PEERCGROUP_RT_UNKNOWN)
		__builtin_trap();
	if ((unsigned int)ct.runtime >= PEERCGROUP_RT_COUNT_ ||
	    memchr(ct.id, '\0', sizeof(ct.id)) == NULL ||
	    memchr(ct.pod, '\0', sizeof(ct.pod)) == NULL ||
	    memchr(ct.qos, '\0', sizeof(ct.qos)) == NULL)
		__builtin_trap();
	return 0;
}
