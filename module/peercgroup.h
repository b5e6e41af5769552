/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PEERCGROUP_H
#define PEERCGROUP_H

#include <linux/cgroup.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/rhashtable-types.h>
#include <net/sock.h>

/*
 * Who stood at the other end of a socket when it was connected: the
 * cgroup and thread group of the task that called connect(), listen() or
 * socketpair().  Both references are counted, so the cgroup id and path
 * are read at query time from the cgroup itself, whatever became of it.
 */
struct pcg_entry {
	struct rhash_head node;
	const struct sock *sk;		/* key; identity only, never dereferenced */
	struct cgroup *cgrp;
	struct pid *tgid;
	struct rcu_head rcu;
};

/*
 * Two side tables, keyed by socket address:
 *  pcg_peers:     a connected socket -> its peer's origin (what a query
 *                 answers), set where the kernel sets sk_peer_cred;
 *  pcg_listeners: a listening socket -> its own origin as of listen(),
 *                 which connect() copies to the client, as the kernel
 *                 copies the listener's peercred.
 * Keeping listeners apart means a query can never return a listener's
 * own origin as if it were a peer's.
 *
 * Rules (table.c):
 *  - lookups run under rcu_read_lock() and take no lock;
 *  - writers are the ftrace callbacks, serialised per bucket by the
 *    rhashtable; an entry is only ever replaced or removed, never changed;
 *  - a removed entry is freed, and its references dropped, after an RCU
 *    grace period, so a reader inside rcu_read_lock() may use it;
 *  - an entry is removed when its socket is destroyed (unix_sock_destructor),
 *    before the socket's memory can be reused by a new socket.
 */
extern struct rhashtable pcg_peers;
extern struct rhashtable pcg_listeners;

int pcg_tables_init(void);
void pcg_tables_destroy(void);

struct pcg_entry *pcg_entry_from_current(const struct sock *sk);
struct pcg_entry *pcg_entry_copy(const struct sock *sk, const struct sock *from);
void pcg_store(struct rhashtable *table, const struct sock *sk,
	       struct pcg_entry *entry);
void pcg_forget(struct rhashtable *table, const struct sock *sk);
struct pcg_entry *pcg_lookup(struct rhashtable *table, const struct sock *sk);

/* Per-CPU event counts; sums are read through sysfs (main.c). */
struct pcg_stats {
	unsigned long recorded;
	unsigned long freed;
	unsigned long alloc_failures;
	unsigned long queries;
	unsigned long misses;
};
DECLARE_PER_CPU(struct pcg_stats, pcg_stats);
#define pcg_count(field) this_cpu_inc(pcg_stats.field)

int pcg_hooks_register(void);
void pcg_hooks_unregister(void);

int pcg_dev_register(void);
void pcg_dev_unregister(void);

#endif /* PEERCGROUP_H */
