// SPDX-License-Identifier: LGPL-2.1-or-later

package peercgroup

import "golang.org/x/sys/unix"

// The kernel ABI of include/uapi/linux/peercgroup.h, written again in Go
// (no cgo).  abi_test.go checks every number here against that header.

const (
	devicePath = "/dev/peercgroup"
	abiVersion = 1

	queryNoPath = 1 << 0 // PEERCGROUP_QUERY_NO_PATH

	resultCgroupRemoved = 1 << 0 // PEERCGROUP_RESULT_CGROUP_REMOVED
	resultPeerExited    = 1 << 1 // PEERCGROUP_RESULT_PEER_EXITED

	querySize   = 48 // PEERCGROUP_QUERY_SIZE_VER0
	versionSize = 56 // PEERCGROUP_VERSION_SIZE_VER0

	iocMagic = 0xC6
	// _IOWR(PEERCGROUP_IOC_MAGIC, nr, struct): the module ignores the size
	// bits, but send the same number a C program built from the header sends.
	iocQuery   = 3<<30 | querySize<<16 | iocMagic<<8 | 0x01
	iocVersion = 3<<30 | versionSize<<16 | iocMagic<<8 | 0x02

	versionStringSize = 32

	// PATH_MAX of <linux/limits.h>: the module answers ENAMETOOLONG for a
	// path of PATH_MAX bytes or more, so a buffer this size always fits.
	pathMax = unix.PathMax
)

// struct peercgroup_query: size first, fields only ever appended.
type rawQuery struct {
	Size        uint32
	Flags       uint32
	Sockfd      int32
	PathSize    uint32
	Path        uint64
	CgroupID    uint64
	PathLen     uint32
	PID         int32
	ResultFlags uint32
	Reserved    uint32
}

// struct peercgroup_version.
type rawVersion struct {
	Size          uint32
	ABIVersion    uint32
	Features      uint64
	QueryFlags    uint32
	QuerySize     uint32
	ModuleVersion [versionStringSize]byte
}
