# SPDX-License-Identifier: LGPL-2.1-or-later
"""The cgroup (container) of the peer of an AF_UNIX socket.

The peercgroup kernel module records, when an AF_UNIX stream or seqpacket
connection is made, the cgroup of each side, the way SO_PEERCRED records
credentials.  get() asks /dev/peercgroup for that record (pure Python:
fcntl.ioctl and struct); classify() names the container runtime of a
cgroup path, and classify_peer() a record, with a look at who named
its cgroup.  Errors are OSError subclasses with the C library's errno.

    import socket, peercgroup
    conn, _ = listener.accept()
    info = peercgroup.get(conn)
    ct = peercgroup.classify_peer(info)
    print(info.path, ct.runtime, ct.id)
"""
import enum
import errno as _errno
import os as _os
from dataclasses import dataclass
from typing import Optional

from . import _device
from ._errors import (ABIMismatchError, InvalidPathError, ModuleNotLoadedError,
                      NoRecordError, NotConnectedError, PeercgroupError, strerror)
from ._device import Module, module_info
from .classify import Container, ContainerFlags, Namespace, Runtime, classify
from ._owner import classify_peer

__all__ = [
    "get", "Info", "Flags", "module_info", "Module", "classify", "classify_peer", "Container",
    "ContainerFlags", "Namespace", "Runtime", "PeercgroupError", "NoRecordError",
    "ModuleNotLoadedError", "NotConnectedError", "ABIMismatchError",
    "InvalidPathError", "strerror", "__version__",
]


def _read_version():
    try:
        with open(_os.path.join(_os.path.dirname(__file__), "VERSION")) as f:
            return f.read().strip()
    except OSError:
        return "unknown"


#: The project's VERSION.
__version__ = _read_version()


class Flags(enum.IntFlag):
    """What happened since the connection was made (module's result flags)."""
    CGROUP_REMOVED = 1 << 0
    PEER_EXITED = 1 << 1


_FLAGS = [Flags(i) for i in range(4)]  # Flags() is slow: once per value


@dataclass(frozen=True)
class Info:
    """The peer's cgroup as of connect(), listen() or socketpair()."""
    #: cgroup v2 id: the inode number of the cgroup directory; 0 for a
    #: cgroup outside the caller's cgroup namespace.
    cgroup_id: int
    #: Path relative to the caller's cgroup namespace, as /proc/self/cgroup
    #: prints it; None with no_path=True.  Not UTF-8?  os.fsencode() it.
    path: Optional[str]
    #: The peer's pid in the caller's pid namespace; 0 if not visible there.
    pid: int
    flags: Flags


def _fileno(sock_or_fd):
    if isinstance(sock_or_fd, int):
        return sock_or_fd
    try:
        fd = sock_or_fd.fileno()
    except (AttributeError, ValueError, OSError):
        raise PeercgroupError(_errno.EBADF) from None
    if not isinstance(fd, int):
        raise PeercgroupError(_errno.EBADF)
    return fd


def get(sock_or_fd, *, no_path=False):
    """The cgroup record of the peer of a connected AF_UNIX stream or
    seqpacket socket (a socket.socket, anything with fileno(), or an fd).

    Raises NoRecordError (ENODATA), ModuleNotLoadedError (ENOPKG),
    NotConnectedError (ENOTCONN), ABIMismatchError (EPROTO), or
    PeercgroupError with the errno: EBADF, ENOTSOCK, EAFNOSUPPORT,
    EOPNOTSUPP (no AF_UNIX stream socket), EREMOTE (withheld), ENAMETOOLONG,
    or the device's (ENODEV, EACCES, EMFILE, ...).
    One ioctl whatever the path's length, as peercgroup_get(3): PATH_MAX
    bytes always suffice, so a module answering ERANGE is ABIMismatchError.
    """
    fd = _fileno(sock_or_fd)
    if not 0 <= fd <= 0x7FFFFFFF:  # the ABI's sockfd is 32 bits
        raise PeercgroupError(_errno.EBADF)
    cgroup_id, path, pid, flags = _device.query(fd, no_path)
    # Another thread may have closed the socket and an accept() taken its
    # number before the ioctl: then the answer is another connection's.
    # socket.close() forgets the number before it closes it, so the same
    # number after the ioctl means the ioctl asked about this socket.
    if _fileno(sock_or_fd) != fd:
        raise PeercgroupError(_errno.EBADF)
    return Info(cgroup_id, None if path is None else _os.fsdecode(path), pid, _FLAGS[flags & 3])
