// SPDX-License-Identifier: GPL-2.0
/*
 * The side tables: entries, their references and their lifetime.
 * Locking and RCU rules are written once, in peercgroup.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/rhashtable.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "peercgroup.h"

/* Callers are ftrace callbacks: atomic context, often under socket locks. */
#define PCG_GFP (GFP_ATOMIC | __GFP_NOWARN)

/* Bounds retries against a racing writer on the same key (see pcg_store). */
#define PCG_STORE_TRIES 4

struct rhashtable pcg_peers;
struct rhashtable pcg_listeners;
static struct kmem_cache *pcg_cache;

static const struct rhashtable_params pcg_params = {
	.key_len = sizeof(const struct sock *),
	.key_offset = offsetof(struct pcg_entry, sk),
	.head_offset = offsetof(struct pcg_entry, node),
	.automatic_shrinking = true,
};

static void pcg_entry_free(struct pcg_entry *entry)
{
	cgroup_put(entry->cgrp);
	put_pid(entry->tgid);
	kmem_cache_free(pcg_cache, entry);
	pcg_count(freed);
}

static void pcg_entry_free_rcu(struct rcu_head *head)
{
	pcg_entry_free(container_of(head, struct pcg_entry, rcu));
}

static struct pcg_entry *pcg_entry_alloc(const struct sock *sk)
{
	struct pcg_entry *entry = kmem_cache_alloc(pcg_cache, PCG_GFP);

	if (!entry) {
		pcg_count(alloc_failures);
		return NULL;
	}
	entry->sk = sk;
	return entry;
}

/* The origin of @sk is the calling task: its cgroup v2 and thread group. */
struct pcg_entry *pcg_entry_from_current(const struct sock *sk)
{
	struct pcg_entry *entry = pcg_entry_alloc(sk);
	struct cgroup *cgrp;
	int tries = 16;

	if (!entry)
		return NULL;

	/*
	 * The task's css_set pins its cgroup, but the task may be migrating
	 * and its old css_set dying: then tryget fails and the next read
	 * sees the new css_set.  This is cgroup_sk_alloc()'s loop, bounded.
	 */
	rcu_read_lock();
	do {
		cgrp = task_dfl_cgroup(current);
		if (cgroup_tryget(cgrp))
			break;
		cgrp = NULL;
		cpu_relax();
	} while (--tries);
	rcu_read_unlock();

	if (!cgrp) {
		kmem_cache_free(pcg_cache, entry);
		pcg_count(alloc_failures);
		return NULL;
	}
	entry->cgrp = cgrp;
	entry->tgid = get_pid(task_tgid(current));
	pcg_count(recorded);
	return entry;
}

/*
 * The origin of @sk is that of listening socket @from, or unknown (NULL)
 * if @from started listening before the module was loaded.
 */
struct pcg_entry *pcg_entry_copy(const struct sock *sk, const struct sock *from)
{
	struct pcg_entry *entry, *source;

	rcu_read_lock();
	source = pcg_lookup(&pcg_listeners, from);
	if (!source) {
		rcu_read_unlock();
		return NULL;
	}
	entry = pcg_entry_alloc(sk);
	if (entry) {
		/* @source holds both references until a grace period ends. */
		cgroup_get(source->cgrp);
		entry->cgrp = source->cgrp;
		entry->tgid = get_pid(source->tgid);
		pcg_count(recorded);
	}
	rcu_read_unlock();
	return entry;
}

/* Caller holds rcu_read_lock(). */
struct pcg_entry *pcg_lookup(struct rhashtable *table, const struct sock *sk)
{
	return rhashtable_lookup(table, &sk, pcg_params);
}

/* Remove the entry of @sk, if any; it is freed after a grace period. */
void pcg_forget(struct rhashtable *table, const struct sock *sk)
{
	struct pcg_entry *old;

	rcu_read_lock();
	old = pcg_lookup(table, sk);
	if (old && !rhashtable_remove_fast(table, &old->node, pcg_params))
		call_rcu(&old->rcu, pcg_entry_free_rcu);
	rcu_read_unlock();
}

/*
 * Make @entry the only entry of @sk, replacing an older one.  A NULL
 * @entry (origin unknown, or no memory) removes the older one instead:
 * a socket keeps either its current origin or none, never a stale one.
 */
void pcg_store(struct rhashtable *table, const struct sock *sk,
	       struct pcg_entry *entry)
{
	struct pcg_entry *old;
	int tries;

	if (!entry) {
		pcg_forget(table, sk);
		return;
	}

	rcu_read_lock();
	for (tries = 0; tries < PCG_STORE_TRIES; tries++) {
		old = rhashtable_lookup_get_insert_fast(table, &entry->node,
							pcg_params);
		if (!old)
			goto out;
		if (IS_ERR(old))
			break;
		if (!rhashtable_replace_fast(table, &old->node, &entry->node,
					     pcg_params)) {
			call_rcu(&old->rcu, pcg_entry_free_rcu);
			goto out;
		}
		/* @old was removed meanwhile: try to insert again. */
	}
	/*
	 * The table could not grow in atomic context, or a writer on the
	 * same socket kept winning.  Either way, no answer beats an old one.
	 */
	pcg_count(alloc_failures);
	pcg_entry_free(entry);
	rcu_read_unlock();
	pcg_forget(table, sk);
	return;
out:
	rcu_read_unlock();
}

int pcg_tables_init(void)
{
	int err;

	pcg_cache = KMEM_CACHE(pcg_entry, 0);
	if (!pcg_cache)
		return -ENOMEM;
	err = rhashtable_init(&pcg_peers, &pcg_params);
	if (err)
		goto err_cache;
	err = rhashtable_init(&pcg_listeners, &pcg_params);
	if (err)
		goto err_peers;
	return 0;

err_peers:
	rhashtable_destroy(&pcg_peers);
err_cache:
	kmem_cache_destroy(pcg_cache);
	return err;
}

static void pcg_free_one(void *ptr, void *arg)
{
	pcg_entry_free(ptr);
}

/* Callers have unregistered every hook, so no writer is left. */
void pcg_tables_destroy(void)
{
	rcu_barrier();	/* entries already removed finish freeing */
	rhashtable_free_and_destroy(&pcg_listeners, pcg_free_one, NULL);
	rhashtable_free_and_destroy(&pcg_peers, pcg_free_one, NULL);
	kmem_cache_destroy(pcg_cache);
}
