/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Live answers (PEERCGROUP_GET_LIVE, opt-in): the cgroup the peer is in
 * NOW, from SO_PEERPIDFD or SO_PEERCRED and /proc/PID/cgroup.  No module.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

/*
 * Before 6.5 (no SO_PEERPIDFD), SO_PEERCRED gives pid 0 both for a peer
 * outside our pid namespace and for a socket never connected.
 */
static bool peer_unconnected(int sockfd)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);

	return getpeername(sockfd, (struct sockaddr *)&sa, &len) < 0 && errno == ENOTCONN;
}

/*
 * The rest of the first line of @fn that starts with @prefix, without its
 * newline, into *@rest (malloc()ed): 0, -ENODATA if no line does, or the
 * error of opening or reading @fn.
 */
static int proc_line(const char *fn, const char *prefix, char **rest)
{
	size_t cap = 0, len = strlen(prefix);
	char *line = NULL;
	int r = -ENODATA;
	ssize_t n;
	FILE *f;

	f = fopen(fn, "re");
	if (!f)
		return -errno;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (strncmp(line, prefix, len) != 0)
			continue;
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		*rest = strdup(line + len);
		r = *rest ? 0 : -ENOMEM;
		break;
	}
	/* a read that failed (5.10's ENAMETOOLONG for a long cgroup path) */
	if (n < 0 && ferror(f))
		r = errno ? -errno : -EIO;
	free(line);
	fclose(f);
	return r;
}

/* "0::/path" from /proc/PID/cgroup, as printed.  *path is malloc()ed. */
static int read_proc_cgroup(pid_t pid, char **path)
{
	char fn[64];
	int r;

	snprintf(fn, sizeof(fn), "/proc/%d/cgroup", (int)pid);
	r = proc_line(fn, "0::", path);
	/* gone, or hidden from us by hidepid= (EPERM, EACCES): not visible */
	if (r == -ENOENT || r == -EPERM || r == -EACCES)
		return -ESRCH;
	return r == -ENODATA ? -ENOMEDIUM : r;	/* no cgroup v2 line */
}

/*
 * The calling thread's own files in /proc: its fd table and its mount
 * namespace may be its own (unshare(CLONE_FILES), unshare(CLONE_NEWNS)),
 * not those of the main thread, which /proc/self names.
 */
#define PROC_THREAD "/proc/thread-self"

/* @fd's line in this thread's fdinfo that starts with @key: as proc_line(). */
static int fdinfo_line(int fd, const char *key, char **rest)
{
	char fn[64];

	snprintf(fn, sizeof(fn), PROC_THREAD "/fdinfo/%d", fd);
	return proc_line(fn, key, rest);
}

/* fdinfo's "mnt_id:" of open @fd (3.15 and later), or -1. */
static long fdinfo_mount_id(int fd)
{
	char *s = NULL, *end;
	long id = -1;

	if (fdinfo_line(fd, "mnt_id:", &s) == 0) {
		errno = 0;
		id = strtol(s, &end, 10);
		if (errno || end == s || *end || id < 0)
			id = -1;
	}
	free(s);
	return id;
}

/*
 * The id of the mount whose root open directory @fd is, or -1: not a
 * mount's root (cgroup2 mounted on a parent of the mount point shows a
 * cgroup there), or no way to tell.  statx() says both (5.8 and later);
 * else, for a sandbox that refuses statx(), fdinfo, where a mount's root
 * has its ".." on another mount.  Not fdinfo alone: 5.10 refuses a
 * process that changed its uid its own fdinfo (it is no longer dumpable).
 */
static long mount_root_id(int fd)
{
	long id, up_id;
	int up;
#if defined(STATX_MNT_ID) && defined(STATX_ATTR_MOUNT_ROOT)
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID) && (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) && stx.stx_mnt_id <= LONG_MAX ?
		       (long)stx.stx_mnt_id : -1;
#endif
	up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (up < 0)
		return -1;
	id = fdinfo_mount_id(fd);
	up_id = fdinfo_mount_id(up);
	close(up);
	return id >= 0 && up_id >= 0 && up_id != id ? id : -1;
}

/*
 * Is mount @id, in this thread's mountinfo, a cgroup2 mount of the root
 * of this thread's cgroup namespace?  A mount's root there is relative to
 * the reader's cgroup namespace, so "/" is exactly that root; a mount of
 * another part of the tree (the host's, seen from a container) would put
 * another cgroup at a path.
 */
static bool mount_shows_cgroup_ns_root(long id)
{
	char *line = NULL;
	bool shows = false;
	size_t cap = 0;
	FILE *f;

	if (id < 0)
		return false;
	f = fopen(PROC_THREAD "/mountinfo", "re");
	if (!f)
		return false;
	while (getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE ... */
		char *field[4], *sep = strstr(line, " - "), *save = NULL, *p = line, *end;
		int n;

		if (!sep)
			continue;
		*sep = '\0';
		for (n = 0; n < 4 && (field[n] = strtok_r(p, " ", &save)); n++)
			p = NULL;
		if (n < 4 || strtol(field[0], &end, 10) != id || *end)
			continue;
		shows = !strcmp(field[3], "/") && !strncmp(sep + 3, "cgroup2 ", 8);
		break;
	}
	free(line);
	fclose(f);
	return shows;
}

/*
 * Where this thread sees the cgroup v2 tree from its cgroup namespace's
 * root: the first of pcg_cgroup2_dirs that shows it, opened, or
 * -ENOMEDIUM.  The directory must be the root of its mount, and the
 * mount is judged once open, by the id the fd holds (an open fd keeps its
 * mount's id from being given again): read before the open, mountinfo
 * would miss a mount made on the mount point in between, and one since
 * detached is in no line of it.
 */
static int cgroup2_mount_open(void)
{
	size_t i;
	int fd;

	for (i = 0; i < PCG_CGROUP2_DIRS; i++) {
		fd = pcg_cgroup2_open(pcg_cgroup2_dirs[i], false);
		if (fd < 0)
			continue;
		if (mount_shows_cgroup_ns_root(mount_root_id(fd)))
			return fd;
		close(fd);
	}
	return -ENOMEDIUM;
}

/*
 * The id of the cgroup at namespace-relative @path: 0 and *@id, -ENOENT
 * if this process can see that no such cgroup exists, or another
 * negative errno if it cannot look.
 */
static int cgroup_lookup(const char *path, uint64_t *id)
{
	struct stat st;
	int fd, r;

	if (pcg_cgroup_path_outside(path))
		return -EXDEV;
	fd = cgroup2_mount_open();
	if (fd < 0)
		return fd;
	r = pcg_cgroup_stat(fd, path, strlen(path), &st);
	close(fd);
	if (r == 0)
		*id = st.st_ino;
	return r;
}

static const char removed_marker[] = " (deleted)";

/*
 * Fill in the id of info->path, as /proc printed it.  /proc marks a
 * removed cgroup by appending " (deleted)", but a live cgroup may be
 * named so too: only a cgroup this process can see is missing is taken
 * as removed (confirm_answer() then checks the peer could be in one).
 */
static int settle_path(struct peercgroup_info *info)
{
	size_t ml = sizeof(removed_marker) - 1, n = strlen(info->path);
	uint64_t id = 0;
	int r = cgroup_lookup(info->path, &id);

	if (n <= ml || strcmp(info->path + n - ml, removed_marker) != 0) {
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
 * Has the process @pidfd refers to exited (pidfd_poll(): all its
 * threads)?  1 yes, 0 no, -1 unknown (no pidfd, or poll() failed).
 */
static int peer_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	int n = pidfd < 0 ? -1 : poll(&p, 1, 0);

	if (n == 0)
		return 0;
	return n == 1 && (p.revents & POLLIN) ? 1 : -1;
}

/*
 * The answer from the first read of /proc, and the look-ups after it,
 * confirmed by a second read (the same line again):
 *
 * - A live cgroup's id.  Between the first read and the look-up the peer
 *   may have left its cgroup, and that cgroup been removed and made again
 *   at the same path (by whoever may write its parent: the peer itself,
 *   in a subtree delegated to it); the id would be the new one's.  The
 *   same path and the same id again pin the answer: cgroup2 never gives
 *   an id twice and cannot rename a cgroup, so the cgroup with that id had
 *   that path between the two look-ups, and the peer was in it at the
 *   second read.  A peer that moved keeps the path first read (true
 *   then), with id 0.
 *
 * - A removed cgroup.  Only a process that has exited can be in one, and
 *   it can no longer move.  Else a live cgroup named "x (deleted)" that
 *   held the peer at the first read, left and removed since, would be
 *   taken for x, removed: the peer must have exited (its pidfd says so;
 *   without one, no answer), and its line must not have changed.
 */
static int confirm_answer(pid_t pid, int pidfd, struct peercgroup_info *info)
{
	bool removed = info->flags & PEERCGROUP_INFO_CGROUP_REMOVED;
	size_t n = strlen(info->path);
	char *again = NULL;
	uint64_t id = 0;
	int r;

	if (!removed && !info->cgroup_id)
		return 0;
	if (removed && peer_exited(pidfd) != 1)
		return -ESRCH;
	r = read_proc_cgroup(pid, &again);
	if (r < 0)
		return r;
	if (removed) {
		r = strncmp(again, info->path, n) || strcmp(again + n, removed_marker) ? -ESRCH : 0;
	} else if (strcmp(again, info->path) || cgroup_lookup(again, &id) ||
		   id != info->cgroup_id) {
		info->cgroup_id = 0;
	}
	free(again);
	return r;
}

/*
 * /proc/PID/cgroup cuts a longer path at PATH_MAX - 1 bytes without a
 * word (6.1 and later format the names with scnprintf()), so a path that
 * long may name an ancestor, a neighbour or nothing.  It names the peer's
 * cgroup only if the peer's main thread, @tid in our pid namespace (the
 * one cgroup.threads numbers in, as SO_PEERCRED does), is listed there.
 */
static bool cgroup_holds_thread(const char *path, pid_t tid)
{
	int mnt_fd, fd;
	bool found = false;
	FILE *f;
	int t;

	if (tid <= 0 || pcg_cgroup_path_outside(path))
		return false;
	mnt_fd = cgroup2_mount_open();
	if (mnt_fd < 0)
		return false;
	fd = pcg_cgroup_open(mnt_fd, path, "cgroup.threads");
	close(mnt_fd);
	f = fd < 0 ? NULL : fdopen(fd, "re");
	if (!f) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while (!found && fscanf(f, "%d", &t) == 1)
		found = t == tid;
	fclose(f);
	return found;
}

/*
 * Is /proc's pid namespace our active one (SO_PEERCRED's)?  "NSpid:"
 * lists our pid in each namespace from /proc's down to ours: one
 * number means they are the same.  1 yes, 0 no, or the errno of reading.
 */
static int proc_in_our_pid_ns(void)
{
	char *nspid = NULL, *save = NULL;
	int n = 0, r;

	r = proc_line(PROC_THREAD "/status", "NSpid:", &nspid);
	if (r < 0)
		return r == -ENODATA ? 0 : r;
	for (char *p = nspid; strtok_r(p, " \t", &save); p = NULL)
		n++;
	free(nspid);
	return n == 1;
}

/*
 * The number of the process @pidfd refers to in /proc's pid namespace,
 * from the pidfd's fdinfo, into *@pid: 0 if it has none there, -1 once it
 * is reaped.  0, or the errno of reading /proc: EACCES where 5.10 does
 * not let a process that changed its uid read its own fdinfo.
 */
static int fdinfo_pid(int pidfd, pid_t *pid)
{
	char *rest = NULL;
	int r = fdinfo_line(pidfd, "Pid:", &rest);

	*pid = -1;
	if (r == -ENODATA)
		return 0;
	if (r < 0)
		return r;
	if (sscanf(rest, "%d", pid) != 1)
		*pid = -1;
	free(rest);
	return 0;
}

static bool fdinfo_refused(int err)
{
	return err == -EACCES || err == -EPERM;
}

/*
 * The peer's number in /proc's pid namespace into *@pid: 0 if not there,
 * -1 if reaped.  From @pidfd's fdinfo; without a pidfd (@pidfd < 0), or
 * where fdinfo is refused, @ours, the SO_PEERCRED pid, is that number
 * only if /proc is of our pid namespace.  0 or the errno of reading /proc.
 */
static int proc_pid(int pidfd, pid_t ours, pid_t *pid)
{
	int r;

	if (pidfd >= 0) {
		r = fdinfo_pid(pidfd, pid);
		if (!fdinfo_refused(r))
			return r;
	}
	r = proc_in_our_pid_ns();
	if (r < 0)
		return r;
	*pid = r ? ours : 0;
	return 0;
}

/*
 * Is the process @pidfd refers to not reaped yet, so that the pid /proc
 * was read at is still its own?  fdinfo's "Pid:" turns -1 once it is
 * reaped (5.10 to 7.3), whatever the caller may do to it.  Where fdinfo
 * is refused (5.10, to a process that changed its uid), a signal 0
 * through the pidfd tells.  Its EPERM says only that the signal was
 * refused, by the peer's credentials or by a seccomp filter, for any
 * process: then only a peer that has not even exited is known to be
 * unreaped.  0, -ESRCH, or the errno of reading /proc.
 */
static int peer_unreaped(int pidfd)
{
	pid_t pid;
	int r = fdinfo_pid(pidfd, &pid);

	if (!fdinfo_refused(r))
		return r < 0 ? r : pid > 0 ? 0 : -ESRCH;
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0)
		return 0;
	if (errno != EPERM || peer_exited(pidfd) != 0)
		return -ESRCH;
	return 0;
}

PCG_HIDDEN int pcg_get_live(int sockfd, unsigned int flags, struct peercgroup_info *info)
{
	struct ucred cred;
	socklen_t len;
	pid_t pid;
	int pidfd = -1, r;
	bool maybe_cut;

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
			return peer_unconnected(sockfd) ? -ENOTCONN :
			       -ESRCH;	/* not in our pid namespace */
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
	r = proc_pid(pidfd, cred.pid, &pid);
	if (r < 0)
		goto out;
	if (pid <= 0) {	/* reaped, or not in /proc's pid namespace */
		r = -ESRCH;
		goto out;
	}
	r = read_proc_cgroup(pid, &info->path);
	if (r < 0)
		goto out;
	/*
	 * As long as /proc's cut: the module's limit (ENAMETOOLONG) unless
	 * proven.  Measured before settle_path() takes a " (deleted)" off:
	 * a live cgroup's name may put one where the cut ends.
	 */
	maybe_cut = strlen(info->path) >= PATH_MAX - 1;
	r = settle_path(info);
	if (r < 0)
		goto out;
	info->path_len = strlen(info->path);
	if (maybe_cut &&
	    ((info->flags & PEERCGROUP_INFO_CGROUP_REMOVED) ||
	     !cgroup_holds_thread(info->path, info->pid))) {
		r = -ENAMETOOLONG;
		goto out;
	}
	r = confirm_answer(pid, pidfd, info);
	if (r < 0)
		goto out;
	/*
	 * The pid could have been recycled while we read /proc and the
	 * cgroup; the pidfd still refers to the original process.
	 */
	if (pidfd >= 0) {
		r = peer_unreaped(pidfd);
		if (r < 0)
			goto out;
	}
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

