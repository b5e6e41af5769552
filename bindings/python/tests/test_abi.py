# SPDX-License-Identifier: LGPL-2.1-or-later
"""The numbers of peercgroup/_abi.py are those of the uapi header."""
import os
import re

from conftest import project_file
from peercgroup import _abi


def header():
    defs = {}
    with open(project_file("include/uapi/linux/peercgroup.h")) as f:
        for m in re.finditer(r"^#define\s+(PEERCGROUP_\w+)\s+\(?(0x[0-9A-Fa-f]+|\d+)(?:U|ULL)?\s*(?:<<\s*(\d+)\)?)?",
                             f.read(), re.M):
            defs[m.group(1)] = int(m.group(2), 0) << int(m.group(3) or 0)
    return defs


def test_constants():
    h = header()
    assert h["PEERCGROUP_ABI_VERSION"] == _abi.ABI_VERSION
    assert h["PEERCGROUP_QUERY_NO_PATH"] == _abi.QUERY_NO_PATH
    assert h["PEERCGROUP_RESULT_CGROUP_REMOVED"] == _abi.RESULT_CGROUP_REMOVED
    assert h["PEERCGROUP_RESULT_PEER_EXITED"] == _abi.RESULT_PEER_EXITED
    assert h["PEERCGROUP_QUERY_SIZE_VER0"] == _abi.QUERY_SIZE_VER0 == _abi.QUERY.size
    assert h["PEERCGROUP_VERSION_SIZE_VER0"] == _abi.VERSION_SIZE_VER0 == _abi.VERSION.size
    assert h["PEERCGROUP_IOC_MAGIC"] == _abi.IOC_MAGIC
    assert _abi.IOC_QUERY == 0xC030C601 and _abi.IOC_VERSION == 0xC038C602


def test_path_max():
    # PATH_MAX, which the header's ENAMETOOLONG bounds every path by
    assert _abi.PATH_MAX == 4096 == os.pathconf("/", "PC_PATH_MAX")
    try:
        with open("/usr/include/linux/limits.h") as f:
            m = re.search(r"^#define\s+PATH_MAX\s+(\d+)", f.read(), re.M)
    except FileNotFoundError:
        return
    assert m and int(m.group(1)) == _abi.PATH_MAX
