// SPDX-License-Identifier: LGPL-2.1-or-later

package peercgroup

import (
	"bytes"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// /dev/peercgroup is opened once per process, on first use, and its ABI
// version checked then.  A failure is not cached: the module may be loaded
// later.  Go never forks without exec, so the descriptor stays ours, but
// the program may close it behind the package's back (recheck).
var dev struct {
	mu         sync.Mutex
	fd         atomic.Int32 // -1: not open yet
	path       string
	queryFlags uint32
	rdev, ino  uint64 // what fd is, to know it again; set before fd
}

func init() { dev.fd.Store(-1) }

func ioctl(fd int, req uintptr, arg unsafe.Pointer) syscall.Errno {
	for {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
		if e != unix.EINTR {
			return e
		}
	}
}

// queryIoctl is the ioctl of PEERCGROUP_IOC_QUERY; tests put a fake
// module in its place.
var queryIoctl = ioctl

// versionIoctl is the ioctl of PEERCGROUP_IOC_VERSION; tests put a fake
// module in its place.
var versionIoctl = ioctl

func moduleVersion(fd int) (*rawVersion, syscall.Errno) {
	v := &rawVersion{Size: uint32(unsafe.Sizeof(rawVersion{}))}
	if e := versionIoctl(fd, iocVersion, unsafe.Pointer(v)); e != 0 {
		if e == unix.EFAULT || e == unix.ENOMEM {
			return nil, e
		}
		return nil, unix.EPROTO
	}
	if v.ABIVersion != abiVersion {
		return nil, unix.EPROTO
	}
	return v, 0
}

// device returns the open device, checked once for the ABI version.
func device() (int, syscall.Errno) {
	if fd := dev.fd.Load(); fd >= 0 {
		return int(fd), 0
	}
	dev.mu.Lock()
	defer dev.mu.Unlock()
	if fd := dev.fd.Load(); fd >= 0 {
		return int(fd), 0
	}
	path := dev.path
	if path == "" {
		path = devicePath
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return -1, mapOpenErrno(err.(syscall.Errno), path == devicePath && moduleLoaded())
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		unix.Close(fd)
		return -1, unix.ENOPKG // a stray file, not a device node
	}
	v, e := moduleVersion(fd)
	if e != 0 {
		unix.Close(fd)
		return -1, e
	}
	dev.queryFlags = v.QueryFlags
	dev.rdev, dev.ino = uint64(st.Rdev), uint64(st.Ino)
	dev.fd.Store(int32(fd))
	return fd, 0
}

// isOurDevice reports whether fd is still the device the package opened.
func isOurDevice(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR &&
		uint64(st.Rdev) == dev.rdev && uint64(st.Ino) == dev.ino
}

// recheck: a query on fd (from device()) failed, or is about to be made
// off the fast path.  It reports ours if fd is still the device: an error
// was the query's.  If not, because the program closed it (a daemon's
// closefrom), it forgets fd without closing it (the number may be the
// program's now) and returns the device opened again.  As
// pcg_device_recheck() in C.
func recheck(fd int) (nfd int, ours bool, e syscall.Errno) {
	if isOurDevice(fd) {
		return fd, true, 0
	}
	dev.mu.Lock()
	// Another goroutine may have opened it again at that number meanwhile.
	if dev.fd.Load() == int32(fd) && !isOurDevice(fd) {
		dev.fd.Store(-1)
	}
	dev.mu.Unlock()
	nfd, e = device()
	return nfd, false, e
}

// setDevicePath points the package at another device node ("" restores
// /dev/peercgroup) and forgets the open descriptor.  Tests only.
func setDevicePath(path string) {
	dev.mu.Lock()
	defer dev.mu.Unlock()
	if fd := dev.fd.Load(); fd >= 0 {
		unix.Close(int(fd))
	}
	dev.fd.Store(-1)
	dev.path = path
}

// Module describes the loaded kernel module.
type Module struct {
	ABIVersion uint32
	Features   uint64 // PEERCGROUP_FEATURE_* of <linux/peercgroup.h>
	QueryFlags uint32
	QuerySize  uint32
	Version    string
}

// ModuleInfo describes the loaded module; ErrModuleNotLoaded if there is
// none, ErrABIMismatch if it speaks another ABI version.
func ModuleInfo() (Module, error) {
	fd, e := device()
	if e == 0 {
		// Not on a query's path: look before asking, not after a failure.
		fd, _, e = recheck(fd)
	}
	if e != 0 {
		return Module{}, &Error{"open", e}
	}
	v, e := moduleVersion(fd)
	if e != 0 {
		return Module{}, &Error{"version", e}
	}
	name := v.ModuleVersion[:]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	return Module{v.ABIVersion, v.Features, v.QueryFlags, v.QuerySize, string(name)}, nil
}

// moduleLoaded: the module's sysfs directory exists, even when this
// process cannot see or open the device node (a sandbox).
func moduleLoaded() bool {
	var st unix.Stat_t
	return unix.Stat("/sys/module/peercgroup", &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}
