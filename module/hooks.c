// SPDX-License-Identifier: GPL-2.0
/*
 * Where origins are recorded: ftrace callbacks on the AF_UNIX functions
 * that set or copy a socket's peer credentials, and on its destructor.
 *
 * The callbacks only observe: no IPMODIFY, no call through any address.
 * They run at function entry, sometimes under socket spinlocks, so they
 * never sleep and never print; they may be preempted elsewhere, and may
 * run on several CPUs at once (compat.h: no recursion guard).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/kernel.h>
#include <linux/net.h>
#include <linux/string.h>
#include <net/af_unix.h>
#include <net/sock.h>
#include <net/tcp_states.h>

#include "compat.h"
#include "peercgroup.h"

/*
 * security_unix_stream_connect(sk, other, newsk), called by
 * unix_stream_connect() with the listener @other locked, after the last
 * check that can fail for want of room or state, in the critical section
 * where the kernel then sets the peer credentials of both sides:
 *  - @newsk (the socket accept() will return) gets the connecting task's:
 *    init_peercred(newsk) takes task_tgid(current) (5.10 to 6.12), or the
 *    pid prepare_peercred() took from current on entry to connect (7.x).
 *    This hook runs in that same task: its cgroup is the connector's.
 *  - the client @sk gets the listener's: copy_peercred(sk, other) copies
 *    other->sk_peer_pid, which cannot change while @other is locked; the
 *    record answers for the client only when the listener's record proves
 *    which cgroup the task behind that pid listened from (listeners.c).
 * It is the one point where all three sockets are known, and it runs
 * before @newsk is queued where accept() can see it, and before
 * unix_peer(sk) is published (smp_mb__after_atomic()), so the record
 * exists before either end can be queried.  The kernel then sets
 * unix_peer(newsk) = sk and unix_peer(sk) = newsk: @sk, the record's
 * client end, is @newsk's one peer from the start.  If an LSM then
 * refuses, @newsk dies (and the record with it) and @sk stays
 * unconnected, which a query rejects before any lookup.  Such a @newsk
 * still has sk_type 0 (the kernel copies it from @sk after this hook), so
 * the destructor cannot tell it by its type.  One record per connection,
 * keyed by @newsk.
 *
 * The connector's cgroup is taken here rather than from
 * newsk->sk_cgrp_data, which cgroup_sk_alloc() filled from the same task
 * in sk_alloc(): on 5.10 that field turns into net_cls/net_prio data (and
 * its cgroup into the root) once those v1 controllers are used, and on
 * 5.15+ it is sampled when connect() begins, before it may sleep for
 * backlog room, while 5.10 to 6.12 take the credentials after that wait.
 * 7.x takes them before it (prepare_peercred()), so there a connector
 * that moves while it waits is recorded in its cgroup after the move:
 * the same process as SO_PEERCRED's, a moment later.
 */
static void notrace pcg_on_stream_connect(unsigned long ip, unsigned long parent_ip,
					  struct ftrace_ops *ops,
					  struct COMPAT_FTRACE_REGS *regs)
{
	struct sock *other = (struct sock *)compat_ftrace_arg(regs, 1);
	struct sock *newsk = (struct sock *)compat_ftrace_arg(regs, 2);
	struct cgroup *connector = pcg_current_cgroup();

	if (!connector)
		return;		/* no record: both ends answer ENODATA */
	pcg_peer_set(newsk, connector, pcg_listener_origin(other));
}

/*
 * security_socket_listen(sock, backlog), called by listen(2) (and by
 * io_uring's listen on 6.11+) just before sock->ops->listen(), in the
 * calling task with interrupts enabled: where a listener's record is made
 * (listeners.c).  It sees every family's sockets.  A listen() from inside
 * the kernel (kernel_listen()) has no record made: the probe then counts
 * it as a call it cannot follow.
 */
static void notrace pcg_on_listen(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *ops,
				  struct COMPAT_FTRACE_REGS *regs)
{
	struct socket *sock = (struct socket *)compat_ftrace_arg(regs, 0);
	struct sock *sk = sock->sk;

	if (sk && sk->sk_family == AF_UNIX && pcg_is_stream(sk))
		pcg_listener_prepare(sk);
}

/*
 * unix_socketpair(socka, sockb): both ends get the creator's credentials,
 * task_tgid(current) taken in this same task (by init_peercred() on 5.10
 * to 6.12, by prepare_peercred() on 7.x).  One record, keyed by @socka;
 * @sockb, its client end, is the one peer unix_socketpair() gives
 * @socka.  If the kernel then fails (7.x), both sockets are released and
 * the record goes with @socka.
 */
static void notrace pcg_on_socketpair(unsigned long ip, unsigned long parent_ip,
				      struct ftrace_ops *ops,
				      struct COMPAT_FTRACE_REGS *regs)
{
	struct socket *socka = (struct socket *)compat_ftrace_arg(regs, 0);
	struct cgroup *maker;

	if (!pcg_is_stream(socka->sk))
		return;
	maker = pcg_current_cgroup();
	if (!maker)
		return;
	cgroup_get(maker);	/* one reference per end */
	pcg_peer_set(socka->sk, maker, maker);
}

/*
 * unix_sock_destructor(sk): the last reference is gone and the memory is
 * freed right after, so the record keyed by @sk goes now, before a new
 * socket can be born at the same address.  Stream sockets have records,
 * and so may a @newsk an LSM refused, whose type was never set: only
 * datagram sockets skip the table.  A record's client end has nothing to
 * remove: its record is keyed by the other end, which holds a reference
 * on it, so the client is destroyed only after that end was released,
 * and no query can reach the record through it any more (peercgroup.h).
 * A socket with a peer record was born connected, so it has no listener
 * record (listeners.c makes them only for sockets that call listen()
 * while unconnected); the others look in the listener table if they are
 * bound (the address is only freed after this hook).  Accepted sockets,
 * which share their listener's address, so skip the listener table.
 */
static void notrace pcg_on_destruct(unsigned long ip, unsigned long parent_ip,
				    struct ftrace_ops *ops,
				    struct COMPAT_FTRACE_REGS *regs)
{
	struct sock *sk = (struct sock *)compat_ftrace_arg(regs, 0);

	if (sk->sk_type == SOCK_DGRAM || pcg_peer_clear(sk))
		return;
	if (READ_ONCE(unix_sk(sk)->addr) && pcg_listeners_live())
		pcg_listener_forget(sk);
}

struct pcg_hook {
	const char *symbol;
	struct ftrace_ops ops;
};

/*
 * PERMANENT: while these hooks are registered, sysctl kernel.ftrace_enabled
 * cannot be turned off (EBUSY), and they cannot be registered while it is
 * off.  A destructor hook silenced behind our back would leave records of
 * dead sockets for new sockets born at the same address: a wrong answer.
 */
#define PCG_HOOK(sym, cb) { .symbol = (sym), \
	.ops = { .func = (cb), \
		 .flags = COMPAT_FTRACE_OPS_FLAGS | FTRACE_OPS_FL_PERMANENT } }

/*
 * Registered in this order and unregistered in reverse: the destructor
 * hook is in place before any entry can be made (the listen probe comes
 * right after it, in pcg_hooks_register()) and stays until the last
 * entry-making hook is gone, so no entry outlives its socket unseen.
 */
static struct pcg_hook pcg_hooks[] = {
	PCG_HOOK("unix_sock_destructor", pcg_on_destruct),
	PCG_HOOK("security_socket_listen", pcg_on_listen),
	PCG_HOOK("unix_socketpair", pcg_on_socketpair),
	PCG_HOOK("security_unix_stream_connect", pcg_on_stream_connect),
};

/*
 * Drop the ops' filter.  ftrace_set_filter() with reset is exported on
 * every kernel we build for; ftrace_free_filter() is not (5.10).
 */
static void pcg_hook_clear_filter(struct pcg_hook *hook)
{
	ftrace_set_filter(&hook->ops, NULL, 0, 1);
}

static int pcg_hook_register(struct pcg_hook *hook)
{
	char symbol[64];
	int err;

	/* ftrace_set_filter() wants a writable buffer on older kernels. */
	strscpy(symbol, hook->symbol, sizeof(symbol));
	err = ftrace_set_filter(&hook->ops, symbol, strlen(symbol), 0);
	if (err) {
		pr_err("cannot trace %s (%d): not in available_filter_functions?\n",
		       hook->symbol, err);
		return err;
	}
	err = register_ftrace_function(&hook->ops);
	if (err) {
		pr_err("cannot hook %s (%d)%s\n", hook->symbol, err,
		       err == -EBUSY ? ": is sysctl kernel.ftrace_enabled 0?" : "");
		pcg_hook_clear_filter(hook);
	}
	return err;
}

/*
 * In the debug kernel's build (PCG_HAVE_FAULT_INJECT, peercgroup.h),
 * /sys/kernel/debug/peercgroup_fail_unhook makes unhooking fail as it
 * does once ftrace has disabled itself after a bug (ENODEV), so that
 * what the module then does (stay in memory, main.c) is tested.
 */
#ifdef PCG_HAVE_FAULT_INJECT
static DECLARE_FAULT_ATTR(pcg_fail_unhook);
static struct dentry *pcg_fail_unhook_dir;

static void pcg_fault_inject_init(void)
{
	pcg_fail_unhook_dir = fault_create_debugfs_attr("peercgroup_fail_unhook",
							NULL, &pcg_fail_unhook);
}

static void pcg_fault_inject_exit(void)
{
	debugfs_remove_recursive(pcg_fail_unhook_dir);
}

static bool pcg_unhook_fails(void)
{
	return should_fail(&pcg_fail_unhook, 1);
}
#else
static inline void pcg_fault_inject_init(void) { }
static inline void pcg_fault_inject_exit(void) { }
static inline bool pcg_unhook_fails(void) { return false; }
#endif

/* A hook ftrace would not take back: its callback may still run, for good. */
static bool pcg_hooks_stuck;

bool pcg_hooks_left_behind(void)
{
	return READ_ONCE(pcg_hooks_stuck);
}

/* Returns once no callback of this ops is still running, or an error. */
static int pcg_hook_unregister(struct pcg_hook *hook)
{
	int err = pcg_unhook_fails() ? -ENODEV : unregister_ftrace_function(&hook->ops);

	if (err) {
		pr_crit("cannot unhook %s (%d): its callback may still run\n",
			hook->symbol, err);
		WRITE_ONCE(pcg_hooks_stuck, true);
	} else {
		pcg_hook_clear_filter(hook);
	}
	return err;
}

/*
 * Unhooks hooks[0..@n-1], last first; an error if any may still run.  The
 * destructor hook is left in place if an entry-making hook was refused:
 * that one still makes entries, and only the destructor takes them away
 * when their sockets die (the module then stays, main.c).
 */
static int pcg_hooks_unregister_first(int n)
{
	int err = 0;

	while (--n > 0)
		err |= pcg_hook_unregister(&pcg_hooks[n]);
	if (n < 0)
		return 0;
	pcg_listen_probe_unregister();
	if (err)
		return -EBUSY;
	return pcg_hook_unregister(&pcg_hooks[0]) ? -EBUSY : 0;
}

int pcg_hooks_register(void)
{
	int i, err;

	pcg_fault_inject_init();
	for (i = 0; i < ARRAY_SIZE(pcg_hooks); i++) {
		err = pcg_hook_register(&pcg_hooks[i]);
		if (!err && i == 0) {
			err = pcg_listen_probe_register();
			if (err)
				pcg_hook_unregister(&pcg_hooks[0]);
		}
		if (err)
			break;
	}
	if (err)
		pcg_hooks_unregister_first(i);
	if (err && !pcg_hooks_left_behind())
		pcg_fault_inject_exit();
	return err;
}

/*
 * Nonzero if a callback may still run (pcg_hooks_left_behind()): then the
 * module's code and the tables it uses must stay (main.c).
 */
int pcg_hooks_unregister(void)
{
	int err = pcg_hooks_unregister_first(ARRAY_SIZE(pcg_hooks));

	if (!err)
		pcg_fault_inject_exit();
	return err;
}
