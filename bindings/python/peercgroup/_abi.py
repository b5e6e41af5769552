# SPDX-License-Identifier: LGPL-2.1-or-later
"""The kernel ABI of <linux/peercgroup.h>, written again for struct.

tests/test_abi.py checks every number here against the header.
"""
import struct

DEVICE_PATH = "/dev/peercgroup"
ABI_VERSION = 1

QUERY_NO_PATH = 1 << 0
RESULT_CGROUP_REMOVED = 1 << 0
RESULT_PEER_EXITED = 1 << 1

# struct peercgroup_query: size, flags, sockfd, path_size, path, cgroup_id,
# path_len, pid, result_flags, reserved.  Size first; fields only appended.
QUERY = struct.Struct("=IIiIQQIiII")
# struct peercgroup_version: size, abi_version, features, query_flags,
# query_size, module_version[32].
VERSION = struct.Struct("=IIQII32s")
QUERY_SIZE_VER0 = 48
VERSION_SIZE_VER0 = 56

# PATH_MAX of <linux/limits.h>: the module answers ENAMETOOLONG for a path
# of PATH_MAX bytes or more, so a buffer this size always fits.
PATH_MAX = 4096

IOC_MAGIC = 0xC6


def _iowr(nr, size):
    # _IOWR on x86_64 and arm64; the module ignores the size bits anyway.
    return 3 << 30 | size << 16 | IOC_MAGIC << 8 | nr


IOC_QUERY = _iowr(0x01, QUERY.size)
IOC_VERSION = _iowr(0x02, VERSION.size)
