/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cgroup v2 tree as this process sees it: where it may be mounted,
 * which paths no mount here can show, and a cgroup's directory by path.
 * The live route (live.c) and the owner check (owner.c) both look there.
 *
 * A look-up stays on the cgroup2 mount it starts from.  A mount on a
 * directory below it (another cgroup bound there, a tmpfs, a symlink in
 * one) would put another cgroup's inode, or any inode, at a cgroup's
 * path: a wrong id, or the wrong parent's owner proving a name.  Only a
 * mount that binds a cgroup on its own path shows the same.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <dirent.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <unistd.h>

#include "peercgroup.h"
#include "internal.h"

/* glibc 2.31 (Debian 11) predates openat2(): one number everywhere (5.6). */
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

PCG_HIDDEN const char *const pcg_cgroup2_dirs[PCG_CGROUP2_DIRS] = {
	"/sys/fs/cgroup", "/sys/fs/cgroup/unified",
};

PCG_HIDDEN bool pcg_cgroup_path_outside(const char *path)
{
	return !strncmp(path, "/..", 3) && (path[3] == '/' || !path[3]);
}

PCG_HIDDEN int pcg_cgroup2_open(const char *dir, bool any_fs)
{
	struct statfs sf;
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (!any_fs && (fstatfs(fd, &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC)) {
		close(fd);
		return -ENOMEDIUM;
	}
	return fd;
}

/*
 * The first @len bytes of namespace-relative @path as a path relative to
 * the mount, in @rel, so that a path of up to PATH_MAX - 1 bytes, the
 * longest the module gives, is found whatever the mount point's name.
 */
static int cgroup_rel(const char *path, size_t len, char rel[PATH_MAX])
{
	while (len && *path == '/') {
		path++;
		len--;
	}
	if (len >= PATH_MAX)
		return -ENAMETOOLONG;
	if (len)
		memcpy(rel, path, len);
	else
		rel[len++] = '.';
	rel[len] = '\0';
	return 0;
}

/*
 * Is @child, just opened as @name in directory @dir, what @dir's file
 * system has there: on the same file system, the inode @name's directory
 * entry names?  A mount on @name shows something else, unless it binds
 * that very cgroup there (systemd-nspawn without a cgroup namespace binds
 * the container's cgroup on itself, writable).  readdir() gives the file
 * system's own entry, whatever is mounted on it; cgroup2 inode numbers
 * are ids, never reused.
 */
static bool entry_is(int dir, const char *name, int child)
{
	struct stat d, c;
	struct dirent *e;
	bool same = false;
	DIR *list;
	int fd;

	if (fstat(dir, &d) < 0 || fstat(child, &c) < 0 || d.st_dev != c.st_dev)
		return false;
	fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	list = fd < 0 ? NULL : fdopendir(fd);
	if (!list) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while (!same && (e = readdir(list)))
		same = e->d_ino == c.st_ino && !strcmp(e->d_name, name);
	closedir(list);
	return same;
}

/*
 * Where openat2() crossed a mount (EXDEV) or is refused (ENOSYS or EPERM
 * from a seccomp filter that predates it): one name at a time, following
 * no symlink and no "..", each the directory entry's own (entry_is()).
 * The last name is opened O_NONBLOCK: a FIFO put there must not hang us.
 */
static int cgroup_walk(int mnt_fd, const char *rel, int flags)
{
	char names[PATH_MAX], *name, *next, *save = NULL;
	int dir, fd, r;

	if (strlen(rel) >= sizeof(names))
		return -ENAMETOOLONG;
	strcpy(names, rel);
	dir = fcntl(mnt_fd, F_DUPFD_CLOEXEC, 0);
	if (dir < 0)
		return -errno;
	for (name = strtok_r(names, "/", &save); name; name = next, dir = fd) {
		next = strtok_r(NULL, "/", &save);
		if (!strcmp(name, "..")) {
			close(dir);
			return -EXDEV;
		}
		fd = openat(dir, name, (next ? O_PATH | O_DIRECTORY : flags | O_NONBLOCK) |
				       O_NOFOLLOW | O_CLOEXEC);
		r = fd < 0 ? -errno : entry_is(dir, name, fd) ? 0 : -EXDEV;
		close(dir);
		if (r < 0) {
			if (fd >= 0)
				close(fd);
			return r;
		}
	}
	return dir;
}

/* open() of @rel below @mnt_fd with @flags, on that mount alone, or -errno. */
static int cgroup_openat(int mnt_fd, const char *rel, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS,
	};
	long fd = syscall(SYS_openat2, mnt_fd, rel, &how, sizeof(how));

	if (fd >= 0)
		return (int)fd;
	if (errno != EXDEV && errno != ENOSYS && errno != EPERM)
		return -errno;
	return cgroup_walk(mnt_fd, rel, flags);
}

PCG_HIDDEN int pcg_cgroup_stat(int mnt_fd, const char *path, size_t len,
			       struct stat *st)
{
	char rel[PATH_MAX];
	int fd, r = cgroup_rel(path, len, rel);

	if (r < 0)
		return r;
	fd = cgroup_openat(mnt_fd, rel, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return fd;
	r = fstatat(fd, "", st, AT_EMPTY_PATH) < 0 ? -errno : 0;
	close(fd);
	return r;
}

PCG_HIDDEN int pcg_cgroup_open(int mnt_fd, const char *path, const char *file)
{
	char rel[PATH_MAX];
	int dir, fd, r = cgroup_rel(path, strlen(path), rel);

	if (r < 0)
		return r;
	/* two look-ups: the directory's path alone may be PATH_MAX - 1 bytes */
	dir = cgroup_openat(mnt_fd, rel, O_PATH | O_DIRECTORY);
	if (dir < 0)
		return dir;
	fd = cgroup_openat(dir, file, O_RDONLY);
	close(dir);
	return fd;
}
