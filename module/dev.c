// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/peercgroup: answers, for a socket the caller holds, what was
 * recorded about its peer.  Mode 0666: a caller learns nothing about a
 * socket it could not already call getsockopt(SO_PEERCRED) on.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/fs.h>
#include <linux/kernfs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/nsproxy.h>
#include <linux/pid_namespace.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <net/af_unix.h>
#include <net/sock.h>
#include <asm/word-at-a-time.h>

#include <linux/peercgroup.h>

#include "compat.h"
#include "peercgroup.h"

/*
 * Most paths fit on the stack (a Kubernetes BestEffort pod under the
 * systemd driver is 193 bytes, 322 on a node that kind runs in a
 * container); a longer one gets a buffer of its size.
 */
#define PCG_PATH_ONSTACK 512

/*
 * Copy in a struct that starts with its own size (copy_struct_from_user
 * rules).  Sizes are capped at a page, as openat2() does, so a huge size
 * cannot make the kernel scan gigabytes for non-zero bytes.
 */
static int pcg_copy_in(void *dst, size_t ksize, size_t min_size,
		       const void __user *src, u32 *usize)
{
	if (get_user(*usize, (const u32 __user *)src))
		return -EFAULT;
	if (*usize < min_size)
		return -EINVAL;
	if (*usize > PAGE_SIZE)
		return -E2BIG;
	return copy_struct_from_user(dst, ksize, src, *usize);
}

/* Inlined: an out-of-line call is 1 % of an id query. */
static __always_inline int pcg_copy_out(void __user *dst, const void *src,
					size_t ksize, u32 usize)
{
	return copy_to_user(dst, src, min_t(size_t, ksize, usize)) ? -EFAULT : 0;
}

/*
 * A query's answer: its fields from @cgroup_id on.  The caller's own
 * (@size to @path) are left as it wrote them.  @usize is at least
 * PEERCGROUP_QUERY_SIZE_VER0 (pcg_copy_in()).
 */
static int pcg_copy_out_answer(struct peercgroup_query __user *uq,
			       const struct peercgroup_query *q, u32 usize)
{
	const size_t from = offsetof(struct peercgroup_query, cgroup_id);

	BUILD_BUG_ON(offsetof(struct peercgroup_query, cgroup_id) >=
		     PEERCGROUP_QUERY_SIZE_VER0);
	return pcg_copy_out((char __user *)uq + from, (const char *)q + from,
			    sizeof(*q) - from, usize - from);
}

/*
 * Connected means "has a peer", as for getpeername(): not listening, not
 * unconnected, and still true after the peer has closed.  Returns the
 * peer (identity only: it is never dereferenced) or an ERR_PTR.
 */
static const struct sock *pcg_check_socket(const struct sock *sk)
{
	const struct sock *peer;

	if (sk->sk_family != AF_UNIX)
		return ERR_PTR(-EAFNOSUPPORT);
	if (sk->sk_type != SOCK_STREAM && sk->sk_type != SOCK_SEQPACKET)
		return ERR_PTR(-EOPNOTSUPP);
	/*
	 * Pairs with the barrier unix_stream_connect() puts between setting
	 * up the peer (after our hook made the record) and publishing it.
	 */
	peer = smp_load_acquire(&unix_sk(sk)->peer);
	return peer ? peer : ERR_PTR(-ENOTCONN);
}

/*
 * The pid the kernel gave @sk as its SO_PEERCRED, or NULL (no reference
 * taken: see below).  The record's cgroup comes from that same task: the
 * connect hook runs in the task whose tgid init_peercred() gives the
 * accepted socket, and proves the listener's cgroup for the very
 * sk_peer_pid that copy_peercred() then copies to the client, in the one
 * critical section (hooks.c); a socketpair's both ends get their maker's.
 * sk_peer_lock (5.15, and Debian's 5.10.223) guards that field against
 * listen(), which rewrites it on listeners; @sk is connected (the caller
 * checked), and a connected stream or seqpacket socket never listens
 * again: listen() needs TCP_CLOSE, which only its release sets
 * (peercgroup.h).  So the field is fixed, and its pid pinned by @sk, which
 * the caller holds, until __sk_destruct(); the acquire in
 * pcg_check_socket() orders this read after the kernel's write, which
 * precedes the peer's publication.
 */
static struct pid *pcg_peer_pid(const struct sock *sk)
{
	return READ_ONCE(sk->sk_peer_pid);
}

/*
 * The root of the caller's cgroup namespace on the v2 hierarchy: what
 * /proc/self/cgroup prints paths relative to, and what bounds the
 * caller's cgroupfs view.  It stays valid, without a lock, for as long as
 * the ioctl runs:
 *  - only a task itself replaces its ->nsproxy (unshare, setns, exit;
 *    each thread has its own), so current's cgroup namespace lives on;
 *  - the namespace holds a counted reference on root_cset
 *    (copy_cgroup_ns(), until free_cgroup_ns());
 *  - a css_set never changes its dfl_cgrp after find_css_set() made it,
 *    and holds a reference on it (link_css_set(); init_css_set's is
 *    cgrp_dfl_root.cgrp, never freed).
 * Each point holds in 5.10, 6.1, 6.12 and 7.3.
 */
static struct cgroup *pcg_cgroup_ns_root(void)
{
	return current->nsproxy->cgroup_ns->root_cset->dfl_cgrp;
}

/*
 * A v2 cgroup's directory name.  It never changes (only cgroup v1 has a
 * kernfs .rename), and lives as long as the cgroup's kernfs node, which
 * the cgroup holds until it is freed: the caller's reference suffices.
 */
static const char *pcg_cgroup_name(const struct cgroup *cgrp)
{
	return compat_kernfs_fixed_name(cgrp->kn);
}

/*
 * strlen() a word at a time: the walk's cost is mostly its bytes, and a
 * byte loop takes three instructions for each.  Only aligned words are
 * read past the first one, so no read crosses into a page the name does
 * not reach; read_word_at_a_time() tells KASAN about the first byte only,
 * as for strscpy(), which reads names the same way.
 */
static size_t pcg_name_len(const char *name)
{
	const struct word_at_a_time constants = WORD_AT_A_TIME_CONSTANTS;
	const char *s = name;
	unsigned long word, bits;

	for (; !IS_ALIGNED((unsigned long)s, sizeof(word)); s++)
		if (!*s)
			return s - name;
	for (;; s += sizeof(word)) {
		word = read_word_at_a_time(s);
		if (has_zero(word, &bits, &constants)) {
			bits = prep_zero_mask(word, bits, &constants);
			bits = create_zero_mask(bits);
			return s - name + find_zero(bits);
		}
	}
}

/* Both in one hierarchy: the walk ends at its root at the latest. */
static struct cgroup *pcg_common_ancestor(struct cgroup *a, struct cgroup *b)
{
	while (a->level > b->level)
		a = cgroup_parent(a);
	while (b->level > a->level)
		b = cgroup_parent(b);
	while (a != b) {
		a = cgroup_parent(a);
		b = cgroup_parent(b);
	}
	return a;
}

#define PCG_PATH_UP "/.."

/*
 * One walk from @cgrp up to @common: returns the length of the path with
 * @ups leading PCG_PATH_UP (PATH_MAX or more once it is too long), and,
 * if it fits in @size bytes with its NUL, writes its "/name" part at the
 * end of @buf, NUL-terminated; the PCG_PATH_UP part is the caller's.
 */
static size_t pcg_walk_path(char *buf, size_t size, struct cgroup *cgrp,
			    struct cgroup *common, size_t ups)
{
	size_t len = ups * strlen(PCG_PATH_UP), end = size - 1;
	struct cgroup *c;

	buf[end] = '\0';
	for (c = cgrp; c != common && len < PATH_MAX; c = cgroup_parent(c)) {
		const char *name = pcg_cgroup_name(c);
		size_t n = pcg_name_len(name);

		len += 1 + n;
		if (len < size) {
			end -= n;
			memcpy(buf + end, name, n);
			buf[--end] = '/';
		}
	}
	return len;
}

/*
 * Copies out @path, whose @len bytes and NUL pcg_walk_path() wrote but
 * for its first @ups PCG_PATH_UP.
 */
static int pcg_put_path(struct peercgroup_query *q, char *path, size_t len,
			size_t ups)
{
	size_t i;

	for (i = 0; i < ups; i++)
		memcpy(path + i * strlen(PCG_PATH_UP), PCG_PATH_UP, strlen(PCG_PATH_UP));
	return copy_to_user(u64_to_user_ptr(q->path), path, len + 1) ? -EFAULT : 0;
}

/*
 * Formats @cgrp's path relative to @ns_root, exactly as /proc/PID/cgroup
 * prints it: "/" for @ns_root itself, else "/.." for each level from
 * @ns_root up to the common ancestor, then "/name" for each level down to
 * @cgrp.  Fills q->path_len with its exact length whatever q->path_size
 * is.  Returns 0, -ERANGE (q->path_size < length + 1; nothing copied),
 * -ENAMETOOLONG (PATH_MAX bytes or more; q->path_len is 0), -ENOMEM or
 * -EFAULT.
 *
 * That is kernfs_path_from_node(cgrp->kn, ns_root->kn), which
 * cgroup_path_ns() calls under cgroup_mutex and css_set_lock (they guard
 * its walk of v1 hierarchies; on v2 the namespace's cgroup is
 * root_cset->dfl_cgrp) and which takes kernfs_rename_lock.  None is
 * needed here, because nothing read can change (5.10, 6.1, 6.12, 7.3):
 *  - names: pcg_cgroup_name();
 *  - parents: a cgroup's css.parent and level are set when it is made,
 *    and it holds a reference on its parent until it is freed
 *    (css_free_rwork_fn()), after rmdir too: the chain up to the root is
 *    pinned by the record's reference on @cgrp, and by
 *    pcg_cgroup_ns_root()'s argument for @ns_root;
 *  - both are on cgrp_dfl_root (the caller checks cgrp->root).
 * So a path too long for the stack is walked again, into a buffer of the
 * length the first walk found, and comes out the same.
 */
static int pcg_format_path(struct cgroup *cgrp, struct cgroup *ns_root,
			   struct peercgroup_query *q)
{
	struct cgroup *common = pcg_common_ancestor(cgrp, ns_root);
	size_t len, ups = ns_root->level - common->level;
	/*
	 * Not cleared under INIT_STACK_ALL_ZERO (a rep stos over all of it
	 * on every query): only bytes the walk and pcg_put_path() wrote
	 * are copied out.
	 */
	char onstack[PCG_PATH_ONSTACK] __uninitialized;
	char *buf;
	int err;

	len = pcg_walk_path(onstack, sizeof(onstack), cgrp, common, ups);
	if (len >= PATH_MAX)
		return -ENAMETOOLONG;
	q->path_len = len ? len : 1;
	if (q->path_size < q->path_len + 1)
		return -ERANGE;
	if (!len)
		return copy_to_user(u64_to_user_ptr(q->path), "/", 2) ? -EFAULT : 0;
	if (len < sizeof(onstack))
		return pcg_put_path(q, onstack + sizeof(onstack) - 1 - len, len, ups);

	buf = kmalloc(len + 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	pcg_walk_path(buf, len + 1, cgrp, common, ups);
	err = pcg_put_path(q, buf, len, ups);
	kfree(buf);
	return err;
}

/*
 * Has the process @tgid names exited?  Its leader stays linked to the pid
 * until it is reaped, so a zombie counts once its last thread is gone, as
 * pidfd_poll() counts it; a leader that exited before its other threads
 * has not (delay_group_leader()).  The caller holds rcu_read_lock(): a
 * reaped task is freed after a grace period (delayed_put_task_struct()).
 */
static bool pcg_process_exited(struct pid *tgid)
{
	/* pid_task(), inline: on every query, its call costs more than it */
	struct hlist_node *first = rcu_dereference(hlist_first_rcu(&tgid->tasks[PIDTYPE_TGID]));
	struct task_struct *leader;

	if (!first)
		return true;
	leader = hlist_entry(first, struct task_struct, pid_links[PIDTYPE_TGID]);
	return READ_ONCE(leader->exit_state) && thread_group_empty(leader);
}

/*
 * PEERCGROUP_IOC_QUERY.  The caller is never told of a cgroup that
 * SO_PEERCRED, /proc and its own cgroupfs view would not show it.  A peer
 * whose pid has no number in the caller's pid namespace (SO_PEERCRED
 * says pid 0, /proc has no entry) and whose cgroup is outside the
 * caller's cgroup namespace (not in its cgroupfs view) is withheld: no
 * path, id, pid or flags.  Either one visible is enough: a visible pid
 * shows its cgroup in /proc/PID/cgroup (as "/../..."), but not that
 * cgroup's id: before 6.13 (PIDFD_GET_INFO) no unprivileged interface
 * gives it to a caller outside, so the query leaves it 0; a visible
 * cgroup is in the caller's cgroupfs (that a pid it cannot see is in it
 * is more than 6.13's PIDFD_GET_INFO tells, which refuses such a pid).
 *
 * No capability overrides this, CAP_SYS_ADMIN in the initial user
 * namespace included: the kernel's SO_PEERCRED and /proc follow the
 * caller's namespaces alone, root's answers stay the same as anyone's,
 * and a privileged process that wants the host's view joins the host's
 * namespaces (setns), as it must for /proc.
 */

static long pcg_ioctl_query(void __user *uarg)
{
	struct peercgroup_query q __uninitialized;	/* pcg_copy_in() fills it */
	const struct sock *peer;
	struct cgroup *cgrp, *ns_root;
	struct socket *sock;
	struct pid *tgid;
	bool pinned, inside, exited;
	u32 usize;
	int err;

	BUILD_BUG_ON(sizeof(q) < PEERCGROUP_QUERY_SIZE_VER0);
	BUILD_BUG_ON(sizeof(q) > PAGE_SIZE);
	err = pcg_copy_in(&q, sizeof(q), PEERCGROUP_QUERY_SIZE_VER0, uarg, &usize);
	if (err)
		return err;
	if (q.flags & ~PEERCGROUP_QUERY_FLAGS_ALL || q.reserved)
		return -EINVAL;
	q.cgroup_id = 0;
	q.path_len = 0;
	q.pid = 0;
	q.result_flags = 0;

	/* Resolves in the caller's own file table only. */
	sock = sockfd_lookup(q.sockfd, &err);
	if (!sock)
		return err;
	peer = pcg_check_socket(sock->sk);
	if (IS_ERR(peer)) {
		err = PTR_ERR(peer);
		goto out_sock;
	}

	pcg_count(queries);
	/*
	 * The record matched is keyed by our socket, so it stays in the
	 * table, its cgroup reference with it, until sockfd_put(); or its
	 * answer is pinned (@pinned: pcg_peer_origin()).  sk_peer_pid is
	 * pinned by our socket (pcg_peer_pid()).  RCU covers the walk and
	 * the peer's task only.
	 */
	rcu_read_lock();
	cgrp = pcg_peer_origin(sock->sk, peer, &pinned);
	tgid = cgrp ? pcg_peer_pid(sock->sk) : NULL;
	exited = tgid && pcg_process_exited(tgid);
	rcu_read_unlock();
	if (!tgid) {
		pcg_count(misses);
		err = -ENODATA;
		goto out_cgroup;
	}

	ns_root = pcg_cgroup_ns_root();
	q.pid = pid_nr_ns(tgid, task_active_pid_ns(current));
	/* Records hold v2 cgroups only (task_dfl_cgroup()). */
	if (WARN_ON_ONCE(cgrp->root != ns_root->root)) {
		err = -ENODATA;
		goto out_cgroup;
	}
	inside = cgroup_is_descendant(cgrp, ns_root);
	if (!inside && !q.pid) {
		err = -EREMOTE;
		goto out_cgroup;
	}
	if (inside)
		q.cgroup_id = cgroup_id(cgrp);
	if (!(READ_ONCE(cgrp->self.flags) & CSS_ONLINE))
		q.result_flags |= PEERCGROUP_RESULT_CGROUP_REMOVED;
	if (exited)
		q.result_flags |= PEERCGROUP_RESULT_PEER_EXITED;
	if (!(q.flags & PEERCGROUP_QUERY_NO_PATH))
		err = pcg_format_path(cgrp, ns_root, &q);

	/* These still report the id, pid and flags (ERANGE: the length). */
	if (!err || err == -ERANGE || err == -ENAMETOOLONG) {
		int cerr = pcg_copy_out_answer(uarg, &q, usize);

		if (cerr)
			err = cerr;
	}
out_cgroup:
	if (pinned)
		cgroup_put(cgrp);
out_sock:
	sockfd_put(sock);
	return err;
}

static long pcg_ioctl_version(void __user *uarg)
{
	struct peercgroup_version v;
	u32 usize;
	int err;

	BUILD_BUG_ON(sizeof(v) < PEERCGROUP_VERSION_SIZE_VER0);
	BUILD_BUG_ON(sizeof(v) > PAGE_SIZE);
	err = pcg_copy_in(&v, sizeof(v), PEERCGROUP_VERSION_SIZE_VER0, uarg, &usize);
	if (err)
		return err;
	v.abi_version = PEERCGROUP_ABI_VERSION;
	v.features = PEERCGROUP_FEATURE_STREAM | PEERCGROUP_FEATURE_SEQPACKET |
		     PEERCGROUP_FEATURE_SOCKETPAIR | PEERCGROUP_FEATURE_PATH |
		     PEERCGROUP_FEATURE_PID | PEERCGROUP_FEATURE_NS_WITHHOLD;
	v.query_flags = PEERCGROUP_QUERY_FLAGS_ALL;
	v.query_size = sizeof(struct peercgroup_query);
	strscpy(v.module_version, PEERCGROUP_VERSION, sizeof(v.module_version));
	return pcg_copy_out(uarg, &v, sizeof(v), usize);
}

/*
 * Commands are matched on type, number and direction; the size bits are
 * ignored, since each struct carries its own size and may grow.
 */
static long pcg_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	if (_IOC_TYPE(cmd) != PEERCGROUP_IOC_MAGIC ||
	    _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE))
		return -ENOTTY;

	switch (_IOC_NR(cmd)) {
	case _IOC_NR(PEERCGROUP_IOC_QUERY):
		return pcg_ioctl_query(uarg);
	case _IOC_NR(PEERCGROUP_IOC_VERSION):
		return pcg_ioctl_version(uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations pcg_fops = {
	.owner = THIS_MODULE,
	.open = nonseekable_open,
	.llseek = noop_llseek,
	.unlocked_ioctl = pcg_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice pcg_miscdev = {
	.minor = PEERCGROUP_MISC_MINOR,
	.name = PEERCGROUP_DEVICE_NAME,
	.fops = &pcg_fops,
	.mode = 0666,
};

int pcg_dev_register(void)
{
	int err = misc_register(&pcg_miscdev);

	if (err)
		pr_err("cannot register misc device 10:%d (%d)\n",
		       PEERCGROUP_MISC_MINOR, err);
	return err;
}

void pcg_dev_unregister(void)
{
	misc_deregister(&pcg_miscdev);
}
