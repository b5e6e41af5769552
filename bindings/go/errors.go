// SPDX-License-Identifier: LGPL-2.1-or-later

package peercgroup

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// Error is what every call of this package returns on failure.  It wraps
// the errno, so errors.Is(err, unix.ENODATA) works as well as
// errors.Is(err, ErrNoRecord).  The errno values are those of the C
// library (libpeercgroup(3)): ENOPKG for "module not loaded", EPROTO for
// an ABI mismatch, ENODATA for "no record".
type Error struct {
	Op    string // "get", "open", "version", "classify"
	Errno syscall.Errno
}

func (e *Error) Error() string { return "peercgroup: " + e.Op + ": " + message(e.Errno) }

// Unwrap returns the errno.
func (e *Error) Unwrap() error { return e.Errno }

// Is matches the sentinel errors below by errno.
func (e *Error) Is(target error) bool {
	var s *sentinel
	return errors.As(target, &s) && s.errno == e.Errno
}

type sentinel struct {
	errno syscall.Errno
	text  string
}

func (s *sentinel) Error() string { return "peercgroup: " + s.text }
func (s *sentinel) Unwrap() error { return s.errno }

// Sentinel errors for errors.Is.  Each also matches its errno.
var (
	// ErrNoRecord: the module has no record for this connection
	// (ENODATA): it was made before the module was loaded, or, on the
	// client end, the listener's cgroup is unproven (peercgroup(4)).
	ErrNoRecord error = &sentinel{unix.ENODATA, message(unix.ENODATA)}
	// ErrModuleNotLoaded: no /dev/peercgroup or no driver behind it (ENOPKG).
	ErrModuleNotLoaded error = &sentinel{unix.ENOPKG, message(unix.ENOPKG)}
	// ErrNotConnected: the socket is not connected, or is listening (ENOTCONN).
	ErrNotConnected error = &sentinel{unix.ENOTCONN, message(unix.ENOTCONN)}
	// ErrABIMismatch: the loaded module speaks another ABI version (EPROTO).
	ErrABIMismatch error = &sentinel{unix.EPROTO, message(unix.EPROTO)}
	// ErrInvalidPath: ClassifyPath was given something that cannot be a
	// cgroup path (EINVAL).
	ErrInvalidPath error = &sentinel{unix.EINVAL, "not a cgroup path"}
)

// The C library's peercgroup_strerror() texts, so that a Go daemon and a C
// daemon log the same words (make check-bindings compares them).
func message(e syscall.Errno) string {
	switch e {
	case unix.ENOPKG:
		return "peercgroup kernel module is not loaded (no /dev/peercgroup): " +
			"run 'modprobe peercgroup'; if that fails, 'dkms status peercgroup'"
	case unix.ENODEV:
		return "peercgroup module is loaded but /dev/peercgroup is not visible here " +
			"(a sandboxed service? with PrivateDevices=yes add BindReadOnlyPaths=/dev/peercgroup " +
			"and DeviceAllow=/dev/peercgroup r, or open the device before sandboxing: " +
			"peercgroup_open_device())"
	case unix.EACCES:
		return "permission denied opening /dev/peercgroup (a service with " +
			"DevicePolicy= or PrivateDevices= needs DeviceAllow=/dev/peercgroup r; " +
			"the node itself is mode 0666)"
	case unix.EPROTO:
		return "peercgroup module speaks an incompatible ABI " +
			"(library and module from different releases? 'dkms status peercgroup')"
	case unix.ENODATA:
		return "no cgroup record for this connection (made before the module was loaded?)"
	case unix.EREMOTE:
		return "withheld: the peer is outside both this process's pid and cgroup " +
			"namespaces, so the kernel would not tell it either"
	case unix.ENXIO:
		return "the peer's cgroup names no such unit, owner, machine or container"
	case unix.ENOTCONN:
		return "socket is not connected (or is listening)"
	case unix.EOPNOTSUPP:
		return "not a stream or seqpacket socket (datagram sockets have no peer record)"
	case unix.EAFNOSUPPORT:
		return "not an AF_UNIX socket"
	case unix.ENOTSOCK:
		return "file descriptor is not a socket"
	case unix.EBADF:
		return "bad file descriptor"
	case unix.ESRCH:
		return "peer process is gone or not visible (live query)"
	case unix.ENOMEDIUM:
		return "peer process has no cgroup v2 membership (live query)"
	case unix.EINVAL:
		return "invalid argument"
	case unix.ENOMEM:
		return "out of memory"
	case unix.EFAULT:
		return "bad address"
	case unix.ENAMETOOLONG:
		return "the peer's cgroup path does not fit in PATH_MAX"
	}
	return e.Error()
}

// errno of open("/dev/peercgroup") -> the library's errno; loaded: the
// module's sysfs directory exists, so a missing node is hidden from us.
func mapOpenErrno(e syscall.Errno, loaded bool) syscall.Errno {
	switch e {
	case unix.ENOENT:
		if loaded {
			return unix.ENODEV
		}
		return unix.ENOPKG
	case unix.ENXIO, unix.ENODEV:
		return unix.ENOPKG
	case unix.EPERM, unix.EACCES:
		return unix.EACCES
	}
	return e
}

// errno of PEERCGROUP_IOC_QUERY -> the library's errno.  This package
// always sends valid flags, size and zeroed reserved bytes, so these mean
// the module speaks another ABI, or the device is not peercgroup's.
func mapQueryErrno(e syscall.Errno) syscall.Errno {
	switch e {
	case unix.EINVAL, unix.E2BIG, unix.ENOTTY:
		return unix.EPROTO
	}
	return e
}
