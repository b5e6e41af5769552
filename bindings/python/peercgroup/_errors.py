# SPDX-License-Identifier: LGPL-2.1-or-later
"""Exceptions: OSError subclasses with errno set, one per common cause."""
import errno as _errno

# The C library's peercgroup_strerror() texts, so that Python and C
# daemons log the same words (make check-bindings compares them).
_MESSAGES = {
    _errno.ENOPKG: "peercgroup kernel module is not loaded (no /dev/peercgroup): "
                   "run 'modprobe peercgroup'; if that fails, 'dkms status peercgroup'",
    _errno.ENODEV: "peercgroup module is loaded but /dev/peercgroup is not visible here "
                   "(a sandboxed service? with PrivateDevices=yes add BindReadOnlyPaths=/dev/peercgroup "
                   "and DeviceAllow=/dev/peercgroup r, or open the device before sandboxing: "
                   "peercgroup_open_device())",
    _errno.EACCES: "permission denied opening /dev/peercgroup (a service with "
                   "DevicePolicy= or PrivateDevices= needs DeviceAllow=/dev/peercgroup r; "
                   "the node itself is mode 0666)",
    _errno.EPROTO: "peercgroup module speaks an incompatible ABI "
                   "(library and module from different releases? 'dkms status peercgroup')",
    _errno.ENODATA: "no cgroup record for this connection (made before the module was loaded?)",
    _errno.EREMOTE: "withheld: the peer is outside both this process's pid and cgroup "
                    "namespaces, so the kernel would not tell it either",
    _errno.ENXIO: "the peer's cgroup names no such unit, owner, machine or container",
    _errno.ENOTCONN: "socket is not connected (or is listening)",
    _errno.EOPNOTSUPP: "not a stream or seqpacket socket (datagram sockets have no peer record)",
    _errno.EAFNOSUPPORT: "not an AF_UNIX socket",
    _errno.ENOTSOCK: "file descriptor is not a socket",
    _errno.EBADF: "bad file descriptor",
    _errno.ESRCH: "peer process is gone or not visible (live query)",
    _errno.ENOMEDIUM: "peer process has no cgroup v2 membership (live query)",
    _errno.EINVAL: "invalid argument",
    _errno.ENOMEM: "out of memory",
    _errno.EFAULT: "bad address",
    _errno.ENAMETOOLONG: "the peer's cgroup path does not fit in PATH_MAX",
}


def strerror(err):
    """peercgroup_strerror(): what errno err means here."""
    import os
    return _MESSAGES.get(abs(err)) or os.strerror(abs(err))


class PeercgroupError(OSError):
    """Any failure of this package; .errno is the C library's errno."""

    errno_value = None

    def __init__(self, err=None, msg=None):
        err = err if err is not None else self.errno_value
        super().__init__(err, msg or strerror(err))


class NoRecordError(PeercgroupError):
    """ENODATA: no record for this connection (made before the module was loaded?)."""
    errno_value = _errno.ENODATA


class ModuleNotLoadedError(PeercgroupError):
    """ENOPKG: no /dev/peercgroup, or no driver behind it."""
    errno_value = _errno.ENOPKG


class NotConnectedError(PeercgroupError):
    """ENOTCONN: the socket is not connected, or is listening."""
    errno_value = _errno.ENOTCONN


class ABIMismatchError(PeercgroupError):
    """EPROTO: the loaded module speaks another ABI version."""
    errno_value = _errno.EPROTO


class InvalidPathError(PeercgroupError, ValueError):
    """EINVAL from classify(): not something a cgroup path can be."""
    errno_value = _errno.EINVAL

    def __init__(self, msg="not a cgroup path"):
        super().__init__(_errno.EINVAL, msg)


_BY_ERRNO = {c.errno_value: c for c in
             (NoRecordError, ModuleNotLoadedError, NotConnectedError, ABIMismatchError)}


def error(err):
    """The exception for errno err: its own class, or PeercgroupError."""
    cls = _BY_ERRNO.get(err)
    return cls() if cls else PeercgroupError(err)


def map_open_errno(e, loaded=False):
    """errno of open("/dev/peercgroup") -> the library's errno; loaded: the
    module's sysfs directory exists, so a missing node is hidden from us."""
    if e == _errno.ENOENT:
        return _errno.ENODEV if loaded else _errno.ENOPKG
    if e in (_errno.ENXIO, _errno.ENODEV):
        return _errno.ENOPKG
    if e in (_errno.EPERM, _errno.EACCES):
        return _errno.EACCES
    return e


def map_query_errno(e):
    """errno of PEERCGROUP_IOC_QUERY -> the library's errno.

    This package always sends valid flags, size and zeroed reserved bytes,
    so these mean another ABI, or a device that is not peercgroup's.
    """
    if e in (_errno.EINVAL, _errno.E2BIG, _errno.ENOTTY):
        return _errno.EPROTO
    return e
