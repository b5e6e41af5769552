# SPDX-License-Identifier: LGPL-2.1-or-later
"""Error mapping, and the errors that need no module."""
import errno
import os
import socket

import pytest

import peercgroup
from peercgroup import _device, _errors


@pytest.mark.parametrize("e,want", [
    (errno.ENOENT, errno.ENOPKG), (errno.ENXIO, errno.ENOPKG), (errno.ENODEV, errno.ENOPKG),
    (errno.EPERM, errno.EACCES), (errno.EACCES, errno.EACCES), (errno.EMFILE, errno.EMFILE)])
def test_open_errno(e, want):
    assert _errors.map_open_errno(e) == want


def test_open_errno_module_loaded():
    # no node, but the module is loaded: hidden from this process, as in C
    assert _errors.map_open_errno(errno.ENOENT, loaded=True) == errno.ENODEV
    assert _errors.map_open_errno(errno.ENXIO, loaded=True) == errno.ENOPKG


@pytest.mark.parametrize("e,want", [
    (errno.EINVAL, errno.EPROTO), (errno.E2BIG, errno.EPROTO), (errno.ENOTTY, errno.EPROTO),
    (errno.ENODATA, errno.ENODATA), (errno.ENOTCONN, errno.ENOTCONN), (errno.EBADF, errno.EBADF),
    (errno.ENOTSOCK, errno.ENOTSOCK), (errno.EOPNOTSUPP, errno.EOPNOTSUPP),
    (errno.EAFNOSUPPORT, errno.EAFNOSUPPORT)])
def test_query_errno(e, want):
    assert _errors.map_query_errno(e) == want


@pytest.mark.parametrize("e,cls", [
    (errno.ENODATA, peercgroup.NoRecordError),
    (errno.ENOPKG, peercgroup.ModuleNotLoadedError),
    (errno.ENOTCONN, peercgroup.NotConnectedError),
    (errno.EPROTO, peercgroup.ABIMismatchError),
    (errno.EBADF, peercgroup.PeercgroupError)])
def test_exception_classes(e, cls):
    x = _errors.error(e)
    assert type(x) is cls and isinstance(x, OSError) and x.errno == e
    assert x.strerror == peercgroup.strerror(e)


def test_messages_are_the_c_librarys():
    assert peercgroup.strerror(-errno.ENODATA) == \
        "no cgroup record for this connection (made before the module was loaded?)"
    assert str(peercgroup.NoRecordError()).startswith(f"[Errno {errno.ENODATA}] no cgroup record")


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    yield a, b
    a.close()
    b.close()
    _device.set_device_path(None)


@pytest.mark.parametrize("device,cls", [
    ("absent", peercgroup.ModuleNotLoadedError),
    ("regular", peercgroup.ModuleNotLoadedError),   # not a character device
    ("/dev/null", peercgroup.ABIMismatchError)])   # a device that is not ours
def test_device_errors(pair, tmp_path, device, cls):
    if device == "regular":
        (tmp_path / "regular").write_bytes(b"")
    _device.set_device_path(device if device.startswith("/") else str(tmp_path / device))
    with pytest.raises(cls):
        peercgroup.get(pair[0])
    with pytest.raises(cls):
        peercgroup.module_info()


def test_bad_arguments(pair):
    for bad in (-1, object(), "3", 2**31, 2**32 + pair[0].fileno()):
        with pytest.raises(peercgroup.PeercgroupError) as e:
            peercgroup.get(bad)
        assert e.value.errno == errno.EBADF
    a, _ = pair
    a.close()  # fileno() -1
    with pytest.raises(peercgroup.PeercgroupError) as e:
        peercgroup.get(a)
    assert e.value.errno == errno.EBADF


def test_classify_invalid_is_valueerror():
    for p in ("", "//", "/a/./b", "/a/..", "/../", "a\0b", "/" + "x" * 256):
        with pytest.raises(ValueError):
            peercgroup.classify(p)


def test_version_is_the_projects():
    from conftest import project_file
    with open(project_file("VERSION")) as f:
        assert peercgroup.__version__ == f.read().strip()


MESSAGES = os.environ.get("PEERCGROUP_MESSAGES")


@pytest.mark.skipif(not MESSAGES, reason="make check-bindings passes PEERCGROUP_MESSAGES")
def test_messages_are_the_c_librarys():
    """The C library's peercgroup_strerror() texts, dumped from it: the same
    words for every errno it has one for, and none of our own for any other."""
    c = {}
    with open(MESSAGES, encoding="utf-8") as f:
        for line in f:
            num, text = line.rstrip("\n").split("\t", 1)
            c[int(num)] = text
    assert len(c) >= 10
    for e in range(1, 4096):
        assert peercgroup.strerror(e) == c.get(e, os.strerror(e)), e
