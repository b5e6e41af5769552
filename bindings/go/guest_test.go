// SPDX-License-Identifier: LGPL-2.1-or-later

package peercgroup

// The guest suite: this package against the real module, inside the QEMU
// test guest (root, cgroup2 at /sys/fs/cgroup, module loaded, its .ko at
// $PEERCGROUP_KO).  The test binary, built static with CGO_ENABLED=0 and
// installed as /tests/go_suite, prints one "ok - go/NAME" or
// "not ok - go/NAME: ..." line per test for the guest's runner.  On the
// host these tests skip.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const (
	cgRoot     = "/sys/fs/cgroup"
	cgServer   = "peercgroup-go-server"
	cgClient   = "peercgroup-go-client"
	helperEnv  = "PEERCGROUP_GO_HELPER"
	socketBase = "@peercgroup-go-suite"
)

var (
	guestMode bool
	guestOnly string // run only this test ("name" or "go/name")

	// What the TAP lines said, and whether TestGuest ran to its end.
	tapPassed, tapFailed, tapSkipped int
	guestFinished                    bool
)

func TestMain(m *testing.M) {
	if h := os.Getenv(helperEnv); h != "" {
		os.Exit(helper(h, os.Args[len(os.Args)-3:]))
	}
	if filepath.Base(os.Args[0]) == "go_suite" {
		// Run by the guest's init ("go_suite [TEST]"): only the guest
		// tests; the TAP lines are the verdict, and the count after them
		// tells init that none is missing.  A failure outside any of them
		// (TestGuest's own setup) is a line of its own.
		guestMode = true
		if len(os.Args) > 1 {
			guestOnly = strings.TrimPrefix(os.Args[1], "go/")
		}
		os.Args = os.Args[:1]
		flag.Set("test.run", "^TestGuest$")
		if code := m.Run(); !guestFinished || (code != 0 && tapFailed == 0) {
			fmt.Printf("not ok - go/setup: TestGuest failed outside any test (exit %d, see above)\n", code)
			tapFailed++
		}
		fmt.Printf("# go: %d tests passed, %d failed, %d skipped, 0 assertions\n",
			tapPassed, tapFailed, tapSkipped)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func tap(t *testing.T, name string, f func(t *testing.T)) {
	if guestOnly != "" && guestOnly != name {
		return
	}
	skipped := false
	ok := t.Run(name, func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		f(t)
	})
	switch {
	case !ok:
		fmt.Printf("not ok - go/%s: see the messages above\n", name)
		tapFailed++
	case skipped:
		fmt.Printf("# SKIP go/%s: see the messages above\n", name)
		tapSkipped++
	default:
		fmt.Printf("ok - go/%s\n", name)
		tapPassed++
	}
}

func cgCreate(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(cgRoot, name)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return "/" + name
}

func cgJoin(name string) error {
	return os.WriteFile(filepath.Join(cgRoot, name, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0)
}

func cgInode(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(cgRoot+path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// procCgroup is the kernel's own answer: the "0::" line of /proc/PID/cgroup.
func procCgroup(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "0::") {
			return l[3:]
		}
	}
	return "?"
}

// helper runs in a child process: join a cgroup, connect, report what Get
// says about the listener ("OK id pid path" or "ERR errno"), or fetch
// /whoami over HTTP; then wait for stdin to close.
func helper(mode string, args []string) int {
	cg, network, addr := args[0], args[1], args[2]
	if err := cgJoin(cg); err != nil {
		fmt.Println("ERR join", err)
		return 1
	}
	c, err := net.DialUnix(network, nil, &net.UnixAddr{Name: addr, Net: network})
	if err != nil {
		fmt.Println("ERR dial", err)
		return 1
	}
	switch mode {
	case "get":
		info, err := Get(c)
		var e *Error
		if errors.As(err, &e) {
			fmt.Printf("ERR %d\n", int(e.Errno))
		} else {
			fmt.Printf("OK %d %d %s\n", info.CgroupID, info.PID, info.Path)
		}
	case "http":
		fmt.Fprintf(c, "GET /whoami HTTP/1.0\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			fmt.Println("ERR http", err)
			return 1
		}
		body, _ := io.ReadAll(resp.Body)
		fmt.Printf("%d %s\n", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	io.Copy(io.Discard, os.Stdin)
	return 0
}

type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	line  string
}

// startChild runs helper(mode) in cgroup cg against the listener at addr;
// it returns after the child printed its line (so it has connected).
func startChild(t *testing.T, mode, cg, network, addr string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], cg, network, addr)
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil && mode == "get" {
		c.stop()
		t.Fatalf("helper: %v", err)
	}
	c.line = strings.TrimSpace(line)
	return c
}

func (c *child) stop() {
	c.stdin.Close()
	c.cmd.Wait()
}

func listen(t *testing.T, network, name string) *net.UnixListener {
	t.Helper()
	l, err := net.ListenUnix(network, &net.UnixAddr{Name: socketBase + "-" + name, Net: network})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func checkInfo(t *testing.T, what string, info Info, err error, path string, pid int) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if info.Path != path || info.CgroupID != cgInode(t, path) || info.PID != pid {
		t.Errorf("%s: got %q id %d pid %d, want %q id %d pid %d", what,
			info.Path, info.CgroupID, info.PID, path, cgInode(t, path), pid)
	}
}

// bothDirections: the server learns the client's cgroup, the client the
// listener's, for stream and seqpacket.
func bothDirections(t *testing.T, network string) {
	srv, cli := "/"+cgServer, cgCreate(t, cgClient)
	l := listen(t, network, network)
	defer l.Close()
	c := startChild(t, "get", cgClient, network, l.Addr().String())
	defer c.stop()
	conn, err := l.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pid := c.cmd.Process.Pid
	if procCgroup(pid) != cli {
		t.Fatalf("child is in %s, not %s", procCgroup(pid), cli)
	}
	info, err := Get(conn)
	checkInfo(t, "server side", info, err, cli, pid)
	if info.Flags != 0 {
		t.Errorf("flags %v", info.Flags)
	}
	ucred, err := unix.GetsockoptUcred(fdOf(t, conn), unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil || int(ucred.Pid) != info.PID {
		t.Errorf("SO_PEERCRED says pid %d (%v), Get %d", ucred.Pid, err, info.PID)
	}
	want := fmt.Sprintf("OK %d %d %s", cgInode(t, srv), os.Getpid(), srv)
	if c.line != want {
		t.Errorf("client side: %q, want %q", c.line, want)
	}
	// The raw-fd call and NoPath say the same.
	info2, err := GetFd(fdOf(t, conn), NoPath)
	if err != nil || info2.Path != "" || info2.CgroupID != info.CgroupID || info2.PID != pid {
		t.Errorf("GetFd NoPath: %+v %v", info2, err)
	}
	// The record stays when the peer exits; a flag says so.
	c.stop()
	info, err = Get(conn)
	checkInfo(t, "after exit", info, err, cli, pid)
	if info.Flags != PeerExited {
		t.Errorf("after exit: flags %v, want peer-exited", info.Flags)
	}
}

func fdOf(t *testing.T, c *net.UnixConn) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd int
	rc.Control(func(f uintptr) { fd = int(f) })
	return fd
}

func guestErrors(t *testing.T) {
	want := func(what string, err, target error) {
		t.Helper()
		if !errors.Is(err, target) {
			t.Errorf("%s: got %v, want %v", what, err, target)
		}
	}
	l := listen(t, "unix", "errors")
	defer l.Close()
	rc, _ := l.SyscallConn()
	rc.Control(func(fd uintptr) {
		_, err := GetFd(int(fd))
		want("listener", err, ErrNotConnected)
	})
	s, _ := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	_, err := GetFd(s)
	want("unconnected", err, ErrNotConnected)
	unix.Close(s)
	_, err = GetFd(s)
	want("closed", err, unix.EBADF)
	sv, _ := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	_, err = GetFd(sv[0])
	want("datagram", err, unix.EOPNOTSUPP)
	unix.Close(sv[0])
	unix.Close(sv[1])
	s, _ = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	_, err = GetFd(s)
	want("AF_INET", err, unix.EAFNOSUPPORT)
	unix.Close(s)
	var p [2]int
	unix.Pipe2(p[:], unix.O_CLOEXEC)
	_, err = GetFd(p[0])
	want("pipe", err, unix.ENOTSOCK)
	unix.Close(p[0])
	unix.Close(p[1])
}

func moduleUnload() error {
	setDevicePath("") // our descriptor would pin the module
	for i := 0; i < 2000; i++ {
		err := unix.DeleteModule("peercgroup", unix.O_NONBLOCK)
		if err == nil || !(errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EBUSY)) {
			return err
		}
		time.Sleep(time.Millisecond)
	}
	return unix.EBUSY
}

func moduleLoad() error {
	f, err := os.Open(os.Getenv("PEERCGROUP_KO"))
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.FinitModule(int(f.Fd()), "", 0)
}

// ENOPKG while the module is away; ENODATA for connections made then.
func beforeLoad(t *testing.T) {
	l := listen(t, "unix", "before")
	defer l.Close()
	if err := moduleUnload(); err != nil {
		t.Fatalf("unload: %v", err)
	}
	loaded := false
	defer func() {
		if !loaded {
			moduleLoad()
		}
	}()
	a, b := unixConnPair(t)
	defer a.Close()
	defer b.Close()
	if _, err := Get(a); !errors.Is(err, ErrModuleNotLoaded) || !errors.Is(err, unix.ENOPKG) {
		t.Errorf("module unloaded: %v", err)
	}
	if _, err := ModuleInfo(); !errors.Is(err, ErrModuleNotLoaded) {
		t.Errorf("ModuleInfo, module unloaded: %v", err)
	}
	c, err := net.DialUnix("unix", nil, l.Addr().(*net.UnixAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	old, err := l.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := moduleLoad(); err != nil {
		t.Fatalf("load: %v", err)
	}
	loaded = true
	for i := 0; i < 100; i++ { // devtmpfs makes the node asynchronously
		if _, err := os.Stat(devicePath); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for what, conn := range map[string]*net.UnixConn{"socketpair": a, "accepted": old, "client": c} {
		_, err := Get(conn)
		if !errors.Is(err, ErrNoRecord) || !errors.Is(err, unix.ENODATA) {
			t.Errorf("%s made before the load: %v, want ErrNoRecord", what, err)
		}
	}
	n1, n2 := unixConnPair(t)
	defer n1.Close()
	defer n2.Close()
	info, err := Get(n1)
	checkInfo(t, "socketpair after the load", info, err, "/"+cgServer, os.Getpid())
}

// A path of more than 600 bytes, in one query like any other.
// cgOfLength is a cgroup name under cgClient whose path ("/" included) is
// n bytes: names of at most 255 bytes of fill, never one of 0.
func cgOfLength(n int, fill string) string {
	parts, left := []string{cgClient}, n-1-len(cgClient)
	for left > 0 {
		k := left - 1
		if k > 255 {
			k = 255
		}
		if left-1-k == 1 { // "/x" is the shortest name: leave room for it
			k--
		}
		parts = append(parts, strings.Repeat(fill, k))
		left -= 1 + k
	}
	return strings.Join(parts, "/")
}

// cgWalk returns the directory fds of cgRoot and of each level of name
// below it, made if make: by fds, as the mount's prefix puts a path of
// PATH_MAX bytes from the cgroup root past what a file name may be.
func cgWalk(t *testing.T, name string, make bool) []int {
	t.Helper()
	fd, err := unix.Open(cgRoot, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	fds := []int{fd}
	for _, comp := range strings.Split(name, "/") {
		if make {
			if err := unix.Mkdirat(fds[len(fds)-1], comp, 0o755); err != nil && err != unix.EEXIST {
				t.Fatal(err)
			}
		}
		fd, err := unix.Openat(fds[len(fds)-1], comp, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
	}
	return fds
}

// Paths past 256 bytes, and both sides of PATH_MAX: 4,095 bytes come back
// whole in one query, 4,096 are ENAMETOOLONG, as in C.  The peer is this
// process, which connects from that cgroup (joined by fd).  At 4,095
// bytes the path also ends in an LXC container's name, which ClassifyPeer
// must prove though the mount's name in front of it passes PATH_MAX.
func longPath(t *testing.T) {
	const lxc = "/lxc.payload.golong"
	for _, c := range []struct {
		n          int
		fill, tail string
	}{{700, "a", ""}, {4095, "b", lxc}, {4096, "c", ""}} {
		name := cgOfLength(c.n-len(c.tail), c.fill) + c.tail
		if len(name)+1 != c.n {
			t.Fatalf("made %d bytes, not %d", len(name)+1, c.n)
		}
		fds := cgWalk(t, name, true)
		func() {
			defer func() {
				cgJoin(cgServer)
				comps := strings.Split(name, "/")
				for k := len(comps) - 1; k > 0; k-- { // cgClient itself stays
					unix.Unlinkat(fds[k], comps[k], unix.AT_REMOVEDIR)
				}
				for _, fd := range fds {
					unix.Close(fd)
				}
			}()
			l := listen(t, "unix", fmt.Sprintf("long-%d", c.n))
			defer l.Close()
			procs, err := unix.Openat(fds[len(fds)-1], "cgroup.procs", unix.O_WRONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, err = unix.Write(procs, []byte(strconv.Itoa(os.Getpid())))
			unix.Close(procs)
			if err != nil {
				t.Fatal(err)
			}
			cli, err := net.DialUnix("unix", nil, l.Addr().(*net.UnixAddr))
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			if err := cgJoin(cgServer); err != nil {
				t.Fatal(err)
			}
			conn, err := l.AcceptUnix()
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			info, err := Get(conn)
			var st unix.Stat_t
			if err := unix.Fstat(fds[len(fds)-1], &st); err != nil {
				t.Fatal(err)
			}
			switch {
			case c.n == 4096:
				if !errors.Is(err, unix.ENAMETOOLONG) {
					t.Errorf("%d-byte path: %v %q, want ENAMETOOLONG", c.n, err, info.Path)
				}
			case err != nil || info.Path != "/"+name || info.CgroupID != st.Ino || info.PID != os.Getpid():
				t.Errorf("%d-byte path: %v, got %d bytes id %d pid %d, want id %d pid %d", c.n, err,
					len(info.Path), info.CgroupID, info.PID, st.Ino, os.Getpid())
			case c.tail != "":
				ct := ClassifyPeer(info)
				if ct.Runtime != LXC || ct.ID != "golong" || ct.Flags&FlagUnproven != 0 {
					t.Errorf("%d-byte path: %v %q %v, want lxc golong, proven", c.n, ct.Runtime, ct.ID, ct.Flags)
				}
			}
		}()
	}
}

// ClassifyPeer: a container's name that a user made in a cgroup delegated
// to it (chown()ed, as systemd does for Delegate=yes with User=) is
// FlagUnproven; the parent's owner, by stat(), decides, on the cgroup2
// mount: a root-owned tmpfs mounted on the user's cgroup, the peer's
// cgroup bound inside it, proves nothing; cgroups bound on themselves
// show the same.
func classifyPeerDelegated(t *testing.T) {
	svc := filepath.Join(cgClient, "deleg.service")
	name := filepath.Join(svc, "lxc.payload.web01")
	cgCreate(t, svc)
	defer os.Remove(filepath.Join(cgRoot, svc))
	if err := os.Chown(filepath.Join(cgRoot, svc), 1000, 1000); err != nil {
		t.Fatal(err)
	}
	mkdir := exec.Command("mkdir", filepath.Join(cgRoot, name))
	mkdir.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 1000, Gid: 1000}}
	if out, err := mkdir.CombinedOutput(); err != nil {
		t.Fatalf("mkdir as the user: %v %s", err, out)
	}
	defer os.Remove(filepath.Join(cgRoot, name))
	l := listen(t, "unix", "delegated")
	defer l.Close()
	c := startChild(t, "get", name, "unix", l.Addr().String())
	defer c.stop()
	conn, err := l.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	info, err := Get(conn)
	checkInfo(t, "delegated", info, err, "/"+name, c.cmd.Process.Pid)
	for _, o := range []struct {
		uid      int
		unproven bool
	}{{1000, true}, {0, false}} {
		if err := os.Chown(filepath.Join(cgRoot, svc), o.uid, o.uid); err != nil {
			t.Fatal(err)
		}
		ct := ClassifyPeer(info)
		if ct.Runtime != LXC || ct.ID != "web01" || (ct.Flags&FlagUnproven != 0) != o.unproven {
			t.Errorf("parent owned by %d: %v %q %v", o.uid, ct.Runtime, ct.ID, ct.Flags)
		}
	}
	if err := os.Chown(filepath.Join(cgRoot, svc), 1000, 1000); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(cgRoot, name), &st); err != nil {
		t.Fatal(err)
	}
	got := underRootTmpfs(filepath.Join(cgRoot, svc), "lxc.payload.web01", info)
	if want := fmt.Sprintf("%d 0 lxc true false", st.Ino); got != want {
		t.Errorf("a root tmpfs on the user's cgroup: got %q, want %q", got, want)
	}
}

// underRootTmpfs: on a thread with a mount namespace of its own, a
// root-owned tmpfs on cgroup directory parent, cgroup parent/name bound
// inside it, as a look-up that crosses mounts would see them; then
// ClassifyPeer(info) there; then again with parent root's, both cgroups
// bound on themselves.  The line "INODE PARENT_UID RUNTIME UNPROVEN
// UNPROVEN_SELF_BOUND".
func underRootTmpfs(parent, name string, info Info) string {
	done := make(chan string, 1)
	go func() {
		// Locked and never unlocked: the thread, which left the process's
		// mount namespace, ends with the goroutine.
		runtime.LockOSThread()
		dir := filepath.Join(parent, name)
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			done <- "unshare: " + err.Error()
			return
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			done <- "private: " + err.Error()
			return
		}
		fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- "open: " + err.Error()
			return
		}
		defer unix.Close(fd)
		if err := unix.Mount("tmpfs", parent, "tmpfs", 0, "mode=0755"); err != nil {
			done <- "tmpfs: " + err.Error()
			return
		}
		if err := unix.Mkdir(dir, 0o755); err != nil {
			done <- "mkdir: " + err.Error()
			return
		}
		if err := unix.Mount(fmt.Sprintf("/proc/thread-self/fd/%d", fd), dir, "", unix.MS_BIND, ""); err != nil {
			done <- "bind: " + err.Error()
			return
		}
		var in, top unix.Stat_t
		if err := unix.Stat(dir, &in); err != nil {
			done <- "stat: " + err.Error()
			return
		}
		if err := unix.Stat(parent, &top); err != nil {
			done <- "stat: " + err.Error()
			return
		}
		ct := ClassifyPeer(info)
		line := fmt.Sprintf("%d %d %v %v", in.Ino, top.Uid, ct.Runtime, ct.Flags&FlagUnproven != 0)
		// cgroups bound on themselves (systemd-nspawn's) show the same: root's
		for _, d := range []string{dir, parent} {
			if err := unix.Unmount(d, unix.MNT_DETACH); err != nil {
				done <- "umount: " + err.Error()
				return
			}
		}
		if err := os.Chown(parent, 0, 0); err != nil {
			done <- "chown: " + err.Error()
			return
		}
		for _, d := range []string{parent, dir} {
			if err := unix.Mount(d, d, "", unix.MS_BIND, ""); err != nil {
				done <- "bind: " + err.Error()
				return
			}
		}
		ct = ClassifyPeer(info)
		done <- fmt.Sprintf("%s %v", line, ct.Flags&FlagUnproven != 0)
	}()
	return <-done
}

// An HTTP server with the Listener and ConnContext sees each client's
// container.
func httpServer(t *testing.T) {
	l := listen(t, "unix", "http")
	srv := &http.Server{
		ConnContext: ConnContext,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p := PeerFromContext(r.Context())
			if p == nil || p.Err != nil {
				http.Error(w, fmt.Sprint("no peer: ", p), http.StatusForbidden)
				return
			}
			fmt.Fprintf(w, "%s %s %d", p.Info.Path, p.Container.Runtime, p.Info.PID)
		}),
	}
	go srv.Serve(NewListener(l))
	defer srv.Shutdown(context.Background())
	cli := cgCreate(t, cgClient)
	c := startChild(t, "http", cgClient, "unix", l.Addr().String())
	pid := c.cmd.Process.Pid
	c.stop()
	if want := fmt.Sprintf("200 %s unknown %d", cli, pid); c.line != want {
		t.Errorf("got %q, want %q", c.line, want)
	}
}

func TestGuest(t *testing.T) {
	if !guestMode {
		t.Skip("runs in the QEMU guest, as /tests/go_suite")
	}
	runtime.LockOSThread()
	cgCreate(t, cgServer)
	if err := cgJoin(cgServer); err != nil {
		t.Fatal(err)
	}
	tap(t, "module-info", func(t *testing.T) {
		m, err := ModuleInfo()
		if err != nil || m.ABIVersion != abiVersion || m.Version == "" || m.QuerySize < querySize {
			t.Errorf("%+v %v", m, err)
		}
	})
	tap(t, "stream-both-directions", func(t *testing.T) { bothDirections(t, "unix") })
	tap(t, "seqpacket-both-directions", func(t *testing.T) { bothDirections(t, "unixpacket") })
	tap(t, "socketpair", func(t *testing.T) {
		a, b := unixConnPair(t)
		defer a.Close()
		defer b.Close()
		info, err := Get(b)
		checkInfo(t, "socketpair", info, err, "/"+cgServer, os.Getpid())
	})
	tap(t, "long-path", longPath)
	tap(t, "classify-peer-delegated", classifyPeerDelegated)
	tap(t, "classify-peer-after-unshare", classifyPeerAfterUnshare)
	tap(t, "errors", guestErrors)
	tap(t, "http-conncontext", httpServer)
	tap(t, "before-load", beforeLoad)
	if benchRequested() {
		benchGet(t)
	}
	guestFinished = true
}

// classifyPeerAfterUnshare: ClassifyPeer reads the module's path, relative
// to the calling thread's cgroup namespace now.  A thread that unshares it
// after Classify has looked once, in the host's, gets "/" for a socketpair
// of its own: that namespace's root, not the host.
func classifyPeerAfterUnshare(t *testing.T) {
	if c := Classify("/"); c.Runtime != Host {
		t.Fatalf("/ from the host's namespace: %v", c.Runtime)
	}
	type result struct {
		info Info
		c    Container
		err  error
	}
	done := make(chan result, 1)
	go func() {
		// Locked and never unlocked: the thread, which left the process's
		// cgroup namespace, ends with the goroutine.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWCGROUP); err != nil {
			done <- result{err: err}
			return
		}
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer unix.Close(fds[0])
		defer unix.Close(fds[1])
		info, err := GetFd(fds[1])
		done <- result{info, ClassifyPeer(info), err}
	}()
	r := <-done
	if r.err != nil || r.info.Path != "/" || r.c.Runtime == Host || r.c.Flags&FlagNamespaced == 0 {
		t.Errorf("in its own namespace: %+v %v, runtime %v, flags %v", r.info, r.err, r.c.Runtime, r.c.Flags)
	}
}

func benchRequested() bool {
	b, _ := os.ReadFile("/proc/cmdline")
	return strings.Contains(string(b), "pcg.bench_bindings=1")
}

// benchGet prints ns per call of Get next to getsockopt(SO_PEERCRED), the
// way tests/bench/bench.c measures the C library: methods interleaved,
// each sample the median of 16 chunks, ratio to SO_PEERCRED per round.
func benchGet(t *testing.T) {
	a, b := unixConnPair(t)
	defer a.Close()
	defer b.Close()
	fd := fdOf(t, b)
	methods := []struct {
		name string
		fn   func() error
	}{
		{"getsockopt(SO_PEERCRED) (floor)", func() error { _, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED); return err }},
		{"Go peercgroup.Get(conn) with path", func() error { _, err := Get(b); return err }},
		{"Go peercgroup.GetFd(fd) with path", func() error { _, err := GetFd(fd); return err }},
		{"Go peercgroup.GetFd(fd, NoPath)", func() error { _, err := GetFd(fd, NoPath); return err }},
	}
	median := func(v []float64) float64 {
		s := append([]float64(nil), v...)
		sort.Float64s(s)
		return s[len(s)/2]
	}
	timeCalls := func(fn func() error, iters int) float64 {
		chunk := iters / 16
		if chunk < 1 {
			chunk = 1
		}
		var t16 [16]float64
		for c := range t16 {
			t0 := time.Now()
			for i := 0; i < chunk; i++ {
				if err := fn(); err != nil {
					t.Fatal(err)
				}
			}
			t16[c] = float64(time.Since(t0).Nanoseconds()) / float64(chunk)
		}
		return median(t16[:])
	}
	iters := make([]int, len(methods))
	for i, m := range methods { // calibrate: about 20 ms a sample
		for iters[i] = 16; ; iters[i] *= 2 {
			t0 := time.Now()
			timeCalls(m.fn, iters[i])
			if time.Since(t0) > 20*time.Millisecond || iters[i] > 1<<24 {
				break
			}
		}
		iters[i] *= 4
	}
	const rounds = 9
	ns := make([][]float64, len(methods))
	for r := 0; r < rounds; r++ {
		for i, m := range methods {
			ns[i] = append(ns[i], timeCalls(m.fn, iters[i]))
		}
	}
	fmt.Printf("# go bench: ns per call, %d rounds, methods interleaved, each sample the median of 16 chunks\n", rounds)
	fmt.Printf("# | %-40s | %9s | %13s |\n", "method", "median ns", "x SO_PEERCRED")
	for i, m := range methods {
		ratio := make([]float64, rounds)
		for r := range ratio {
			ratio[r] = ns[i][r] / ns[0][r]
		}
		fmt.Printf("# | %-40s | %9.0f | %13.2f |\n", m.name, median(ns[i]), median(ratio))
		fmt.Printf("BENCH,bindings,go_%d,ns_per_call,0,%.0f,ns\n", i, median(ns[i]))
	}
}
