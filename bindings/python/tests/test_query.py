# SPDX-License-Identifier: LGPL-2.1-or-later
"""get() against a fake module that counts its query ioctls."""
import ctypes
import errno
import os

import pytest

import peercgroup
from peercgroup import _abi, _device


class FakeModule:
    """Answers PEERCGROUP_IOC_QUERY with answer(q) -> (path, term, path_len,
    errno): path and the byte term after it are written at q.path when they
    fit in q.path_size and errno is 0."""

    def __init__(self, answer):
        self.answer = answer
        self.calls = 0

    def ioctl(self, fd, req, q):
        assert req == _abi.IOC_QUERY
        self.calls += 1
        f = list(_abi.QUERY.unpack(q))
        assert f[0] == _abi.QUERY.size and f[1] == 0 and f[9] == 0
        path, term, path_len, e = self.answer(f[3])
        data = path + term
        if not e and len(data) <= f[3]:
            # the module writes through the user pointer; so does this
            ctypes.memmove(f[4], data, len(data))
        f[5], f[6], f[7] = 1234, path_len, 42
        _abi.QUERY.pack_into(q, 0, *f)
        return e


@pytest.fixture
def fake(monkeypatch):
    fd = os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC)
    st = os.fstat(fd)
    monkeypatch.setattr(_device, "_fd", fd)
    monkeypatch.setattr(_device, "_dev", (st.st_rdev, st.st_ino), raising=False)
    monkeypatch.setattr(_device, "_query_flags", _abi.QUERY_NO_PATH)

    def install(answer):
        m = FakeModule(answer)
        monkeypatch.setattr(_device, "_ioctl", m.ioctl)
        return m
    yield install
    _device.set_device_path(None)  # closes fd


def well_behaved(path, term=b"\0"):
    """The module's answer: ERANGE when path and its NUL do not fit."""
    def answer(size):
        return path, term, len(path), errno.ERANGE if size < len(path) + 1 else 0
    return answer


def test_path_max_minus_one_in_one_ioctl(fake):
    # the longest path the ABI allows comes back whole, from one ioctl
    path = b"/" + b"x" * (_abi.PATH_MAX - 2)
    assert len(path) == 4095
    m = fake(well_behaved(path))
    info = peercgroup.get(0)
    assert info.path == path.decode() and info.cgroup_id == 1234 and info.pid == 42
    assert m.calls == 1
    # a second call reuses the thread's buffer and still gets it whole
    assert peercgroup.get(0).path == path.decode() and m.calls == 2

    # still never an unterminated string, at the last byte of the buffer
    m = fake(well_behaved(path, term=b"y"))
    with pytest.raises(peercgroup.ABIMismatchError):
        peercgroup.get(0)
    assert m.calls == 1


@pytest.mark.parametrize("answer", [
    lambda size: (b"", b"", 4096, errno.ERANGE),
    # always one byte more than the buffer: renamed longer between calls
    lambda size: (b"", b"", size, errno.ERANGE),
], ids=["path_len-4096", "path_len-growing"])
def test_erange_is_eproto(fake, answer):
    # ERANGE into PATH_MAX bytes breaks the ABI's promise: EPROTO, no retry
    m = fake(answer)
    with pytest.raises(peercgroup.ABIMismatchError) as e:
        peercgroup.get(0)
    assert e.value.errno == errno.EPROTO
    assert m.calls == 1


def test_no_path_only_where_the_module_takes_the_flag(monkeypatch):
    # a module whose features are all set but that takes no query flag:
    # the id must come from a path query, never from a refused flag
    sent = []

    def ioctl(fd, req, buf):
        if req == _abi.IOC_VERSION:
            _abi.VERSION.pack_into(buf, 0, _abi.VERSION.size, _abi.ABI_VERSION, 0x3f, 0,
                                   _abi.QUERY.size, b"fake")
            return 0
        f = list(_abi.QUERY.unpack(buf))
        sent.append(f[1])
        if f[1]:
            return errno.EINVAL
        ctypes.memmove(f[4], b"/\0", 2)
        f[5], f[6], f[7] = 99, 1, 1
        _abi.QUERY.pack_into(buf, 0, *f)
        return 0
    monkeypatch.setattr(_device, "_ioctl", ioctl)
    _device.set_device_path("/dev/null")  # a character device, as the node is
    try:
        assert peercgroup.module_info().query_flags == 0
        assert peercgroup.get(0, no_path=True).cgroup_id == 99
        assert sent == [0]
    finally:
        _device.set_device_path(None)


def test_a_socket_closed_during_the_query_gets_no_answer(fake):
    """Another thread closes the socket and an accept() takes its number
    while the ioctl runs: the answer would be that connection's."""
    import socket
    a, b = socket.socketpair()
    try:
        def answer(size):
            fd = a.fileno()
            a.close()
            c, d = socket.socketpair()  # takes the number back
            holder.extend((c, d))
            assert fd in (c.fileno(), d.fileno())
            return b"/other.slice", b"\0", 12, 0
        holder = []
        fake(answer)
        with pytest.raises(peercgroup.PeercgroupError) as e:
            peercgroup.get(a)
        assert e.value.errno == errno.EBADF
        for s in holder:
            s.close()
    finally:
        a.close()
        b.close()


class AsTheKernel:
    """The kernel's side of a descriptor in front of a fake module: a
    closed one is EBADF, any file but a character device ENOTTY (counted);
    the version ioctl is answered too, so /dev/null opens as the device."""

    def __init__(self, module):
        self.module = module
        self.wrong = 0

    def ioctl(self, fd, req, buf):
        try:
            st = os.fstat(fd)
        except OSError:
            return errno.EBADF
        if not (st.st_mode & 0o170000 == 0o020000):
            self.wrong += 1
            return errno.ENOTTY
        if req == _abi.IOC_VERSION:
            _abi.VERSION.pack_into(buf, 0, _abi.VERSION.size, _abi.ABI_VERSION, 0,
                                   _abi.QUERY_NO_PATH, _abi.QUERY.size, b"9.8.7-fake")
            return 0
        return self.module.ioctl(fd, req, buf)


def test_a_device_the_program_closed_is_opened_again(fake, monkeypatch):
    """A daemon closes every descriptor, and a file of its own takes the
    number: the next query opens the device again and answers; the
    program's file stays open; module_info() never asks it.  As in C."""
    k = AsTheKernel(fake(well_behaved(b"/system.slice/sshd.service")))
    monkeypatch.setattr(_device, "_ioctl", k.ioctl)
    monkeypatch.setattr(_device, "_path", "/dev/null")
    old = _device._fd
    os.close(old)
    other = os.open("/proc/self/status", os.O_RDONLY | os.O_CLOEXEC)
    try:
        assert other == old
        assert peercgroup.get(0).path == "/system.slice/sshd.service"
        assert k.wrong == 1
        os.fstat(other)  # still open
        assert _device._fd not in (-1, other)
        os.close(_device._fd)
        assert peercgroup.get(0).path == "/system.slice/sshd.service"
        os.close(_device._fd)
        third = os.open("/proc/self/status", os.O_RDONLY | os.O_CLOEXEC)
        try:
            k.wrong = 0
            assert peercgroup.module_info().version == "9.8.7-fake"
            assert k.wrong == 0
        finally:
            os.close(third)
    finally:
        os.close(other)


def test_a_bad_socket_is_ebadf_after_one_check(fake):
    def answer(size):
        return b"", b"\0", 0, errno.EBADF
    m = fake(answer)
    with pytest.raises(peercgroup.PeercgroupError) as e:
        peercgroup.get(0)
    assert e.value.errno == errno.EBADF
    assert m.calls == 2  # the device checked, the socket asked again


def test_a_fork_child_keeps_the_programs_descriptor(fake):
    """The at-fork handler closes the inherited descriptor only if it is
    still the device: the program may have reused the number."""
    old = _device._fd
    os.close(old)
    other = os.open("/proc/self/status", os.O_RDONLY | os.O_CLOEXEC)
    try:
        assert other == old
        pid = os.fork()
        if pid == 0:
            try:
                os.fstat(other)
                os._exit(0)
            except OSError:
                os._exit(1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, "the child's fd was closed"
    finally:
        os.close(other)

