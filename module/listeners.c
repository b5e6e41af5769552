// SPDX-License-Identifier: GPL-2.0
/*
 * Listening sockets: what connect() may copy to a client, as the kernel
 * copies the listener's sk_peer_pid (SO_PEERCRED) to it.
 *
 * The kernel sets a listener's credentials in unix_listen(), under the
 * listener's state lock (unix_state_lock, i.e. unix_sk(sk)->lock), from
 * the calling task: init_peercred()/update_peercred() on 5.10 to 6.12,
 * update_peercred() with a struct pid taken by prepare_peercred() before
 * the lock on 7.x.  A client copies them in unix_stream_connect() with the
 * listener locked, in the same critical section that calls
 * security_unix_stream_connect(), where our connect hook runs.  What that
 * hook cannot see is which of several listen() calls set them: a hook at
 * unix_listen()'s entry runs before the kernel takes the lock, calls race
 * between the two, and on 7.x the call can still fail afterwards.
 *
 * So the record of a listener keeps, per thread group that called listen()
 * on it, the cgroups its calls were made from, and the probe watches both
 * ends of each call, under the listener's lock:
 *  - at entry: the call is running, from cgroup C;
 *  - at return: if it succeeded, C is what the kernel set for this thread
 *    group, unless another call of the same group overlapped it, or the
 *    task left C before the return (the kernel took its credentials at
 *    some moment in between).
 * The connect hook reads the listener's sk_peer_pid (stable: the lock is
 * held) and answers only from that thread group's slot, and only when
 * every call of that group that may have set the credentials was made
 * from one cgroup.  Otherwise, and whenever a call escaped the record,
 * the client gets no record (ENODATA): the module cannot prove the answer.
 *
 * One call escapes unseen: one already inside unix_listen() when the probe
 * was registered.  If another thread of its group listens on the socket
 * meanwhile, from another cgroup (threaded cgroups), and finishes first,
 * the client may get that thread's cgroup: one of the process that
 * SO_PEERCRED names, never another process's.  Telling would take knowing,
 * at load, which tasks are inside unix_listen().
 *
 * A record is made when listen() is called on a bound, unconnected or
 * listening socket, just before unix_listen() (pcg_listener_prepare()).
 *
 * Locking: a listener record is created, changed and read under its
 * socket's state lock, and removed by the socket's destructor, when no
 * listen() or connect() can reach the socket.  So once every call has
 * returned, a socket with a record is listening, or none of its listen()
 * calls succeeded (an LSM refused one before unix_listen(), or a
 * connect() won the race to the socket): such a record holds no cgroup,
 * and no connect() can reach a socket that is not listening.  Nothing is
 * removed when a call returns: on 5.10 the return handler runs under
 * kretprobes' raw hash lock with interrupts off, where rhashtable's
 * local_bh_enable() must not run.  A socket born connected (accepted, or
 * of a pair), the one kind with a peer entry, never has one: the
 * destructor skips this table for sockets that have a peer entry.
 * Lookups also hold rcu_read_lock() for the table; records are freed
 * after a grace period.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/ptrace.h>
#include <linux/rhashtable.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <net/af_unix.h>

#include "compat.h"
#include "peercgroup.h"

/* Thread groups remembered per listener; more evict idle ones. */
#define PCG_LISTEN_SLOTS 4

/* listen() calls in flight at once that the return probe can follow. */
#define PCG_LISTEN_MAXACTIVE 512

/* One thread group's listen() calls on one listener. */
struct pcg_listen_slot {
	struct pid *tgid;		/* NULL: a free slot */
	struct cgroup *settled;		/* from its last call that succeeded */
	struct cgroup *pending;		/* from its calls still running */
	unsigned int running;
	bool overlapped;		/* since @running was last 0 */
	/*
	 * Its calls overlapped from different cgroups, a call's task moved
	 * during it, or its thread group already held the credentials before
	 * the record knew it: which cgroup the kernel's credentials came from
	 * is unknown, until a call of the group, alone from entry to return
	 * and not moved, succeeds and sets them again.
	 */
	bool doubtful;
};

struct pcg_listener {
	struct rhash_head node;
	const struct sock *sk;		/* key; identity only */
	/* a successful listen() escaped the record: no answer for good */
	bool broken;
	struct pcg_listen_slot slot[PCG_LISTEN_SLOTS];
	struct rcu_head rcu;
};

static struct rhashtable pcg_listeners;
static atomic_long_t pcg_listeners_count = ATOMIC_LONG_INIT(0);

/*
 * listen() calls running that the record does not follow (no memory, an
 * unbound or connected socket at entry).  While any runs, no listener's
 * origin is proven: such a call may still set credentials (a bind() from
 * another thread can land before unix_listen() looks), and which socket
 * it is on is not kept.  So a loop of listen() on unbound sockets, which
 * any user may run, leaves clients connecting meanwhile unknown (README).
 */
static atomic_t pcg_untracked_listens = ATOMIC_INIT(0);

static const struct rhashtable_params pcg_listener_params = {
	.key_len = sizeof(const struct sock *),
	.key_offset = offsetof(struct pcg_listener, sk),
	.head_offset = offsetof(struct pcg_listener, node),
	.hashfn = pcg_sock_hash,
	.automatic_shrinking = true,
};

long pcg_listeners_live(void)
{
	return atomic_long_read(&pcg_listeners_count);
}

static void pcg_listener_lockdep_assert(const struct sock *sk)
{
	lockdep_assert_held(&unix_sk((struct sock *)sk)->lock);
}

static struct pcg_listener *pcg_listener_lookup(const struct sock *sk)
{
	return rhashtable_lookup(&pcg_listeners, &sk, pcg_listener_params);
}

static void pcg_slot_release(struct pcg_listen_slot *slot)
{
	if (slot->settled)
		cgroup_put(slot->settled);
	if (slot->pending)
		cgroup_put(slot->pending);
	put_pid(slot->tgid);
	memset(slot, 0, sizeof(*slot));
}

static void pcg_listener_free(struct pcg_listener *l)
{
	int i;

	for (i = 0; i < PCG_LISTEN_SLOTS; i++)
		if (l->slot[i].tgid)
			pcg_slot_release(&l->slot[i]);
	kfree(l);
}

static void pcg_listener_free_rcu(struct rcu_head *head)
{
	pcg_listener_free(container_of(head, struct pcg_listener, rcu));
}

static struct pcg_listen_slot *pcg_slot_find(struct pcg_listener *l,
					     const struct pid *tgid)
{
	int i;

	for (i = 0; i < PCG_LISTEN_SLOTS; i++)
		if (l->slot[i].tgid && l->slot[i].tgid == tgid)
			return &l->slot[i];
	return NULL;
}

/*
 * A slot for @tgid on listener @sk: a free one, or one whose thread group
 * has no call running and does not hold the listener's credentials (its
 * calls can no longer matter).  NULL if every slot still matters.
 */
static struct pcg_listen_slot *pcg_slot_claim(struct pcg_listener *l,
					      const struct sock *sk,
					      struct pid *tgid)
{
	struct pid *holder = READ_ONCE(sk->sk_peer_pid);
	struct pcg_listen_slot *slot = NULL;
	int i;

	for (i = 0; i < PCG_LISTEN_SLOTS && !slot; i++)
		if (!l->slot[i].tgid)
			slot = &l->slot[i];
	for (i = 0; i < PCG_LISTEN_SLOTS && !slot; i++)
		if (!l->slot[i].running && l->slot[i].tgid != holder) {
			slot = &l->slot[i];
			pcg_slot_release(slot);
		}
	if (!slot)
		return NULL;
	slot->tgid = get_pid(tgid);
	/*
	 * Its group already holds the credentials: set by a call the record
	 * never saw (before the module was loaded, or before its slot was
	 * evicted), from an unknown cgroup.
	 */
	slot->doubtful = holder == tgid;
	return slot;
}

/*
 * A listen() call from @tgid in @cgrp begins on @sk; the caller holds its
 * state lock.  Returns false if the record cannot follow the call: the
 * socket has no record (pcg_listener_prepare() made none).  A followed
 * call either runs in its group's slot (*@in_slot) or, with no slot to
 * spare, has made the record give up (broken): then its return must leave
 * the slots alone, since its group may claim one meanwhile.
 */
static bool pcg_listen_begin(const struct sock *sk, struct pid *tgid,
			     struct cgroup *cgrp, bool *in_slot)
{
	struct pcg_listen_slot *slot;
	struct pcg_listener *l;

	pcg_listener_lockdep_assert(sk);
	l = pcg_listener_lookup(sk);
	if (!l)
		return false;
	slot = pcg_slot_find(l, tgid);
	if (!slot)
		slot = pcg_slot_claim(l, sk, tgid);
	if (!slot) {
		l->broken = true;
		return true;	/* followed: every answer is unknown now */
	}
	if (!slot->running) {
		cgroup_get(cgrp);
		slot->pending = cgrp;
	} else {
		slot->overlapped = true;
		if (slot->pending != cgrp)
			slot->doubtful = true;
	}
	slot->running++;
	*in_slot = true;
	return true;
}

static void pcg_listener_remove(struct pcg_listener *l)
{
	if (!rhashtable_remove_fast(&pcg_listeners, &l->node, pcg_listener_params)) {
		atomic_long_dec(&pcg_listeners_count);
		call_rcu(&l->rcu, pcg_listener_free_rcu);
	}
}

/*
 * That call returns @ret, its task @moved out of the cgroup it began in;
 * the caller holds the state lock of @sk.
 */
static void pcg_listen_end(const struct sock *sk, struct pid *tgid, int ret,
			   bool moved)
{
	struct pcg_listen_slot *slot;
	struct pcg_listener *l;

	pcg_listener_lockdep_assert(sk);
	l = pcg_listener_lookup(sk);
	slot = l ? pcg_slot_find(l, tgid) : NULL;
	if (!slot || WARN_ON_ONCE(!slot->running))
		return;
	if (!ret) {
		if (moved)
			slot->doubtful = true;
		else if (slot->running == 1 && !slot->overlapped)
			slot->doubtful = false;	/* it set them last, from pending */
		cgroup_get(slot->pending);
		if (slot->settled)
			cgroup_put(slot->settled);
		slot->settled = slot->pending;
	}
	if (!--slot->running) {
		cgroup_put(slot->pending);
		slot->pending = NULL;
		slot->overlapped = false;
	}
}

/* A successful listen() on @sk that the record did not follow. */
static void pcg_listen_escaped(const struct sock *sk)
{
	struct pcg_listener *l;

	pcg_listener_lockdep_assert(sk);
	l = pcg_listener_lookup(sk);
	if (l)
		l->broken = true;
}

/*
 * In the debug kernel's build (PCG_HAVE_FAULT_INJECT, peercgroup.h),
 * /sys/kernel/debug/peercgroup_slow_listen holds one listen() call once
 * its entry handler has read the task's cgroup, before the kernel takes
 * the credentials, until the task is moved out of that cgroup or for five
 * seconds at most: a test moves the task there, which nothing in user
 * space can otherwise do.  The fault attribute's "times" counts down as
 * the hold begins, which tells the test when to move.
 */
#ifdef PCG_HAVE_FAULT_INJECT
#define PCG_SLOW_LISTEN_MAX_MS 5000

static DECLARE_FAULT_ATTR(pcg_slow_listen);
static struct dentry *pcg_slow_listen_dir;

static void pcg_slow_listen_init(void)
{
	pcg_slow_listen_dir = fault_create_debugfs_attr("peercgroup_slow_listen",
							NULL, &pcg_slow_listen);
}

static void pcg_slow_listen_exit(void)
{
	debugfs_remove_recursive(pcg_slow_listen_dir);
}

/* By the clock: mdelay()'s calibrated loop runs short under emulation. */
static void pcg_slow_listen_hold(const struct cgroup *from)
{
	u64 end;

	if (!should_fail(&pcg_slow_listen, 1))
		return;
	end = ktime_get_mono_fast_ns() + PCG_SLOW_LISTEN_MAX_MS * NSEC_PER_MSEC;
	while (ktime_get_mono_fast_ns() < end && task_dfl_cgroup(current) == from)
		cpu_relax();
}
#else
static inline void pcg_slow_listen_init(void) { }
static inline void pcg_slow_listen_exit(void) { }
static inline void pcg_slow_listen_hold(const struct cgroup *from) { }
#endif

static struct kretprobe pcg_listen_probe;

unsigned long pcg_listen_probe_missed(void)
{
	return READ_ONCE(pcg_listen_probe.nmissed);
}

/*
 * The cgroup a client connecting to @listener gets: the one the task
 * behind the sk_peer_pid the kernel copies to it (SO_PEERCRED) listened
 * from, if the record proves it, else NULL.  Called by the connect hook,
 * which runs with the listener's state lock held, as the kernel's copy
 * does.  Returns a counted reference.
 */
struct cgroup *pcg_listener_origin(const struct sock *listener)
{
	struct pcg_listen_slot *slot;
	struct pcg_listener *l;
	struct cgroup *from = NULL;
	struct pid *holder;

	pcg_listener_lockdep_assert(listener);
	if (atomic_read(&pcg_untracked_listens) || pcg_listen_probe_missed())
		goto unknown;
	holder = READ_ONCE(listener->sk_peer_pid);
	rcu_read_lock();
	l = pcg_listener_lookup(listener);
	slot = l && !l->broken && holder ? pcg_slot_find(l, holder) : NULL;
	if (slot && !slot->doubtful) {
		/*
		 * With calls running, the credentials come from the last call
		 * that succeeded or from one of them; all must agree.
		 */
		if (!slot->running)
			from = slot->settled;
		else if (!slot->settled || slot->settled == slot->pending)
			from = slot->pending;
	}
	if (from)
		cgroup_get(from);
	rcu_read_unlock();
	if (from)
		return from;
unknown:
	pcg_count(listener_unknown);
	return NULL;
}

/* Socket @sk is being destroyed: no listen() or connect() can reach it. */
void pcg_listener_forget(const struct sock *sk)
{
	struct pcg_listener *l;

	rcu_read_lock();
	l = pcg_listener_lookup(sk);
	if (l)
		pcg_listener_remove(l);
	rcu_read_unlock();
}

/*
 * Only a bound socket, listening or not yet connected, can listen; the
 * caller holds its state lock.  A record then always belongs to a bound
 * socket, which lets the destructor skip the table for unbound ones,
 * every client among them; a socket that escapes this check by racing
 * bind() or connect() takes the escaped path.
 */
static bool pcg_may_listen(const struct sock *sk)
{
	int state = sk->sk_state;

	pcg_listener_lockdep_assert(sk);
	return unix_sk((struct sock *)sk)->addr &&
	       (state == TCP_CLOSE || state == TCP_LISTEN);
}

/*
 * A listen() call on @sk is about to reach unix_listen(): make the record
 * the probe's entry handler will follow it in, if @sk can listen.  The
 * record is made here rather than in that handler, which runs in a
 * breakpoint exception with interrupts masked on arm64 (no kprobes on
 * ftrace there): on 5.10 and 6.1 an rhashtable insert ends with
 * local_bh_enable(), which may run softirqs, and must not be called so.
 * A record made for a call that then never reaches unix_listen() (an LSM
 * refused it) holds no slot, so it never answers.
 */
void pcg_listener_prepare(struct sock *sk)
{
	struct pcg_listener *l;

	lockdep_assert_irqs_enabled();
	spin_lock(&unix_sk(sk)->lock);
	if (!pcg_may_listen(sk))
		goto out;
	rcu_read_lock();
	if (pcg_listener_lookup(sk))
		goto out_rcu;
	l = kzalloc(sizeof(*l), GFP_ATOMIC | __GFP_NOWARN | __GFP_ACCOUNT);
	if (!l) {
		pcg_count(alloc_failures);
		goto out_rcu;
	}
	l->sk = sk;
	/* Writers hold the socket's lock: no one inserts this key meanwhile. */
	if (rhashtable_lookup_insert_fast(&pcg_listeners, &l->node,
					  pcg_listener_params)) {
		pcg_count(insert_failures);
		kfree(l);
		goto out_rcu;
	}
	atomic_long_inc(&pcg_listeners_count);
out_rcu:
	rcu_read_unlock();
out:
	spin_unlock(&unix_sk(sk)->lock);
}

/* What the probe remembers between the entry and the return of a call. */
struct pcg_listen_call {
	struct sock *sk;
	/* its task's cgroup at entry; identity only (its slot pins it) */
	const struct cgroup *from;
	bool followed;		/* the record knows of the call */
	bool in_slot;		/* and counts it as running (pcg_listen_begin()) */
};

/*
 * unix_listen(sock, backlog), entry.  Runs in the calling task, at the
 * function's entry (no lock held, preemption disabled, and interrupts
 * masked on arm64), so it never sleeps and never inserts into the table.
 * Sockets unix_listen() refuses for their type are skipped; a call the
 * record cannot follow is counted as escaped until it returns.
 */
static int notrace pcg_listen_enter(struct kretprobe_instance *ri,
				    struct pt_regs *regs)
{
	struct pcg_listen_call *call = (struct pcg_listen_call *)ri->data;
	struct socket *sock = (struct socket *)regs_get_kernel_argument(regs, 0);
	struct sock *sk = sock->sk;
	struct cgroup *cgrp;

	if (!pcg_is_stream(sk))
		return 1;	/* refused by unix_listen(): no return handler */
	call->sk = sk;
	call->followed = false;
	call->in_slot = false;
	cgrp = pcg_current_cgroup();
	call->from = cgrp;
	spin_lock(&unix_sk(sk)->lock);
	if (cgrp && pcg_may_listen(sk)) {
		rcu_read_lock();
		call->followed = pcg_listen_begin(sk, task_tgid(current), cgrp,
						  &call->in_slot);
		rcu_read_unlock();
	}
	spin_unlock(&unix_sk(sk)->lock);
	if (cgrp)
		cgroup_put(cgrp);
	if (!call->followed)
		atomic_inc(&pcg_untracked_listens);
	pcg_slow_listen_hold(call->from);
	return 0;
}

/* unix_listen() returns, in the same task; the socket is still held. */
static int notrace pcg_listen_return(struct kretprobe_instance *ri,
				     struct pt_regs *regs)
{
	struct pcg_listen_call *call = (struct pcg_listen_call *)ri->data;
	int ret = (int)regs_return_value(regs);
	struct sock *sk = call->sk;

	spin_lock(&unix_sk(sk)->lock);
	rcu_read_lock();
	if (call->in_slot)
		pcg_listen_end(sk, task_tgid(current), ret,
			       task_dfl_cgroup(current) != call->from);
	else if (!ret && !call->followed)
		pcg_listen_escaped(sk);
	rcu_read_unlock();
	spin_unlock(&unix_sk(sk)->lock);
	if (!call->followed)
		atomic_dec(&pcg_untracked_listens);
	return 0;
}

static struct kretprobe pcg_listen_probe = {
	.kp.symbol_name = "unix_listen",
	.entry_handler = pcg_listen_enter,
	.handler = pcg_listen_return,
	.data_size = sizeof(struct pcg_listen_call),
	.maxactive = PCG_LISTEN_MAXACTIVE,
};

int pcg_listen_probe_register(void)
{
	int err = register_kretprobe(&pcg_listen_probe);

	if (err)
		pr_err("cannot probe unix_listen (%d)\n", err);
	else
		pcg_slow_listen_init();
	return err;
}

void pcg_listen_probe_unregister(void)
{
	/* Returns once no handler of the probe is still running. */
	unregister_kretprobe(&pcg_listen_probe);
	pcg_slow_listen_exit();
}

int pcg_listeners_init(void)
{
	return rhashtable_init(&pcg_listeners, &pcg_listener_params);
}

static void pcg_listener_free_one(void *ptr, void *arg)
{
	pcg_listener_free(ptr);
}

/* Callers have unregistered the probe and the hooks: no writer is left. */
void pcg_listeners_destroy(void)
{
	rcu_barrier();
	rhashtable_free_and_destroy(&pcg_listeners, pcg_listener_free_one, NULL);
}
