/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * peercgroup: the cgroup of the peer of a connected AF_UNIX stream or
 * seqpacket socket, fixed when the connection was made (like SO_PEERCRED).
 *
 * ABI rules
 * - Every argument struct starts with its own size.  The kernel accepts any
 *   size from the first published one (*_SIZE_VER0) up: bytes it does not
 *   know must be zero (else E2BIG), bytes the caller did not pass read as
 *   zero.  The kernel writes back at most the size the caller passed.
 * - The size bits of the ioctl numbers are ignored by the kernel, so a
 *   binary built against a newer header, with a larger struct, still works.
 * - New fields are only ever appended; flags and features only ever grow.
 */
#ifndef _UAPI_LINUX_PEERCGROUP_H
#define _UAPI_LINUX_PEERCGROUP_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define PEERCGROUP_DEVICE_NAME	"peercgroup"
#define PEERCGROUP_DEVICE_PATH	"/dev/" PEERCGROUP_DEVICE_NAME
/* Misc character device 10:250, from the range reserved for local use. */
#define PEERCGROUP_MISC_MINOR	250

#define PEERCGROUP_ABI_VERSION	1

/* peercgroup_query.flags (in) */
/* Skip the path: fill cgroup_id, pid and result_flags only. */
#define PEERCGROUP_QUERY_NO_PATH	(1U << 0)
#define PEERCGROUP_QUERY_FLAGS_ALL	(PEERCGROUP_QUERY_NO_PATH)

/* peercgroup_query.result_flags (out) */
/* The cgroup has been removed (rmdir) since the connection was made. */
#define PEERCGROUP_RESULT_CGROUP_REMOVED	(1U << 0)
/*
 * The peer process, the one @pid and SO_PEERCRED name (the connecting
 * process on the accepted end, the listening one on the client end), has
 * exited since: all its threads are gone, whether or not its parent has
 * reaped it yet (as pidfd_poll()).
 */
#define PEERCGROUP_RESULT_PEER_EXITED		(1U << 1)

/**
 * struct peercgroup_query - argument of PEERCGROUP_IOC_QUERY
 * @size:	in: sizeof(struct peercgroup_query) as the caller knows it.
 * @flags:	in: PEERCGROUP_QUERY_*.
 * @sockfd:	in: a connected AF_UNIX SOCK_STREAM or SOCK_SEQPACKET socket
 *		in the caller's file table.
 * @path_size:	in: bytes available at @path.
 * @path:	in: user pointer to a buffer for the cgroup path, relative to
 *		the caller's cgroup namespace, as /proc/self/cgroup prints it;
 *		NUL-terminated on success.
 * @cgroup_id:	out: the cgroup v2 id (the inode number of the cgroup's
 *		directory, as BPF and name_to_handle_at() on cgroupfs use);
 *		0 for a cgroup outside the caller's cgroup namespace (a
 *		path starting with "/.."), which its cgroupfs cannot show.
 * @path_len:	out: strlen() of the path, exact whatever @path_size is;
 *		@path_size must be at least @path_len + 1, else the call
 *		fails with ERANGE and still fills @path_len, @cgroup_id, @pid
 *		and @result_flags (nothing is written at @path).
 * @pid:	out: the peer's thread group id as of connect(), listen() or
 *		socketpair(), in the caller's pid namespace; 0 if not visible
 *		there.
 * @result_flags: out: PEERCGROUP_RESULT_*.
 * @reserved:	in: must be zero.
 *
 * Namespaces: the answer is withheld (EREMOTE) when the peer's pid has no
 * number in the caller's pid namespace and its cgroup is outside the
 * caller's cgroup namespace, so a caller is never told of a cgroup that
 * SO_PEERCRED, /proc and its own cgroupfs view do not show it.  No capability
 * overrides this.  See PEERCGROUP_FEATURE_NS_WITHHOLD.
 *
 * Errors of PEERCGROUP_IOC_QUERY (the ioctl returns -1 and sets errno):
 *   EBADF	@sockfd is not open in the caller's file table.
 *   ENOTSOCK	@sockfd is not a socket.
 *   EAFNOSUPPORT not an AF_UNIX socket.
 *   EOPNOTSUPP	a datagram socket.
 *   ENOTCONN	not connected, or listening.
 *   ENODATA	no record: the connection was made before the module was
 *		loaded, or its record could not be allocated; on the client
 *		end, also when the module cannot prove which cgroup the
 *		listener's credentials were set from (it listened before the
 *		module was loaded and not since, it moved during listen(),
 *		or a listen() it could not follow ran).
 *   EREMOTE	withheld: the peer is outside the caller's namespaces (above);
 *		nothing is written back.
 *   ERANGE	@path_size < @path_len + 1 (the other out fields are filled).
 *   ENAMETOOLONG the path relative to the caller's cgroup namespace is
 *		PATH_MAX bytes or longer; @cgroup_id, @pid and @result_flags
 *		are filled, @path_len is 0.
 *   ENOMEM	no memory for the buffer a long path is formatted in.
 *   EFAULT	a bad pointer (the argument or @path).
 *   EINVAL	unknown @flags, non-zero @reserved, or @size below
 *		PEERCGROUP_QUERY_SIZE_VER0.
 *   E2BIG	@size above a page, or non-zero bytes the module does not know.
 *   ENOTTY	an unknown ioctl command.
 * Nothing but ERANGE and ENAMETOOLONG writes to the argument on failure.
 * (EFAULT on writing the argument back may follow a path written to
 * @path.)
 */
struct peercgroup_query {
	__u32 size;
	__u32 flags;
	__s32 sockfd;
	__u32 path_size;
	__aligned_u64 path;
	__aligned_u64 cgroup_id;
	__u32 path_len;
	__s32 pid;
	__u32 result_flags;
	__u32 reserved;
};

#define PEERCGROUP_QUERY_SIZE_VER0	48

/* peercgroup_version.features (out) */
#define PEERCGROUP_FEATURE_STREAM	(1ULL << 0)	/* SOCK_STREAM connect/accept */
#define PEERCGROUP_FEATURE_SEQPACKET	(1ULL << 1)	/* SOCK_SEQPACKET connect/accept */
#define PEERCGROUP_FEATURE_SOCKETPAIR	(1ULL << 2)	/* socketpair() */
#define PEERCGROUP_FEATURE_PATH		(1ULL << 3)	/* path in caller's cgroup ns */
#define PEERCGROUP_FEATURE_PID		(1ULL << 4)	/* pid as of connect */
/* Peers outside both of the caller's pid and cgroup namespaces: EREMOTE. */
#define PEERCGROUP_FEATURE_NS_WITHHOLD	(1ULL << 5)

#define PEERCGROUP_VERSION_STRING_SIZE	32

/**
 * struct peercgroup_version - argument of PEERCGROUP_IOC_VERSION
 * @size:	in: sizeof(struct peercgroup_version) as the caller knows it.
 * @abi_version: out: PEERCGROUP_ABI_VERSION of the loaded module.
 * @features:	out: PEERCGROUP_FEATURE_*.
 * @query_flags: out: the PEERCGROUP_QUERY_* flags the module accepts.
 * @query_size:	out: sizeof(struct peercgroup_query) in the module.
 * @module_version: out: the module's version, NUL-terminated.
 *
 * Errors of PEERCGROUP_IOC_VERSION: EFAULT, EINVAL (@size below
 * PEERCGROUP_VERSION_SIZE_VER0), E2BIG (@size above a page, or non-zero
 * bytes the module does not know), ENOTTY.
 */
struct peercgroup_version {
	__u32 size;
	__u32 abi_version;
	__aligned_u64 features;
	__u32 query_flags;
	__u32 query_size;
	char module_version[PEERCGROUP_VERSION_STRING_SIZE];
};

#define PEERCGROUP_VERSION_SIZE_VER0	56

#define PEERCGROUP_IOC_MAGIC	0xC6
#define PEERCGROUP_IOC_QUERY	_IOWR(PEERCGROUP_IOC_MAGIC, 0x01, struct peercgroup_query)
#define PEERCGROUP_IOC_VERSION	_IOWR(PEERCGROUP_IOC_MAGIC, 0x02, struct peercgroup_version)

#endif /* _UAPI_LINUX_PEERCGROUP_H */
