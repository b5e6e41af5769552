# SPDX-License-Identifier: LGPL-2.1-or-later
"""classify_peer(): who may have named the peer's cgroup, on a directory
tree standing for the cgroup2 mount (its owner standing for root), as the
C unit test and the Go test do."""
import os

import pytest

import peercgroup
from peercgroup import ContainerFlags, Info, Runtime, _owner

HEX64 = "0123456789abcdef" * 4
SVC = "/system.slice/svc.service"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.setattr(_owner, "_test_root", str(tmp_path))
    monkeypatch.setattr(_owner, "_test_root_uid", os.getuid())
    return tmp_path


def peer_in(tree, path):
    """The record of a peer in path, made in the tree."""
    d = tree / path.lstrip("/")
    d.mkdir(parents=True, exist_ok=True)
    return Info(cgroup_id=d.stat().st_ino, path=path, pid=1, flags=peercgroup.Flags(0))


def check(info, runtime, unproven):
    ct = peercgroup.classify_peer(info)
    assert ct.runtime == runtime, info.path
    assert bool(ct.flags & ContainerFlags.UNPROVEN) == unproven, (info.path, ct.flags)


def test_a_parent_others_may_write_names_nothing(tree):
    lxc = peer_in(tree, SVC + "/lxc.payload.web")
    check(lxc, Runtime.LXC, False)
    os.chmod(tree / SVC.lstrip("/"), 0o775)
    check(lxc, Runtime.LXC, True)
    check(peer_in(tree, SVC + "/" + HEX64), Runtime.DOCKER, True)
    # only the parent counts
    os.chmod(tree / SVC.lstrip("/"), 0o755)
    os.chmod(tree / "system.slice", 0o777)
    os.chmod(tree / (SVC + "/lxc.payload.web").lstrip("/"), 0o777)
    check(lxc, Runtime.LXC, False)


def test_pods(tree):
    pod = SVC + "/kubepods/besteffort/pod12345678-1234-1234-1234-123456789abc"
    check(peer_in(tree, pod + "/" + HEX64), Runtime.KUBERNETES, False)
    os.chmod(tree / pod.lstrip("/"), 0o775)  # a pod's container: its pod's cgroup
    check(peer_in(tree, pod + "/" + HEX64), Runtime.KUBERNETES, True)
    # a pod with no container found: its own name's parent, not kubepods'
    os.chmod(tree / SVC.lstrip("/"), 0o757)
    check(peer_in(tree, pod), Runtime.KUBERNETES, False)
    os.chmod(tree / SVC.lstrip("/"), 0o755)
    os.chmod(tree / (SVC + "/kubepods/besteffort").lstrip("/"), 0o775)
    check(peer_in(tree, pod), Runtime.KUBERNETES, True)
    check(peer_in(tree, SVC + "/sub"), Runtime.SYSTEM_SERVICE, False)  # no name to prove


def test_ecs(tree):
    """The container's name's parent is its task's cgroup."""
    ecs = peer_in(tree, "/ecs/task1/" + HEX64)
    check(ecs, Runtime.ECS, False)
    os.chmod(tree / "ecs/task1", 0o775)
    check(ecs, Runtime.ECS, True)
    check(peer_in(tree, "/ecs/task1"), Runtime.ECS, False)


def test_the_tree_must_show_the_peers_own_cgroup(tree):
    lxc = peer_in(tree, "/lxc.payload.web")
    for info in (Info(lxc.cgroup_id + 1, lxc.path, 1, lxc.flags),
                 Info(0, lxc.path, 1, lxc.flags),
                 Info(lxc.cgroup_id, "/lxc.payload.gone", 1, lxc.flags),
                 Info(lxc.cgroup_id, "/../lxc.payload.web", 1, lxc.flags)):
        check(info, Runtime.LXC, True)
    # past "/.." no name is the top of the tree: a neighbour may have made it
    check(Info(lxc.cgroup_id, "/../user.slice/user-0.slice/session-1.scope", 1, lxc.flags),
          Runtime.USER_SESSION, True)
    # a first name that only starts with ".." is inside
    check(peer_in(tree, "/..web/lxc.payload.web"), Runtime.LXC, False)
    assert not peercgroup.classify("/lxc.payload.gone").flags & ContainerFlags.UNPROVEN
    assert ContainerFlags.UNPROVEN.names() == "unproven"


def test_the_longest_path(tree):
    """PATH_MAX - 1 bytes, the longest the module gives: with the mount's
    name in front it is past PATH_MAX, and the check must still look."""
    tail = "/lxc.payload.web"
    parent = ""
    while len(parent) < 4095 - len(tail):
        parent += "/" + "d" * min(200, 4095 - len(tail) - len(parent) - 1)
    path = parent + tail
    assert len(path) == 4095 and len(str(tree)) + len(path) >= 4096
    fd = os.open(tree, os.O_PATH | os.O_DIRECTORY)
    try:
        for name in path.strip("/").split("/"):
            try:
                os.mkdir(name, dir_fd=fd)
            except FileExistsError:
                pass
            nfd = os.open(name, os.O_PATH | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        info = Info(os.fstat(fd).st_ino, path, 1, peercgroup.Flags(0))
    finally:
        os.close(fd)
    check(info, Runtime.LXC, False)
    assert peercgroup.classify_peer(info).id == "web"
    fd = os.open(tree, os.O_PATH | os.O_DIRECTORY)
    try:
        for name in parent.strip("/").split("/")[:-1]:
            nfd = os.open(name, os.O_PATH | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        os.chmod(parent.rsplit("/", 1)[1], 0o775, dir_fd=fd)
    finally:
        os.close(fd)
    check(info, Runtime.LXC, True)


def test_a_record_without_a_path_is_unknown():
    # get(no_path=True) gives no path: nothing to classify, as Go's ClassifyPeer says
    ct = peercgroup.classify_peer(Info(1234, None, 1, peercgroup.Flags(0)))
    assert ct.runtime == Runtime.UNKNOWN and ct.uid == -1 and not ct.flags


def test_only_a_cgroup2_mount_is_looked_at(tmp_path, monkeypatch):
    """A directory that merely looks like cgroup v2 (a cgroup.controllers
    file, no tasks) on another file system proves nothing: the mount is
    told by its type, as in C and Go."""
    (tmp_path / "cgroup.controllers").write_text("")
    monkeypatch.setattr(_owner, "CGROUP2_DIRS", (str(tmp_path),))
    monkeypatch.setattr(_owner, "_test_root_uid", os.getuid())
    d = tmp_path / "lxc.payload.web"
    d.mkdir()
    info = Info(cgroup_id=d.stat().st_ino, path="/lxc.payload.web", pid=1, flags=peercgroup.Flags(0))
    check(info, Runtime.LXC, True)
