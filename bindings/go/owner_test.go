// SPDX-License-Identifier: LGPL-2.1-or-later

package peercgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const testHex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// fakeCgroups puts a directory tree in place of the cgroup2 mount, its
// owner standing for root, as the C unit test does.
func fakeCgroups(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	oldDir, oldUID := cgroup2Dir, rootUID
	cgroup2Dir = func() string { return root }
	rootUID = uint32(os.Getuid())
	t.Cleanup(func() { cgroup2Dir, rootUID = oldDir, oldUID })
	return root
}

// peerIn makes cgroup p in the tree: the Info a record of it would give.
func peerIn(t *testing.T, root, p string) Info {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(root, p), &st); err != nil {
		t.Fatal(err)
	}
	return Info{CgroupID: st.Ino, Path: p}
}

func chmod(t *testing.T, root, p string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(filepath.Join(root, p), mode); err != nil {
		t.Fatal(err)
	}
}

func TestClassifyPeerProvesWhoNamedIt(t *testing.T) {
	root := fakeCgroups(t)
	svc := "/system.slice/svc.service"
	check := func(info Info, rt Runtime, unproven bool) {
		t.Helper()
		c := ClassifyPeer(info)
		if c.Runtime != rt || (c.Flags&FlagUnproven != 0) != unproven {
			t.Errorf("%s (id %d): %v %v, want %v unproven=%v", info.Path, info.CgroupID,
				c.Runtime, c.Flags, rt, unproven)
		}
	}
	lxc := peerIn(t, root, svc+"/lxc.payload.web")
	check(lxc, LXC, false)
	// a parent others may write: a user may have named it
	chmod(t, root, svc, 0o775)
	check(lxc, LXC, true)
	check(peerIn(t, root, svc+"/"+testHex64), Docker, true)
	// only the parent counts
	chmod(t, root, svc, 0o755)
	chmod(t, root, "/system.slice", 0o777)
	chmod(t, root, svc+"/lxc.payload.web", 0o777)
	check(lxc, LXC, false)
	// a pod's container: its pod's cgroup
	pod := svc + "/kubepods/besteffort/pod12345678-1234-1234-1234-123456789abc"
	check(peerIn(t, root, pod+"/"+testHex64), Kubernetes, false)
	chmod(t, root, pod, 0o775)
	check(peerIn(t, root, pod+"/"+testHex64), Kubernetes, true)
	// a pod with no container found: its own name's parent, not kubepods'
	chmod(t, root, svc, 0o757)
	check(peerIn(t, root, pod), Kubernetes, false)
	chmod(t, root, svc, 0o755)
	chmod(t, root, svc+"/kubepods/besteffort", 0o775)
	check(peerIn(t, root, pod), Kubernetes, true)
	// ECS: the container's name's parent is its task's cgroup
	ecs := peerIn(t, root, "/ecs/task1/"+testHex64)
	check(ecs, ECS, false)
	chmod(t, root, "/ecs/task1", 0o775)
	check(ecs, ECS, true)
	check(peerIn(t, root, "/ecs/task1"), ECS, false)
	// a name that is no container's needs no proof
	check(peerIn(t, root, svc+"/sub"), SystemService, false)
	// the tree must show the peer's own cgroup
	check(Info{CgroupID: lxc.CgroupID + 1, Path: lxc.Path}, LXC, true)
	check(Info{Path: "/lxc.payload.web"}, LXC, true)
	check(Info{CgroupID: lxc.CgroupID, Path: "/lxc.payload.gone"}, LXC, true)
	check(Info{CgroupID: lxc.CgroupID, Path: "/../lxc.payload.web"}, LXC, true)
	// past "/.." no name is the top of the tree: a neighbour may have made it
	check(Info{CgroupID: lxc.CgroupID, Path: "/../user.slice/user-0.slice/session-1.scope"},
		UserSession, true)
	// a first name that only starts with ".." is inside
	check(peerIn(t, root, "/..web/lxc.payload.web"), LXC, false)
	// the path's own classifier never looks
	if c := Classify("/lxc.payload.gone"); c.Flags&FlagUnproven != 0 {
		t.Errorf("Classify: %v", c.Flags)
	}
	if got := FlagUnproven.String(); got != "unproven" {
		t.Errorf("FlagUnproven is %q", got)
	}
}

// mkdirAt makes the directories of p below root by fds (the pair may be
// longer than PATH_MAX, as a real mount point and a long path are) and
// returns an O_PATH fd of the last one.
func mkdirAt(t *testing.T, root, p string) int {
	t.Helper()
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range strings.Split(strings.Trim(p, "/"), "/") {
		if err := unix.Mkdirat(fd, name, 0o755); err != nil && err != unix.EEXIST {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	return fd
}

// The longest path Get gives, PATH_MAX - 1 bytes: with the mount's name in
// front it is past PATH_MAX, and the check must still look.
func TestClassifyPeerAtPathMax(t *testing.T) {
	root := fakeCgroups(t)
	const tail = "/lxc.payload.web"
	parent := ""
	for left := unix.PathMax - 1 - len(tail); left > 0; left = unix.PathMax - 1 - len(tail) - len(parent) {
		n := left - 1
		if n > 200 {
			n = 200
		}
		parent += "/" + strings.Repeat("d", n)
	}
	path := parent + tail
	if len(path) != unix.PathMax-1 || len(root)+len(path) < unix.PathMax {
		t.Fatalf("the path is %d bytes, the tree's name %d", len(path), len(root))
	}
	fd := mkdirAt(t, root, path)
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	info := Info{CgroupID: st.Ino, Path: path}
	if c := ClassifyPeer(info); c.Runtime != LXC || c.ID != "web" || c.Flags&FlagUnproven != 0 {
		t.Errorf("at %d bytes: %v %q %v, want lxc web, proven", len(path), c.Runtime, c.ID, c.Flags)
	}
	pfd := mkdirAt(t, root, parent[:strings.LastIndex(parent, "/")])
	defer unix.Close(pfd)
	if err := unix.Fchmodat(pfd, parent[strings.LastIndex(parent, "/")+1:], 0o775, 0); err != nil {
		t.Fatal(err)
	}
	if c := ClassifyPeer(info); c.Flags&FlagUnproven == 0 {
		t.Errorf("at %d bytes, parent 0775: %v, want unproven", len(path), c.Flags)
	}
}
