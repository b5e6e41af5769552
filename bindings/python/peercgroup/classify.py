# SPDX-License-Identifier: LGPL-2.1-or-later
"""The container classifier of userlib/classify.c, rule for rule.

A cgroup path in, the runtime and identity out; no I/O but one cached look
at the caller's cgroup namespace.  Works on bytes like the C code (str is
encoded with os.fsencode).  The parity test runs it over
tests/data/classify.tsv, the table the C classifier passes.
"""
import enum
import os
from dataclasses import dataclass

from ._errors import InvalidPathError

MAX_PATH_LEN = 65536
CGROUP_NAME_MAX = 255  # kernfs names are at most NAME_MAX bytes
INITIAL_CGROUP_NS_INO = 0xEFFFFFFB  # PROC_CGROUP_INIT_INO
# Field sizes of struct peercgroup_class, NUL included: names that do not
# fit are not reported, as in C.
NAME_SIZE = 256
POD_SIZE = 72
LAUNCHER_SIZE = 64


class Runtime(enum.IntEnum):
    """enum peercgroup_runtime; str() is peercgroup_runtime_name().  New
    values may come in any release: treat one you do not know as UNKNOWN."""
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
    ECS = 12
    FLATPAK = 13
    SNAP = 14
    APP = 15

    def __str__(self):
        return _RUNTIME_NAMES[self]


_RUNTIME_NAMES = {
    Runtime.UNKNOWN: "unknown", Runtime.HOST: "host",
    Runtime.SYSTEM_SERVICE: "systemd-service", Runtime.USER_SESSION: "user-session",
    Runtime.DOCKER: "docker", Runtime.PODMAN: "podman",
    Runtime.CONTAINERD: "containerd", Runtime.CRIO: "cri-o",
    Runtime.KUBERNETES: "kubernetes", Runtime.LXC: "lxc",
    Runtime.NSPAWN: "systemd-nspawn", Runtime.MACHINE: "machined",
    Runtime.ECS: "ecs", Runtime.FLATPAK: "flatpak", Runtime.SNAP: "snap",
    Runtime.APP: "app",
}


class ContainerFlags(enum.IntFlag):
    """PEERCGROUP_CT_*."""
    CONMON = 1 << 0      # podman's or CRI-O's conmon (also MONITOR)
    KUBERNETES = 1 << 1  # under kubepods
    ROOTLESS = 1 << 2    # a container inside user@UID.service
    #: The runtime's own privileged helper, not the payload: conmon,
    #: lxc.monitor.*, the nspawn supervisor.  Never trust it as the container.
    MONITOR = 1 << 3
    OUTSIDE = 1 << 4     # path starts with "/..": outside the caller's cgroup ns
    NAMESPACED = 1 << 5  # caller not in the initial cgroup ns: "/" is not the host
    #: Set by classify_peer() only: the answer rests on names (a
    #: container's, an application's, a pod's, "kubepods") that nothing
    #: shows root gave.  The parent of the deepest cgroup so named belongs
    #: to another user or others may write it (a subtree systemd delegated
    #: to a user: Delegate=yes with User=, user@UID.service), or this
    #: process cannot look.  A user may have named it after any container.
    #: Always set with OUTSIDE: past "/.." no name is the top of the tree.
    UNPROVEN = 1 << 6

    def names(self):
        """Comma-separated lowercase names, "-" for none."""
        return ",".join(f.name.lower() for f in ContainerFlags if f in self) or "-"


class Namespace(enum.IntEnum):
    """Whose view a path is in."""
    CALLER = 0   # look once per process at /proc/self/ns/cgroup
    INITIAL = 1  # the initial cgroup namespace: "/" is the host
    CHILD = 2    # a child cgroup namespace: "/" is its own root


@dataclass
class Container:
    """What classify() found (struct peercgroup_class)."""
    runtime: Runtime = Runtime.UNKNOWN
    flags: ContainerFlags = ContainerFlags(0)
    up: int = 0        # number of leading "/.." components
    uid: int = -1      # owner from "user-UID.slice" (or user@UID.service), or -1
    id: str = ""       # container id or name; the unit for services and apps
    pod: str = ""      # Kubernetes pod UID (dashes restored), podman pod, ECS task
    qos: str = ""      # "guaranteed", "burstable", "besteffort" or ""
    app: str = ""      # flatpak/desktop app id, snap "<snap>.<app>"
    launcher: str = ""  # who launched the application: "gnome", "flatpak"
    unit: str = ""     # the systemd unit (sd_pid_get_unit())
    user_unit: str = ""  # the unit inside user@UID.service


_HEX64, _NAME, _UNIT, _NONE = range(4)
_ANYWHERE, _PARENT, _UNDER, _TOP = range(4)
_CONMON = ContainerFlags.CONMON | ContainerFlags.MONITOR

# (where, context, prefix, suffix, id format, runtime, flags).
# Order matters: a longer prefix must precede the prefix it extends.
_RULES = (
    (_ANYWHERE, None, b"docker-", b".scope", _HEX64, Runtime.DOCKER, 0),
    (_PARENT, b"docker", b"", b"", _HEX64, Runtime.DOCKER, 0),
    (_ANYWHERE, None, b"libpod-conmon-", b".scope", _HEX64, Runtime.PODMAN, _CONMON),
    (_ANYWHERE, None, b"libpod-payload-", b".scope", _HEX64, Runtime.PODMAN, 0),
    (_ANYWHERE, None, b"libpod-payload-", b"", _HEX64, Runtime.PODMAN, 0),
    (_ANYWHERE, None, b"libpod-", b".scope", _HEX64, Runtime.PODMAN, 0),
    # cgroupfs: under libpod_parent, or wherever --cgroup-parent says
    (_ANYWHERE, None, b"libpod-conmon-", b"", _HEX64, Runtime.PODMAN, _CONMON),
    (_ANYWHERE, None, b"libpod-", b"", _HEX64, Runtime.PODMAN, 0),
    (_UNDER, b"libpod_parent", b"conmon", b"", _NONE, Runtime.PODMAN, _CONMON),
    (_ANYWHERE, None, b"cri-containerd-", b".scope", _HEX64, Runtime.CONTAINERD, 0),
    (_ANYWHERE, None, b"nerdctl-", b".scope", _HEX64, Runtime.CONTAINERD, 0),
    (_TOP, b"default", b"", b"", _NAME, Runtime.CONTAINERD, 0),
    (_TOP, b"k8s.io", b"", b"", _NAME, Runtime.CONTAINERD, 0),
    (_ANYWHERE, None, b"crio-conmon-", b".scope", _HEX64, Runtime.CRIO, _CONMON),
    (_ANYWHERE, None, b"crio-", b".scope", _HEX64, Runtime.CRIO, 0),
    (_UNDER, b"kubepods", b"crio-conmon-", b"", _HEX64, Runtime.CRIO, _CONMON),
    (_UNDER, b"kubepods", b"crio-", b"", _HEX64, Runtime.CRIO, 0),
    (_ANYWHERE, None, b"lxc.payload.", b"", _NAME, Runtime.LXC, 0),
    (_ANYWHERE, None, b"lxc.monitor.", b"", _NAME, Runtime.LXC, ContainerFlags.MONITOR),
    (_PARENT, b"lxc", b"", b"", _NAME, Runtime.LXC, 0),
    (_ANYWHERE, None, b"systemd-nspawn@", b".service", _UNIT, Runtime.NSPAWN, 0),
    (_PARENT, b"machine.slice", b"machine-", b".scope", _UNIT, Runtime.MACHINE, 0),
)

_HEX = frozenset(b"0123456789abcdef")
_ANYHEX = frozenset(b"0123456789abcdefABCDEF")
_DIGITS = frozenset(b"0123456789")


def _is_hex64(s):
    return len(s) == 64 and all(c in _HEX for c in s)


def _name(a, size, unit=False):
    """a as a str, systemd's \\xNN escapes undone if unit; "" if the result
    would be empty, hold NUL or '/', or not fit in size bytes with its NUL."""
    out = bytearray()
    i = 0
    while i < len(a):
        c = a[i]
        if (unit and c == 0x5C and i + 3 < len(a) and a[i + 1] == 0x78 and
                a[i + 2] in _ANYHEX and a[i + 3] in _ANYHEX):
            c = int(a[i + 2:i + 4], 16)
            i += 3
        if c in (0, 0x2F) or len(out) + 1 >= size:
            return ""
        out.append(c)
        i += 1
    return os.fsdecode(bytes(out))


class _Context:
    """What the walk has seen above the current component."""
    __slots__ = ("parent", "depth", "kube", "libpod", "ecs")

    def __init__(self, ecs):
        self.parent, self.depth, self.kube, self.libpod, self.ecs = b"", 0, False, False, ecs


def _match(rule, x, c, out):
    where, ctx, prefix, suffix, fmt, rt, flags = rule
    if where == _PARENT and x.parent != ctx:
        return False
    if where == _TOP and (x.depth != 1 or x.parent != ctx):
        return False
    if where == _UNDER and not (x.kube if ctx == b"kubepods" else x.libpod):
        return False
    if not c.startswith(prefix) or len(c) < len(prefix) + len(suffix) or not c.endswith(suffix):
        return False
    ident = c[len(prefix):len(c) - len(suffix)]
    if fmt == _HEX64 and not _is_hex64(ident):
        return False
    if fmt == _NONE and ident:
        return False
    if fmt != _NONE:
        out.id = _name(ident, NAME_SIZE, fmt == _UNIT)
        if not out.id:
            return False
    out.runtime = rt
    out.flags |= flags
    return True


_CGROUPS_PATH_TAGS = ((b":cri-containerd:", Runtime.CONTAINERD), (b":crio:", Runtime.CRIO))


def _match_cgroups_path(c, out):
    """"<slice>:<prefix>:<id>": an OCI systemd cgroupsPath used as a
    directory name by a runtime on the cgroupfs driver while kubelet uses
    systemd's."""
    for tag, rt in _CGROUPS_PATH_TAGS:
        if len(c) <= 64 + len(tag):
            continue
        # the first occurrence, and it must end 64 bytes before the end
        i = c.find(tag, 0, len(c) - 64)
        if i >= 0 and i + len(tag) + 64 == len(c) and _is_hex64(c[i + len(tag):]):
            out.id = c[i + len(tag):].decode()
            out.runtime = rt
            return True
    return False


def _set_pod_uid(out, uid):
    """Kubernetes pod UID: the systemd driver writes '_' for '-'.  Whether
    set."""
    if not uid or len(uid) >= POD_SIZE:
        return False
    uid = uid.replace(b"_", b"-")
    if not all(c in _ANYHEX or c == 0x2D for c in uid):
        return False
    out.pod = os.fsdecode(uid)
    return True


def _kube_context(c, out):
    """QoS and pod from "burstable", "pod<uid>" (cgroupfs) or from the dash
    separated words of "kubepods-burstable-pod<uid>.slice" (systemd);
    whether c gave either."""
    slice_ = c.endswith(b".slice")
    if slice_:
        c = c[:-6]
    took = False
    # cgroupfs "pod<uid>" keeps the UID's dashes: one word
    for w in (c.split(b"-") if slice_ else [c]):
        if w in (b"burstable", b"besteffort"):
            out.qos = w.decode()
            took = True
        elif w.startswith(b"pod") and len(w) > 3:
            took = _set_pod_uid(out, w[3:]) or took
    return took


def _is_kubepods(c):
    # kind: kubelet-kubepods.slice
    return c in (b"kubepods", b"kubepods.slice") or c.endswith(b"-kubepods.slice")


def _slice_uid(c, pfx, sfx):
    """b"user-1000.slice" -> 1000, else -1."""
    if not c.startswith(pfx) or not c.endswith(sfx) or len(c) <= len(pfx) + len(sfx):
        return -1
    digits = c[len(pfx):len(c) - len(sfx)]
    if len(digits) > 10 or not all(d in _DIGITS for d in digits):
        return -1
    uid = int(digits)
    return uid if uid < 0xFFFFFFFF and uid != 0xFFFF else -1  # systemd's uid_is_valid()


# ---- applications (systemd.io/DESKTOP_ENVIRONMENTS) ----

def _is_uuid(a):
    """8-4-4-4-12 hex digits"""
    return len(a) == 36 and all(
        (c == 0x2D) if i in (8, 13, 18, 23) else (c in _ANYHEX) for i, c in enumerate(a))


def _match_flatpak(c, out):
    """flatpak names its scope itself, with the app id unescaped."""
    if not c.startswith(b"app-flatpak-") or not c.endswith(b".scope") or len(c) < 18:
        return False
    body = c[12:-6]
    dash = body.rfind(b"-")
    if dash < 0 or not body[dash + 1:] or not all(d in _DIGITS for d in body[dash + 1:]):
        return False
    out.app = _name(body[:dash], NAME_SIZE, True)
    if not out.app:
        return False
    out.launcher = "flatpak"
    out.runtime = Runtime.FLATPAK
    return True


def _match_snap(c, out):
    """snap.<snap>.<app>-<uuid>.scope, snap.<snap>.<app>.service"""
    scope = c.endswith(b".scope")
    sfx = 6 if scope else 8
    # prefix and suffix must not share the dot: "snap.service"
    if not c.startswith(b"snap.") or not (scope or c.endswith(b".service")) or len(c) < 5 + sfx:
        return False
    body = c[5:len(c) - sfx]
    if scope:
        n = len(body)
        if n < 38 or body[n - 37] not in b"-." or not _is_uuid(body[n - 36:]):
            return False
        body = body[:n - 37]
    # "<snap>.<app>": both parts non-empty
    if len(body) < 3 or body[:1] == b"." or body[-1:] == b"." or b"." not in body:
        return False
    out.app = _name(body, NAME_SIZE)
    if not out.app:
        return False
    out.runtime = Runtime.SNAP
    return True


def _match_app(c, out):
    """app-[<launcher>-]<appid>-<random>.scope and
    app-[<launcher>-]<appid>[@<random>].service, where <appid> is
    systemd-escaped (a '-' in it is \\x2d), so words split on '-'."""
    scope = c.endswith(b".scope")
    sfx = 6 if scope else 8
    if not c.startswith(b"app-") or not (scope or c.endswith(b".service")) or len(c) < 4 + sfx:
        return False
    body = c[4:len(c) - sfx]
    at_rand = False
    if not scope and b"@" in body:
        at = body.index(b"@")
        if at + 1 == len(body):
            return False  # "app-x@.service" is a template
        body, at_rand = body[:at], True
    words = body.split(b"-")
    if len(words) > 3 or not all(words):
        return False
    # scope: appid-rand, launcher-appid-rand; service: appid[@rand],
    # launcher-appid[@rand], launcher-appid-rand
    launcher = None
    if len(words) == (2 if scope else 1):
        appid = words[0]
    elif len(words) == 2 or (len(words) == 3 and not at_rand):
        launcher, appid = words[0], words[1]
    else:
        return False
    out.app = _name(appid, NAME_SIZE, True)
    if not out.app:
        return False
    if launcher is not None:
        out.launcher = _name(launcher, LAUNCHER_SIZE, True)
        if not out.launcher:
            out.app = ""
            return False
    out.runtime = Runtime.APP
    return True


# ---- systemd units, as sd_pid_get_unit() / _user_unit() find them ----

def _is_unit(c):
    return c.endswith(b".service") or c.endswith(b".scope")


def _fill_units(comps, out):
    """The first component that is not a slice, if it is a unit; inside
    user@UID.service, the next such one too."""
    i = 0
    for k in (0, 1):
        while i < len(comps) and comps[i].endswith(b".slice"):
            i += 1
        if i == len(comps) or not _is_unit(comps[i]):
            return
        if k == 0:
            out.unit = _name(comps[i], NAME_SIZE)
            if _slice_uid(comps[i], b"user@", b".service") < 0:
                return
            i += 1
        else:
            out.user_unit = _name(comps[i], NAME_SIZE)


# ---- the caller's cgroup namespace ----

_caller_initial = None


def _caller_in_initial_ns():
    """Looked at once; where /proc cannot tell, the caller is assumed NOT
    to be in the initial namespace, so "/" is never called the host."""
    global _caller_initial
    if _caller_initial is None:
        _caller_initial = bool(_look_at_caller_ns())
    return _caller_initial


def _look_at_caller_ns(file="/proc/self/ns/cgroup"):
    """True for the initial namespace, False for another, None if /proc
    cannot tell."""
    try:
        return os.stat(file).st_ino == INITIAL_CGROUP_NS_INO
    except OSError:
        return None


def _caller_namespace_now():
    """The calling thread's, looked at again, for a peer's answer:
    namespaces are per thread, and the caller may have unshared its cgroup
    namespace since its first classification."""
    initial = _look_at_caller_ns("/proc/thread-self/ns/cgroup")
    if initial is None:
        initial = _look_at_caller_ns()
    return Namespace.INITIAL if initial else Namespace.CHILD


# ---- the classifier ----

def _classify(comps, out):
    """Returns the index in comps of the deepest component whose name the
    answer rests on (a container's, an application's, or, with no container
    found, the pod's, else the QoS level's, else the first "kubepods"), or
    None.  Whoever may create a cgroup beside it chose that name, and the
    names above it are those of cgroups its maker chose to create it in."""
    named = None
    x = _Context(comps[0] == b"ecs")
    first, unit = comps[0], None
    user_slice = found = app = in_user_manager = False
    leading = True  # only slices so far
    i = 0
    while True:
        c = comps[i]
        more = i + 1 < len(comps)
        if any(_match(r, x, c, out) for r in _RULES):
            found = True
            named = i
            # nspawn splits itself off from its payload
            if (out.runtime in (Runtime.NSPAWN, Runtime.MACHINE) and more
                    and comps[i + 1] == b"supervisor"):
                out.flags |= ContainerFlags.MONITOR
            break
        if _match_cgroups_path(c, out):
            found = True
            named = i
            break
        if x.ecs and x.depth == 1:  # /ecs/<task>[/<container>]
            named = i
            if len(c) < POD_SIZE:
                out.pod = _name(c, POD_SIZE)
            out.runtime = Runtime.ECS
            if more:
                out.id = _name(comps[i + 1], NAME_SIZE)
                named = i + 1
            found = True
            break
        if _is_kubepods(c):
            if not x.kube:
                named = i
            x.kube = True
        elif x.kube:
            # The first pod is the peer's: below it, a container given its
            # own subtree may name cgroups anything.
            if not out.pod and _kube_context(c, out):
                named = i
            # cgroupfs driver: /kubepods/<qos>/pod<uid>/<container id>
            if out.pod and _is_hex64(c) and x.parent.startswith(b"pod"):
                out.id = c.decode()
                out.runtime = Runtime.KUBERNETES
                found, named = True, i
                break
        elif x.libpod:
            if _is_hex64(c):  # cgroupfs pod: /libpod_parent/<pod id>/
                out.pod = c.decode()
        elif _is_hex64(c):
            # docker --cgroup-parent under cgroupfs: /<parent>/<id>
            out.id = c.decode()
            out.runtime = Runtime.DOCKER
            found, named = True, i
            break
        if c == b"libpod_parent":
            x.libpod = True
        # Desktop applications live in the user's service manager; a system
        # unit that happens to start with "app-" is not one.
        if _match_snap(c, out) or (in_user_manager and (_match_flatpak(c, out) or _match_app(c, out))):
            app = True
            unit = c
            named = i
            break
        if c == b"user.slice" and x.depth == 0:
            user_slice = True
        # The owner, as systemd finds it: only in the slices from the top and
        # the first unit after them.  Below, a delegated subtree may name its
        # cgroups anything.
        if leading and out.uid < 0:
            out.uid = _slice_uid(c, b"user-", b".slice")
        uid = _slice_uid(c, b"user@", b".service") if leading else -1
        if uid >= 0:
            in_user_manager = True
            out.flags |= ContainerFlags.ROOTLESS
            if out.uid < 0:
                out.uid = uid
        # podman pods: machine-libpod_pod_<id>.slice, user-libpod_pod_<id>.slice
        if not out.pod and c.endswith(b".slice"):
            p = c.find(b"libpod_pod_")
            if p >= 0 and _is_hex64(c[p + 11:len(c) - 6]):
                out.pod = c[p + 11:len(c) - 6].decode()
                if x.kube:  # kept with no container found only there
                    named = i
        if _is_unit(c):
            unit = c
        leading = leading and c.endswith(b".slice")
        if not more:
            break
        x.parent, x.depth = c, x.depth + 1
        i += 1

    if x.kube and not app:
        out.flags |= ContainerFlags.KUBERNETES
        if out.pod and not out.qos:
            out.qos = "guaranteed"  # no QoS level in the path
        if not found:
            out.runtime = Runtime.KUBERNETES
        return named
    if found:
        return named
    # Not a container: only meaningful facts below, never a guess.
    out.flags &= ~ContainerFlags.ROOTLESS
    out.pod = ""
    if app:
        pass  # runtime set by the match
    elif user_slice:
        out.runtime = Runtime.USER_SESSION
    elif unit is not None and first in (b"system.slice", b"init.scope"):
        out.runtime = Runtime.SYSTEM_SERVICE
    if out.runtime != Runtime.UNKNOWN and unit is not None:
        out.id = _name(unit, NAME_SIZE)
    return named


def classify(path, namespace=Namespace.CALLER):
    """Classify a cgroup path (str or bytes), as the module or
    /proc/PID/cgroup print it, seen from namespace.

    A leading '/' is optional; a leading run of "/.." components is valid
    (flag OUTSIDE, .up).  The outermost container wins ("docker in kubepods"
    is docker).  Raises InvalidPathError (a ValueError and an OSError with
    errno EINVAL) for what cannot be a cgroup path: empty, NUL, an empty or
    "." component, ".." after a name, a component over 255 bytes, over
    64 KiB.
    """
    return _classify_named(path, namespace)[0]


def _classify_named(path, namespace):
    """classify(), and the path of the cgroup whose name the answer rests
    on, as bytes from the namespace root (b"/..."), or None."""
    p = os.fsencode(path) if isinstance(path, str) else bytes(path)
    if namespace not in (Namespace.CALLER, Namespace.INITIAL, Namespace.CHILD):
        raise InvalidPathError("bad namespace")
    if not p or len(p) > MAX_PATH_LEN or b"\0" in p:
        raise InvalidPathError()
    comps = p[1:].split(b"/") if p.startswith(b"/") else p.split(b"/")
    up = 0
    if comps == [b""]:
        comps = []
    while up < len(comps) and comps[up] == b"..":
        up += 1
    comps = comps[up:]
    for c in comps:
        if not c or len(c) > CGROUP_NAME_MAX or c in (b".", b".."):
            raise InvalidPathError()
    out = Container(up=up)
    initial = namespace == Namespace.INITIAL or (
        namespace == Namespace.CALLER and _caller_in_initial_ns())
    if up:  # only a child namespace can see "/.."
        out.flags |= ContainerFlags.OUTSIDE
        initial = False
    if not initial:
        out.flags |= ContainerFlags.NAMESPACED
    if not comps:
        # The root of the caller's view: the host only from the initial
        # namespace; an ancestor of it is unknown.
        if not up and initial:
            out.runtime = Runtime.HOST
        return out, None
    named = _classify(comps, out)
    _fill_units(comps, out)
    if named is None:
        return out, None
    return out, b"/".join([b""] + [b".."] * up + comps[:named + 1])
