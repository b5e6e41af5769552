/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Live answers (PEERCGROUP_GET_LIVE, opt-in): the cgroup the peer is in
 * NOW, from SO_PEERPIDFD or SO_PEERCRED and /proc/PID/cgroup.  No module.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
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
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
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

/* "0::/path" from /proc/PID/cgroup, as printed.  *path is malloc()ed. */
static int read_proc_cgroup(pid_t pid, char **path)
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
		if (strncmp(line, "0::", 3) != 0)
			continue;
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		*path = strdup(line + 3);
		r = *path ? 0 : -ENOMEM;
		break;
	}
	free(line);
	fclose(f);
	return r;
}

/*
 * Where this process sees the cgroup v2 tree from its own cgroup
 * namespace's root, or NULL.  A cgroup2 mount's root in
 * /proc/self/mountinfo is relative to the reader's namespace, so "/" is
 * exactly that root; a mount of another part of the tree (the host's,
 * seen from a container) would put another cgroup at a path.
 */
static const char *cgroup2_mount(void)
{
	static const char *const mnts[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	bool usable[2] = { false, false };
	char *line = NULL;
	size_t cap = 0, i;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return NULL;
	while (getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE ... */
		char *field[5], *sep = strstr(line, " - "), *save = NULL, *p = line;
		int n;

		if (!sep)
			continue;
		*sep = '\0';
		for (n = 0; n < 5 && (field[n] = strtok_r(p, " ", &save)); n++)
			p = NULL;
		if (n < 5)
			continue;
		/* The last mount on a mount point is the one seen there. */
		for (i = 0; i < 2; i++)
			if (!strcmp(field[4], mnts[i]))
				usable[i] = !strcmp(field[3], "/") &&
					    !strncmp(sep + 3, "cgroup2 ", 8);
	}
	free(line);
	fclose(f);
	for (i = 0; i < 2; i++)
		if (usable[i])
			return mnts[i];
	return NULL;
}

/*
 * The id of the cgroup at namespace-relative @path: 0 and *@id, -ENOENT
 * if this process can see that no such cgroup exists, or another
 * negative errno if it cannot look.
 */
static int cgroup_lookup(const char *path, uint64_t *id)
{
	const char *mnt;
	struct statfs sf;
	struct stat st;
	char *fn;
	int r;

	/* "/.." leads out of this namespace's tree: no mount here shows it. */
	if (!strncmp(path, "/..", 3) && (path[3] == '/' || !path[3]))
		return -EXDEV;
	mnt = cgroup2_mount();
	if (!mnt || statfs(mnt, &sf) < 0 || sf.f_type != CGROUP2_MAGIC)
		return -ENOMEDIUM;
	if (asprintf(&fn, "%s%s", mnt, path) < 0)
		return -ENOMEM;
	r = stat(fn, &st) < 0 ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	free(fn);
	if (r == 0)
		*id = st.st_ino;
	return r;
}

/*
 * Fill in the id of info->path, as /proc printed it.  /proc marks a
 * removed cgroup by appending " (deleted)", but a live cgroup may be
 * named so too: only a cgroup this process can see is missing is taken
 * as removed.  (Only an exiting peer is still in a removed cgroup: one
 * that has tasks cannot be removed.)
 */
static int settle_path(struct peercgroup_info *info)
{
	static const char marker[] = " (deleted)";
	size_t ml = sizeof(marker) - 1, n = strlen(info->path);
	uint64_t id = 0;
	int r = cgroup_lookup(info->path, &id);

	if (n <= ml || strcmp(info->path + n - ml, marker) != 0) {
		info->cgroup_id = r == 0 ? id : 0;
		return 0;
	}
	if (r != -ENOENT)
		return -ESRCH;	/* removed, or live and so named: no answer beats a guess */
	info->path[n - ml] = '\0';
	info->flags |= PEERCGROUP_INFO_CGROUP_REMOVED;
	info->cgroup_id = 0;
	return 0;
}

/*
 * Is /proc's pid namespace our active one (SO_PEERCRED's)?  "NSpid:"
 * lists our pid in each namespace from /proc's down to ours: one
 * number means they are the same.
 */
static bool proc_in_our_pid_ns(void)
{
	char *line = NULL, *save = NULL;
	size_t cap = 0;
	int n = -1;
	FILE *f;

	f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		n = 0;
		for (char *p = line + 6; strtok_r(p, " \t\n", &save); p = NULL)
			n++;
		break;
	}
	free(line);
	fclose(f);
	return n == 1;
}

/*
 * The pidfd's pid as /proc's mount numbers it: 0 if not there, -1 if
 * gone.  5.10 does not let a process that changed its uid read its own
 * fdinfo; then @ours, SO_PEERCRED's pid, is that number if /proc is of
 * our pid namespace.
 */
static pid_t pidfd_pid(int pidfd, pid_t ours)
{
	char fn[64], line[128];
	pid_t pid = -1;
	FILE *f;

	snprintf(fn, sizeof(fn), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(fn, "re");
	if (!f)
		return proc_in_our_pid_ns() ? ours : 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid: %d", &pid) == 1)
			break;
	fclose(f);
	return pid;
}

PCG_HIDDEN int pcg_get_live(int sockfd, unsigned int flags, struct peercgroup_info *info)
{
	struct ucred cred;
	socklen_t len;
	pid_t pid;
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
		/* 6.5 to 6.15 make no pidfd for a peer already reaped */
		if (errno == EINVAL)
			return -ESRCH;
		if (errno != ENOPROTOOPT)
			return -errno;
		/* else: kernel < 6.5, fall back to SO_PEERCRED */
	}
#endif
	/*
	 * The pid we answer is ours for the peer (0: not in our pid
	 * namespace); fdinfo's is /proc's, which may be another's.
	 */
	len = sizeof(cred);
	if (getsockopt(sockfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		r = -errno;
		goto out;
	}
	info->pid = cred.pid;
	if (pidfd >= 0) {
		info->flags |= PEERCGROUP_INFO_PIDFD;
	} else {
		/*
		 * cred.pid is in our active pid namespace, /proc's numbers in
		 * its mount's: after unshare -p -f without a new /proc, they
		 * name other processes.  A pidfd made from it is translated
		 * as SO_PEERPIDFD's is.  The pid may already be the next
		 * owner's, so this pidfd earns no PEERCGROUP_INFO_PIDFD.
		 */
		if (cred.pid <= 0)
			return -ESRCH;	/* not in our pid namespace */
		pidfd = (int)syscall(SYS_pidfd_open, cred.pid, 0);
		if (pidfd < 0 && (errno == ESRCH || errno == EINVAL))
			return -ESRCH;	/* gone */
		/*
		 * Without pidfd_open() (ENOSYS before 5.3, EPERM from a
		 * seccomp filter) cred.pid is /proc's only if /proc is of our
		 * pid namespace; elsewhere no answer beats a guess.
		 */
		if (pidfd < 0 && errno != ENOSYS && errno != EPERM)
			return -errno;
	}
	if (pidfd >= 0)
		pid = pidfd_pid(pidfd, cred.pid);
	else
		pid = proc_in_our_pid_ns() ? cred.pid : 0;
	if (pid <= 0) {	/* exited, or not in /proc's pid namespace */
		r = -ESRCH;
		goto out;
	}
	r = read_proc_cgroup(pid, &info->path);
	if (r < 0)
		goto out;
	/*
	 * The pid could have been recycled while we read /proc; the pidfd
	 * still refers to the original process and tells whether it lives.
	 * EPERM (a peer we may not signal) also says it does.
	 */
	if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0 &&
	    errno != EPERM) {
		r = -ESRCH;
		goto out;
	}
	r = settle_path(info);
	if (r < 0)
		goto out;
	info->path_len = strlen(info->path);
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

