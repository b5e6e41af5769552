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
	setDevicePath("")
	dev.mu.Lock()
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
