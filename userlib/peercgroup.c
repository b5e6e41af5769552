/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libpeercgroup: device access, queries, live answers, messages. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "peercgroup.h"
#include "internal.h"

#define PUBLIC __attribute__((visibility("default")))

#ifndef PEERCGROUP_LIB_VERSION_STRING
#define PEERCGROUP_LIB_VERSION_STRING "0.2.0"
#endif

/*
 * SO_PEERPIDFD is 77 in asm-generic (Linux 6.5); older libc headers lack
 * it.  Only assume the number on architectures that use asm-generic's.
 */
#if !defined(SO_PEERPIDFD) && (defined(__x86_64__) || defined(__i386__) || \
	defined(__aarch64__) || defined(__arm__) || defined(__riscv) || \
	defined(__loongarch__) || defined(__s390__))
#define SO_PEERPIDFD 77
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#define CGROUP2_MAGIC 0x63677270

/* ---- the device: opened once per process, lazily ---- */

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t dev_atfork_once = PTHREAD_ONCE_INIT;
static int dev_fd = -1;
static pid_t dev_pid;			/* process that opened dev_fd */
/*
 * dev_fd once it is open, for the lock-free path every query takes: no
 * mutex shared by a daemon's threads, no getpid() system call.  The
 * fork() child handler resets it; a raw clone() child keeps a copy of
 * the descriptor, which still names the device unless that child closes
 * it itself.
 */
static atomic_int dev_fd_ready = -1;
static unsigned int dev_query_flags;	/* PEERCGROUP_QUERY_* the module takes */
static const char *dev_path = PEERCGROUP_DEVICE_PATH;

static void atfork_prepare(void) { pthread_mutex_lock(&dev_lock); }
static void atfork_parent(void) { pthread_mutex_unlock(&dev_lock); }

/*
 * Runs in the child before fork() returns there, so dev_fd is certainly
 * still ours and closing it cannot hit a descriptor the program reused.
 */
static void atfork_child(void)
{
	atomic_store_explicit(&dev_fd_ready, -1, memory_order_relaxed);
	if (dev_fd >= 0)
		close(dev_fd);
	dev_fd = -1;
	pthread_mutex_unlock(&dev_lock);
}

static void register_atfork(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

PCG_HIDDEN int pcg_map_open_errno(int e)
{
	switch (e) {
	case ENOENT:	/* no device node: module never loaded (or no udev) */
	case ENXIO:	/* node without a driver behind it */
	case ENODEV:
		return -ENOPKG;
	case EPERM:
	case EACCES:
		return -EACCES;
	default:
		return -e;
	}
}

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

static int xioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do
		r = ioctl(fd, req, arg);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

static int module_version(int fd, struct peercgroup_version *v)
{
	int r;

	memset(v, 0, sizeof(*v));
	v->size = sizeof(*v);
	r = xioctl(fd, PEERCGROUP_IOC_VERSION, v);
	if (r < 0)
		return r == -EFAULT || r == -ENOMEM ? r : -EPROTO;
	if (v->abi_version != PEERCGROUP_ABI_VERSION)
		return -EPROTO;
	v->module_version[sizeof(v->module_version) - 1] = '\0';
	return 0;
}

/* Returns the device fd (>= 0) or a negative error.  Not cached on error:
 * the module may be loaded later. */
static int get_dev(void)
{
	struct peercgroup_version v;
	struct stat st;
	int fd, r;

	fd = atomic_load_explicit(&dev_fd_ready, memory_order_acquire);
	if (fd >= 0)
		return fd;
	pthread_once(&dev_atfork_once, register_atfork);
	pthread_mutex_lock(&dev_lock);
	/* After a raw clone() the atfork handler did not run: forget the fd
	 * (without closing it: it may not be ours any more). */
	if (dev_fd >= 0 && dev_pid != getpid())
		dev_fd = -1;
	if (dev_fd >= 0) {
		fd = dev_fd;
		goto out;
	}
	fd = open(dev_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		fd = pcg_map_open_errno(errno);
		goto out;
	}
	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode)) {
		close(fd);
		fd = -ENOPKG;	/* a stray file, not a device node */
		goto out;
	}
	r = module_version(fd, &v);
	if (r < 0) {
		close(fd);
		fd = r;
		goto out;
	}
	dev_query_flags = v.query_flags;
	dev_fd = fd;
	dev_pid = getpid();
	atomic_store_explicit(&dev_fd_ready, fd, memory_order_release);
out:
	pthread_mutex_unlock(&dev_lock);
	return fd;
}

PCG_HIDDEN void pcg_test_set_device(const char *path)
{
	pthread_mutex_lock(&dev_lock);
	atomic_store_explicit(&dev_fd_ready, -1, memory_order_relaxed);
	if (dev_fd >= 0 && dev_pid == getpid())
		close(dev_fd);
	dev_fd = -1;
	dev_path = path ? path : PEERCGROUP_DEVICE_PATH;
	pthread_mutex_unlock(&dev_lock);
}

PUBLIC int peercgroup_module_info(struct peercgroup_module *mod)
{
	struct peercgroup_version v;
	int fd, r;

	if (!mod)
		return -EINVAL;
	memset(mod, 0, sizeof(*mod));
	fd = get_dev();
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

/* ---- module answers ---- */

static int query(int fd, int sockfd, unsigned int qflags, char *buf,
		 size_t size, struct peercgroup_query *q)
{
	int r;

	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->flags = qflags;
	q->sockfd = sockfd;
	q->path_size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	q->path = (uintptr_t)buf;
	r = xioctl(fd, PEERCGROUP_IOC_QUERY, q);
	if (r == -ERANGE)
		return r;	/* the caller retries with path_len + 1 */
	return r < 0 ? pcg_map_query_errno(-r) : 0;
}

static int get_from_module(int sockfd, unsigned int flags,
			   struct peercgroup_info *info)
{
	struct peercgroup_query q;
	char *buf = NULL;
	size_t size = 256;
	int fd, r, tries;

	fd = get_dev();
	if (fd < 0)
		return fd;

	if ((flags & PEERCGROUP_GET_NO_PATH) &&
	    (dev_query_flags & PEERCGROUP_QUERY_NO_PATH)) {
		r = query(fd, sockfd, PEERCGROUP_QUERY_NO_PATH, NULL, 0, &q);
		goto fill;
	}
	/* The path could be renamed between two calls; give up eventually. */
	for (tries = 0; tries < 4; tries++) {
		char *nbuf = realloc(buf, size);

		if (!nbuf) {
			free(buf);
			return -ENOMEM;
		}
		buf = nbuf;
		r = query(fd, sockfd, 0, buf, size, &q);
		if (r != -ERANGE)
			break;
		if ((size_t)q.path_len + 1 <= size) {
			r = -EPROTO;	/* ERANGE for a path that fits */
			break;
		}
		size = (size_t)q.path_len + 1;
	}
	if (r == 0 && (q.path_len >= size || buf[q.path_len] != '\0'))
		r = -EPROTO;	/* never hand out an unterminated string */
	if (r == 0 && !(flags & PEERCGROUP_GET_NO_PATH)) {
		info->path = buf;
		info->path_len = q.path_len;
		buf = NULL;
	}
	free(buf);
fill:
	if (r < 0)
		return r;
	info->cgroup_id = q.cgroup_id;
	info->pid = q.pid;
	info->flags = q.result_flags & (PEERCGROUP_INFO_CGROUP_REMOVED |
					PEERCGROUP_INFO_PEER_EXITED);
	return 0;
}

/* ---- live answers (opt-in, no module needed) ---- */

/* Same errors as the module for the same misuse. */
static int check_socket(int sockfd)
{
	int v;
	socklen_t len = sizeof(v);

	if (getsockopt(sockfd, SOL_SOCKET, SO_DOMAIN, &v, &len) < 0)
		return -errno;	/* EBADF, ENOTSOCK */
	if (v != AF_UNIX)
		return -EAFNOSUPPORT;
	len = sizeof(v);
	if (getsockopt(sockfd, SOL_SOCKET, SO_TYPE, &v, &len) < 0)
		return -errno;
	if (v != SOCK_STREAM && v != SOCK_SEQPACKET)
		return -EOPNOTSUPP;
	len = sizeof(v);
	if (getsockopt(sockfd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) < 0)
		return -errno;
	/* A listener's SO_PEERCRED is its own; the module says ENOTCONN. */
	return v ? -ENOTCONN : 0;
}

/* "0::/path" from /proc/PID/cgroup.  *path is malloc()ed. */
static int read_proc_cgroup(pid_t pid, char **path, unsigned int *flags)
{
	char fn[64], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	int r = -ENOMEDIUM;	/* no cgroup v2 line */

	snprintf(fn, sizeof(fn), "/proc/%d/cgroup", (int)pid);
	f = fopen(fn, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((n = getline(&line, &cap, f)) > 0) {
		static const char deleted[] = " (deleted)";
		size_t dl = sizeof(deleted) - 1;

		if (strncmp(line, "0::", 3) != 0)
			continue;
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		/* cgroup v2 marks removed cgroups like this in /proc. */
		if ((size_t)n > 3 + dl && !strcmp(line + n - dl, deleted)) {
			line[n - dl] = '\0';
			*flags |= PEERCGROUP_INFO_CGROUP_REMOVED;
		}
		*path = strdup(line + 3);
		r = *path ? 0 : -ENOMEM;
		break;
	}
	free(line);
	fclose(f);
	return r;
}

/* The cgroup2 inode number is the cgroup id; 0 if we cannot see it. */
static uint64_t cgroup_id_of(const char *path)
{
	static const char *const mnts[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	struct statfs sf;
	struct stat st;
	char *fn;
	size_t i;
	uint64_t id = 0;

	for (i = 0; i < sizeof(mnts) / sizeof(mnts[0]) && !id; i++) {
		if (statfs(mnts[i], &sf) < 0 || sf.f_type != CGROUP2_MAGIC)
			continue;
		if (asprintf(&fn, "%s%s", mnts[i], path) < 0)
			return 0;
		if (stat(fn, &st) == 0 && S_ISDIR(st.st_mode))
			id = st.st_ino;
		free(fn);
	}
	return id;
}

#ifdef SO_PEERPIDFD
static pid_t pidfd_pid(int pidfd)
{
	char fn[64], line[128];
	pid_t pid = -1;
	FILE *f;

	snprintf(fn, sizeof(fn), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(fn, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid: %d", &pid) == 1)
			break;
	fclose(f);
	return pid;
}
#endif

static int get_live(int sockfd, unsigned int flags, struct peercgroup_info *info)
{
	struct ucred cred;
	socklen_t len;
	int pidfd = -1, r;

	r = check_socket(sockfd);
	if (r < 0)
		return r;
#ifdef SO_PEERPIDFD
	len = sizeof(pidfd);
	if (getsockopt(sockfd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0) {
		pidfd = -1;
		if (errno == ENODATA || errno == ENOTCONN)
			return -ENOTCONN;
		if (errno != ENOPROTOOPT && errno != EINVAL)
			return -errno;
		/* else: kernel < 6.5, fall back to SO_PEERCRED */
	}
#endif
	if (pidfd >= 0) {
#ifdef SO_PEERPIDFD
		info->pid = pidfd_pid(pidfd);
		info->flags |= PEERCGROUP_INFO_PIDFD;
#endif
	} else {
		len = sizeof(cred);
		if (getsockopt(sockfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
			return -errno;
		info->pid = cred.pid;
	}
	if (info->pid <= 0) {	/* exited, or not in our pid namespace */
		r = -ESRCH;
		goto out;
	}
	r = read_proc_cgroup(info->pid, &info->path, &info->flags);
	if (r < 0)
		goto out;
	/* The pid could have been recycled while we read /proc; the pidfd
	 * still refers to the original process and tells whether it lives. */
	if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0) {
		r = -ESRCH;
		goto out;
	}
	info->path_len = strlen(info->path);
	info->cgroup_id = cgroup_id_of(info->path);
	info->flags |= PEERCGROUP_INFO_LIVE;
	if (flags & PEERCGROUP_GET_NO_PATH) {
		free(info->path);
		info->path = NULL;
		info->path_len = 0;
	}
out:
	if (pidfd >= 0)
		close(pidfd);
	return r;
}

/* ---- public calls ---- */

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
		r = get_live(sockfd, flags, info);
	else
		r = get_from_module(sockfd, flags, info);
	if (r < 0)
		peercgroup_info_free(info);
	return r;
}

PUBLIC int peercgroup_get_id(int sockfd, uint64_t *cgroup_id)
{
	struct peercgroup_info info;
	int r;

	if (!cgroup_id)
		return -EINVAL;
	*cgroup_id = 0;
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

PUBLIC const char *peercgroup_library_version(void)
{
	return PEERCGROUP_LIB_VERSION_STRING;
}

PUBLIC const char *peercgroup_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:		return "success";
	/* The hints name what an admin does; see docs/INSTALL.md. */
	case ENOPKG:	return "peercgroup kernel module is not loaded (no /dev/peercgroup): "
			       "modprobe peercgroup; in a systemd service with PrivateDevices=yes, "
			       "add BindReadOnlyPaths=/dev/peercgroup and DeviceAllow=/dev/peercgroup r";
	case EACCES:	return "permission denied opening /dev/peercgroup: in a systemd service, "
			       "add DeviceAllow=/dev/peercgroup r";
	case EPROTO:	return "peercgroup module speaks an incompatible ABI";
	case ENODATA:	return "no cgroup record for this connection (made before the module was loaded?)";
	case ENOTCONN:	return "socket is not connected (or is listening)";
	case EOPNOTSUPP: return "not a stream or seqpacket socket (datagram sockets have no peer record)";
	case EAFNOSUPPORT: return "not an AF_UNIX socket";
	case ENOTSOCK:	return "file descriptor is not a socket";
	case EBADF:	return "bad file descriptor";
	case ESRCH:	return "peer process is gone or not visible (live query)";
	case ENOMEDIUM:	return "peer process has no cgroup v2 membership (live query)";
	case EINVAL:	return "invalid argument";
	case ENOMEM:	return "out of memory";
	case EFAULT:	return "bad address";
	/* glibc's strerror() is thread-safe for known values (2.32+). */
	default:	return strerror(err < 0 ? -err : err);
	}
}
