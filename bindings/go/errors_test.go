// SPDX-License-Identifier: LGPL-2.1-or-later

package peercgroup

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func TestOpenErrnoMapping(t *testing.T) {
	for in, want := range map[syscall.Errno]syscall.Errno{
		unix.ENOENT: unix.ENOPKG, unix.ENXIO: unix.ENOPKG, unix.ENODEV: unix.ENOPKG,
		unix.EPERM: unix.EACCES, unix.EACCES: unix.EACCES, unix.EMFILE: unix.EMFILE,
	} {
		if got := mapOpenErrno(in, false); got != want {
			t.Errorf("open %v -> %v, want %v", in, got, want)
		}
	}
	// No node, but the module is loaded: hidden from this process, as in C.
	if got := mapOpenErrno(unix.ENOENT, true); got != unix.ENODEV {
		t.Errorf("open ENOENT, module loaded -> %v, want ENODEV", got)
	}
	if got := mapOpenErrno(unix.ENXIO, true); got != unix.ENOPKG {
		t.Errorf("open ENXIO, module loaded -> %v, want ENOPKG", got)
	}
}

func TestQueryErrnoMapping(t *testing.T) {
	for in, want := range map[syscall.Errno]syscall.Errno{
		unix.EINVAL: unix.EPROTO, unix.E2BIG: unix.EPROTO, unix.ENOTTY: unix.EPROTO,
		unix.ENODATA: unix.ENODATA, unix.ENOTCONN: unix.ENOTCONN, unix.EBADF: unix.EBADF,
		unix.ENOTSOCK: unix.ENOTSOCK, unix.EOPNOTSUPP: unix.EOPNOTSUPP,
		unix.EAFNOSUPPORT: unix.EAFNOSUPPORT, unix.EFAULT: unix.EFAULT,
	} {
		if got := mapQueryErrno(in); got != want {
			t.Errorf("query %v -> %v, want %v", in, got, want)
		}
	}
}

func TestErrorsIs(t *testing.T) {
	cases := []struct {
		errno    syscall.Errno
		sentinel error
	}{
		{unix.ENODATA, ErrNoRecord},
		{unix.ENOPKG, ErrModuleNotLoaded},
		{unix.ENOTCONN, ErrNotConnected},
		{unix.EPROTO, ErrABIMismatch},
		{unix.EINVAL, ErrInvalidPath},
	}
	for _, c := range cases {
		err := error(&Error{"get", c.errno})
		if !errors.Is(err, c.sentinel) {
			t.Errorf("errors.Is(%v, %v) = false", err, c.sentinel)
		}
		if !errors.Is(err, c.errno) {
			t.Errorf("errors.Is(%v, %v) = false", err, c.errno)
		}
		if !errors.Is(c.sentinel, c.errno) {
			t.Errorf("sentinel %v does not wrap %v", c.sentinel, c.errno)
		}
		var e *Error
		if !errors.As(err, &e) || e.Errno != c.errno {
			t.Errorf("errors.As(%v) failed", err)
		}
		for _, o := range cases {
			if o.errno != c.errno && errors.Is(err, o.sentinel) {
				t.Errorf("errors.Is(%v, %v) = true", err, o.sentinel)
			}
		}
	}
	if !errors.Is(&Error{"open", unix.EACCES}, fs.ErrPermission) {
		t.Error("EACCES is not fs.ErrPermission")
	}
	if got := (&Error{"get", unix.ENODATA}).Error(); got != "peercgroup: get: no cgroup record for this connection (made before the module was loaded?)" {
		t.Errorf("message %q", got)
	}
}

// Errors that need no module: every answer must name the cause.
func TestDeviceErrors(t *testing.T) {
	defer setDevicePath("")
	dir := t.TempDir()
	regular := filepath.Join(dir, "file")
	if err := os.WriteFile(regular, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	sv, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sv[0])
	defer unix.Close(sv[1])
	for _, c := range []struct {
		device string
		want   error
	}{
		{filepath.Join(dir, "absent"), ErrModuleNotLoaded},
		{regular, ErrModuleNotLoaded}, // not a character device
		{"/dev/null", ErrABIMismatch}, // a device that is not ours: ENOTTY
	} {
		setDevicePath(c.device)
		if _, err := GetFd(sv[0]); !errors.Is(err, c.want) {
			t.Errorf("device %s: got %v, want %v", c.device, err, c.want)
		}
		if _, err := ModuleInfo(); !errors.Is(err, c.want) {
			t.Errorf("ModuleInfo with %s: got %v, want %v", c.device, err, c.want)
		}
	}
	if _, err := GetFd(-1); !errors.Is(err, unix.EBADF) {
		t.Errorf("fd -1: %v", err)
	}
	// An fd past 32 bits is no fd, never the one its low bits name.
	for _, fd := range []int{1 << 31, 1<<32 + sv[0]} {
		if _, err := GetFd(fd); !errors.Is(err, unix.EBADF) {
			t.Errorf("fd %#x: %v", fd, err)
		}
	}
	if _, err := GetFd(sv[0], Option(1<<5)); !errors.Is(err, unix.EINVAL) {
		t.Errorf("unknown option: %v", err)
	}
	if _, err := Get(nil); !errors.Is(err, unix.EBADF) {
		t.Errorf("nil conn: %v", err)
	}
	// A closed *net.UnixConn: EBADF, without touching a reused descriptor.
	c1, c2 := unixConnPair(t)
	c1.Close()
	defer c2.Close()
	if _, err := Get(c1); !errors.Is(err, unix.EBADF) {
		t.Errorf("closed conn: %v", err)
	}
}

// unixConnPair returns both ends of a socketpair as *net.UnixConn.
func unixConnPair(t testing.TB) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	sv, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var conns [2]*net.UnixConn
	for i, fd := range sv {
		f := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c.(*net.UnixConn)
	}
	return conns[0], conns[1]
}

// The C library's peercgroup_strerror() texts, which make check-bindings
// dumps from it: the same words for every errno it has one for, and none
// of the package's own for any other.
func TestMessagesAreTheCLibrarys(t *testing.T) {
	fn := os.Getenv("PEERCGROUP_MESSAGES")
	if fn == "" {
		t.Skip("make check-bindings passes PEERCGROUP_MESSAGES")
	}
	data, err := os.ReadFile(fn)
	if err != nil {
		t.Fatal(err)
	}
	c := map[syscall.Errno]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		num, text, ok := strings.Cut(line, "\t")
		n, err := strconv.Atoi(num)
		if !ok || err != nil {
			t.Fatalf("%s: bad line %q", fn, line)
		}
		c[syscall.Errno(n)] = text
	}
	if len(c) < 10 {
		t.Fatalf("%s: %d messages", fn, len(c))
	}
	for e := syscall.Errno(1); e < 4096; e++ {
		want, ok := c[e]
		if !ok {
			want = e.Error()
		}
		if got := message(e); got != want {
			t.Errorf("errno %d: %q, C says %q", int(e), got, want)
		}
	}
}
