// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/peercgroup: answers, for a socket the caller holds, what was
 * recorded about its peer.  Mode 0666: a caller learns nothing about a
 * socket it could not already call getsockopt(SO_PEERCRED) on.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/nsproxy.h>
#include <linux/pid_namespace.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <net/af_unix.h>
#include <net/sock.h>

#include <linux/peercgroup.h>

#include "compat.h"
#include "peercgroup.h"

/* Most paths fit here; longer ones take a PATH_MAX buffer. */
#define PCG_PATH_ONSTACK 192

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

static int pcg_copy_out(void __user *dst, const void *src, size_t ksize,
			u32 usize)
{
	return copy_to_user(dst, src, min_t(size_t, ksize, usize)) ? -EFAULT : 0;
}

/*
 * Connected means "has a peer", as for getpeername(): not listening, not
 * unconnected, and still true after the peer has closed.
 */
static int pcg_check_socket(const struct sock *sk)
{
	if (sk->sk_family != AF_UNIX)
		return -EAFNOSUPPORT;
	if (sk->sk_type != SOCK_STREAM && sk->sk_type != SOCK_SEQPACKET)
		return -EOPNOTSUPP;
	/*
	 * Pairs with the barrier unix_stream_connect() puts between setting
	 * up the peer (after our hook made the entry) and publishing it.
	 */
	if (!smp_load_acquire(&unix_sk(sk)->peer))
		return -ENOTCONN;
	return 0;
}

static int pcg_format_path(struct cgroup *cgrp, struct peercgroup_query *q)
{
	struct cgroup_namespace *ns = current->nsproxy->cgroup_ns;
	char onstack[PCG_PATH_ONSTACK];
	char *buf = onstack;
	size_t buflen = sizeof(onstack);
	int len, err = 0;

	len = cgroup_path_ns(cgrp, buf, buflen, ns);
	if (compat_cgroup_path_truncated(len, buflen)) {
		buflen = PATH_MAX;
		buf = kmalloc(buflen, GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
		len = cgroup_path_ns(cgrp, buf, buflen, ns);
		if (compat_cgroup_path_truncated(len, buflen))
			len = -ENAMETOOLONG;
	}
	if (len < 0) {
		err = len;
		goto out;
	}
	q->path_len = len;
	if (q->path_size < (u32)len + 1)
		err = -ERANGE;
	else if (copy_to_user(u64_to_user_ptr(q->path), buf, len + 1))
		err = -EFAULT;
out:
	if (buf != onstack)
		kfree(buf);
	return err;
}

static long pcg_ioctl_query(void __user *uarg)
{
	struct peercgroup_query q;
	struct pcg_entry *entry;
	struct cgroup *cgrp;
	struct socket *sock;
	struct pid *tgid;
	u32 usize;
	int err;

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
	err = pcg_check_socket(sock->sk);
	if (err)
		goto out_sock;

	pcg_count(queries);
	/*
	 * The entry lives as long as the socket we hold, but it is only
	 * guaranteed inside the RCU section: take our own references.
	 */
	rcu_read_lock();
	entry = pcg_peer_lookup(sock->sk);
	if (entry) {
		cgrp = entry->cgrp;
		cgroup_get(cgrp);
		tgid = get_pid(entry->tgid);
	}
	rcu_read_unlock();
	if (!entry) {
		pcg_count(misses);
		err = -ENODATA;
		goto out_sock;
	}

	q.cgroup_id = cgroup_id(cgrp);
	q.pid = pid_nr_ns(tgid, task_active_pid_ns(current));
	if (!(READ_ONCE(cgrp->self.flags) & CSS_ONLINE))
		q.result_flags |= PEERCGROUP_RESULT_CGROUP_REMOVED;
	if (!pid_has_task(tgid, PIDTYPE_TGID))
		q.result_flags |= PEERCGROUP_RESULT_PEER_EXITED;
	if (!(q.flags & PEERCGROUP_QUERY_NO_PATH))
		err = pcg_format_path(cgrp, &q);
	cgroup_put(cgrp);
	put_pid(tgid);

	/* ERANGE still reports the length the path needs. */
	if (!err || err == -ERANGE) {
		int cerr = pcg_copy_out(uarg, &q, sizeof(q), usize);

		if (cerr)
			err = cerr;
	}
out_sock:
	sockfd_put(sock);
	return err;
}

static long pcg_ioctl_version(void __user *uarg)
{
	struct peercgroup_version v;
	u32 usize;
	int err;

	err = pcg_copy_in(&v, sizeof(v), PEERCGROUP_VERSION_SIZE_VER0, uarg, &usize);
	if (err)
		return err;
	v.abi_version = PEERCGROUP_ABI_VERSION;
	v.features = PEERCGROUP_FEATURE_STREAM | PEERCGROUP_FEATURE_SEQPACKET |
		     PEERCGROUP_FEATURE_SOCKETPAIR | PEERCGROUP_FEATURE_PATH |
		     PEERCGROUP_FEATURE_PID;
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
