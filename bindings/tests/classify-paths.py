#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""classify-paths.py TABLE N SEED: N cgroup paths for the differential test,
one per line with the table's escapes.  Built from the components of
TABLE's own paths (so the corpus grows with the classifier's table), mixed,
nested, cut and mutated the ways that have broken classifiers: shared
prefix/suffix characters, escapes, empty and '.'/'..' components, long
names.  Deterministic for a SEED."""
import random
import sys

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/python/tests")
from classify_table import rows, unescape  # noqa: E402


def escape(b):
    out = []
    for c in b:
        if c == 0x5C:
            out.append("\\\\")
        elif c < 0x20 or c >= 0x7F:
            out.append(f"\\x{c:02x}")
        else:
            out.append(chr(c))
    return "".join(out)


def main():
    table, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rnd = random.Random(seed)
    comps = set()
    for _, r in rows(table):
        comps.update(unescape(r["path"]).split(b"/"))
    comps = sorted(comps)
    extra = [b"", b".", b"..", b"x" * 255, b"y" * 256, b"-", b"_", b"@", b":", b"\\x2d",
             b"\\x2f", b"\\x00", b"\xff", b"\xc3\xa9", b"0" * 64, b"A" * 64]
    marks = [b"-", b"_", b"@", b".", b":", b"\\", b"x", b"0", b"a", b"scope", b"service",
             b"slice"]
    for _ in range(n):
        k = rnd.choice((0, 1, 1, 2, 2, 3, 3, 4, 5, 6))
        parts = [rnd.choice(comps) if rnd.random() < 0.9 else rnd.choice(extra)
                 for _ in range(k)]
        for i, p in enumerate(parts):
            r = rnd.random()
            if r < 0.1 and p:  # cut
                a = rnd.randrange(len(p))
                parts[i] = p[:a] if rnd.random() < 0.5 else p[a:]
            elif r < 0.2:  # insert a character that separates words
                a = rnd.randrange(len(p) + 1)
                parts[i] = p[:a] + rnd.choice(marks) + p[a:]
        path = b"/".join(parts)
        if rnd.random() < 0.15:
            path = b"/.." * rnd.randint(1, 3) + (b"/" + path if path else b"")
        elif rnd.random() < 0.85:
            path = b"/" + path
        if path and b"\n" not in path:
            print(escape(path))


main()
