/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cgroup v2 tree as this process sees it: where it may be mounted,
 * which paths no mount here can show, and a cgroup's directory by path.
 * The live route (live.c) and the owner check (owner.c) both look there.
 *
 * A look-up stays on the cgroup2 mount it starts from.  A mount on a
 * directory below it (another cgroup bound there, a tmpfs, a symlink in
 * one) would put another cgroup's inode, or any inode, at a cgroup's
 * path: a wrong id, or the wrong parent's owner proving a name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <unistd.h>

#include "peercgroup.h"
#include "internal.h"

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

/* The id of the mount @fd is on (statx(), 5.8), or 0 if it cannot tell. */
static uint64_t mount_id(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0 ||
	    !(stx.stx_mask & STATX_MNT_ID))
		return 0;
	return stx.stx_mnt_id;
}

/*
 * Without openat2() (a seccomp filter that predates it refuses it with
 * ENOSYS or EPERM), one name at a time, following no symlink and no
 * "..": descending can enter another mount but never come back to the
 * one it started on (a bind mount is a mount of its own), so ending on
 * that mount proves that no other was crossed.
 */
static int cgroup_walk(int mnt_fd, char *rel, int flags)
{
	uint64_t mnt = mount_id(mnt_fd);
	char *name, *next, *save = NULL;
	int dir, fd = -1;

	if (!mnt)
		return -EXDEV;
	dir = fcntl(mnt_fd, F_DUPFD_CLOEXEC, 0);
	if (dir < 0)
		return -errno;
	for (name = strtok_r(rel, "/", &save); name; name = next, dir = fd) {
		next = strtok_r(NULL, "/", &save);
		if (!strcmp(name, "..")) {
			close(dir);
			return -EXDEV;
		}
		fd = openat(dir, name, (next ? O_PATH | O_DIRECTORY : flags) |
					 O_NOFOLLOW | O_CLOEXEC);
		close(dir);
		if (fd < 0)
			return -errno;
	}
	if (mount_id(dir) != mnt) {
		close(dir);
		return -EXDEV;
	}
	return dir;
}

/* open() of @rel below @mnt_fd with @flags, on that mount alone, or -errno. */
static int cgroup_openat(int mnt_fd, char *rel, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS,
	};
	long fd = syscall(SYS_openat2, mnt_fd, rel, &how, sizeof(how));

	if (fd >= 0)
		return (int)fd;
	if (errno != ENOSYS && errno != EPERM)
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
	char rel[PATH_MAX], name[NAME_MAX + 1];
	int dir, fd, r = cgroup_rel(path, strlen(path), rel);

	if (r < 0)
		return r;
	if (strlen(file) >= sizeof(name) || strchr(file, '/'))
		return -EINVAL;
	strcpy(name, file);
	/* two look-ups: the directory's path alone may be PATH_MAX - 1 bytes */
	dir = cgroup_openat(mnt_fd, rel, O_PATH | O_DIRECTORY);
	if (dir < 0)
		return dir;
	fd = cgroup_openat(dir, name, O_RDONLY);
	close(dir);
	return fd;
}
