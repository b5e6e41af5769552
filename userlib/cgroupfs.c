/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cgroup v2 tree as this process sees it: where it may be mounted,
 * which paths no mount here can show, and a cgroup's directory by path.
 * The live route (live.c) and the owner check (owner.c) both look there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
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

PCG_HIDDEN int pcg_cgroup_stat(int mnt_fd, const char *path, size_t len,
			       struct stat *st)
{
	char rel[PATH_MAX];
	int r = cgroup_rel(path, len, rel);

	if (r < 0)
		return r;
	if (fstatat(mnt_fd, rel, st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return S_ISDIR(st->st_mode) ? 0 : -ENOTDIR;
}

PCG_HIDDEN int pcg_cgroup_open(int mnt_fd, const char *path, const char *file)
{
	char rel[PATH_MAX];
	int dir, fd, r = cgroup_rel(path, strlen(path), rel);

	if (r < 0)
		return r;
	dir = openat(mnt_fd, rel, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	fd = openat(dir, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	r = fd < 0 ? -errno : fd;
	close(dir);
	return r;
}
