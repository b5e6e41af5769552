# SPDX-License-Identifier: LGPL-2.1-or-later
"""The container classifier of userlib/classify.c, rule for rule.

A cgroup path in, the runtime and identity out; pure, no I/O.  Works on
bytes like the C code (str is encoded with os.fsencode).  The parity test
runs it over tests/data/classify.tsv, the table the C classifier passes.
"""
import enum
import os
from dataclasses import dataclass

from ._errors import InvalidPathError

MAX_PATH_LEN = 65536
MAX_NAME_LEN = 255  # kernfs names are at most NAME_MAX bytes
NAME_SIZE = 256     # PEERCGROUP_NAME_SIZE
POD_SIZE = 72


class Runtime(enum.IntEnum):
    """enum peercgroup_runtime; str() is peercgroup_runtime_name()."""
    UNKNOWN = 0
    HOST = 1
    SYSTEM_SERVICE = 2
    USER_SESSION = 3
    DOCKER = 4
    PODMAN = 5
    CONTAINERD = 6
    CRIO = 7
    KUBERNETES = 8
    LXC = 9
    NSPAWN = 10
    MACHINE = 11

    def __str__(self):
        return _RUNTIME_NAMES[self]


_RUNTIME_NAMES = {
    Runtime.UNKNOWN: "unknown", Runtime.HOST: "host",
    Runtime.SYSTEM_SERVICE: "systemd-service", Runtime.USER_SESSION: "user-session",
    Runtime.DOCKER: "docker", Runtime.PODMAN: "podman",
    Runtime.CONTAINERD: "containerd", Runtime.CRIO: "cri-o",
    Runtime.KUBERNETES: "kubernetes", Runtime.LXC: "lxc",
    Runtime.NSPAWN: "systemd-nspawn", Runtime.MACHINE: "machined",
}


class ContainerFlags(enum.IntFlag):
    """PEERCGROUP_CT_*."""
    CONMON = 1 << 0      # the runtime's monitor (conmon)
    KUBERNETES = 1 << 1  # under kubepods
    ROOTLESS = 1 << 2    # inside user@UID.service
    MONITOR = 1 << 3     # lxc.monitor.*

    def names(self):
        """Comma-separated lowercase names, "-" for none."""
        return ",".join(f.name.lower() for f in ContainerFlags if f in self) or "-"


@dataclass
class Container:
    """What classify() found."""
    runtime: Runtime = Runtime.UNKNOWN
    flags: ContainerFlags = ContainerFlags(0)
    uid: int = -1   # owner from "user-UID.slice", or -1
    id: str = ""    # container id or name; unit for services and sessions
    pod: str = ""   # Kubernetes pod UID (dashes restored) or podman pod id
    qos: str = ""   # "guaranteed", "burstable", "besteffort" or ""


_HEX64, _NAME, _UNIT, _NONE = range(4)
_ANY = None

# (parent, prefix, suffix, id format, runtime, flags).
# Order matters: a longer prefix must precede the prefix it extends.
_RULES = (
    (_ANY, b"docker-", b".scope", _HEX64, Runtime.DOCKER, 0),
    (b"docker", b"", b"", _HEX64, Runtime.DOCKER, 0),
    (_ANY, b"libpod-conmon-", b".scope", _HEX64, Runtime.PODMAN, ContainerFlags.CONMON),
    (_ANY, b"libpod-", b".scope", _HEX64, Runtime.PODMAN, 0),
    (b"libpod_parent", b"libpod-conmon-", b"", _HEX64, Runtime.PODMAN, ContainerFlags.CONMON),
    (b"libpod_parent", b"libpod-", b"", _HEX64, Runtime.PODMAN, 0),
    (b"libpod_parent", b"conmon", b"", _NONE, Runtime.PODMAN, ContainerFlags.CONMON),
    (_ANY, b"cri-containerd-", b".scope", _HEX64, Runtime.CONTAINERD, 0),
    (_ANY, b"nerdctl-", b".scope", _HEX64, Runtime.CONTAINERD, 0),
    (_ANY, b"crio-conmon-", b".scope", _HEX64, Runtime.CRIO, ContainerFlags.CONMON),
    (_ANY, b"crio-", b".scope", _HEX64, Runtime.CRIO, 0),
    (_ANY, b"lxc.payload.", b"", _NAME, Runtime.LXC, 0),
    (_ANY, b"lxc.monitor.", b"", _NAME, Runtime.LXC, ContainerFlags.MONITOR),
    (b"lxc", b"", b"", _NAME, Runtime.LXC, 0),
    (_ANY, b"systemd-nspawn@", b".service", _UNIT, Runtime.NSPAWN, 0),
    (b"machine.slice", b"machine-", b".scope", _UNIT, Runtime.MACHINE, 0),
)

_HEX = frozenset(b"0123456789abcdef")
_ANYHEX = frozenset(b"0123456789abcdefABCDEF")


def _is_hex64(s):
    return len(s) == 64 and all(c in _HEX for c in s)


def _copy_name(a, unit):
    """Undo systemd's \\xNN escapes if unit; None if the result would be
    empty, hold NUL or '/', or not fit in NAME_SIZE with its NUL."""
    out = bytearray()
    i = 0
    while i < len(a):
        c = a[i]
        if (unit and c == 0x5C and i + 3 < len(a) and a[i + 1] == 0x78 and
                a[i + 2] in _ANYHEX and a[i + 3] in _ANYHEX):
            c = int(a[i + 2:i + 4], 16)
            i += 3
        if c in (0, 0x2F) or len(out) + 1 >= NAME_SIZE:
            return None
        out.append(c)
        i += 1
    return bytes(out) or None


def _dec(b):
    return os.fsdecode(b)


def _match(rule, parent, c, out):
    rparent, prefix, suffix, fmt, rt, flags = rule
    if rparent is not _ANY and parent != rparent:
        return False
    if not c.startswith(prefix) or len(c) < len(prefix) + len(suffix) or not c.endswith(suffix):
        return False
    ident = c[len(prefix):len(c) - len(suffix)]
    if fmt == _HEX64 and not _is_hex64(ident):
        return False
    if fmt == _NONE and ident:
        return False
    if fmt != _NONE:
        name = _copy_name(ident, fmt == _UNIT)
        if name is None:
            return False
        out.id = _dec(name)
    out.runtime = rt
    out.flags |= flags
    return True


def _set_pod_uid(out, uid):
    """Kubernetes pod UID: the systemd driver writes '_' for '-'."""
    if not uid or len(uid) >= POD_SIZE:
        return
    uid = uid.replace(b"_", b"-")
    if all(c in _ANYHEX or c == 0x2D for c in uid):
        out.pod = _dec(uid)


def _kube_context(c, out):
    """QoS and pod from "burstable", "pod<uid>" (cgroupfs) or from the dash
    separated words of "kubepods-burstable-pod<uid>.slice" (systemd)."""
    slice_ = c.endswith(b".slice")
    if slice_:
        c = c[:-6]
    # cgroupfs "pod<uid>" keeps the UID's dashes: one word
    for w in (c.split(b"-") if slice_ else [c]):
        if w in (b"burstable", b"besteffort"):
            out.qos = _dec(w)
        elif w.startswith(b"pod") and len(w) > 3:
            _set_pod_uid(out, w[3:])


def _is_kubepods(c):
    return c in (b"kubepods", b"kubepods.slice") or c.endswith(b"-kubepods.slice")


def _slice_uid(c, pfx, sfx):
    """b"user-1000.slice" -> 1000, else -1."""
    if not c.startswith(pfx) or not c.endswith(sfx) or len(c) <= len(pfx) + len(sfx):
        return -1
    digits = c[len(pfx):len(c) - len(sfx)]
    if len(digits) > 10 or not all(0x30 <= d <= 0x39 for d in digits):
        return -1
    uid = int(digits)
    return uid if uid <= 0xFFFFFFFF else -1


def classify(path):
    """Classify a cgroup path (str or bytes; a leading '/' is optional).

    The outermost container wins ("docker in kubepods" is docker).  Raises
    InvalidPathError (a ValueError and an OSError with errno EINVAL) for a
    path that cannot be a cgroup path: empty, NUL, "//", ".", "..", a name
    over 255 bytes, over 64 KiB.
    """
    p = os.fsencode(path) if isinstance(path, str) else bytes(path)
    out = Container()
    if not p or len(p) > MAX_PATH_LEN or b"\0" in p:
        raise InvalidPathError()
    if p.startswith(b"/"):
        p = p[1:]
    if not p:
        out.runtime = Runtime.HOST
        return out
    comps = p.split(b"/")
    # Validate first, so that a bad path never yields a partial answer.
    for c in comps:
        if not c or len(c) > MAX_NAME_LEN or c in (b".", b".."):
            raise InvalidPathError()

    parent, unit, first = b"", None, comps[0]
    kube = user_slice = found = False
    for c in comps:
        if any(_match(r, parent, c, out) for r in _RULES):
            found = True
            break
        if _is_kubepods(c):
            kube = True
        elif kube:
            _kube_context(c, out)
            # cgroupfs driver: /kubepods/<qos>/pod<uid>/<container id>
            if out.pod and _is_hex64(c) and parent.startswith(b"pod"):
                out.id = _dec(c)
                out.runtime = Runtime.KUBERNETES
                found = True
                break
        if c == b"user.slice" and parent == b"":
            user_slice = True
        if out.uid < 0:
            out.uid = _slice_uid(c, b"user-", b".slice")
        if _slice_uid(c, b"user@", b".service") >= 0:
            out.flags |= ContainerFlags.ROOTLESS
        # podman pods: machine-libpod_pod_<id>.slice, user-libpod_pod_<id>.slice
        if c.endswith(b".slice"):
            i = c.find(b"libpod_pod_")
            if i >= 0 and _is_hex64(c[i + 11:len(c) - 6]):
                out.pod = _dec(c[i + 11:len(c) - 6])
        if c.endswith(b".service") or c.endswith(b".scope"):
            unit = c
        parent = c

    if kube:
        out.flags |= ContainerFlags.KUBERNETES
        if out.pod and not out.qos:
            out.qos = "guaranteed"  # no QoS level in the path
        if not found:
            out.runtime = Runtime.KUBERNETES
        return out
    if found:
        return out

    # Not a container: only meaningful facts below, never a guess.
    out.flags &= ~ContainerFlags.ROOTLESS
    out.pod = ""
    if user_slice:
        out.runtime = Runtime.USER_SESSION
    elif unit is not None and first in (b"system.slice", b"init.scope"):
        out.runtime = Runtime.SYSTEM_SERVICE
    if out.runtime != Runtime.UNKNOWN and unit is not None:
        name = _copy_name(unit, False)
        if name is not None:
            out.id = _dec(name)
    return out
