// SPDX-License-Identifier: LGPL-2.1-or-later

package peercgroup

import (
	"bytes"
	"strings"
	"unsafe"

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
// another owner, at a cgroup's path.  Only a cgroup bound on its own path
// shows the same.
func cgroupStat(fd int, path string, st *unix.Stat_t) bool {
	rel := strings.TrimLeft(path, "/")
	if rel == "" {
		rel = "."
	}
	dir, err := unix.Openat2(fd, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_XDEV | unix.RESOLVE_NO_SYMLINKS,
	})
	if err == unix.EXDEV || err == unix.ENOSYS || err == unix.EPERM {
		dir, err = cgroupWalk(fd, rel)
	}
	if err != nil {
		return false
	}
	defer unix.Close(dir)
	return unix.Fstat(dir, st) == nil
}

// entryIs reports whether child, just opened as name in directory dir, is
// what dir's file system has there, as C's entry_is(): on the same file
// system, the inode name's directory entry names.  A mount on name shows
// something else, unless it binds that very cgroup there (systemd-nspawn
// without a cgroup namespace binds the container's cgroup on itself).
// getdents gives the file system's own entry, whatever is mounted on it.
func entryIs(dir int, name string, child int) bool {
	var d, c unix.Stat_t
	if unix.Fstat(dir, &d) != nil || unix.Fstat(child, &c) != nil || d.Dev != c.Dev {
		return false
	}
	fd, err := unix.Openat(dir, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	buf := make([]byte, 8192)
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil || n <= 0 {
			return false
		}
		// struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name
		for off := 0; off+19 < n; {
			ino := *(*uint64)(unsafe.Pointer(&buf[off]))
			reclen := int(*(*uint16)(unsafe.Pointer(&buf[off+16])))
			if reclen < 20 || off+reclen > n {
				return false
			}
			entry := buf[off+19 : off+reclen]
			if i := bytes.IndexByte(entry, 0); i >= 0 {
				entry = entry[:i]
			}
			if ino == c.Ino && string(entry) == name {
				return true
			}
			off += reclen
		}
	}
}

// cgroupWalk is cgroupStat's look-up where openat2 crossed a mount (EXDEV)
// or a seccomp filter refuses it (ENOSYS, EPERM): one name at a time,
// following no symlink and no "..", each the directory entry's own.
func cgroupWalk(fd int, rel string) (int, error) {
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
		if err == nil && !entryIs(dir, name, next) {
			unix.Close(next)
			err = unix.EXDEV
		}
		unix.Close(dir)
		if err != nil {
			return -1, err
		}
		dir = next
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
