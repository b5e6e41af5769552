/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: peercgroup_classify_path() and peercgroup_classify() on
 * arbitrary bytes.  Seeds: every path of tests/data/classify.tsv.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "peercgroup.h"

static int terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct peercgroup_class c = PEERCGROUP_CLASS_INIT;
	struct peercgroup_container ct;
	unsigned int flags = size ? data[0] % 3 : 0;	/* 0, INITIAL_NS, CHILD_NS */
	int r = peercgroup_classify_path((const char *)data, size, flags, &c);
	int r1 = peercgroup_classify((const char *)data, size, &ct);

	/* Invariants every answer keeps. */
	if (r != 0 && r != -EINVAL)
		__builtin_trap();
	if (r != 0 && (c.runtime != PEERCGROUP_RT_UNKNOWN || c.id[0] || c.uid != -1))
		__builtin_trap();
	if (c.size != sizeof(c) || (r1 == 0) != (r == 0))
		__builtin_trap();
	if (!terminated(c.id, sizeof(c.id)) || !terminated(c.pod, sizeof(c.pod)) ||
	    !terminated(c.qos, sizeof(c.qos)) || !terminated(c.app, sizeof(c.app)) ||
	    !terminated(c.launcher, sizeof(c.launcher)) ||
	    !terminated(c.unit, sizeof(c.unit)) ||
	    !terminated(c.user_unit, sizeof(c.user_unit)) ||
	    !terminated(ct.id, sizeof(ct.id)))
		__builtin_trap();
	if (!strcmp(peercgroup_runtime_name(c.runtime), "unknown") &&
	    c.runtime != PEERCGROUP_RT_UNKNOWN)
		__builtin_trap();	/* a runtime without a name */
	/* "/.." only ever comes from a child namespace, never the host */
	if (c.up && (c.runtime == PEERCGROUP_RT_HOST || !(c.flags & PEERCGROUP_CT_NAMESPACED)))
		__builtin_trap();
	if ((c.flags & PEERCGROUP_CT_CONMON) && !(c.flags & PEERCGROUP_CT_MONITOR))
		__builtin_trap();
	return 0;
}
