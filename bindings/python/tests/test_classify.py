# SPDX-License-Identifier: LGPL-2.1-or-later
"""Parity: the Python classifier gives every row of tests/data/classify.tsv
the answer the C classifier gives."""
import os

import pytest

from conftest import project_file
from classify_table import rows, unescape
import peercgroup

TABLE = os.environ.get("PEERCGROUP_CLASSIFY_TSV") or project_file("tests/data/classify.tsv")
if not os.path.exists(TABLE):
    pytest.skip("TODO(classifier merge): no tests/data/classify.tsv yet", allow_module_level=True)
STRINGS = ("id", "pod", "qos", "app", "launcher")


def answer(path):
    """The row a classification would have (columns by name)."""
    try:
        ct = peercgroup.classify(path)
    except peercgroup.InvalidPathError as e:
        assert e.errno == 22 and isinstance(e, ValueError)
        return {"valid": "no"}
    got = {"valid": "yes", "runtime": str(ct.runtime), "uid": str(ct.uid),
           "flags": ct.flags.names()}
    for col in STRINGS + ("up",):
        if hasattr(ct, col):
            v = getattr(ct, col)
            got[col] = str(v) if col == "up" else (os.fsencode(v) if v else b"-")
    return got


def test_table_is_readable():
    n = sum(1 for _ in rows(TABLE))
    assert n > 50, f"{TABLE}: only {n} rows"


def cases():
    return [pytest.param(r, id=f"line{n}") for n, r in rows(TABLE)]


@pytest.mark.parametrize("row", cases())
def test_parity(row):
    path = unescape(row["path"])
    got = answer(path)
    assert got["valid"] == row["valid"], path
    if row["valid"] == "no":
        return
    want = {"runtime": row["runtime"], "uid": row["uid"], "flags": row["flags"]}
    for col in STRINGS:
        if col in row:
            want[col] = b"-" if row[col] == "-" else unescape(row[col])
    if "up" in row:
        want["up"] = row["up"]
    missing = [c for c in want if c not in got]
    assert not missing, f"the Python classifier has no {missing}"
    assert {c: got[c] for c in want} == want, path


def test_str_and_bytes_agree():
    p = "/machine.slice/machine-caf\\xc3\\xa9.scope"
    assert peercgroup.classify(p) == peercgroup.classify(p.encode())
    assert peercgroup.classify(p).id == "café"
