/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Module answers: the connect-time record of a socket's peer, and the
 * sd_peer_get_*()-like getters built on it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "peercgroup.h"
#include "internal.h"

/* The module's result flags are handed out as the library's own. */
_Static_assert(PEERCGROUP_INFO_CGROUP_REMOVED == PEERCGROUP_RESULT_CGROUP_REMOVED,
	       "library and uapi flag differ");
_Static_assert(PEERCGROUP_INFO_PEER_EXITED == PEERCGROUP_RESULT_PEER_EXITED,
	       "library and uapi flag differ");
_Static_assert(PEERCGROUP_CLASS_SIZE_VER0 <= sizeof(struct peercgroup_class),
	       "the first published size must fit the struct");

PCG_HIDDEN int pcg_map_query_errno(int e)
{
	switch (e) {
	/*
	 * The library always sends valid flags, size and zeroed reserved
	 * bytes, so these mean the module speaks another ABI, or the fd is
	 * not the peercgroup device at all.
	 */
	case EINVAL:
	case E2BIG:
	case ENOTTY:
		return -EPROTO;
	default:
		return -e;
	}
}

/* Inline: peercgroup_get_id() calls it with constants, on every connect. */
static inline int query(int fd, int sockfd, unsigned int qflags, char *buf,
			size_t size, struct peercgroup_query *q)
{
	int retried = 0, again, r;

	for (;;) {
		memset(q, 0, sizeof(*q));
		q->size = sizeof(*q);
		q->flags = qflags;
		q->sockfd = sockfd;
		q->path_size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
		q->path = (uintptr_t)buf;
		r = pcg_ioctl(fd, PEERCGROUP_IOC_QUERY, q);
		if (r == 0)
			return 0;
		/* What a closed or foreign descriptor answers: still ours? */
		if (retried || (r != -EBADF && r != -ENOTTY && r != -EINVAL))
			break;
		again = pcg_device_recheck(&fd);
		/*
		 * The device's own answer, unless EBADF: another thread may
		 * have opened the device again at the number that failed, so
		 * that it is ours now.  A bad socket answers EBADF twice.
		 */
		if (again > 0 && r != -EBADF)
			break;
		if (again < 0)
			return again;	/* it cannot be opened again */
		retried = 1;
	}
	return pcg_map_query_errno(-r);
}

/*
 * A path query into @buf.  Never hand out an unterminated string, nor a
 * length that is no int: the module's answer must be a NUL-terminated
 * string of q->path_len bytes, shorter than PATH_MAX.
 */
static int query_path(int fd, int sockfd, char *buf, size_t size,
		      struct peercgroup_query *q)
{
	int r = query(fd, sockfd, 0, buf, size, q);

	if (r == 0 && (q->path_len >= size || buf[q->path_len] != '\0' ||
		       q->path_len >= PATH_MAX))
		r = -EPROTO;
	return r;
}

static int get_from_module(int sockfd, unsigned int flags,
			   struct peercgroup_info *info)
{
	struct peercgroup_query q;
	unsigned int module_flags;
	char buf[PATH_MAX];	/* always enough: longer is ENAMETOOLONG */
	int fd, r;

	fd = pcg_device(&module_flags);
	if (fd < 0)
		return fd;

	if ((flags & PEERCGROUP_GET_NO_PATH) &&
	    (module_flags & PEERCGROUP_QUERY_NO_PATH)) {
		r = query(fd, sockfd, PEERCGROUP_QUERY_NO_PATH, NULL, 0, &q);
	} else {
		/* One ioctl whatever the length: no retry, no rename race. */
		r = query_path(fd, sockfd, buf, sizeof(buf), &q);
		/* The ABI: every path fits in PATH_MAX. */
		if (r == -ERANGE)
			r = -EPROTO;
	}
	if (r < 0)
		return r;
	if (!(flags & PEERCGROUP_GET_NO_PATH)) {
		info->path = malloc((size_t)q.path_len + 1);
		if (!info->path)
			return -ENOMEM;
		memcpy(info->path, buf, (size_t)q.path_len + 1);
		info->path_len = q.path_len;
	}
	info->cgroup_id = q.cgroup_id;
	info->pid = q.pid;
	info->flags = q.result_flags & (PEERCGROUP_INFO_CGROUP_REMOVED |
					PEERCGROUP_INFO_PEER_EXITED);
	return 0;
}

PUBLIC void peercgroup_info_free(struct peercgroup_info *info)
{
	if (!info)
		return;
	free(info->path);
	memset(info, 0, sizeof(*info));
}

PUBLIC int peercgroup_get(int sockfd, unsigned int flags,
			  struct peercgroup_info *info)
{
	int r;

	if (!info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	if (flags & ~(PEERCGROUP_GET_NO_PATH | PEERCGROUP_GET_LIVE))
		return -EINVAL;
	if (sockfd < 0)
		return -EBADF;
	if (flags & PEERCGROUP_GET_LIVE)
		r = pcg_get_live(sockfd, flags, info);
	else
		r = get_from_module(sockfd, flags, info);
	if (r < 0)
		peercgroup_info_free(info);
	return r;
}

/*
 * The commonest call, on a server's connect path: one query and nothing
 * else, no struct peercgroup_info filled and cleared on the way.
 */
PUBLIC int peercgroup_get_id(int sockfd, uint64_t *cgroup_id)
{
	struct peercgroup_info info;
	unsigned int module_flags;
	int fd, r;

	if (!cgroup_id)
		return -EINVAL;
	*cgroup_id = 0;
	if (sockfd < 0)
		return -EBADF;
	fd = pcg_device(&module_flags);
	if (fd < 0)
		return fd;
	if (module_flags & PEERCGROUP_QUERY_NO_PATH) {
		struct peercgroup_query q;

		r = query(fd, sockfd, PEERCGROUP_QUERY_NO_PATH, NULL, 0, &q);
		if (r == 0)
			*cgroup_id = q.cgroup_id;
		return r;
	}
	r = peercgroup_get(sockfd, PEERCGROUP_GET_NO_PATH, &info);
	if (r == 0)
		*cgroup_id = info.cgroup_id;
	return r;
}

PUBLIC int peercgroup_get_path(int sockfd, char **path)
{
	struct peercgroup_info info;
	int r;

	if (!path)
		return -EINVAL;
	*path = NULL;
	r = peercgroup_get(sockfd, 0, &info);
	if (r == 0)
		*path = info.path;	/* ownership passes to the caller */
	return r;
}

/* The path call with no allocation, for a server's connect path. */
PUBLIC int peercgroup_get_path_buf(int sockfd, char *buf, size_t size)
{
	struct peercgroup_query q;
	int fd, r;

	if (!buf)
		return -EINVAL;
	if (sockfd < 0) {
		r = -EBADF;
		goto fail;
	}
	fd = pcg_device(NULL);
	if (fd < 0) {
		r = fd;
		goto fail;
	}
	r = query_path(fd, sockfd, buf, size, &q);
	if (r < 0)
		goto fail;
	return (int)q.path_len;
fail:
	if (size)
		buf[0] = '\0';
	return r;
}

/* ---- getters: one fact each, from the connect-time record ---- */

/*
 * @prove: look who named the cgroup (PEERCGROUP_CT_UNPROVEN), which costs
 * a handful of system calls, and in which cgroup namespace the caller is
 * now (the module's path is relative to it; a daemon may have unshared
 * since its first classification).  The unit and owner getters read
 * neither.
 */
static int classify_peer(const char *path, size_t len, uint64_t id, bool prove,
			 struct peercgroup_class *out)
{
	const char *named;
	int r = pcg_classify_named(path, len, prove ? pcg_caller_ns_now() : 0,
				   out, &named);

	if (r < 0)
		return -EPROTO;		/* the path given is no cgroup path */
	/*
	 * Past "/.." nothing can be looked at, and the names that follow are
	 * not the top of the tree: whoever may create cgroups beside the
	 * caller's namespace root may have made them.
	 */
	if ((out->flags & PEERCGROUP_CT_OUTSIDE) ||
	    (prove && named && !pcg_cgroup_name_proven(path, named, id)))
		out->flags |= PEERCGROUP_CT_UNPROVEN;
	return 0;
}

PCG_HIDDEN int pcg_classify_peer(const char *path, size_t len, uint64_t id,
				 struct peercgroup_class *out)
{
	return classify_peer(path, len, id, true, out);
}

static int peer_classify(int sockfd, unsigned int flags, bool prove,
			 struct peercgroup_class *out)
{
	struct peercgroup_info info;
	int r;

	if (!out || out->size < PEERCGROUP_CLASS_SIZE_VER0)
		return -EINVAL;
	if (flags & ~PEERCGROUP_GET_LIVE) {
		r = -EINVAL;
		goto fail;
	}
	if (sockfd < 0) {
		r = -EBADF;
		goto fail;
	}
	if (flags & PEERCGROUP_GET_LIVE) {
		r = peercgroup_get(sockfd, flags, &info);
		if (r < 0)
			goto fail;
		r = classify_peer(info.path, info.path_len, info.cgroup_id, prove, out);
		peercgroup_info_free(&info);
	} else {
		/* no malloc()/free() on the getters' path: PATH_MAX always fits */
		struct peercgroup_query q;
		char path[PATH_MAX];
		int fd = pcg_device(NULL);

		r = fd < 0 ? fd : query_path(fd, sockfd, path, sizeof(path), &q);
		if (r == -ERANGE)
			r = -EPROTO;	/* the ABI: every path fits in PATH_MAX */
		if (r < 0)
			goto fail;
		r = classify_peer(path, q.path_len, q.cgroup_id, prove, out);
	}
	if (r == 0)
		return 0;
fail:
	/* the same empty answer as a rejected path */
	peercgroup_classify_path(NULL, 0, 0, out);
	return r;
}

PUBLIC int peercgroup_peer_classify(int sockfd, unsigned int flags,
				    struct peercgroup_class *out)
{
	return peer_classify(sockfd, flags, true, out);
}

static int peer_class(int sockfd, bool prove, struct peercgroup_class *c)
{
	c->size = sizeof(*c);
	return peer_classify(sockfd, 0, prove, c);
}

/*
 * For the unit and owner getters: their slices and units are only the
 * top of the tree inside the caller's namespace (classify_peer()).
 */
static int peer_class_inside(int sockfd, struct peercgroup_class *c)
{
	int r = peer_class(sockfd, false, c);

	return r < 0 ? r : (c->flags & PEERCGROUP_CT_OUTSIDE) ? -ENXIO : 0;
}

/* *@dst = strdup(@s), or -ENXIO for "". */
static int give_string(const char *s, char **dst)
{
	if (!s[0])
		return -ENXIO;
	*dst = strdup(s);
	return *dst ? 0 : -ENOMEM;
}

PUBLIC int peercgroup_peer_get_unit(int sockfd, char **unit)
{
	struct peercgroup_class c;
	int r;

	if (!unit)
		return -EINVAL;
	*unit = NULL;
	r = peer_class_inside(sockfd, &c);
	return r < 0 ? r : give_string(c.unit, unit);
}

PUBLIC int peercgroup_peer_get_user_unit(int sockfd, char **unit)
{
	struct peercgroup_class c;
	int r;

	if (!unit)
		return -EINVAL;
	*unit = NULL;
	r = peer_class_inside(sockfd, &c);
	return r < 0 ? r : give_string(c.user_unit, unit);
}

PUBLIC int peercgroup_peer_get_owner_uid(int sockfd, uid_t *uid)
{
	struct peercgroup_class c;
	int r;

	if (!uid)
		return -EINVAL;
	*uid = (uid_t)-1;
	r = peer_class_inside(sockfd, &c);
	if (r < 0)
		return r;
	if (c.uid < 0)
		return -ENXIO;
	*uid = (uid_t)c.uid;
	return 0;
}

PUBLIC int peercgroup_peer_get_machine_name(int sockfd, char **machine)
{
	struct peercgroup_class c;
	int r;

	if (!machine)
		return -EINVAL;
	*machine = NULL;
	r = peer_class(sockfd, true, &c);
	if (r < 0)
		return r;
	if (c.runtime != PEERCGROUP_RT_NSPAWN && c.runtime != PEERCGROUP_RT_MACHINE)
		return -ENXIO;
	if (c.flags & (PEERCGROUP_CT_ROOTLESS | PEERCGROUP_CT_UNPROVEN))
		return -ENXIO;	/* perhaps named by a user (below) */
	return give_string(c.id, machine);
}

static int is_container(uint32_t rt)
{
	switch (rt) {
	case PEERCGROUP_RT_DOCKER:
	case PEERCGROUP_RT_PODMAN:
	case PEERCGROUP_RT_CONTAINERD:
	case PEERCGROUP_RT_CRIO:
	case PEERCGROUP_RT_KUBERNETES:
	case PEERCGROUP_RT_LXC:
	case PEERCGROUP_RT_NSPAWN:
	case PEERCGROUP_RT_MACHINE:
	case PEERCGROUP_RT_ECS:
		return 1;
	default:
		return 0;
	}
}

PUBLIC int peercgroup_peer_get_container(int sockfd, enum peercgroup_runtime *runtime,
					 char **id)
{
	struct peercgroup_class c;
	int r;

	if (!runtime || !id)
		return -EINVAL;
	*runtime = PEERCGROUP_RT_UNKNOWN;
	*id = NULL;
	r = peer_class(sockfd, true, &c);
	if (r < 0)
		return r;
	/*
	 * A runtime's monitor is not its container.  Nor is a name that a
	 * user other than root may have given (in a user's service manager,
	 * or any subtree delegated to a user): that user may name cgroups
	 * after any container of the machine.  peercgroup_peer_classify()
	 * reports such a peer, flagged.
	 */
	if (!is_container(c.runtime) ||
	    (c.flags & (PEERCGROUP_CT_MONITOR | PEERCGROUP_CT_ROOTLESS |
			PEERCGROUP_CT_UNPROVEN)))
		return -ENXIO;
	r = give_string(c.id, id);
	if (r == 0)
		*runtime = (enum peercgroup_runtime)c.runtime;
	return r;
}
