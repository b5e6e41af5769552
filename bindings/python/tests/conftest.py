# SPDX-License-Identifier: LGPL-2.1-or-later
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The tests run against the source tree's package, not an installed one.
sys.path.insert(0, os.path.dirname(HERE))


def project_file(rel):
    """A file of the project tree (PEERCGROUP_SRC when run elsewhere)."""
    root = os.environ.get("PEERCGROUP_SRC") or os.path.join(HERE, "..", "..", "..")
    return os.path.join(root, rel)
