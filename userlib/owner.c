/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who named a cgroup.  A container's or an application's name is only a
 * directory name, and whoever may create a directory beside it chose it.
 * systemd hands a delegated subtree (Delegate=yes with User=, and every
 * user@UID.service) to its user by chown(), and the cgroups that user
 * makes below are the user's: any name, including that of a container
 * elsewhere on the machine.  Only a name whose parent cgroup root owns,
 * and nobody else may write, is root's choice.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "peercgroup.h"
#include "internal.h"

static const char *test_root;
static uid_t test_root_uid;

PCG_HIDDEN void pcg_test_set_cgroup_root(const char *root, uid_t root_uid)
{
	test_root = root;
	test_root_uid = root ? root_uid : 0;
}

/* Where this process sees cgroup v2, by the mount's type alone: an fd. */
static int cgroup2_open(void)
{
	size_t i;
	int fd = -ENOMEDIUM;

	if (test_root)
		return pcg_cgroup2_open(test_root, true);
	for (i = 0; i < PCG_CGROUP2_DIRS && fd < 0; i++)
		fd = pcg_cgroup2_open(pcg_cgroup2_dirs[i], false);
	return fd;
}

/*
 * Which part of the tree the mount shows is not read from mountinfo:
 * @path leads to the peer's cgroup there only if the directory's inode is
 * its id (a mount of another part shows another cgroup or none, and a
 * removed cgroup is gone), and then every prefix of @path leads to one of
 * its ancestors.  Owners are as this process sees them: root is uid 0 of
 * its user namespace.  Between the two stat()s the parent cannot change
 * under its name: cgroup v2 refuses rename(), and a cgroup with a child
 * cannot be removed; once the child is gone, only whoever may write the
 * grandparent can put another parent there, and it is then theirs.
 */
PCG_HIDDEN int pcg_cgroup_name_proven(const char *path, const char *named, uint64_t id)
{
	struct stat st;
	int fd, proven = 0;

	if (!id || pcg_cgroup_path_outside(path))
		return 0;
	fd = cgroup2_open();
	if (fd < 0)
		return 0;
	if (pcg_cgroup_stat(fd, path, strlen(path), &st) == 0 && st.st_ino == id &&
	    pcg_cgroup_stat(fd, path, (size_t)(named - path), &st) == 0)
		proven = st.st_uid == test_root_uid && !(st.st_mode & (S_IWGRP | S_IWOTH));
	close(fd);
	return proven;
}
