"""The report's ``StringIds`` rows, read and checked in plain Python (no NumPy).

:func:`read_string_rows` is the one reader and checker of the table: the loader and the lean
stats reader build their :class:`~analysis._strings.StringTable` from it, and the SQL path of
``stats`` (:mod:`analysis.stats.sql`) looks names up in a :class:`PlainStrings`.
:func:`absent_sql` is the one SQL test for an id that names no string.
"""

from __future__ import annotations

from collections.abc import Sequence

from strata.analysis._sqlfile import SqliteReport
from strata.analysis.errors import CorruptReportError

__all__ = ["PlainStrings", "absent_sql", "read_string_rows"]


def read_string_rows(db: SqliteReport) -> tuple[list[int], list[str | None]]:
    """Read and check ``StringIds``: (ids ascending, the text of each id).

    Values that are not text (an integer, a blob) are read as their text (SQLite's CAST);
    a NULL value leaves its id absent, so that an event naming it is refused.

    Raises
    ------
    CorruptReportError
        An id that is not an integer, is negative, or appears twice.
    """
    odd = db.execute(
        "SELECT typeof(id), count(*) FROM StringIds WHERE typeof(id) != 'integer' GROUP BY 1"
    )
    if odd:
        kind, count = odd[0]
        raise CorruptReportError(
            db.path, f"StringIds holds {count} {_type_name(kind)} ids where integers belong"
        )
    rows = db.execute("SELECT id, CAST(value AS TEXT) FROM StringIds ORDER BY id")
    ids = [r[0] for r in rows]
    if ids and ids[0] < 0:
        raise CorruptReportError(db.path, "StringIds holds negative ids")
    if len(set(ids)) != len(ids):
        twice = next(a for a, b in zip(ids, ids[1:], strict=False) if a == b)
        raise CorruptReportError(db.path, f"StringIds holds id {twice} twice")
    return ids, [r[1] for r in rows]


def _type_name(sqlite_type: str) -> str:
    return {"null": "NULL", "real": "real-number"}.get(sqlite_type, sqlite_type)


def absent_sql(column: str, dense_size: int | None) -> str:
    """An SQL condition true where the id in ``column`` (quoted) names no string.

    ``dense_size``: the pool's size when it is nsys's dense, complete layout (every id
    0..size-1 has a text): one comparison per row; None: an anti-join through the
    StringIds primary key.
    """
    if dense_size is not None:
        return f"{column} >= {dense_size}"
    return (
        f"({column} >= 0 AND {column} NOT IN "
        "(SELECT id FROM StringIds WHERE value IS NOT NULL AND id IS NOT NULL))"
    )


class PlainStrings:
    """StringIds as a dict, for the few names a summary of a small report looks up."""

    def __init__(self, ids: Sequence[int], values: Sequence[str | None]) -> None:
        self._text = dict(zip(ids, values, strict=True))
        complete = not ids or (ids[-1] == len(ids) - 1 and None not in values)
        #: The pool's size when every id 0..size-1 has a text (nsys's layout), else None.
        self.dense_size = len(ids) if complete else None

    @classmethod
    def read(cls, db: SqliteReport) -> PlainStrings:
        """Read and check the report's StringIds (:func:`read_string_rows`)."""
        return cls(*read_string_rows(db))

    def absent_sql(self, column: str) -> str:
        """An SQL condition true where the id in ``column`` (quoted) names no string."""
        return absent_sql(column, self.dense_size)

    def text(self, string_id: int) -> str | None:
        """The text of a present id; KeyError for an id that names no string."""
        text = self._text[string_id]
        if text is None:
            raise KeyError(string_id)
        return text
