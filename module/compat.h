/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version difference peercgroup absorbs, in one place.
 * Logic files use only the COMPAT_* names below; none tests a version.
 */
#ifndef PEERCGROUP_COMPAT_H
#define PEERCGROUP_COMPAT_H

#include <linux/ftrace.h>
#include <linux/ptrace.h>

#if !defined(CONFIG_DYNAMIC_FTRACE) || !defined(CONFIG_FUNCTION_TRACER)
#error "peercgroup needs CONFIG_DYNAMIC_FTRACE and CONFIG_FUNCTION_TRACER"
#endif
#if !defined(CONFIG_CGROUPS)
#error "peercgroup needs CONFIG_CGROUPS"
#endif
#if !defined(CONFIG_SECURITY) || !defined(CONFIG_SECURITY_NETWORK)
#error "peercgroup needs CONFIG_SECURITY_NETWORK: it hooks security_unix_stream_connect()"
#endif
#if !defined(CONFIG_UNIX)
#error "peercgroup needs CONFIG_UNIX"
#endif

/*
 * ftrace callbacks and their arguments, told apart by what the headers
 * define rather than by version number (distribution kernels backport):
 * - ftrace_regs_get_argument() (6.2+; struct ftrace_regs is opaque from
 *   6.12/6.13 on): read arguments through it, no register save needed;
 * - struct ftrace_regs wrapping pt_regs (5.11 to 6.1): arguments only
 *   through ftrace_get_regs(), which wants SAVE_REGS.  x86 has
 *   DYNAMIC_FTRACE_WITH_ARGS there; arm64 6.1 has only WITH_REGS, and
 *   there the generic header defines the arch_ftrace_get_regs() macro;
 * - neither (5.10): the callback gets struct pt_regs, filled with
 *   SAVE_REGS, and ftrace guards against recursion by default.
 * From 5.11 on, FTRACE_OPS_FL_RECURSION asks ftrace for that guard, which
 * also keeps preemption disabled around the callback.
 */
/*
 * ftrace_regs_get_argument() is a macro on x86 and in the generic header,
 * but an inline function on arm64, which has had it since it gained
 * DYNAMIC_FTRACE_WITH_ARGS (6.2) and dropped WITH_REGS: SAVE_REGS would
 * make registering the hooks fail there.
 */
#if defined(ftrace_regs_get_argument) || \
	(defined(CONFIG_ARM64) && defined(CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS))
#define COMPAT_FTRACE_REGS ftrace_regs
#define COMPAT_FTRACE_OPS_FLAGS FTRACE_OPS_FL_RECURSION
static __always_inline unsigned long
compat_ftrace_arg(struct ftrace_regs *fregs, unsigned int n)
{
	return ftrace_regs_get_argument(fregs, n);
}
#elif defined(CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS) || defined(arch_ftrace_get_regs)
#define COMPAT_FTRACE_REGS ftrace_regs
#define COMPAT_FTRACE_OPS_FLAGS (FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_RECURSION)
static __always_inline unsigned long
compat_ftrace_arg(struct ftrace_regs *fregs, unsigned int n)
{
	return regs_get_kernel_argument(ftrace_get_regs(fregs), n);
}
#else
#define COMPAT_FTRACE_REGS pt_regs
#define COMPAT_FTRACE_OPS_FLAGS FTRACE_OPS_FL_SAVE_REGS
static __always_inline unsigned long
compat_ftrace_arg(struct pt_regs *regs, unsigned int n)
{
	return regs_get_kernel_argument(regs, n);
}
#endif

/*
 * cgroup_path_ns() reports a path longer than the buffer by returning its
 * full length (kernfs, strlcpy era) or -E2BIG (strscpy era, 6.9+).
 */
static inline bool compat_cgroup_path_truncated(int ret, size_t buflen)
{
	return ret == -E2BIG || (ret >= 0 && (size_t)ret >= buflen);
}

#endif /* PEERCGROUP_COMPAT_H */
