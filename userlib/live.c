/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Live answers (PEERCGROUP_GET_LIVE, opt-in): the cgroup the peer is in
 * NOW, from SO_PEERPIDFD or SO_PEERCRED and /proc/PID/cgroup.  No module.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "peercgroup.h"
#include "internal.h"

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

PCG_HIDDEN int pcg_get_live(int sockfd, unsigned int flags, struct peercgroup_info *info)
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

