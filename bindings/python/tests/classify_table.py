# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reader of tests/data/classify.tsv, the classifier table shared by C, Go
and Python: UTF-8, '#' comments and blank lines ignored, the first other
line a header, tab-separated, columns read by header name."""
import re

_ESC = re.compile(rb"\\(\\|t|n|x[0-9A-Fa-f]{2})")


def unescape(s):
    """C escapes \\\\ \\t \\n \\xNN -> bytes."""
    def one(m):
        e = m.group(1)
        return {b"\\": b"\\", b"t": b"\t", b"n": b"\n"}.get(e) or bytes([int(e[1:], 16)])
    return _ESC.sub(one, s.encode("utf-8"))


def rows(fn):
    """(line number, {column: text}) for every row."""
    header = None
    with open(fn, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cells = line.split("\t")
            if header is None:
                header = cells
                continue
            if len(cells) != len(header):
                raise ValueError(f"{fn}:{n}: {len(cells)} columns, header has {len(header)}")
            yield n, dict(zip(header, cells))
