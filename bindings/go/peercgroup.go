// SPDX-License-Identifier: LGPL-2.1-or-later

// Package peercgroup tells which cgroup (container) the peer of an AF_UNIX
// stream or seqpacket socket was in when the connection was made, the way
// SO_PEERCRED tells its credentials.  The peercgroup kernel module records
// it; this package asks /dev/peercgroup, in pure Go, and classifies cgroup
// paths into container runtimes.  It speaks the ABI of
// <linux/peercgroup.h> and returns the errors of libpeercgroup(3).
package peercgroup

import (
	"math"
	"net"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Flags describe a record (PEERCGROUP_RESULT_* of the module).
type Flags uint32

const (
	// CgroupRemoved: the cgroup was removed since the connection was made.
	CgroupRemoved Flags = resultCgroupRemoved
	// PeerExited: the peer process, as SO_PEERCRED names it, has exited since.
	PeerExited Flags = resultPeerExited
)

func (f Flags) String() string {
	var s []string
	if f&CgroupRemoved != 0 {
		s = append(s, "cgroup-removed")
	}
	if f&PeerExited != 0 {
		s = append(s, "peer-exited")
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

// Info is the peer's cgroup as of connect(), listen() or socketpair().
type Info struct {
	CgroupID uint64 // cgroup v2 id: inode number of the cgroup directory; 0 outside the caller's cgroup namespace
	// Path relative to the caller's cgroup namespace, as /proc/self/cgroup
	// prints it ("/system.slice/sshd.service"); "" with NoPath.
	Path  string
	PID   int // peer's pid in the caller's pid namespace; 0 if not visible
	Flags Flags
}

// Option changes what Get asks for.
type Option uint32

// NoPath skips the path: only CgroupID, PID and Flags are filled (faster).
const NoPath Option = 1 << 0

// Get returns the cgroup record of the peer of conn, a connected AF_UNIX
// stream or seqpacket connection (e.g. from net.UnixListener.AcceptUnix).
// Errors wrap the errno (see Error); the usual ones are ErrNoRecord,
// ErrModuleNotLoaded, ErrNotConnected and ErrABIMismatch.  It makes one
// ioctl whatever the path's length, as peercgroup_get(3) does: PATH_MAX
// bytes always suffice, so a module answering ERANGE is ErrABIMismatch.
func Get(conn *net.UnixConn, opts ...Option) (Info, error) {
	if conn == nil {
		return Info{}, &Error{"get", unix.EBADF}
	}
	rc, err := conn.SyscallConn()
	if err != nil {
		return Info{}, &Error{"get", unix.EBADF}
	}
	var info Info
	var e syscall.Errno
	if err := rc.Control(func(fd uintptr) { info, e = get(int(fd), opts) }); err != nil {
		return Info{}, &Error{"get", unix.EBADF} // closed
	}
	if e != 0 {
		return Info{}, &Error{"get", e}
	}
	return info, nil
}

// GetFd is Get for a raw socket descriptor.
func GetFd(fd int, opts ...Option) (Info, error) {
	info, e := get(fd, opts)
	if e != 0 {
		return Info{}, &Error{"get", e}
	}
	return info, nil
}

// query fills q with one PEERCGROUP_IOC_QUERY; buf (may be nil) is the
// path buffer.  A device descriptor the program closed is opened again,
// and the query asked once more, as in C.
func query(dfd, sockfd int, flags uint32, buf []byte, q *rawQuery) syscall.Errno {
	for retried := false; ; retried = true {
		*q = rawQuery{Size: uint32(unsafe.Sizeof(*q)), Flags: flags, Sockfd: int32(sockfd)}
		if len(buf) > 0 {
			q.PathSize = uint32(len(buf))
			q.Path = uint64(uintptr(unsafe.Pointer(&buf[0])))
		}
		e := queryIoctl(dfd, iocQuery, unsafe.Pointer(q))
		runtime.KeepAlive(buf)
		// What a closed or foreign descriptor answers: still ours?
		if e == 0 || retried || (e != unix.EBADF && e != unix.ENOTTY && e != unix.EINVAL) {
			return mapQueryErrno(e)
		}
		fd, ours, oe := recheck(dfd)
		// The device's own answer, unless EBADF: another goroutine may
		// have opened the device again at the number that failed.  A bad
		// socket answers EBADF twice.
		if ours && e != unix.EBADF {
			return mapQueryErrno(e)
		}
		if oe != 0 {
			return oe
		}
		dfd = fd
	}
}

// Path buffers of PATH_MAX bytes, reused: a query needs one only until its
// path is copied into a string.  They are on the heap (the module writes
// through a uintptr, which would not follow a moved goroutine stack).
var pathBufs = sync.Pool{New: func() any { return new([pathMax]byte) }}

func get(sockfd int, opts []Option) (Info, syscall.Errno) {
	var o Option
	for _, x := range opts {
		o |= x
	}
	if o&^NoPath != 0 {
		return Info{}, unix.EINVAL
	}
	// The ABI's sockfd is 32 bits: a larger int would name another fd.
	if sockfd < 0 || sockfd > math.MaxInt32 {
		return Info{}, unix.EBADF
	}
	dfd, e := device()
	if e != 0 {
		return Info{}, e
	}
	q := new(rawQuery)
	var path string
	if o&NoPath != 0 && dev.queryFlags&queryNoPath != 0 {
		e = query(dfd, sockfd, queryNoPath, nil, q)
	} else {
		// One ioctl whatever the length, as in C: the ABI bounds every
		// path below PATH_MAX (longer is ENAMETOOLONG), so there is no
		// retry, and no rename between two calls to race.
		b := pathBufs.Get().(*[pathMax]byte)
		buf := b[:]
		e = query(dfd, sockfd, 0, buf, q)
		if e == unix.ERANGE {
			e = unix.EPROTO // the module broke the ABI's promise
		} else if e == 0 {
			if int(q.PathLen) >= len(buf) || buf[q.PathLen] != 0 {
				e = unix.EPROTO // never hand out an unterminated string
			} else {
				path = string(buf[:q.PathLen])
			}
		}
		pathBufs.Put(b)
	}
	if e != 0 {
		return Info{}, e
	}
	if o&NoPath != 0 {
		path = ""
	}
	return Info{
		CgroupID: q.CgroupID,
		Path:     path,
		PID:      int(q.PID),
		Flags:    Flags(q.ResultFlags) & (CgroupRemoved | PeerExited),
	}, 0
}
