/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared between the library's files, hidden: not exported from
 * libpeercgroup.so; reachable only when linking libpeercgroup.a or the
 * objects (the CLI and the tests).
 */
#ifndef PEERCGROUP_INTERNAL_H
#define PEERCGROUP_INTERNAL_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/ioctl.h>

#include "peercgroup.h"

#define PCG_HIDDEN __attribute__((visibility("hidden")))
#define PUBLIC __attribute__((visibility("default")))

/* device.c: the device as opened in this process. */
struct pcg_dev_cache {
	atomic_int fd_plus_one;		/* 0: not open in this process */
	unsigned int query_flags;	/* PEERCGROUP_QUERY_* the module takes */
};

/*
 * device.c: the cache, once it lives in a page that fork children get
 * zeroed (MADV_WIPEONFORK); NULL before, and for good where the kernel
 * cannot wipe it (the slow path then checks getpid()).
 */
extern PCG_HIDDEN struct pcg_dev_cache *_Atomic pcg_dev_fast;

/* device.c: pcg_device() when the fast path has no answer. */
PCG_HIDDEN int pcg_device_slow(unsigned int *query_flags);

/*
 * The device fd (>= 0), opened once per process, or a negative error;
 * *@query_flags (if not NULL): the PEERCGROUP_QUERY_* it accepts.  Inline
 * because every query starts here: two loads, no call, no lock.
 */
static inline int pcg_device(unsigned int *query_flags)
{
	struct pcg_dev_cache *c;
	int fd;

	c = atomic_load_explicit(&pcg_dev_fast, memory_order_acquire);
	if (c) {
		/* pairs with the release in open_locked(), after query_flags */
		fd = atomic_load_explicit(&c->fd_plus_one, memory_order_acquire) - 1;
		if (fd >= 0) {
			if (query_flags)
				*query_flags = c->query_flags;
			return fd;
		}
	}
	return pcg_device_slow(query_flags);
}

/* ioctl() retried on EINTR; 0 or -errno. */
static inline int pcg_ioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do
		r = ioctl(fd, req, arg);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

/* device.c: after a failed query on *@fd, is it still the device?  (see there) */
PCG_HIDDEN int pcg_device_recheck(int *fd);

/*
 * classify.c: peercgroup_classify_path(), and *@named: where in @path the
 * component whose name the answer rests on starts, or NULL.
 */
PCG_HIDDEN int pcg_classify_named(const char *path, size_t len, unsigned int flags,
				  struct peercgroup_class *out, const char **named);

/*
 * classify.c: the calling thread's cgroup namespace as it is now, looked at
 * again (PEERCGROUP_CLASSIFY_INITIAL_NS or _CHILD_NS), not the per-process
 * cache: for the peer's answers, whose caller may have unshared since.
 */
PCG_HIDDEN unsigned int pcg_caller_ns_now(void);

/*
 * query.c: classify a peer's @path of @len bytes, cgroup @id, as
 * peercgroup_peer_classify() does: with PEERCGROUP_CT_UNPROVEN where a user
 * may have named it.  0, or -EPROTO for a path that is no cgroup path.
 */
PCG_HIDDEN int pcg_classify_peer(const char *path, size_t len, uint64_t id,
				 struct peercgroup_class *out);

/* cgroupfs.c: where cgroup v2 may be mounted, the unified one last. */
#define PCG_CGROUP2_DIRS 2
extern PCG_HIDDEN const char *const pcg_cgroup2_dirs[PCG_CGROUP2_DIRS];

/* cgroupfs.c: @path starts with "/..": out of this namespace's tree, which
 * no mount here shows. */
PCG_HIDDEN bool pcg_cgroup_path_outside(const char *path);

/* cgroupfs.c: an O_PATH fd of @dir if cgroup2 is mounted there (or, with
 * @any_fs, whatever it is), -ENOMEDIUM if something else is, or -errno. */
PCG_HIDDEN int pcg_cgroup2_open(const char *dir, bool any_fs);

struct stat;
/* cgroupfs.c: stat() of the cgroup directory at the first @len bytes of
 * namespace-relative @path below mount fd @mnt_fd, on that mount alone:
 * 0, -EXDEV (another mount on the way), -ELOOP or -ENOTDIR (a symlink),
 * or -errno. */
PCG_HIDDEN int pcg_cgroup_stat(int mnt_fd, const char *path, size_t len,
			       struct stat *st);

/* cgroupfs.c: open(O_RDONLY) of @file ("cgroup.threads") in the cgroup at
 * namespace-relative @path below mount fd @mnt_fd, on that mount alone:
 * the fd, or -errno. */
PCG_HIDDEN int pcg_cgroup_open(int mnt_fd, const char *path, const char *file);

/*
 * owner.c: 1 if only root can have named the cgroup of the component at
 * @named in @path, the path of cgroup @id; 0 if a user may have, or if
 * this process cannot tell (see there).
 */
PCG_HIDDEN int pcg_cgroup_name_proven(const char *path, const char *named, uint64_t id);

/*
 * TEST ONLY: look at directory tree @root in place of the cgroup2 mount,
 * owned by @root_uid in place of root (NULL restores both).
 */
PCG_HIDDEN void pcg_test_set_cgroup_root(const char *root, uid_t root_uid);

/* device.c: 1 if the cached fd is wiped in fork children (MADV_WIPEONFORK). */
PCG_HIDDEN int pcg_device_wipes_on_fork(void);

/*
 * TEST ONLY: use @path instead of /dev/peercgroup (NULL restores it) and
 * drop the cached descriptor.  Lets unit tests fake the device and the
 * guest suite test "module absent" while the module is loaded.
 */
PCG_HIDDEN void pcg_test_set_device(const char *path);

/* device.c: errno from open() of the device -> library error (negative);
 * @module_loaded: /sys/module/peercgroup exists. */
PCG_HIDDEN int pcg_map_open_errno(int e, int module_loaded);

/* query.c: errno from PEERCGROUP_IOC_QUERY -> library error (negative). */
PCG_HIDDEN int pcg_map_query_errno(int e);

/* live.c: the PEERCGROUP_GET_LIVE answer. */
PCG_HIDDEN int pcg_get_live(int sockfd, unsigned int flags, struct peercgroup_info *info);

/* messages.c: "ENOPKG", ...; "EOTHER" for an error the library never returns. */
PCG_HIDDEN const char *pcg_errno_name(int err);

#endif
