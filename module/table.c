// SPDX-License-Identifier: GPL-2.0
/*
 * The peer table: entries, their references and their lifetime.
 * Locking and RCU rules are written once, in peercgroup.h.
 *
 * Memory: entries come from a SLAB_ACCOUNT cache, so each is charged to
 * the memory cgroup of the task that made it, as the kernel charges the
 * socket itself: the connecting task (in its connect()), or a
 * socketpair's creator.  An allocation
 * here cannot sleep or reclaim; GFP_ATOMIC lets memcg overcharge rather
 * than fail, and a failure only costs an answer (ENODATA).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/rhashtable.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <net/af_unix.h>

#include "compat.h"
#include "peercgroup.h"

/* Callers are ftrace callbacks: atomic context, often under socket locks. */
#define PCG_GFP (GFP_ATOMIC | __GFP_NOWARN)

/* Bounds retries against a racing writer on the same key (pcg_peer_set). */
#define PCG_SET_TRIES 4

/* Bounds the wait for a migrating task's new css_set (pcg_current_cgroup). */
#define PCG_CGROUP_TRIES 16

static struct rhashtable pcg_peers;
static struct kmem_cache *pcg_cache;

static const struct rhashtable_params pcg_params = {
	.key_len = sizeof(const struct sock *),
	.key_offset = offsetof(struct pcg_entry, sk),
	.head_offset = offsetof(struct pcg_entry, node),
	.hashfn = pcg_sock_hash,
	.automatic_shrinking = true,
};

long pcg_peers_live(void)
{
	return atomic_read(&pcg_peers.nelems);
}

static void pcg_cgroup_put(struct cgroup *cgrp)
{
	if (cgrp)
		cgroup_put(cgrp);
}

static void pcg_entry_put(struct pcg_entry *entry)
{
	cgroup_put(entry->connector);
	pcg_cgroup_put(entry->listener);
	kmem_cache_free(pcg_cache, entry);
}

static void pcg_entry_free(struct pcg_entry *entry)
{
	pcg_entry_put(entry);
	pcg_count(freed);
}

/*
 * The calling task's cgroup v2, pinned, or NULL.  The task's css_set pins
 * its cgroup, but the task may be migrating and its old css_set dying:
 * then tryget fails and the next read sees the new css_set.  This is
 * cgroup_sk_alloc()'s loop, bounded.
 */
struct cgroup *pcg_current_cgroup(void)
{
	struct cgroup *cgrp;
	int tries = PCG_CGROUP_TRIES;

	rcu_read_lock();
	do {
		cgrp = task_dfl_cgroup(current);
		if (cgroup_tryget(cgrp))
			break;
		cgrp = NULL;
		cpu_relax();
	} while (--tries);
	rcu_read_unlock();
	if (!cgrp)
		pcg_count(cgroup_busy);
	return cgrp;
}

static struct pcg_entry *pcg_peer_lookup(const struct sock *sk)
{
	return rhashtable_lookup(&pcg_peers, &sk, pcg_params);
}

/*
 * The cgroup that answers a query on @sk, whose unix_peer() was @peer, or
 * NULL (peercgroup.h says why this is the right record).  The caller
 * holds rcu_read_lock() and @sk, so @sk is not released:
 *  - an entry keyed by @sk stays in the table, its references held, until
 *    the caller lets go of @sk: its cgroup needs no reference;
 *  - one keyed by @peer stays while @sk holds @peer, which 5.10 does not
 *    promise for as long: its unix_dgram_sendmsg() lets a seqpacket socket
 *    drop a peer that died during a send, @sk still open (6.1 on refuse
 *    the send instead).  So that answer takes a reference of its own
 *    (*@pinned), and holds only if @sk still has @peer afterwards: a
 *    socket that dropped its peer never gets another (peercgroup.h).
 */
struct cgroup *pcg_peer_origin(const struct sock *sk, const struct sock *peer,
			       bool *pinned)
{
	struct pcg_entry *entry;
	struct cgroup *cgrp;

	*pinned = false;
	entry = pcg_peer_lookup(sk);
	if (entry)
		return entry->connector;
	entry = pcg_peer_lookup(peer);
	cgrp = entry ? READ_ONCE(entry->listener) : NULL;
	/* Even freed since, a cgroup seen in an entry is RCU-safe to try. */
	if (!cgrp || !cgroup_tryget(cgrp))
		return NULL;
	/*
	 * Pairs with the full barrier of the sock_put() by which @sk lets go
	 * of @peer, before anything of @peer or its entry is freed: if @sk
	 * still has @peer, what was read above was @peer's own entry.
	 */
	smp_rmb();
	if (READ_ONCE(unix_sk(sk)->peer) != peer) {
		cgroup_put(cgrp);
		return NULL;
	}
	*pinned = true;
	return cgrp;
}

/*
 * Remove the entry keyed by @sk, if any, and free it at once: no reader
 * can be using it (peercgroup.h); one still walking past it is what the
 * cache's SLAB_TYPESAFE_BY_RCU is for.  Returns whether there was one.
 */
bool pcg_peer_clear(const struct sock *sk)
{
	struct pcg_entry *old;
	bool removed = false;

	rcu_read_lock();
	old = pcg_peer_lookup(sk);
	if (old && !rhashtable_remove_fast(&pcg_peers, &old->node, pcg_params)) {
		pcg_entry_free(old);
		removed = true;
	}
	rcu_read_unlock();
	return removed;
}

/*
 * Record the connection whose new socket is @sk.  Takes over both
 * references (@listener may be NULL: the client's answer is unknown).
 * @sk is a socket the kernel has just created, so it has no entry; should
 * one be there, it is replaced, and if the entry cannot be stored the old
 * one is removed too: a socket keeps its current origin or none, never a
 * stale one.
 */
void pcg_peer_set(const struct sock *sk, struct cgroup *connector,
		  struct cgroup *listener)
{
	struct pcg_entry *entry, *old;
	int tries;

	entry = kmem_cache_alloc(pcg_cache, PCG_GFP);
	if (!entry) {
		pcg_count(alloc_failures);
		cgroup_put(connector);
		pcg_cgroup_put(listener);
		pcg_peer_clear(sk);
		return;
	}
	entry->sk = sk;
	entry->connector = connector;
	entry->listener = listener;

	rcu_read_lock();
	for (tries = 0; tries < PCG_SET_TRIES; tries++) {
		old = rhashtable_lookup_get_insert_fast(&pcg_peers, &entry->node,
							pcg_params);
		if (!old)
			goto stored;
		if (IS_ERR(old))
			break;
		if (!rhashtable_replace_fast(&pcg_peers, &old->node, &entry->node,
					     pcg_params)) {
			pcg_entry_free(old);	/* no query can reach a new @sk */
			goto stored;
		}
		/* @old was removed meanwhile: try to insert again. */
	}
	/*
	 * The table could not grow in atomic context, or a writer on the
	 * same socket kept winning.  Either way, no answer beats an old one.
	 */
	rcu_read_unlock();
	pcg_count(insert_failures);
	pcg_entry_put(entry);
	pcg_peer_clear(sk);
	return;
stored:
	rcu_read_unlock();
	pcg_count(recorded);
}

int pcg_peers_init(void)
{
	int err;

	/* a key and three pointers: 32 bytes, 40 with SLUB's own pointer */
	BUILD_BUG_ON(sizeof(struct pcg_entry) != 4 * sizeof(void *));
	/* connector: read only from an entry that cannot be free (above) */
	pcg_cache = COMPAT_KMEM_CACHE_TYPESAFE_BY_RCU(pcg_entry, connector,
						      SLAB_ACCOUNT);
	if (!pcg_cache)
		return -ENOMEM;
	err = rhashtable_init(&pcg_peers, &pcg_params);
	if (err)
		kmem_cache_destroy(pcg_cache);
	return err;
}

static void pcg_free_one(void *ptr, void *arg)
{
	pcg_entry_free(ptr);
}

/*
 * Callers have unregistered every hook, so no writer is left, and
 * removed entries were freed already.  kmem_cache_destroy() waits for
 * the grace period a SLAB_TYPESAFE_BY_RCU cache's pages need.
 */
void pcg_peers_destroy(void)
{
	rhashtable_free_and_destroy(&pcg_peers, pcg_free_one, NULL);
	kmem_cache_destroy(pcg_cache);
}
