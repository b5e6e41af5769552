// SPDX-License-Identifier: GPL-2.0
/* Harness self-test: a kernel WARN must fail the run. */
#include <linux/bug.h>
#include <linux/module.h>

static int __init harness_warn_init(void)
{
	WARN(1, "deliberate warning from the harness self-test\n");
	return 0;
}
module_init(harness_warn_init);

MODULE_DESCRIPTION("harness self-test: warns on load");
MODULE_LICENSE("GPL");
