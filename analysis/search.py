"""Find events by name across every report of a set: the timeline's search (Ctrl+F).

A name matches as the timeline spells it: the text drawn in its box (a kernel's short name,
an NVTX range's text: the slice tables of :mod:`analysis.kinds`) or the name the tooltip,
the stats tables and the Events view say (:mod:`analysis.names`: a kernel's demangled name,
an NVTX range's ``domain:text``). The pattern is tried once per *distinct* name that occurs
(the string pool), never once per event: the per-event work is a ``bincount`` and a gather,
so 10 M events cost a few hundred ms of NumPy whatever the pattern.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from strata.analysis.errors import AnalysisError
from strata.analysis.kinds import event_kinds
from strata.analysis.model import Report
from strata.analysis.reportset import ReportSet
from strata.analysis.slices import SliceTable

__all__ = ["SearchMatches", "compile_search", "match_names", "search_events"]


@dataclass(frozen=True)
class SearchMatches:
    """The events a search found, in shared-axis start order.

    Attributes
    ----------
    pattern
        What was searched for (as typed).
    tables
        Slice-table names ``table_codes`` index.
    report_index, table_codes, index
        Per match: its report, its slice table, its interval in that table (int arrays).
    start_ns, end_ns
        Per match: its bounds on the shared axis (report time + offset, int64).
    """

    pattern: str
    tables: tuple[str, ...]
    report_index: npt.NDArray[np.int32]
    table_codes: npt.NDArray[np.int16]
    index: npt.NDArray[np.int64]
    start_ns: npt.NDArray[np.int64]
    end_ns: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.index)

    def rows(self, report_count: int, tables: Sequence[Sequence[str]]) -> dict:
        """``(report_index, slice table) -> interval indices`` to emphasise on the timeline.

        ``tables[r]``: the slice tables the timeline draws for report ``r``; each gets an
        entry (an empty one dims every event of a table without a match).
        """
        out: dict[tuple[int, str], np.ndarray] = {}
        for r in range(report_count):  # loops over reports and tables, not events
            mine = self.report_index == r
            for name in tables[r]:
                code = self.tables.index(name) if name in self.tables else -1
                out[(r, name)] = np.sort(self.index[mine & (self.table_codes == code)])
        return out


def compile_search(text: str, is_regex: bool = False) -> re.Pattern:
    """Return the case-insensitive pattern that ``text`` means.

    Raises
    ------
    AnalysisError
        ``is_regex`` and ``text`` is not a valid regular expression (one line: what and
        where).
    """
    if not is_regex:
        return re.compile(re.escape(text), re.IGNORECASE)
    try:
        return re.compile(text, re.IGNORECASE)
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        raise AnalysisError(f"invalid regular expression: {exc.msg}{where}") from None


def match_names(pool: np.ndarray, codes: np.ndarray, pattern: re.Pattern) -> np.ndarray:
    """Return per code whether ``pool[code]`` matches: the pattern runs once per distinct
    name used (a pool can hold 10^6 strings); -1 (no name) never matches."""
    codes = np.asarray(codes)
    valid = codes[codes >= 0] if len(codes) and int(codes.min()) < 0 else codes
    hit = np.zeros(len(pool) + 1, dtype=bool)  # the last slot: -1, no name
    if not len(valid):
        return hit[codes]
    used = np.flatnonzero(np.bincount(valid, minlength=len(pool)))
    texts = pool[used]
    hit[used] = [isinstance(t, str) and pattern.search(t) is not None for t in texts.tolist()]
    return hit[codes]


def _full_names(report: Report, slices: dict[str, SliceTable]) -> dict[str, tuple]:
    """Per slice table whose tooltip name differs from its box label: (interval per named
    row, group code per row, label per group), from the kind registry."""
    out = {}
    for kind in event_kinds():
        table = slices.get(kind.drawn_as)
        if kind.names is None or kind.slices is None or kind.lazy_slices or table is None:
            continue
        if table.source != kind.tables[0] or table.source_rows is not None:
            continue  # intervals are not the source rows: the box label is the name
        rows = kind.rows(report)
        names = kind.event_names(report, rows)
        out[kind.drawn_as] = (rows.rows, names.codes, np.asarray(names.labels, dtype=object))
    return out


def _table_hits(table: SliceTable, full: tuple | None, pattern: re.Pattern) -> np.ndarray:
    """Interval indices of ``table`` whose box label or full name matches."""
    hit = match_names(np.asarray(table.labels, dtype=object), table.label_ids, pattern)
    if full is not None:
        rows, codes, labels = full
        hit[rows[match_names(labels, codes, pattern)]] = True
    return np.flatnonzero(hit)


def search_events(
    reports: ReportSet,
    text: str,
    is_regex: bool = False,
    offsets_ns: Sequence[int] | None = None,
) -> SearchMatches:
    """Find every drawn event whose name matches ``text`` (case-insensitive).

    Parameters
    ----------
    reports
        The reports to search (every slice table the set has built: the projected NVTX
        ranges once they are).
    text
        A substring, or a regular expression when ``is_regex``.
    offsets_ns
        Per report, the shift onto the shared axis (default: the set's own offsets).

    Returns
    -------
    SearchMatches
        Sorted by shared-axis start; empty for empty ``text``.

    Raises
    ------
    AnalysisError
        An invalid regular expression.
    """
    pattern = compile_search(text, is_regex)
    offsets = list(reports.offsets_ns() if offsets_ns is None else offsets_ns)
    offsets += [0] * (len(reports) - len(offsets))
    tables: list[str] = []
    parts: list[tuple[int, int, np.ndarray, np.ndarray, np.ndarray]] = []
    for r, report in enumerate(reports.reports if text else ()):
        slices = reports.slice_tables(r)
        full = _full_names(report, slices)
        for name, table in slices.items():
            found = _table_hits(table, full.get(name), pattern)
            if not len(found):
                continue
            if name not in tables:
                tables.append(name)
            shift = offsets[r]
            parts.append((r, tables.index(name), found, table.start_ns[found] + shift,
                          table.end_ns[found] + shift))  # fmt: skip
    return _sorted_matches(text, tuple(tables), parts)


def _sorted_matches(text: str, tables: tuple[str, ...], parts: list) -> SearchMatches:
    if not parts:
        empty = np.empty(0, np.int64)
        return SearchMatches(text, tables, empty.astype(np.int32), empty.astype(np.int16),
                             empty, empty, empty)  # fmt: skip
    sizes = [len(p[2]) for p in parts]
    start = np.concatenate([p[3] for p in parts])
    order = np.argsort(start, kind="stable")
    return SearchMatches(
        text,
        tables,
        np.repeat(np.array([p[0] for p in parts], np.int32), sizes)[order],
        np.repeat(np.array([p[1] for p in parts], np.int16), sizes)[order],
        np.concatenate([p[2] for p in parts]).astype(np.int64)[order],
        start[order],
        np.concatenate([p[4] for p in parts])[order],
    )
