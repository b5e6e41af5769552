/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PEERCGROUP_MODULE_H
#define PEERCGROUP_MODULE_H

#include <linux/atomic.h>
#include <linux/cgroup.h>
#include <linux/net.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/rhashtable-types.h>
#include <net/sock.h>

/*
 * Who stood at the other end of a connected socket when it was connected:
 * the cgroup and thread group of the task whose credentials the kernel
 * gave the socket as its SO_PEERCRED.  Both references are counted, so the
 * cgroup id and path are read at query time from the cgroup itself,
 * whatever became of it.
 */
struct pcg_entry {
	struct rhash_head node;
	const struct sock *sk;		/* key; identity only, never dereferenced */
	struct cgroup *cgrp;
	struct pid *tgid;
	struct rcu_head rcu;
};

/*
 * pcg_peers: a connected socket -> its peer's origin, what a query
 * answers.  Set where the kernel sets the socket's sk_peer_pid, from the
 * same task or, for a client, from the same listener state.
 *
 * Rules (table.c):
 *  - lookups run under rcu_read_lock() and take no lock;
 *  - writers are the ftrace callbacks, serialised per bucket by the
 *    rhashtable; an entry is only ever replaced or removed, never changed;
 *  - a removed entry is freed, and its references dropped, after an RCU
 *    grace period, so a reader inside rcu_read_lock() may use it;
 *  - an entry is removed when its socket is destroyed (unix_sock_destructor),
 *    before the socket's memory can be reused by a new socket.
 *
 * Listening sockets have records of their own (listeners.c), kept apart
 * so that a query can never return a listener's own origin as a peer's.
 */
int pcg_peers_init(void);
void pcg_peers_destroy(void);
struct pcg_entry *pcg_peer_lookup(const struct sock *sk);
void pcg_peer_set(const struct sock *sk, struct cgroup *cgrp, struct pid *tgid);
void pcg_peer_set_current(const struct sock *sk);
bool pcg_peer_clear(const struct sock *sk);
long pcg_peers_live(void);

struct cgroup *pcg_current_cgroup(void);

static inline bool pcg_is_stream(const struct sock *sk)
{
	return sk->sk_type == SOCK_STREAM || sk->sk_type == SOCK_SEQPACKET;
}

/* listeners.c: listening sockets' origins, and the probe on unix_listen(). */
int pcg_listeners_init(void);
void pcg_listeners_destroy(void);
bool pcg_listener_origin(const struct sock *listener, struct cgroup **cgrp,
			 struct pid **tgid);
void pcg_listener_forget(const struct sock *sk);
long pcg_listeners_live(void);
int pcg_listen_probe_register(void);
void pcg_listen_probe_unregister(void);
unsigned long pcg_listen_probe_missed(void);

/* Per-CPU event counts; sums are read through sysfs (main.c). */
struct pcg_stats {
	unsigned long recorded;		/* peer entries made */
	unsigned long freed;		/* peer entries freed */
	unsigned long alloc_failures;	/* no memory for an entry */
	unsigned long insert_failures;	/* the table could not take an entry */
	unsigned long cgroup_busy;	/* the task's cgroup could not be pinned */
	unsigned long listener_unknown;	/* a client got no record: listener origin unproven */
	unsigned long queries;
	unsigned long misses;
};
DECLARE_PER_CPU(struct pcg_stats, pcg_stats);
#define pcg_count(field) this_cpu_inc(pcg_stats.field)

int pcg_hooks_register(void);
int pcg_hooks_unregister(void);

int pcg_dev_register(void);
void pcg_dev_unregister(void);

#endif /* PEERCGROUP_MODULE_H */
