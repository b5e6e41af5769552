# SPDX-License-Identifier: LGPL-2.1-or-later
"""Parity: the Python classifier gives every row of tests/data/classify.tsv
the answer the C classifier gives."""
import os

import pytest

from conftest import project_file
from classify_table import rows, unescape
import peercgroup

TABLE = os.environ.get("PEERCGROUP_CLASSIFY_TSV") or project_file("tests/data/classify.tsv")
STRINGS = ("id", "pod", "qos", "app", "launcher", "unit", "user_unit")


def answer(path):
    """The row a classification would have (columns by name)."""
    try:
        ct = peercgroup.classify(path, peercgroup.Namespace.INITIAL)  # the table's view
    except peercgroup.InvalidPathError as e:
        assert e.errno == 22 and isinstance(e, ValueError)
        return {"valid": "no"}
    got = {"valid": "yes", "runtime": str(ct.runtime), "uid": str(ct.uid),
           "up": str(ct.up), "flags": ct.flags.names()}
    for col in STRINGS:
        got[col] = getattr(ct, col) or "-"
    return got


def flag_set(s):
    return set(s.split(","))


def test_table_is_readable():
    n = sum(1 for _ in rows(TABLE))
    assert n > 50, f"{TABLE}: only {n} rows"


def cases():
    return [pytest.param(r, id=f"line{n}") for n, r in rows(TABLE)]


@pytest.mark.parametrize("row", cases())
def test_parity(row):
    path = unescape(row["path"])  # only the path column is escaped
    got = answer(path)
    assert got["valid"] == row["valid"], path
    if row["valid"] == "no":
        return
    want = {c: v for c, v in row.items() if c not in ("path", "valid", "source")}
    missing = [c for c in want if c not in got]
    assert not missing, f"the Python classifier has no {missing}"
    got = {c: got[c] for c in want}
    got["flags"], want["flags"] = flag_set(got["flags"]), flag_set(want["flags"])
    assert got == want, path


def test_namespaces():
    NS = peercgroup.Namespace
    assert peercgroup.classify("/", NS.INITIAL).runtime == peercgroup.Runtime.HOST
    ct = peercgroup.classify("/", NS.CHILD)
    assert ct.runtime == peercgroup.Runtime.UNKNOWN and ct.flags.names() == "namespaced"
    with pytest.raises(ValueError):
        peercgroup.classify("/", 7)


def test_str_and_bytes_agree():
    p = "/machine.slice/machine-caf\\xc3\\xa9.scope"
    assert peercgroup.classify(p) == peercgroup.classify(p.encode())
    assert peercgroup.classify(p).id == "café"
