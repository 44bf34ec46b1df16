"""The report's ``StringIds`` table, read one way for the loader and the lean stats reader.

nsys numbers its strings densely (0..n-1, spec §1.1), so the pool is normally indexed by the
report's own ids and event columns keep them as they are. A report whose ids are sparse or
huge (one id of 2*10^9, or one beyond 2^32 that an int32 cast would fold onto another id)
gets a compact pool instead: the strings in id order, and every id column is mapped to its
position with a binary search. Memory is proportional to the rows, never to the largest id.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from strata.analysis._sqlite import ReportDatabase
from strata.analysis._stringpool import absent_sql, read_string_rows
from strata.analysis.errors import CorruptReportError

__all__ = ["StringTable", "read_string_table"]

#: Ids up to this multiple of the row count (plus a constant) are kept dense.
_DENSE_FACTOR = 2
_DENSE_SLACK = 1 << 16


class StringTable:
    """StringIds as a pool (``values``) and the map from report ids to pool codes.

    Parameters
    ----------
    path
        The report (named in error messages).
    ids
        The StringIds ids, sorted and distinct (int64).
    values
        The string of each id (None where the report stores NULL: such an id is absent).
    """

    def __init__(self, path: object, ids: npt.NDArray[np.int64], values: list) -> None:
        self.path = path
        self._ids: npt.NDArray[np.int64] | None
        top = int(ids[-1]) if len(ids) else -1
        if top < _DENSE_FACTOR * len(ids) + _DENSE_SLACK:
            # nsys's own layout: code == id, no lookup on the hot path.
            self.values = np.full(top + 1, None, dtype=object)
            self.values[ids] = values
            self._ids = None
        else:
            self.values = np.empty(len(ids), dtype=object)
            self.values[:] = values
            self._ids = ids
        self._present = self.values != None  # noqa: E711 - elementwise on an object array
        self._complete = bool(self._present.all())

    def __len__(self) -> int:
        return len(self.values)

    def codes(self, ids: npt.NDArray[np.integer], table: str) -> npt.NDArray[np.int32]:
        """Return the pool code of each report id; negative ids (NULL) become -1.

        Raises
        ------
        CorruptReportError
            An id >= 0 that StringIds lacks (or stores as NULL), naming ``table``.
        """
        ids = np.asarray(ids, dtype=np.int64)
        if not len(ids):
            return np.empty(0, dtype=np.int32)
        null = ids < 0
        if self._ids is None:
            pos = ids
            found = ~null & (ids < len(self.values))
        else:
            pos = np.searchsorted(self._ids, ids)
            found = pos < len(self._ids)
            found[found] = self._ids[pos[found]] == ids[found]
        if not self._complete:
            found[found] = self._present[pos[found]]
        bad = ~(found | null)
        if bad.any():
            raise CorruptReportError(
                self.path, f"StringIds lacks id {int(ids[bad][0])} used by {table}"
            )
        out = pos.astype(np.int32)
        out[null] = -1
        return out

    def absent_sql(self, column: str) -> str:
        """An SQL condition true where :meth:`codes` would refuse the id in ``column``.

        ``column`` is a quoted column name. nsys's dense, complete pool costs one comparison
        per row; any other pool an anti-join through the StringIds primary key.
        """
        return absent_sql(column, self.dense_size)

    @property
    def dense_size(self) -> int | None:
        """The pool's size when it is nsys's dense, complete layout (every id 0..size-1 has
        a text), else None."""
        return len(self.values) if self._ids is None and self._complete else None

    def code(self, string_id: object) -> int:
        """Return the pool code of one id, or -1 when it is absent or not an integer."""
        if not isinstance(string_id, int) or isinstance(string_id, bool) or string_id < 0:
            return -1
        if self._ids is None:
            return string_id if string_id < len(self.values) and self._present[string_id] else -1
        pos = int(np.searchsorted(self._ids, string_id))
        if pos < len(self._ids) and int(self._ids[pos]) == string_id and self._present[pos]:
            return pos
        return -1


def read_string_table(db: ReportDatabase) -> StringTable:
    """Read and check ``StringIds`` (:func:`analysis._stringpool.read_string_rows`).

    Raises
    ------
    CorruptReportError
        An id that is not an integer, is negative, or appears twice.
    """
    ids, values = read_string_rows(db)
    return StringTable(db.path, np.array(ids, dtype=np.int64), values)
