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
    """The row a classification would have (columns by name); string
    columns as bytes, b"" for empty."""
    try:
        ct = peercgroup.classify(path, peercgroup.Namespace.INITIAL)  # the table's view
    except peercgroup.InvalidPathError as e:
        assert e.errno == 22 and isinstance(e, ValueError)
        return {"valid": "no"}
    got = {"valid": "yes", "runtime": str(ct.runtime), "uid": str(ct.uid),
           "up": str(ct.up), "flags": ct.flags.names()}
    for col in STRINGS:
        got[col] = os.fsencode(getattr(ct, col))
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
    assert check_row(row) is None, check_row(row)


def check_row(row, all_escaped=False):
    """None, or what differs between the row and the Python classifier.
    Only the path column is escaped, unless all_escaped."""
    path = unescape(row["path"])
    got = answer(path)
    if got["valid"] != row["valid"]:
        return f"{path!r}: valid {got['valid']}, table says {row['valid']}"
    if row["valid"] == "no":
        return None
    want = {c: v for c, v in row.items() if c not in ("path", "valid", "source")}
    for c in STRINGS:
        if c in want:
            v = want[c]
            want[c] = b"" if v == "-" else unescape(v) if all_escaped else v.encode()
    missing = [c for c in want if c not in got]
    if missing:
        return f"the Python classifier has no {missing}"
    got = {c: got[c] for c in want}
    got["flags"], want["flags"] = flag_set(got["flags"]), flag_set(want["flags"])
    return None if got == want else f"{path!r}: got {got}, table says {want}"


DIFF = os.environ.get("PEERCGROUP_CLASSIFY_DIFF")


@pytest.mark.skipif(not DIFF, reason="make check-bindings passes PEERCGROUP_CLASSIFY_DIFF")
def test_differential():
    """The C classifier's answers for generated paths (classify-dump.c),
    where every string column is escaped."""
    table = list(rows(DIFF))
    assert len(table) >= 1000
    bad = [f"line {n}: {d}" for n, r in table if (d := check_row(r, True))]
    assert not bad, "\n".join(bad[:20])


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
