/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cgroup v2 tree as this process sees it: where it may be mounted,
 * which paths no mount here can show, and a cgroup's directory by path.
 * The live route (live.c) and the owner check (owner.c) both look there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "peercgroup.h"
#include "internal.h"

PCG_HIDDEN const char *const pcg_cgroup2_dirs[PCG_CGROUP2_DIRS] = {
	"/sys/fs/cgroup", "/sys/fs/cgroup/unified",
};

PCG_HIDDEN bool pcg_cgroup_path_outside(const char *path)
{
	return !strncmp(path, "/..", 3) && (path[3] == '/' || !path[3]);
}

PCG_HIDDEN int pcg_cgroup_stat(const char *dir, const char *path, size_t len,
			       struct stat *st)
{
	char fn[PATH_MAX + 32];

	if (len >= PATH_MAX)
		return -ENAMETOOLONG;
	snprintf(fn, sizeof(fn), "%s/%.*s", dir, (int)len, path);
	if (stat(fn, st) < 0)
		return -errno;
	return S_ISDIR(st->st_mode) ? 0 : -ENOTDIR;
}
