/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version difference peercgroup absorbs, in one place.
 * Logic files use only the COMPAT_* names below; none tests a version.
 */
#ifndef PEERCGROUP_COMPAT_H
#define PEERCGROUP_COMPAT_H

#include <linux/ftrace.h>
#include <linux/ptrace.h>
#include <linux/slab.h>

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
#if !defined(CONFIG_KRETPROBES)
#error "peercgroup needs CONFIG_KRETPROBES: it follows unix_listen() to its return"
#endif
/*
 * PREEMPT_RT: kprobes run their handlers with preemption disabled, and
 * the listen probe's take spinlock_t locks (the socket's state lock, the
 * rhashtable's bucket locks) and allocate memory, none of which RT allows
 * in such a section.
 */
#if defined(CONFIG_PREEMPT_RT)
#error "peercgroup does not support PREEMPT_RT kernels: its kprobe handler would sleep"
#endif

/*
 * Header probes (Kbuild): facts a preprocessor test cannot see, such as
 * whether a helper exists as an inline function rather than a macro.
 */
#if !defined(PCG_PROBED)
#error "build peercgroup through its Kbuild file: compat.h needs the header probes it runs"
#endif
#if defined(ftrace_regs_get_argument) && !defined(PCG_HAVE_FTRACE_REGS_GET_ARGUMENT)
#error "ftrace_regs_get_argument is a macro the Kbuild probe did not find: fix the probe"
#endif

/*
 * ftrace callbacks and their arguments, told apart by what the headers
 * define rather than by version number (distribution kernels backport):
 * - ftrace_regs_get_argument() (6.2+; struct ftrace_regs is opaque from
 *   6.12/6.13 on) with DYNAMIC_FTRACE_WITH_ARGS: read arguments through
 *   it, no register save needed.  A macro on most architectures, an
 *   inline function where the architecture has its own ftrace_regs
 *   (arm64 from 6.13 on), hence the Kbuild probe rather than defined().
 *   The generic header defines it whether or not the architecture fills
 *   the argument registers without SAVE_REGS: only WITH_ARGS says so;
 * - struct ftrace_regs wrapping pt_regs (5.11 to 6.1), x86-64: with
 *   DYNAMIC_FTRACE_WITH_ARGS, ftrace_caller saves the argument registers
 *   into fregs->regs for every ops (save_mcount_regs), SAVE_REGS or not;
 *   only the rest of pt_regs (cs, flags, callee-saved registers) needs
 *   SAVE_REGS, which ftrace_get_regs() checks.  The arguments are read
 *   from there directly, sparing the full register save of
 *   ftrace_regs_caller on every call;
 * - the same struct elsewhere, or no WITH_ARGS from 6.2 on: arguments
 *   only through ftrace_get_regs(), which wants SAVE_REGS (an architecture
 *   without WITH_REGS then fails to load, never reads a NULL).  arm64 6.1
 *   has only WITH_REGS, and there the generic header defines the
 *   arch_ftrace_get_regs() macro;
 * - neither (5.10): the callback gets struct pt_regs, filled with
 *   SAVE_REGS.
 *
 * No recursion guard: ftrace would otherwise call the callback through
 * ftrace_ops_assist_func(), which tests and sets a per-task recursion bit
 * and disables preemption around it, on every hooked call.  The callbacks
 * call nothing that reaches a hooked function, and need no preemption
 * off: they are reentrant, and unregister_ftrace_function() waits for a
 * preempted one (synchronize_rcu_tasks() for dynamic ops).  5.10 calls
 * the guard's absence FTRACE_OPS_FL_RECURSION_SAFE; 5.11 made the guard
 * opt-in (FTRACE_OPS_FL_RECURSION), so there the default is right.
 */
#if defined(PCG_HAVE_FTRACE_REGS_GET_ARGUMENT) && defined(CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS)
#define COMPAT_FTRACE_REGS ftrace_regs
#define COMPAT_FTRACE_OPS_FLAGS 0
static __always_inline unsigned long
compat_ftrace_arg(struct ftrace_regs *fregs, unsigned int n)
{
	return ftrace_regs_get_argument(fregs, n);
}
#elif defined(CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS) && defined(CONFIG_X86_64)
#define COMPAT_FTRACE_REGS ftrace_regs
#define COMPAT_FTRACE_OPS_FLAGS 0
static __always_inline unsigned long
compat_ftrace_arg(struct ftrace_regs *fregs, unsigned int n)
{
	return regs_get_kernel_argument(&fregs->regs, n);
}
#elif defined(CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS) || defined(arch_ftrace_get_regs) || \
	defined(PCG_HAVE_FTRACE_REGS_GET_ARGUMENT)
#define COMPAT_FTRACE_REGS ftrace_regs
#define COMPAT_FTRACE_OPS_FLAGS FTRACE_OPS_FL_SAVE_REGS
static __always_inline unsigned long
compat_ftrace_arg(struct ftrace_regs *fregs, unsigned int n)
{
	return regs_get_kernel_argument(ftrace_get_regs(fregs), n);
}
#else
#define COMPAT_FTRACE_REGS pt_regs
#define COMPAT_FTRACE_OPS_FLAGS (FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_RECURSION_SAFE)
static __always_inline unsigned long
compat_ftrace_arg(struct pt_regs *regs, unsigned int n)
{
	return regs_get_kernel_argument(regs, n);
}
#endif

/*
 * A SLAB_TYPESAFE_BY_RCU cache of struct @type, whose free-list pointer
 * may overlay @field (no reader may read @field from a free object).
 * Without kmem_cache_args.freeptr_offset (before 6.12), SLUB keeps that
 * pointer past the object instead: 8 more bytes per object.
 */
#if defined(PCG_HAVE_SLAB_FREEPTR_OFFSET)
static inline struct kmem_cache *
compat_kmem_cache_typesafe_by_rcu(const char *name, unsigned int size,
				  unsigned int align, unsigned int freeptr_offset,
				  slab_flags_t flags)
{
	struct kmem_cache_args args = {
		.align = align,
		.freeptr_offset = freeptr_offset,
		.use_freeptr_offset = true,
	};

	return kmem_cache_create(name, size, &args, flags | SLAB_TYPESAFE_BY_RCU);
}
#else
static inline struct kmem_cache *
compat_kmem_cache_typesafe_by_rcu(const char *name, unsigned int size,
				  unsigned int align, unsigned int freeptr_offset,
				  slab_flags_t flags)
{
	return kmem_cache_create(name, size, align, flags | SLAB_TYPESAFE_BY_RCU, NULL);
}
#endif
#define COMPAT_KMEM_CACHE_TYPESAFE_BY_RCU(type, field, flags)		\
	compat_kmem_cache_typesafe_by_rcu(#type, sizeof(struct type),	\
					  __alignof__(struct type),	\
					  offsetof(struct type, field), (flags))

/*
 * The name of a kernfs node that cannot be renamed, which the caller
 * keeps alive.  7.x made the field __rcu, for renames to free the old
 * name after a grace period; without a rename there is nothing to wait
 * for.
 */
#if defined(PCG_HAVE_KERNFS_RCU_NAME)
#define compat_kernfs_fixed_name(kn) rcu_dereference_protected((kn)->name, true)
#else
#define compat_kernfs_fixed_name(kn) ((const char *)(kn)->name)
#endif

/*
 * Stack buffers that INIT_STACK_ALL_ZERO must not clear on every call.
 * Headers without the attribute (Debian's 5.10.223 has it) get an
 * empty one: the buffers are then cleared, which is only slower.
 */
#ifndef __uninitialized
#define __uninitialized
#endif

#endif /* PEERCGROUP_COMPAT_H */
