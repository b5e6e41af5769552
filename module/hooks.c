// SPDX-License-Identifier: GPL-2.0
/*
 * Where origins are recorded: ftrace callbacks on the AF_UNIX functions
 * that set or copy a socket's peer credentials, and on its destructor.
 *
 * The callbacks only observe: no IPMODIFY, no call through any address.
 * They run at function entry with preemption disabled, sometimes under
 * socket spinlocks, so they never sleep and never print.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/net.h>
#include <linux/string.h>
#include <net/af_unix.h>
#include <net/sock.h>
#include <net/tcp_states.h>

#include "compat.h"
#include "peercgroup.h"

static bool pcg_is_stream(const struct sock *sk)
{
	return sk->sk_type == SOCK_STREAM || sk->sk_type == SOCK_SEQPACKET;
}

/*
 * security_unix_stream_connect(sk, other, newsk), called by
 * unix_stream_connect() with the listener @other locked, after the last
 * check that can fail for want of room or state and right before the
 * kernel sets the peer credentials on both sides: @newsk (the socket
 * accept() will return) gets the connecting task's, the client @sk gets
 * the listener's.  It is the one point where all three sockets are known,
 * and it runs before @newsk is queued where accept() can see it, so the
 * entry exists before a server can ask for it.  If an LSM then refuses,
 * @newsk dies (and its entry with it) and @sk stays unconnected, which a
 * query rejects before any lookup.
 */
static void notrace pcg_on_stream_connect(unsigned long ip, unsigned long parent_ip,
					  struct ftrace_ops *ops,
					  struct COMPAT_FTRACE_REGS *regs)
{
	struct sock *sk = (struct sock *)compat_ftrace_arg(regs, 0);
	struct sock *other = (struct sock *)compat_ftrace_arg(regs, 1);
	struct sock *newsk = (struct sock *)compat_ftrace_arg(regs, 2);

	pcg_store(&pcg_peers, newsk, pcg_entry_from_current(newsk));
	pcg_store(&pcg_peers, sk, pcg_entry_copy(sk, other));
}

/*
 * unix_listen(sock, backlog): the kernel sets the listener's own creds.
 * This runs before unix_listen()'s own checks, so it skips what they
 * refuse (unbound or connected sockets): a listener record then always
 * belongs to a bound socket, which lets the destructor skip the listener
 * table for unbound ones, every client among them.  A bind() racing with
 * listen() can only cost a record (ENODATA later), never add a wrong one.
 */
static void notrace pcg_on_listen(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *ops,
				  struct COMPAT_FTRACE_REGS *regs)
{
	struct socket *sock = (struct socket *)compat_ftrace_arg(regs, 0);
	struct sock *sk = sock->sk;
	int state = READ_ONCE(sk->sk_state);

	if (!pcg_is_stream(sk) || !READ_ONCE(unix_sk(sk)->addr) ||
	    (state != TCP_CLOSE && state != TCP_LISTEN))
		return;
	pcg_store(&pcg_listeners, sk, pcg_entry_from_current(sk));
}

/* unix_socketpair(socka, sockb): both ends get the creator's creds. */
static void notrace pcg_on_socketpair(unsigned long ip, unsigned long parent_ip,
				      struct ftrace_ops *ops,
				      struct COMPAT_FTRACE_REGS *regs)
{
	struct socket *socka = (struct socket *)compat_ftrace_arg(regs, 0);
	struct socket *sockb = (struct socket *)compat_ftrace_arg(regs, 1);

	if (!pcg_is_stream(socka->sk))
		return;
	pcg_store(&pcg_peers, socka->sk, pcg_entry_from_current(socka->sk));
	pcg_store(&pcg_peers, sockb->sk, pcg_entry_from_current(sockb->sk));
}

/*
 * unix_sock_destructor(sk): the last reference is gone and the memory is
 * freed right after, so the entries go now, before a new socket can be
 * born at the same address.
 */
static void notrace pcg_on_destruct(unsigned long ip, unsigned long parent_ip,
				    struct ftrace_ops *ops,
				    struct COMPAT_FTRACE_REGS *regs)
{
	struct sock *sk = (struct sock *)compat_ftrace_arg(regs, 0);

	pcg_forget(&pcg_peers, sk);
	/* The address is only freed after this hook: see pcg_on_listen(). */
	if (READ_ONCE(unix_sk(sk)->addr) && atomic_read(&pcg_listeners.nelems))
		pcg_forget(&pcg_listeners, sk);
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
 * hook is in place before any entry can be made and stays until the last
 * entry-making hook is gone, so no entry outlives its socket unseen.
 */
static struct pcg_hook pcg_hooks[] = {
	PCG_HOOK("unix_sock_destructor", pcg_on_destruct),
	PCG_HOOK("unix_listen", pcg_on_listen),
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

static void pcg_hook_unregister(struct pcg_hook *hook)
{
	/* Returns once no callback of this ops is still running. */
	unregister_ftrace_function(&hook->ops);
	pcg_hook_clear_filter(hook);
}

int pcg_hooks_register(void)
{
	int i, err;

	for (i = 0; i < ARRAY_SIZE(pcg_hooks); i++) {
		err = pcg_hook_register(&pcg_hooks[i]);
		if (err)
			goto unwind;
	}
	return 0;

unwind:
	while (--i >= 0)
		pcg_hook_unregister(&pcg_hooks[i]);
	return err;
}

void pcg_hooks_unregister(void)
{
	int i;

	for (i = ARRAY_SIZE(pcg_hooks) - 1; i >= 0; i--)
		pcg_hook_unregister(&pcg_hooks[i]);
}
