// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark's floor: the module's three ftrace hooks, on the same
 * functions, with the same flags and argument access, and callbacks that
 * return at once.  What the connect part measures with this in place of
 * the module is what hooking costs before the module does any work: the
 * lowest overhead any ftrace-based design could reach.  Never shipped;
 * built only by "scripts/bench.sh --floor" (Kbuild: PCG_BENCH_FLOOR=y),
 * under the module's name so that the benchmark loads and unloads it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/string.h>

#include "../../module/compat.h"

static void notrace pcg_floor_callback(unsigned long ip, unsigned long parent_ip,
				       struct ftrace_ops *ops,
				       struct COMPAT_FTRACE_REGS *regs)
{
	/* what every hook of the module reads first: its first argument */
	barrier_data((void *)compat_ftrace_arg(regs, 0));
}

static const char *const pcg_floor_symbols[] = {
	"unix_sock_destructor", "unix_socketpair", "security_unix_stream_connect",
};

static struct ftrace_ops pcg_floor_ops[ARRAY_SIZE(pcg_floor_symbols)];

static void pcg_floor_unhook(int n)
{
	while (--n >= 0) {
		unregister_ftrace_function(&pcg_floor_ops[n]);
		ftrace_set_filter(&pcg_floor_ops[n], NULL, 0, 1);
	}
}

static int __init pcg_floor_init(void)
{
	char symbol[64];
	int i, err = 0;

	for (i = 0; i < ARRAY_SIZE(pcg_floor_symbols); i++) {
		struct ftrace_ops *ops = &pcg_floor_ops[i];

		ops->func = pcg_floor_callback;
		ops->flags = COMPAT_FTRACE_OPS_FLAGS | FTRACE_OPS_FL_PERMANENT;
		strscpy(symbol, pcg_floor_symbols[i], sizeof(symbol));
		err = ftrace_set_filter(ops, symbol, strlen(symbol), 0);
		if (!err)
			err = register_ftrace_function(ops);
		if (err) {
			pr_err("cannot hook %s (%d)\n", pcg_floor_symbols[i], err);
			ftrace_set_filter(ops, NULL, 0, 1);
			break;
		}
	}
	if (err)
		pcg_floor_unhook(i);
	return err;
}

static void __exit pcg_floor_exit(void)
{
	pcg_floor_unhook(ARRAY_SIZE(pcg_floor_symbols));
}

module_init(pcg_floor_init);
module_exit(pcg_floor_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("peercgroup benchmark floor: the hooks with empty callbacks");
