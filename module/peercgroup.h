/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PEERCGROUP_MODULE_H
#define PEERCGROUP_MODULE_H

#include <linux/atomic.h>
#include <linux/cgroup.h>
#include <linux/hash.h>
#include <linux/net.h>
#include <linux/percpu.h>
#include <linux/pid.h>
#include <linux/rhashtable-types.h>
#include <net/sock.h>

/*
 * One record per connection, keyed by the socket the kernel created for
 * it: the accepted socket (@sk, the "newsk" of unix_stream_connect()), or
 * a socketpair's first socket.  Its other end, the client (the connecting
 * socket, or the pair's second socket), is not stored: it is unix_peer(@sk)
 * (below).
 *  - a query on @sk answers @connector: the cgroup of the task that
 *    connected (or made the pair), whose credentials the kernel gave @sk;
 *  - a query on the client answers @listener: the cgroup the listener's
 *    credentials came from, which the kernel copied to the client (a pair:
 *    its maker's); NULL when unproven (ENODATA).
 * The references are counted, so the cgroup id and path are read at query
 * time from the cgroup itself, whatever became of it.  The pid is not
 * kept: it is the queried socket's own sk_peer_pid, which the kernel set
 * in the same critical section as the record (hooks.c), and which never
 * changes while the socket is connected (pcg_peer_pid(), dev.c).
 */
struct pcg_entry {
	struct rhash_head node;
	const struct sock *sk;		/* key; identity only, never dereferenced */
	struct cgroup *connector;	/* the free pointer of a free entry (table.c) */
	struct cgroup *listener;
};

/*
 * pcg_peers: the connection records, what a query answers.
 *
 * Rules (table.c):
 *  - lookups run under rcu_read_lock() and take no lock;
 *  - writers are the ftrace callbacks, serialised per bucket by the
 *    rhashtable; an entry is only ever inserted or removed, never changed;
 *  - an entry is removed when its key socket is destroyed
 *    (unix_sock_destructor), before that socket's memory can be reused,
 *    and is freed, its references dropped, at once;
 *  - the cache is SLAB_TYPESAFE_BY_RCU: inside rcu_read_lock() a freed
 *    entry's memory stays a pcg_entry, but may be reused for another
 *    record at once.  A lookup walking a chain may so pass an entry that
 *    moves to another chain; rhashtable's lookup sees its walk end in a
 *    foreign chain and restarts (5.10 on).  A freed entry that a walk
 *    can still meet was removed during that walk (every pointer to an
 *    entry removed earlier was gone when it began), so its key was then a
 *    live socket, never the one the reader holds.  A reader only uses an
 *    entry its lookup matched by a key socket it holds, directly or
 *    through its peer (below): that entry cannot be removed, hence not
 *    freed or reused, while the reader holds the socket.
 *
 * Which end a socket X is (pcg_peer_origin(), and why it is sound):
 *  - a connected stream or seqpacket socket's unix_peer() is set once, by
 *    connect() or socketpair(), and cleared by its own release
 *    (unix_release_sock()); the state a socket could listen() or connect()
 *    from again (TCP_CLOSE) is also only set there.  One exception, 5.10
 *    only: unix_dgram_sendmsg(), which seqpacket sends use, clears
 *    unix_peer(X) when the peer died during the send, X staying open
 *    and connected (so it can connect nowhere else); pcg_peer_origin()
 *    pins the one answer this can touch.  A caller holding X through a
 *    file therefore sees unix_peer(X) fixed, or cleared once for good;
 *  - each end holds a counted reference on the other (sock_hold() before
 *    unix_peer(newsk) = sk and unix_peer(sk) = newsk in
 *    unix_stream_connect(), on both in unix_socketpair()): while X lives
 *    and is not released, unix_peer(X) is a live socket, never a reused
 *    address, and the record keyed by it, if any, is its own;
 *  - a record is made only when its key socket is created, already
 *    joined to its one peer (hooks.c): an accepted socket to the socket
 *    that connected, a pair's first socket to its second.  An accepted
 *    socket, a pair's first socket and a client are three disjoint sets of
 *    sockets: a connected socket never connects again, and a client or a
 *    pair's second socket is never a key.
 * So: a record keyed by X is X's own, and X is its key end; otherwise a
 * record keyed by unix_peer(X) was made for the connection of that
 * socket to its one peer, X, and X is its client end; otherwise there is
 * no record (ENODATA).  This holds in 5.10, 6.1, 6.12 and 7.3
 * (net/unix/af_unix.c read in each).
 *
 * Listening sockets have records of their own (listeners.c), kept apart
 * so that a query can never return a listener's own origin as a peer's.
 */
/*
 * Both tables are keyed by a socket's address.  Slab addresses are
 * already spread; one multiply mixes them with the table's random seed,
 * where the default, jhash2() over the pointer's words, costs several
 * times that on every connect, destructor and query.
 */
static inline u32 pcg_sock_hash(const void *key, u32 len, u32 seed)
{
	return hash_long(*(const unsigned long *)key ^ seed, 32);
}

int pcg_peers_init(void);
void pcg_peers_destroy(void);
struct cgroup *pcg_peer_origin(const struct sock *sk, const struct sock *peer,
			       bool *pinned);
void pcg_peer_set(const struct sock *sk, struct cgroup *connector,
		  struct cgroup *listener);
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
struct cgroup *pcg_listener_origin(const struct sock *listener);
void pcg_listener_forget(const struct sock *sk);
void pcg_listener_prepare(struct sock *sk);
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
bool pcg_hooks_left_behind(void);

int pcg_dev_register(void);
void pcg_dev_unregister(void);

/*
 * Fault injection for the debug kernel's tests (hooks.c, listeners.c):
 * built only when the build asks for it (PCG_FAULT_INJECT=y, which
 * scripts/kernel/debug.sh passes), never by DKMS.  On a kernel with fault
 * injection in debugfs, any task can make should_fail() fire for itself
 * through /proc/self/fail-nth, whatever the attribute's probability.
 */
#if defined(PCG_FAULT_INJECT) && IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS)
#define PCG_HAVE_FAULT_INJECT 1
#endif

#endif /* PEERCGROUP_MODULE_H */
