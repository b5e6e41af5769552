# SPDX-License-Identifier: LGPL-2.1-or-later
"""/dev/peercgroup: opened once per process, its ABI version checked once."""
import array
import errno
import fcntl
import os
import stat
import threading
from dataclasses import dataclass

from . import _abi
from ._errors import error, map_open_errno, map_query_errno

_lock = threading.Lock()
_buffers = threading.local()
_fd = -1
_query_flags = 0
_dev = (0, 0)  # (st_rdev, st_ino) of _fd, to know it again
_path = _abi.DEVICE_PATH


def _is_ours(fd):
    """Is fd still the device this process opened?"""
    try:
        st = os.fstat(fd)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode) and (st.st_rdev, st.st_ino) == _dev


def _forget_in_child():
    # The descriptor is inherited but must not be shared with the parent's
    # bookkeeping; the child reopens lazily.  It is closed only if it is
    # still the device: the program may have closed it and reused the
    # number.
    global _fd, _lock
    _lock = threading.Lock()
    if _fd >= 0 and _is_ours(_fd):
        os.close(_fd)
    _fd = -1


os.register_at_fork(after_in_child=_forget_in_child)


def _ioctl(fd, req, buf):
    while True:
        try:
            fcntl.ioctl(fd, req, buf, True)
            return 0
        except InterruptedError:
            continue
        except OSError as e:
            return e.errno


def _version(fd):
    """(size, abi_version, features, query_flags, query_size, name) or raise."""
    buf = bytearray(_abi.VERSION.size)
    _abi.VERSION.pack_into(buf, 0, _abi.VERSION.size, 0, 0, 0, 0, b"")
    e = _ioctl(fd, _abi.IOC_VERSION, buf)
    if e:
        raise error(e if e in (errno.EFAULT, errno.ENOMEM) else errno.EPROTO)
    v = _abi.VERSION.unpack(buf)
    if v[1] != _abi.ABI_VERSION:
        raise error(errno.EPROTO)
    return v


def _module_loaded():
    """The module's sysfs directory exists, even when this process cannot
    see or open the device node (a sandbox)."""
    return os.path.isdir("/sys/module/peercgroup")


def device():
    """The open device descriptor; raises if there is none (not cached)."""
    global _fd, _query_flags, _dev
    fd = _fd
    if fd >= 0:
        return fd
    with _lock:
        if _fd >= 0:
            return _fd
        try:
            fd = os.open(_path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY)
        except OSError as e:
            raise error(map_open_errno(e.errno, _path == _abi.DEVICE_PATH and _module_loaded())) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISCHR(st.st_mode):
                raise error(errno.ENOPKG)  # a stray file, not a device node
            _query_flags = _version(fd)[3]
        except BaseException:
            os.close(fd)
            raise
        _dev = (st.st_rdev, st.st_ino)
        _fd = fd
        return fd


def _recheck(fd):
    """A query on fd (from device()) failed, or is about to be made off the
    fast path: (fd, True) if fd is still the device (an error was the
    query's).  If not, because the program closed it (a daemon closing its
    descriptors), it is forgotten, never closed (the number may be the
    program's now), and the device opened again: (new fd, False).  As
    pcg_device_recheck() in C."""
    global _fd
    if _is_ours(fd):
        return fd, True
    with _lock:
        # another thread may have opened it again at that number meanwhile
        if _fd == fd and not _is_ours(fd):
            _fd = -1
    return device(), False


def _query_ioctl(dfd, q):
    """One PEERCGROUP_IOC_QUERY, asked once more on a device descriptor
    the program closed and the device opened again, as in C."""
    e = _ioctl(dfd, _abi.IOC_QUERY, q)
    # what a closed or foreign descriptor answers: still ours?
    if e not in (errno.EBADF, errno.ENOTTY, errno.EINVAL):
        return e
    first = bytes(q)
    dfd, ours = _recheck(dfd)
    # The device's own answer, unless EBADF: another thread may have
    # opened the device again at the number that failed.  A bad socket
    # answers EBADF twice.
    if ours and e != errno.EBADF:
        return e
    q[:] = first
    return _ioctl(dfd, _abi.IOC_QUERY, q)


def set_device_path(path=None):
    """Use another device node (None: /dev/peercgroup).  Tests only."""
    global _fd, _path
    with _lock:
        if _fd >= 0 and _is_ours(_fd):
            os.close(_fd)
        _fd = -1
        _path = path or _abi.DEVICE_PATH


@dataclass(frozen=True)
class Module:
    """The loaded kernel module (PEERCGROUP_IOC_VERSION)."""
    abi_version: int
    features: int
    query_flags: int
    query_size: int
    version: str


def module_info():
    """Describe the loaded module; ModuleNotLoadedError if there is none."""
    # not on a query's path: look before asking, not after a failure
    v = _version(_recheck(device())[0])
    return Module(v[1], v[2], v[3], v[4], v[5].split(b"\0", 1)[0].decode("ascii", "replace"))


def query(sockfd, no_path):
    """One answer: (cgroup_id, path bytes or None, pid, result_flags)."""
    dfd = device()
    q = bytearray(_abi.QUERY.size)
    if no_path and _query_flags & _abi.QUERY_NO_PATH:
        _abi.QUERY.pack_into(q, 0, _abi.QUERY.size, _abi.QUERY_NO_PATH, sockfd,
                             0, 0, 0, 0, 0, 0, 0)
        e = _query_ioctl(dfd, q)
        if e:
            raise error(map_query_errno(e))
        f = _abi.QUERY.unpack(q)
        return f[5], None, f[7], f[8]
    # One ioctl whatever the length, as in C: the ABI bounds every path
    # below PATH_MAX (longer is ENAMETOOLONG), so there is no retry, and no
    # rename between two calls to race.
    # One buffer per thread, reused; taken while in use, so that a signal
    # handler calling get() in between gets its own.
    buf = _buffers.__dict__.pop("path", None)
    if buf is None:
        buf = array.array("B", bytes(_abi.PATH_MAX))
    try:
        addr, size = buf.buffer_info()
        _abi.QUERY.pack_into(q, 0, _abi.QUERY.size, 0, sockfd, size, addr,
                             0, 0, 0, 0, 0)
        e = _query_ioctl(dfd, q)
        if e == errno.ERANGE:
            raise error(errno.EPROTO)  # the module broke the ABI's promise
        if e:
            raise error(map_query_errno(e))
        f = _abi.QUERY.unpack(q)
        path_len = f[6]
        if path_len >= size or buf[path_len] != 0:
            raise error(errno.EPROTO)  # never hand out an unterminated string
        path = None if no_path else buf[:path_len].tobytes()
    finally:
        _buffers.path = buf
    return f[5], path, f[7], f[8]
