# SPDX-License-Identifier: LGPL-2.1-or-later
"""Who named a cgroup, as libpeercgroup's owner.c tells it.

A container's name is only a directory name, and whoever may create a
directory beside it chose it.  systemd hands a delegated subtree
(Delegate=yes with User=, every user@UID.service) to its user by chown(),
and the cgroups that user makes below are the user's: any name.  Only a
name whose parent cgroup root owns, and nobody else may write, is root's.
"""
import ctypes
import errno
import os
import stat

from .classify import Container, ContainerFlags, _caller_namespace_now, _classify_named

CGROUP2_DIRS = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")
CGROUP2_MAGIC = 0x63677270

#: Tests put a tree of their own here, its owner standing for root.
_test_root = None
_test_root_uid = 0


_libc = ctypes.CDLL(None, use_errno=True)


def _fs_type(fd):
    """fstatfs(fd).f_type (os has no statfs()), or None.  f_type is the
    first member of struct statfs, a long on Linux; the buffer is larger
    than the struct on every architecture."""
    buf = ctypes.create_string_buffer(512)
    if _libc.fstatfs(fd, buf) != 0:
        return None
    return ctypes.c_long.from_buffer(buf).value


def _cgroup2_open():
    """An O_PATH fd of where this process sees cgroup v2, by the mount's
    type alone (as C's pcg_cgroup2_open()), or None."""
    if _test_root is not None:
        try:
            return os.open(_test_root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return None
    for d in CGROUP2_DIRS:
        try:
            fd = os.open(d, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            continue
        if _fs_type(fd) == CGROUP2_MAGIC:
            return fd
        os.close(fd)
    return None


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]


_SYS_OPENAT2 = 437  # one number on every architecture (5.6)
# RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH
_RESOLVE_ON_THIS_MOUNT = 0x01 | 0x04 | 0x08
_O_DIR_ONLY = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _openat2(top_fd, rel):
    """openat2() of directory rel below top_fd on that mount alone: an fd,
    or the errno."""
    how = _OpenHow(_O_DIR_ONLY, 0, _RESOLVE_ON_THIS_MOUNT)
    fd = _libc.syscall(ctypes.c_long(_SYS_OPENAT2), ctypes.c_int(top_fd),
                       ctypes.c_char_p(rel), ctypes.byref(how),
                       ctypes.c_size_t(ctypes.sizeof(how)))
    return (fd, 0) if fd >= 0 else (None, ctypes.get_errno())


def _entry_is(dir_fd, name, child_fd):
    """child_fd, just opened as name in directory dir_fd, is what dir_fd's
    file system has there, as C's entry_is(): on the same file system, the
    inode name's directory entry names.  A mount on name shows something
    else, unless it binds that very cgroup there (systemd-nspawn without a
    cgroup namespace binds the container's cgroup on itself).  readdir()
    gives the file system's own entry, whatever is mounted on it."""
    d, c = os.fstat(dir_fd), os.fstat(child_fd)
    if d.st_dev != c.st_dev:
        return False
    fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        with os.scandir(fd) as entries:
            return any(e.name == os.fsdecode(name) and e.inode() == c.st_ino
                       for e in entries)
    finally:
        os.close(fd)


def _walk(top_fd, rel):
    """_openat2() where it crossed a mount (EXDEV) or a seccomp filter
    refuses it (ENOSYS, EPERM): one name at a time, following no symlink
    and no "..", each the directory entry's own.  An fd, or None."""
    fd = None
    try:
        fd = os.dup(top_fd)
        for name in rel.split(b"/"):
            if name == b"..":
                return None
            if name:
                nxt = os.open(name, _O_DIR_ONLY, dir_fd=fd)
                try:
                    same = _entry_is(fd, name, nxt)
                finally:
                    os.close(fd)
                    fd = nxt
                if not same:
                    return None
        fd, found = None, fd
        return found
    except OSError:
        return None
    finally:
        if fd is not None:
            os.close(fd)


def _is_dir(top_fd, path):
    """stat() of the directory at path below the mount at top_fd, on that
    mount alone, as C's pcg_cgroup_stat(): a mount on a directory below it
    (another cgroup bound there, a tmpfs) would show another inode, or
    another owner, at a cgroup's path; only a cgroup bound on its own path
    shows the same.  Relative to the fd: a path of
    PATH_MAX - 1 bytes, the longest the module gives, is found whatever the
    mount point's name."""
    rel = path.lstrip(b"/") or b"."
    fd, err = _openat2(top_fd, rel)
    if fd is None and err in (errno.EXDEV, errno.ENOSYS, errno.EPERM):
        fd = _walk(top_fd, rel)
    if fd is None:
        return None
    try:
        return os.fstat(fd)
    except OSError:
        return None
    finally:
        os.close(fd)


def _name_proven(path, named, cgroup_id):
    """Only root can have named cgroup named (bytes), on the way to path,
    the path of cgroup_id.  Which part of the tree the mount shows is not
    read from mountinfo: path leads to the peer's cgroup only if the
    directory's inode is its id, and then every prefix of path leads to one
    of its ancestors.  Owners are as this process sees them."""
    if not cgroup_id or named == b"/.." or named.startswith(b"/../"):
        return False
    top_fd = _cgroup2_open()
    if top_fd is None:
        return False
    try:
        st = _is_dir(top_fd, path)
        if st is None or st.st_ino != cgroup_id:
            return False
        st = _is_dir(top_fd, named.rsplit(b"/", 1)[0])
    finally:
        os.close(top_fd)
    return (st is not None and st.st_uid == _test_root_uid
            and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def classify_peer(info):
    """classify(info.path) for the record get() returned, as
    peercgroup_peer_classify(3) does: with ContainerFlags.UNPROVEN where a
    user other than root may have named the cgroup the answer rests on
    (two stat()s, and a look at the mount).  Where it is set, or ROOTLESS
    or MONITOR, the id names no container to trust.  The calling thread's
    cgroup namespace is looked at again, not taken from classify()'s
    once-per-process look: the path is relative to it."""
    if not info.path:  # get(no_path=True): nothing to classify, as in Go
        return Container()
    p = os.fsencode(info.path) if isinstance(info.path, str) else bytes(info.path)
    # the path is relative to the caller's cgroup namespace now: looked at
    # again, as the caller may have unshared it since its first classify()
    out, named = _classify_named(p, _caller_namespace_now())
    # Past "/.." nothing can be looked at, and the names that follow are
    # not the top of the tree: whoever may create cgroups beside the
    # caller's namespace root may have made them.
    if out.up or (named is not None and not _name_proven(p, named, info.cgroup_id)):
        out.flags |= ContainerFlags.UNPROVEN
    return out
