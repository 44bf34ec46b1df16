"""Hypothesis: the native integer column reader against Python's sqlite3 on any values.

For each example: a table of drawn rows, each value an integer (int64's whole range), NULL,
a real, text or a blob; some leading columns returned, the rest only summarized. The reader
returns exactly what sqlite3 reads (NULL as 0 with a mask), or declines when a returned
column holds a value that is not an integer; its summaries count every value as sqlite3
sees it.
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from strata.analysis import _native
from strata.analysis._sqlfile import SqliteReport
from tests.fuzz.profile import count, fuzz_settings, scratch

pytestmark = pytest.mark.skipif(
    not _native.available(), reason="the native reader is not built (`make native`)"
)

_VALUES = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.integers(-3, 3),
    st.none(),
    st.floats(allow_nan=False),
    st.text(max_size=4),
    st.binary(max_size=4),
)


def _python_summary(values: list) -> _native.ColumnSummary:
    ints = [v for v in values if type(v) is int]
    return _native.ColumnSummary(
        sum(v is None for v in values),
        sum(type(v) is float for v in values),
        sum(type(v) is str for v in values),
        sum(type(v) is bytes for v in values),
        min(ints) if ints else None,
        max(ints) if ints else None,
    )


@fuzz_settings(ci_examples=60)
@given(
    rows=st.integers(1, 4).flatmap(
        lambda width: st.lists(st.lists(_VALUES, min_size=width, max_size=width), min_size=1)
    ),
    outputs=st.integers(0, 4),
)
def test_the_reader_reads_what_sqlite3_reads(rows: list[list], outputs: int) -> None:
    count("native reader: any values against sqlite3")
    width = len(rows[0])
    names = [f"c{i}" for i in range(width)]
    with scratch() as work:
        path = work / "t.sqlite"
        con = sqlite3.connect(path)
        con.execute(f"CREATE TABLE t ({', '.join(names)})")  # no affinity: values as drawn
        con.executemany(f"INSERT INTO t VALUES ({', '.join('?' * width)})", rows)
        con.commit()
        stored = con.execute(f"SELECT {', '.join(names)} FROM t ORDER BY rowid").fetchall()
        con.close()
        with SqliteReport(path) as db:
            uri = db._uri
        sql = f"SELECT {', '.join(names)} FROM t ORDER BY rowid"
        columns = [list(c) for c in zip(*stored, strict=True)]
        returned = columns[:outputs]
        summaries: dict[str, _native.ColumnSummary] = {}
        if any(v is not None and type(v) is not int for c in returned for v in c):
            with pytest.raises(_native.NotIntegers):
                list(_native.read_batches(uri, sql, outputs, summaries))
            return
        batches = list(_native.read_batches(uri, sql, outputs, summaries))
    for c, want in enumerate(returned):
        got = np.concatenate([values[c] for _, values, _ in batches])
        nulls = np.concatenate(
            [m[c] if m[c] is not None else np.zeros(len(v[c]), bool) for _, v, m in batches]
        )
        assert got.tolist() == [0 if v is None else v for v in want]
        assert nulls.tolist() == [v is None for v in want]
    assert summaries == {n: _python_summary(c) for n, c in zip(names, columns, strict=True)}


def _table_pages(path, table: str) -> tuple[int, int, int]:
    """(root page, page size, pages in the file) of ``table``."""
    con = sqlite3.connect(path)
    root = con.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    size = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    return root, size, path.stat().st_size // size


@fuzz_settings(ci_examples=60)
@given(
    flips=st.lists(
        st.tuples(st.integers(2, 10**6), st.integers(0, 65535), st.integers(1, 255)),
        min_size=1,
        max_size=6,
    ),
    first=st.integers(-10, 10**4),
)
def test_damaged_pages_read_as_sqlite_reads_them_or_decline(flips, first: int) -> None:
    """Bytes of a table's pages changed at random: the direct page reader either declines
    the range or returns exactly the rows SQLite returns (never rows SQLite refuses)."""
    count("native reader: damaged table pages against sqlite3")
    with scratch() as work:
        path = work / "t.sqlite"
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE t (a INTEGER, b INTEGER, c INTEGER)")
        con.executemany(
            "INSERT INTO t VALUES (?, ?, ?)",
            [(first + i, (i * 7919) % 1000003 - 500, None if i % 13 == 0 else i * i)
             for i in range(3000)],
        )  # fmt: skip
        con.commit()
        con.close()
        root, size, pages = _table_pages(path, "t")
        data = bytearray(path.read_bytes())
        for page, at, xor in flips:
            page = 2 + page % (pages - 1)  # never the header page
            data[(page - 1) * size + at % size] ^= xor
        path.write_bytes(bytes(data))
        rows = (-(2**62), 2**62)
        try:
            got = []
            for _, values, masks in _native.direct_batches(
                path, root, rows, [0, 1, 2], list("abc")
            ):
                filled = [
                    v if m is None else np.where(m, -1, v)
                    for v, m in zip(values, masks, strict=True)
                ]
                got += zip(*filled, strict=True)
        except _native.Declined:
            return
        with SqliteReport(path) as db:
            try:
                want = db.con.execute("SELECT a, b, c FROM t ORDER BY rowid").fetchall()
            except sqlite3.DatabaseError as exc:
                raise AssertionError(f"rows read where SQLite refuses the table: {exc}") from exc
    assert [tuple(int(x) for x in r) for r in got] == [
        tuple(-1 if x is None else x for x in r) for r in want
    ]
