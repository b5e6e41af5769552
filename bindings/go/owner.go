// SPDX-License-Identifier: LGPL-2.1-or-later

package peercgroup

import (
	"strings"

	"golang.org/x/sys/unix"
)

// Who named a cgroup, as libpeercgroup's owner.c tells it.  A container's
// name is only a directory name, and whoever may create a directory
// beside it chose it.  systemd hands a delegated subtree (Delegate=yes
// with User=, every user@UID.service) to its user by chown(), and the
// cgroups that user makes below are the user's: any name.  Only a name
// whose parent cgroup root owns, and nobody else may write, is root's.

// cgroup2Dir is where this process sees cgroup v2, or "".  A variable:
// tests point it at a tree of their own.
var cgroup2Dir = func() string {
	for _, d := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		var sf unix.Statfs_t
		if unix.Statfs(d, &sf) == nil && sf.Type == unix.CGROUP2_SUPER_MAGIC {
			return d
		}
	}
	return ""
}

// rootUID stands for root's uid (tests: the tree's owner).
var rootUID uint32

// nameProven reports whether only root can have named the cgroup that
// begins at byte named of path, the path of cgroup id.  Which part of the
// tree the mount shows is not read from mountinfo: path leads to the
// peer's cgroup only if the directory's inode is its id (a mount of
// another part shows another cgroup or none, a removed cgroup is gone),
// and then every prefix of path leads to one of its ancestors.  Owners
// are as this process sees them: root is uid 0 of its user namespace.
func nameProven(path string, named int, id uint64) bool {
	dir := cgroup2Dir()
	if dir == "" || id == 0 || path == "/.." || strings.HasPrefix(path, "/../") {
		return false
	}
	// Relative to the mount's fd: a path of PATH_MAX - 1 bytes, the
	// longest Get gives, is found whatever the mount point's name.
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if !cgroupStat(fd, path, &st) || st.Ino != id || !cgroupStat(fd, path[:named], &st) {
		return false
	}
	return st.Uid == rootUID && st.Mode&(unix.S_IWGRP|unix.S_IWOTH) == 0
}

// cgroupStat stats the directory at path below the mount at fd, on that
// mount alone, as C's pcg_cgroup_stat() does: a mount on a directory below
// it (another cgroup bound there, a tmpfs) would show another inode, or
// another owner, at a cgroup's path.
func cgroupStat(fd int, path string, st *unix.Stat_t) bool {
	rel := strings.TrimLeft(path, "/")
	if rel == "" {
		rel = "."
	}
	dir, err := unix.Openat2(fd, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_XDEV | unix.RESOLVE_NO_SYMLINKS,
	})
	if err == unix.ENOSYS || err == unix.EPERM {
		dir, err = cgroupWalk(fd, rel)
	}
	if err != nil {
		return false
	}
	defer unix.Close(dir)
	return unix.Fstat(dir, st) == nil
}

// mountID is the id of the mount fd is on (statx, 5.8), or 0.
func mountID(fd int) uint64 {
	var stx unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_STATX_DONT_SYNC, unix.STATX_MNT_ID, &stx) != nil ||
		stx.Mask&unix.STATX_MNT_ID == 0 {
		return 0
	}
	return stx.Mnt_id
}

// cgroupWalk is cgroupStat's look-up where a seccomp filter refuses
// openat2 (ENOSYS or EPERM): one name at a time, following no symlink and
// no "..".  Descending can enter another mount but never come back to the
// one it started on, so ending on that mount proves no other was crossed.
func cgroupWalk(fd int, rel string) (int, error) {
	mnt := mountID(fd)
	if mnt == 0 {
		return -1, unix.EXDEV
	}
	dir, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, name := range strings.Split(rel, "/") {
		if name == "" {
			continue
		}
		if name == ".." {
			unix.Close(dir)
			return -1, unix.EXDEV
		}
		next, err := unix.Openat(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(dir)
		if err != nil {
			return -1, err
		}
		dir = next
	}
	if mountID(dir) != mnt {
		unix.Close(dir)
		return -1, unix.EXDEV
	}
	return dir, nil
}

// ClassifyPeer classifies the record Get returned, as
// peercgroup_peer_classify(3) does: Classify(info.Path), with FlagUnproven
// where a user other than root may have named the cgroup the answer rests
// on (two stat()s and a statfs()).  Where it is set, or FlagRootless or
// FlagMonitor, the ID names no container to trust.  The caller's cgroup
// namespace is looked at again, not taken from Classify's once-per-process
// look: the path is relative to it, and the caller may have unshared since.
func ClassifyPeer(info Info) Container {
	c, named, err := classifyNamed(info.Path, callerNamespaceNow())
	// Past "/.." nothing can be looked at, and the names that follow are
	// not the top of the tree: whoever may create cgroups beside the
	// caller's namespace root may have made them.
	if err == nil && (c.Up > 0 || named >= 0 && !nameProven(info.Path, named, info.CgroupID)) {
		c.Flags |= FlagUnproven
	}
	return c
}
