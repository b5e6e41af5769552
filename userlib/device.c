/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The device's lifecycle: /dev/peercgroup opened once per process, lazily,
 * its ABI checked, and forgotten in every child of a fork, however made.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "peercgroup.h"
#include "internal.h"

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18	/* Linux 4.14 */
#endif

/*
 * The cached descriptor (struct pcg_dev_cache, internal.h) lives in a page
 * marked MADV_WIPEONFORK: the kernel hands every child of fork(), _Fork()
 * or clone() without CLONE_VM a zeroed copy, so the child sees "not open"
 * without a system call per query and without relying on atfork handlers
 * (which _Fork() and raw clone() skip).  A vfork() child shares the page,
 * and must only exec or _exit anyway.  Kernels without MADV_WIPEONFORK
 * (before 4.14) fall back to comparing getpid() on each query.
 */
static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t dev_once = PTHREAD_ONCE_INIT;
static struct pcg_dev_cache *cache;
static struct pcg_dev_cache cache_fallback;
PCG_HIDDEN struct pcg_dev_cache *_Atomic pcg_dev_fast;
static int dev_fd = -1;			/* what this process (or a parent) opened */
static pid_t dev_pid;			/* who opened it (fallback only) */
static dev_t dev_rdev;			/* what it is, to know it again */
static ino_t dev_ino;
static const char default_path[] = PEERCGROUP_DEVICE_PATH;
static const char *dev_path = default_path;

static void atfork_prepare(void) { pthread_mutex_lock(&dev_lock); }
static void atfork_parent(void) { pthread_mutex_unlock(&dev_lock); }

/* Is @fd still the device this process opened? */
static int is_our_device(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) &&
	       st.st_rdev == dev_rdev && st.st_ino == dev_ino;
}

/*
 * fork() (not _Fork()) runs this in the child before returning there.
 * The inherited descriptor is closed only if it is still the device: a
 * program that closed it (closefrom()) may have reused the number.
 */
static void atfork_child(void)
{
	atomic_store_explicit(&cache->fd_plus_one, 0, memory_order_relaxed);
	if (dev_fd >= 0 && is_our_device(dev_fd))
		close(dev_fd);
	dev_fd = -1;
	pthread_mutex_unlock(&dev_lock);
}

static void dev_init(void)
{
	long pagesize = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (size_t)pagesize, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cache = &cache_fallback;
	if (p != MAP_FAILED) {
		if (madvise(p, (size_t)pagesize, MADV_WIPEONFORK) == 0) {
			cache = p;
			atomic_store_explicit(&pcg_dev_fast, cache,
					      memory_order_release);
		} else {
			munmap(p, (size_t)pagesize);
		}
	}
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* Is the module loaded?  Its sysfs directory says so even when this
 * process cannot see or open the device node. */
static int module_loaded(void)
{
	struct stat st;

	return stat("/sys/module/peercgroup", &st) == 0 && S_ISDIR(st.st_mode);
}

PCG_HIDDEN int pcg_map_open_errno(int e, int loaded)
{
	switch (e) {
	case ENOENT:	/* no node: module not loaded, or hidden from us */
		return loaded ? -ENODEV : -ENOPKG;
	case ENXIO:	/* node without a driver behind it */
	case ENODEV:
		return -ENOPKG;
	case EPERM:	/* the device cgroup (DevicePolicy=) said no */
	case EACCES:
		return -EACCES;
	default:
		return -e;
	}
}

static int module_version(int fd, struct peercgroup_version *v)
{
	int r;

	memset(v, 0, sizeof(*v));
	v->size = sizeof(*v);
	r = pcg_ioctl(fd, PEERCGROUP_IOC_VERSION, v);
	if (r < 0)
		return r == -EFAULT || r == -ENOMEM ? r : -EPROTO;
	if (v->abi_version != PEERCGROUP_ABI_VERSION)
		return -EPROTO;
	v->module_version[sizeof(v->module_version) - 1] = '\0';
	return 0;
}

/* Called with dev_lock held, when the fast path found nothing. */
static int open_locked(void)
{
	struct peercgroup_version v;
	struct stat st;
	int fd, r;

	/*
	 * Not open in this process.  A child of _Fork() or clone() inherited
	 * dev_fd but not the cache: forget the number without closing it
	 * (the child may have reused it by now).
	 */
	dev_fd = -1;
	fd = open(dev_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return pcg_map_open_errno(errno, dev_path == default_path &&
					  module_loaded());
	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode)) {
		close(fd);
		return -ENOPKG;	/* a stray file, not a device node */
	}
	r = module_version(fd, &v);
	if (r < 0) {
		close(fd);
		return r;
	}
	dev_fd = fd;
	dev_pid = getpid();
	dev_rdev = st.st_rdev;
	dev_ino = st.st_ino;
	cache->query_flags = v.query_flags;
	atomic_store_explicit(&cache->fd_plus_one, fd + 1, memory_order_release);
	return fd;
}

/* pcg_device() (internal.h) past its fast path: the first call, a fork
 * child, no MADV_WIPEONFORK.  An error is not cached: the module may be
 * loaded later. */
PCG_HIDDEN int pcg_device_slow(unsigned int *query_flags)
{
	int wipe_on_fork = pcg_device_wipes_on_fork();	/* runs dev_init() */
	int fd;

	fd = atomic_load_explicit(&cache->fd_plus_one, memory_order_acquire) - 1;
	if (fd < 0 || (!wipe_on_fork && dev_pid != getpid())) {
		pthread_mutex_lock(&dev_lock);
		fd = atomic_load_explicit(&cache->fd_plus_one, memory_order_acquire) - 1;
		if (fd < 0 || (!wipe_on_fork && dev_pid != getpid()))
			fd = open_locked();
		pthread_mutex_unlock(&dev_lock);
	}
	if (fd >= 0 && query_flags)
		*query_flags = cache->query_flags;
	return fd;
}

/*
 * A query on *@fd (from pcg_device()) failed, or is about to be made off
 * the fast path.  Returns 1 if *@fd is still the device: an error was the
 * query's.  If not, because the program closed it behind the library's
 * back, forgets it (never closes it: the number may be the program's
 * now), opens the device again into *@fd and returns 0, or returns the
 * error of opening it.
 */
PCG_HIDDEN int pcg_device_recheck(int *fd)
{
	if (is_our_device(*fd))
		return 1;
	pthread_mutex_lock(&dev_lock);
	/* Another thread may have opened it again at that number meanwhile. */
	if (atomic_load_explicit(&cache->fd_plus_one, memory_order_relaxed) == *fd + 1 &&
	    !is_our_device(*fd)) {
		atomic_store_explicit(&cache->fd_plus_one, 0, memory_order_relaxed);
		dev_fd = -1;
	}
	pthread_mutex_unlock(&dev_lock);
	*fd = pcg_device(NULL);
	return *fd < 0 ? *fd : 0;
}

PCG_HIDDEN int pcg_device_wipes_on_fork(void)
{
	pthread_once(&dev_once, dev_init);
	return atomic_load_explicit(&pcg_dev_fast, memory_order_relaxed) != NULL;
}

PCG_HIDDEN void pcg_test_set_device(const char *path)
{
	pthread_once(&dev_once, dev_init);
	pthread_mutex_lock(&dev_lock);
	if (atomic_load(&cache->fd_plus_one) > 0)
		close(dev_fd);
	atomic_store(&cache->fd_plus_one, 0);
	dev_fd = -1;
	dev_path = path ? path : default_path;
	pthread_mutex_unlock(&dev_lock);
}

/*
 * The device for a call off a query's path, looked at before it is used
 * rather than after a failure: the program may have run closefrom() since
 * it was opened.
 */
static int device_checked(void)
{
	int fd = pcg_device(NULL), r;

	if (fd < 0)
		return fd;
	r = pcg_device_recheck(&fd);
	return r < 0 ? r : fd;
}

/* Called once, before a sandbox hides the node. */
PUBLIC int peercgroup_open_device(void)
{
	int fd = device_checked();

	return fd < 0 ? fd : 0;
}

PUBLIC int peercgroup_module_info(struct peercgroup_module *mod)
{
	struct peercgroup_version v;
	int fd, r;

	if (!mod)
		return -EINVAL;
	memset(mod, 0, sizeof(*mod));
	fd = device_checked();
	if (fd < 0)
		return fd;
	r = module_version(fd, &v);
	if (r < 0)
		return r;
	mod->abi_version = v.abi_version;
	mod->features = v.features;
	mod->query_flags = v.query_flags;
	mod->query_size = v.query_size;
	memcpy(mod->version, v.module_version, sizeof(mod->version));
	return 0;
}
