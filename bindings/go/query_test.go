// SPDX-License-Identifier: LGPL-2.1-or-later

package peercgroup

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fakeAnswer is what a fake module answers to one PEERCGROUP_IOC_QUERY:
// path is written at q.Path (followed by term) when it fits in q.PathSize,
// q.PathLen is pathLen, and the ioctl fails with errno (0: success).
type fakeAnswer struct {
	path    string
	term    byte // the byte written after path: 0 for a well-behaved module
	pathLen uint32
	errno   syscall.Errno
}

// fakeModule puts a fake module in place of /dev/peercgroup for the test:
// answer is called once per query ioctl; it returns the count of calls.
func fakeModule(t *testing.T, answer func(q *rawQuery) fakeAnswer) *int {
	t.Helper()
	fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	setDevicePath("")
	dev.mu.Lock()
	dev.rdev, dev.ino = uint64(st.Rdev), uint64(st.Ino)
	dev.fd.Store(int32(fd))
	dev.queryFlags = queryNoPath
	dev.mu.Unlock()
	calls := new(int)
	queryIoctl = func(_ int, req uintptr, arg unsafe.Pointer) syscall.Errno {
		*calls++
		q := (*rawQuery)(arg)
		if req != iocQuery || q.Size != querySize || q.Flags != 0 || q.Reserved != 0 {
			t.Errorf("query ioctl %#x, size %d, flags %#x", req, q.Size, q.Flags)
			return unix.EINVAL
		}
		a := answer(q)
		if len(a.path)+1 <= int(q.PathSize) && a.errno == 0 {
			// The module writes through the user pointer; so does this,
			// with read(2) from a pipe holding the answer.
			data := append([]byte(a.path), a.term)
			var p [2]int
			if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
				t.Fatal(err)
			}
			_, err := unix.Write(p[1], data)
			var n uintptr
			if err == nil {
				var e syscall.Errno
				n, _, e = unix.Syscall(unix.SYS_READ, uintptr(p[0]), uintptr(q.Path), uintptr(len(data)))
				if e != 0 {
					err = e
				}
			}
			unix.Close(p[0])
			unix.Close(p[1])
			if err != nil || n != uintptr(len(data)) {
				t.Fatalf("writing the fake path: %d bytes, %v", n, err)
			}
		}
		q.CgroupID, q.PID, q.PathLen = 1234, 42, a.pathLen
		return a.errno
	}
	t.Cleanup(func() {
		queryIoctl = ioctl
		setDevicePath("")
	})
	return calls
}

// wellBehaved answers path as the module does: ERANGE when it does not fit.
func wellBehaved(path string) func(q *rawQuery) fakeAnswer {
	return func(q *rawQuery) fakeAnswer {
		a := fakeAnswer{path: path, pathLen: uint32(len(path))}
		if int(q.PathSize) < len(path)+1 {
			a.errno = unix.ERANGE
		}
		return a
	}
}

// The longest path the ABI allows, PATH_MAX - 1 bytes, comes back whole
// from one ioctl, as from peercgroup_get().
func TestGetPathMaxMinusOneInOneIoctl(t *testing.T) {
	path := "/" + strings.Repeat("x", pathMax-2)
	if len(path) != 4095 {
		t.Fatalf("path of %d bytes", len(path))
	}
	calls := fakeModule(t, wellBehaved(path))
	info, err := GetFd(0)
	if err != nil || info.Path != path || info.CgroupID != 1234 || info.PID != 42 {
		t.Errorf("got %d bytes, id %d, pid %d, %v", len(info.Path), info.CgroupID, info.PID, err)
	}
	if *calls != 1 {
		t.Errorf("%d ioctls, want 1", *calls)
	}

	// Still never an unterminated string, at the last byte of the buffer.
	calls = fakeModule(t, func(q *rawQuery) fakeAnswer {
		a := wellBehaved(path)(q)
		a.term = 'y'
		return a
	})
	if _, err := GetFd(0); !errors.Is(err, unix.EPROTO) {
		t.Errorf("unterminated path: %v, want EPROTO", err)
	}
	if *calls != 1 {
		t.Errorf("unterminated path: %d ioctls, want 1", *calls)
	}
}

// ERANGE into a PATH_MAX buffer breaks the ABI's promise: EPROTO at once,
// no retry (a retry could only race a rename), never ERANGE.
func TestGetERANGEIsEPROTO(t *testing.T) {
	for _, c := range []struct {
		name   string
		answer func(q *rawQuery) fakeAnswer
	}{
		{"path_len 4096", func(q *rawQuery) fakeAnswer {
			return fakeAnswer{pathLen: pathMax, errno: unix.ERANGE}
		}},
		// Always one byte longer than the buffer: a path renamed
		// longer between any two calls.
		{"path_len growing", func(q *rawQuery) fakeAnswer {
			return fakeAnswer{pathLen: q.PathSize, errno: unix.ERANGE}
		}},
	} {
		calls := fakeModule(t, c.answer)
		_, err := GetFd(0)
		if !errors.Is(err, unix.EPROTO) || !errors.Is(err, ErrABIMismatch) {
			t.Errorf("%s: %v, want EPROTO", c.name, err)
		}
		if *calls != 1 {
			t.Errorf("%s: %d ioctls, want 1", c.name, *calls)
		}
	}
}

// asTheKernel puts the kernel's side of a descriptor in front of the fake
// module: a closed one is EBADF, any file but a character device ENOTTY
// (counted in *wrong); the device opened again is /dev/null, whose
// version the fake module answers.
func asTheKernel(t *testing.T) (wrong *int) {
	t.Helper()
	wrong = new(int)
	// what any ioctl on fd meets before the module sees it
	kernel := func(fd int) syscall.Errno {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil {
			return unix.EBADF
		}
		if st.Mode&unix.S_IFMT != unix.S_IFCHR {
			*wrong++
			return unix.ENOTTY
		}
		return 0
	}
	inner := queryIoctl
	queryIoctl = func(fd int, req uintptr, arg unsafe.Pointer) syscall.Errno {
		if e := kernel(fd); e != 0 {
			return e
		}
		return inner(fd, req, arg)
	}
	versionIoctl = func(fd int, req uintptr, arg unsafe.Pointer) syscall.Errno {
		if e := kernel(fd); e != 0 {
			return e
		}
		v := (*rawVersion)(arg)
		v.ABIVersion, v.QueryFlags = abiVersion, queryNoPath
		copy(v.ModuleVersion[:], "9.8.7-fake")
		return 0
	}
	dev.path = "/dev/null"
	t.Cleanup(func() { versionIoctl = ioctl })
	return wrong
}

// The program closes the package's descriptor (a daemon's closefrom) and
// a file of its own takes the number: the next query opens the device
// again and answers, and the program's file stays open, as in C.
func TestProgramClosedDevice(t *testing.T) {
	const path = "/system.slice/sshd.service"
	fakeModule(t, wellBehaved(path))
	wrong := asTheKernel(t)
	old := int(dev.fd.Load())
	unix.Close(old)
	other, err := unix.Open("/proc/self/status", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil || other != old {
		t.Fatalf("the program's file at %d, not %d: %v", other, old, err)
	}
	defer unix.Close(other)
	if info, err := GetFd(0); err != nil || info.Path != path {
		t.Fatalf("after the program closed it: %q, %v", info.Path, err)
	}
	if *wrong != 1 {
		t.Errorf("%d ioctls reached the program's file, want 1", *wrong)
	}
	var st unix.Stat_t
	if unix.Fstat(other, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		t.Errorf("the program's file was closed")
	}
	// closed and not reused: EBADF is the descriptor's, not the socket's
	now := int(dev.fd.Load())
	if now < 0 || now == other {
		t.Fatalf("device at %d", now)
	}
	unix.Close(now)
	if _, err := GetFd(0); err != nil {
		t.Errorf("after a second close: %v", err)
	}
	// ModuleInfo looks first: it never asks the program's file
	unix.Close(int(dev.fd.Load()))
	*wrong = 0
	third, _ := unix.Open("/proc/self/status", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	defer unix.Close(third)
	if m, err := ModuleInfo(); err != nil || m.Version != "9.8.7-fake" || *wrong != 0 {
		t.Errorf("ModuleInfo: %+v, %v, %d asked the program's file", m, err, *wrong)
	}
	// the module's own EBADF (a bad socket) is passed on, after one check
	fakeModule(t, func(q *rawQuery) fakeAnswer { return fakeAnswer{errno: unix.EBADF} })
	if _, err := GetFd(0); !errors.Is(err, unix.EBADF) {
		t.Errorf("a bad socket: %v, want EBADF", err)
	}
}
