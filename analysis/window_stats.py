"""Per-name statistics of a moving time window, fast enough for the live stats panel.

:func:`analysis.selection.aggregate` filters, remaps and sorts the selected events on every
call (~0.5 s for 10 M kernels here, the sort being most of it). The panel asks the same
question again for every mouse move of a selection, so :class:`WindowIndex` pays the sort
once: the events of one kind of every report are put in ``(group, value)`` order, where a
group is one name (pooled) or one (report, name) pair. A window is then a boolean mask
whose compaction keeps that order, and every statistic — count, total, min, max, exact
median, sample std — is a segment reduction over already-sorted values (no sort per query).
Small windows take a second path: a binary search in start order gives the few candidate
rows, and only their positions are sorted.

The columns live in the array module ``xp`` given at build time: with CuPy they are copied
to the device once and stay there (the per-report device cache), so a query moves only the
per-group results back. Times are on the shared timeline axis (report time + the report's
offset) so that one window means the same instant in every report.

With NumPy and values in ``[0, 2**48)`` (every real report's durations and sizes), the index
is :mod:`analysis.window_ranked` instead: each report's events in (name, start) order, so a
window costs O(names × reports × value bits) and no pass over its events (10 M kernels, 2
cores: build 1.6-1.8 s, 3.3 s before the wavelet levels went in cache-sized steps; 11.1 B
per kernel; ~2 ms per update at any window size, where the mask path below took 127-224 ms).
The sorted-values path stays for CuPy and negative values. The threaded ranked build is
:mod:`analysis.window_build`; the panel's shaping of a table (by report, the histogram's
outlier bound) :mod:`analysis.window_tables`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np
import pandas as pd

from strata.analysis.engine import reduce_sorted
from strata.analysis.errors import AnalysisError
from strata.analysis.kinds import PanelRows, Projector, check_panel, panel_kinds, panel_rows
from strata.analysis.model import Report
from strata.analysis.names import EventNames
from strata.analysis.progress import Progress
from strata.analysis.projection import project_nvtx
from strata.analysis.window_build import RankedBuild, check_cancel, group_codes
from strata.analysis.window_ranked import RankedReport, fits_ranked, ranked_stats
from strata.analysis.window_tables import pivot_by_report, robust_threshold
from strata.analysis.xp import to_numpy

__all__ = [
    "STAT_COLUMNS",
    "WINDOW_KINDS",
    "WindowIndex",
    "build_window_index",
    "pivot_by_report",
    "robust_threshold",
]

#: What can be indexed: the panel kinds of :mod:`analysis.kinds` (the built-in ones; a kind
#: registered later is indexed too).
WINDOW_KINDS = panel_kinds()
STAT_COLUMNS = ["count", "total_ns", "mean_ns", "median_ns", "min_ns", "max_ns", "std_ns"]
#: Below this fraction of the rows, a window's rows are found by binary search in start order.
_GATHER_FRACTION = 1 / 16


@dataclass
class _Ordered:
    """Rows of every report in ``(group, value)`` order, resident in ``xp``."""

    values: object  # int64, ascending within a group
    start_ns: object  # shared axis
    end_ns: object
    report: np.ndarray  # int16 report index per row (host)
    table_codes: np.ndarray  # int8 (host)
    rows: np.ndarray  # int64 (host)
    bounds: np.ndarray  # int64 group g is rows [bounds[g], bounds[g+1]) (host)
    bounds_xp: object  # the same, in xp
    is_by_report: bool  # group = report * names + name (else group = name)
    start_min_ns: int  # a window over [min, max] start keeps every row
    start_max_ns: int
    by_start: object = None  # positions sorted by start (built on first small window)
    start_sorted: object = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class WindowIndex:
    """Events of one kind over several reports, ordered for windowed per-name statistics.

    Build with :func:`build_window_index`. Thread-safe for concurrent queries (the lazy
    parts are built under a lock).

    Attributes
    ----------
    kind
        One of :data:`WINDOW_KINDS`.
    report_names
        ``Report.name`` per report index.
    offsets_ns
        The per-report shift to the shared axis used at build time.
    keys, labels, styles
        Per group ("name code"): what it is keyed by (the full name; a CUDA API name keeps
        its ``_vNNNN`` suffix), the name shown (nsys's spelling, :mod:`analysis.names`) and
        the NVTX style (else None). Two groups can show one name, never one key and style.
    """

    def __init__(self, kind: str, report_names: list[str], offsets_ns: list[int],
                 names: EventNames, tables: tuple[str, ...], parts: list[PanelRows],
                 xp: ModuleType, ranked: list[RankedReport] | None = None) -> None:  # fmt: skip
        self.kind = kind
        self.report_names = report_names
        self.offsets_ns = offsets_ns
        self.keys = names.keys
        self.labels = names.labels
        self.styles = names.styles
        self.tables = tables
        self.xp = xp
        self._parts = parts
        # Ranked (analysis.window_ranked): no sorted copy of the values, no pass over a window.
        self._ranked = ranked
        self._length = sum(len(p) for p in ranked) if ranked is not None else (
            sum(len(p.values) for p in parts))  # fmt: skip
        self._ordered: dict[bool, _Ordered] = {}
        text = np.array(["" if v is None else str(v) for v in self.labels.tolist()], dtype=object)
        self._label_rank = np.argsort(np.argsort(text, kind="stable"), kind="stable")
        self._lock = threading.Lock()
        self.max_duration_ns = max(
            [int((p.end_ns - p.start_ns).max()) for p in parts if len(p.start_ns)]
            + [int(p.longest.max()) for p in ranked or [] if len(p.longest)]
            + [0]
        )

    def __len__(self) -> int:
        return self._length

    @property
    def name_count(self) -> int:
        return len(self.labels)

    @property
    def is_ranked(self) -> bool:
        """Whether windows are answered by :mod:`analysis.window_ranked` (else by a mask
        over the sorted values: CuPy, or values outside ``[0, 2**31)``)."""
        return self._ranked is not None

    @property
    def nbytes(self) -> int:
        """Bytes held by the index itself (the reports' shared columns not counted)."""
        if self._ranked is not None:
            return sum(p.nbytes for p in self._ranked)
        fields = ("values", "start_ns", "end_ns", "report", "table_codes", "rows", "by_start",
                  "start_sorted")  # fmt: skip
        held = [getattr(o, f) for o in self._ordered.values() for f in fields]
        return sum(int(a.nbytes) for a in held if a is not None)

    # -- ordering -------------------------------------------------------------------------

    def _order(self, by_report: bool) -> _Ordered:
        if len(self.report_names) == 1:
            by_report = True  # one report: both orders are the same
        with self._lock:
            ordered = self._ordered.get(by_report)
            if ordered is None:
                ordered = self._ordered[by_report] = self._build_order(by_report)
                if len(self._parts) == 1 or len(self._ordered) == 2:
                    self._parts = []  # every order exists: the table-order copies can go
        return ordered

    def _build_order(self, by_report: bool) -> _Ordered:
        n_names = max(self.name_count, 1)
        group = np.concatenate(
            [p.codes + (i * n_names if by_report else 0) for i, p in enumerate(self._parts)]
        ).astype(np.int64, copy=False)
        values = np.concatenate([p.values for p in self._parts]).astype(np.int64, copy=False)
        n_groups = n_names * (len(self._parts) if by_report else 1)
        order = _group_value_order(group, values, n_groups)
        shifted = [
            (p.start_ns + off, p.end_ns + off)
            for p, off in zip(self._parts, self.offsets_ns, strict=True)
        ]
        report = np.repeat(
            np.arange(len(self._parts), dtype=np.int16), [len(p.values) for p in self._parts]
        )
        xp = self.xp
        group = group[order]
        bounds = np.searchsorted(group, np.arange(n_groups + 1)).astype(np.int64)
        starts = np.concatenate([s for s, _ in shifted])
        return _Ordered(
            values=xp.asarray(values[order]),
            start_ns=xp.asarray(np.concatenate([s for s, _ in shifted])[order]),
            end_ns=xp.asarray(np.concatenate([e for _, e in shifted])[order]),
            report=report[order],
            table_codes=np.concatenate([p.table_codes for p in self._parts])[order],
            rows=np.concatenate([p.rows for p in self._parts])[order],
            bounds=bounds,
            bounds_xp=xp.asarray(bounds),
            is_by_report=by_report,
            start_min_ns=int(starts.min()) if len(starts) else 0,
            start_max_ns=int(starts.max()) if len(starts) else 0,
        )

    def _start_order(self, ordered: _Ordered) -> tuple[object, object]:
        with ordered.lock:
            if ordered.by_start is None:
                xp = self.xp
                by_start = xp.argsort(ordered.start_ns, kind="stable") if xp is np else (
                    xp.argsort(ordered.start_ns))  # fmt: skip
                ordered.start_sorted = ordered.start_ns[by_start]
                ordered.by_start = by_start
        return ordered.by_start, ordered.start_sorted

    # -- queries --------------------------------------------------------------------------

    def _window_positions(self, ordered: _Ordered, t0_ns: int | None, t1_ns: int | None,
                          lo: int, hi: int):  # fmt: skip
        """Positions (ascending, in [lo, hi)) of rows overlapping the window; None = all."""
        if t0_ns is None and t1_ns is None:
            return None
        xp = self.xp
        t0 = np.iinfo(np.int64).min if t0_ns is None else int(t0_ns)
        t1 = np.iinfo(np.int64).max if t1_ns is None else int(t1_ns)
        if t0 <= ordered.start_min_ns and t1 > ordered.start_max_ns:
            return None  # every row: slices, no mask (the "whole run" of a window)
        n = hi - lo
        if n and t0_ns is not None:
            by_start, start_sorted = self._start_order(ordered)
            a = int(xp.searchsorted(start_sorted, t0 - self.max_duration_ns, side="left"))
            b = int(xp.searchsorted(start_sorted, t1, side="left"))
            if b - a < max(n, len(ordered.values) // 4) * _GATHER_FRACTION:
                pos = by_start[a:b]
                pos = pos[(pos >= lo) & (pos < hi)]
                keep = (ordered.end_ns[pos] > t0) | (ordered.start_ns[pos] >= t0)
                return xp.sort(pos[keep])
        start, end = ordered.start_ns[lo:hi], ordered.end_ns[lo:hi]
        # Zero-length events at t0 count as inside (as analysis.selection.Selection.rows).
        keep = (start < t1) & ((end > t0) | (start >= t0))
        return xp.flatnonzero(keep) + lo

    def stats(
        self,
        t0_ns: int | None = None,
        t1_ns: int | None = None,
        report_index: int | None = None,
        by_report: bool = False,
    ) -> pd.DataFrame:
        """Return per-name statistics of the events overlapping ``[t0_ns, t1_ns)``.

        Parameters
        ----------
        t0_ns, t1_ns
            Window on the shared axis (report time + offset); None is unbounded.
        report_index
            Only this report's events (None: every report).
        by_report
            One row per (report, name) instead of per name.

        Returns
        -------
        pandas.DataFrame
            As :func:`analysis.selection.aggregate`: [``report`` (str)], ``name`` (str),
            [``style`` (str), NVTX kinds], ``count`` (int64), ``total_ns`` (int64),
            ``mean_ns``, ``median_ns`` (float64), ``min_ns``, ``max_ns`` (int64),
            ``std_ns`` (float64, sample, 0 for one event); sorted by ``total_ns``
            descending, then name. For 'memcpy_bytes' the ``_ns`` columns hold bytes.
        """
        if self._ranked is not None:
            return self._ranked_stats(t0_ns, t1_ns, report_index, by_report)
        ordered = self._order(by_report or report_index is not None)
        lo, hi = self._report_rows(ordered, report_index)
        pos = self._window_positions(ordered, t0_ns, t1_ns, lo, hi)
        xp = self.xp
        if pos is None:
            values = ordered.values[lo:hi]
            bounds = xp.clip(ordered.bounds_xp, lo, hi) - lo
        else:
            # Positions ascend, so each group's kept rows are one run: its bounds come from a
            # binary search (no per-row group column to gather).
            values = ordered.values[pos]
            bounds = xp.searchsorted(pos, ordered.bounds_xp)
        reduced = _reduce(xp, values, bounds)
        return self._frame(reduced, ordered.is_by_report, by_report)

    def _ranked_stats(self, t0_ns: int | None, t1_ns: int | None, report_index: int | None,
                      by_report: bool) -> pd.DataFrame:  # fmt: skip
        ranked, offsets = self._ranked, self.offsets_ns
        n_names = max(self.name_count, 1)
        if report_index is not None:
            self._check_report(report_index)
            ranked, offsets = [ranked[report_index]], [offsets[report_index]]
        pooled = report_index is not None or not by_report
        found = ranked_stats(ranked, offsets, n_names, t0_ns, t1_ns, pooled)
        keys = found.keys
        if report_index is not None:
            keys = keys + report_index * n_names
        reduced = {"keys": keys, "count": found.count, "total_ns": found.total,
                   "mean_ns": found.mean, "median_ns": found.median, "min_ns": found.minimum,
                   "max_ns": found.maximum, "std_ns": found.std}  # fmt: skip
        is_by_report = by_report or report_index is not None
        return self._frame(reduced, is_by_report, by_report)

    def _check_report(self, report_index: int) -> None:
        if not 0 <= report_index < len(self.report_names):
            raise AnalysisError(f"no report #{report_index}; {len(self.report_names)} loaded")

    def _report_rows(self, ordered: _Ordered, report_index: int | None) -> tuple[int, int]:
        if report_index is None:
            return 0, len(ordered.rows)
        self._check_report(report_index)
        n_names = max(self.name_count, 1)
        b = ordered.bounds
        return int(b[report_index * n_names]), int(b[(report_index + 1) * n_names])

    def _frame(self, reduced: dict[str, np.ndarray], is_by_report: bool, by_report: bool):
        keys = reduced.pop("keys")
        n_names = max(self.name_count, 1)
        names = keys % n_names if is_by_report else keys
        # Total descending, then name (DataFrame.sort_values on strings costs ms here).
        labels = self.labels[names]
        total = reduced["total_ns"]  # Python ints only where a total passes int64
        order = np.lexsort((self._label_rank[names], -np.asarray(total, dtype=np.float64)
                            if total.dtype == object else -total))  # fmt: skip
        columns: dict[str, np.ndarray] = {}
        if by_report:
            columns["report"] = np.asarray(self.report_names, dtype=object)[keys // n_names][order]
        columns["name"] = labels[order]
        if self.styles is not None:
            columns["style"] = self.styles[names][order]
        for column in STAT_COLUMNS:
            columns[column] = reduced[column][order]
        # The group's code in this index and its key: two groups can share a shown name
        # (cudaMalloc and cudaMalloc_v3020 both show as cudaMalloc), never a code.
        columns["group"] = np.asarray(names, dtype=np.int64)[order]
        columns["key"] = self.keys[names][order]
        return pd.DataFrame(columns)

    def sorted_values(self) -> tuple[np.ndarray, np.ndarray]:
        """Return every report's values pooled by group: ``(values, bounds)`` (NumPy int64).

        Group ``g`` (the ``group`` column of :meth:`stats`) is ``values[bounds[g]:bounds[g +
        1]]``, ascending: the instances :meth:`stats` reduces over the whole run, for
        :mod:`analysis.diff`'s resampling.
        """
        if self._ranked is not None:
            return self._ranked_sorted_values()
        ordered = self._order(False)
        values = to_numpy(ordered.values).astype(np.int64, copy=False)
        if ordered.is_by_report:  # one report: groups are (report 0, name) = name
            return values, ordered.bounds[: self.name_count + 1]
        return values, ordered.bounds

    def _ranked_sorted_values(self) -> tuple[np.ndarray, np.ndarray]:
        n_groups = max(self.name_count, 1)
        groups = [np.repeat(np.arange(n_groups, dtype=np.int64), np.diff(p.bounds))
                  for p in self._ranked]  # fmt: skip
        if any(p.limbs > 2 for p in self._ranked):  # values past 2^31: no packed key
            group = np.concatenate(groups)
            values = np.concatenate([p.values for p in self._ranked]).astype(np.int64)
            order = np.lexsort((values, group))
            bounds = np.searchsorted(group[order], np.arange(self.name_count + 1))
            return values[order], bounds.astype(np.int64)
        keys = []
        for part, group in zip(self._ranked, groups, strict=True):  # one packed key each
            key = np.left_shift(group, 31)
            key |= part.values
            keys.append(key)
        key = np.sort(np.concatenate(keys + [np.zeros(0, np.int64)]))
        bounds = np.searchsorted(key, np.arange(self.name_count + 1, dtype=np.int64) << 31)
        return key & (2**31 - 1), bounds.astype(np.int64)

    def groups(self, key: str | None, style: str | None = None) -> np.ndarray:
        """Return the group codes keyed by ``key`` (a full name; else, when no key matches,
        a shown name), of NVTX style ``style`` when given (int64, ascending)."""
        found = np.flatnonzero(self.keys == key)
        if not len(found):
            found = np.flatnonzero(self.labels == key)
        if self.styles is not None and style is not None:
            found = found[self.styles[found] == style]
        return found.astype(np.int64)

    def instances(
        self,
        groups: int | Sequence[int],
        t0_ns: int | None = None,
        t1_ns: int | None = None,
        report_index: int | None = None,
    ) -> pd.DataFrame:
        """Return the instances of ``groups`` in the window, in shared-axis time order.

        They are the rows that :meth:`stats` counts for those groups with the same window and
        report (one window rule, :meth:`_window_positions`): the histogram of a row shows
        exactly the row's count.

        Parameters
        ----------
        groups
            Group code(s), the ``group`` column of :meth:`stats` (see :meth:`groups`).
        t0_ns, t1_ns, report_index
            As :meth:`stats`.

        Returns
        -------
        pandas.DataFrame
            ``report_index`` (int64), ``table`` (str, the report table or ``nvtx_gpu``),
            ``row`` (int64, row of that table, or of ``project_nvtx`` for ``nvtx_gpu``),
            ``start_ns``, ``end_ns`` (int64, the report's own time base), ``value``
            (int64, duration in ns, or bytes for 'memcpy_bytes').
        """
        codes = np.atleast_1d(np.asarray(groups, dtype=np.int64))
        codes = codes[(codes >= 0) & (codes < self.name_count)]
        if self._ranked is not None:
            return self._ranked_instances(codes, t0_ns, t1_ns, report_index)
        ordered = self._order(True)
        n_names = max(self.name_count, 1)
        reports = range(len(self.report_names)) if report_index is None else [report_index]
        xp = self.xp
        parts = []
        for r in reports:  # loops over reports and groups, not events
            for g in codes.tolist():
                lo, hi = (int(ordered.bounds[r * n_names + g + k]) for k in (0, 1))
                pos = self._window_positions(ordered, t0_ns, t1_ns, lo, hi)
                parts.append(np.arange(lo, hi) if pos is None else to_numpy(pos))
        pos = np.sort(np.concatenate(parts or [np.empty(0, np.int64)]).astype(np.int64))
        start = to_numpy(ordered.start_ns[xp.asarray(pos)])
        end = to_numpy(ordered.end_ns[xp.asarray(pos)])
        report = ordered.report[pos].astype(np.int64)
        offsets = np.asarray(self.offsets_ns + [0], dtype=np.int64)[report]
        frame = pd.DataFrame({
            "report_index": report,
            "table": np.asarray(self.tables, dtype=object)[ordered.table_codes[pos]],
            "row": ordered.rows[pos],
            "start_ns": start - offsets,
            "end_ns": end - offsets,
            "value": to_numpy(ordered.values[xp.asarray(pos)]),
        })  # fmt: skip
        return frame.iloc[np.argsort(start, kind="stable")].reset_index(drop=True)

    def _ranked_instances(self, codes: np.ndarray, t0_ns: int | None, t1_ns: int | None,
                          report_index: int | None) -> pd.DataFrame:  # fmt: skip
        if report_index is not None:
            self._check_report(report_index)
        reports = range(len(self.report_names)) if report_index is None else [report_index]
        columns: dict[str, list[np.ndarray]] = {k: [] for k in (
            "report_index", "table", "row", "start_ns", "end_ns", "value", "shared")}  # fmt: skip
        for r in reports:  # a loop over reports, not events
            part, off = self._ranked[r], self.offsets_ns[r]
            t0 = None if t0_ns is None else int(t0_ns) - off
            t1 = None if t1_ns is None else int(t1_ns) - off
            pos = part.positions(codes, t0, t1)
            at = part.order[pos]
            start = np.asarray(part.start_ns[at], dtype=np.int64)
            columns["report_index"].append(np.full(len(pos), r, dtype=np.int64))
            columns["table"].append(np.zeros(len(pos), np.int64) if part.table_codes is None
                                    else part.table_codes[at].astype(np.int64))  # fmt: skip
            columns["row"].append(at.astype(np.int64) if part.rows is None else part.rows[at])
            columns["start_ns"].append(start)
            columns["end_ns"].append(np.asarray(part.end_ns[at], dtype=np.int64))
            columns["value"].append(part.values[pos].astype(np.int64))
            columns["shared"].append(start + off)
        joined = {k: np.concatenate(v + [np.zeros(0, np.int64)]) for k, v in columns.items()}
        shared = joined.pop("shared")
        joined["table"] = np.asarray(self.tables, dtype=object)[joined["table"]]
        frame = pd.DataFrame(joined)
        return frame.iloc[np.argsort(shared, kind="stable")].reset_index(drop=True)


def _group_value_order(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Return the permutation that sorts rows by (group, value)."""
    if not len(values):
        return np.empty(0, dtype=np.int64)
    vmin = int(values.min())
    bits = max(int(values.max()) - vmin, 1).bit_length()
    if max(n_groups, 1).bit_length() + bits <= 62:
        # One int64 key: argsort of it beats lexsort ~3x (10 M rows here). Built in place
        # (the low bits are zero, so + is |): one key array, no temporaries.
        key = np.left_shift(group, bits, dtype=np.int64)
        key += values
        if vmin:
            key -= vmin
        return np.argsort(key)
    return np.lexsort((values, group))


def _reduce(xp: ModuleType, values, bounds) -> dict[str, np.ndarray]:
    """Statistics per group: group ``g`` is ``values[bounds[g]:bounds[g+1]]``, ascending.

    The reduction is :func:`analysis.engine.reduce_sorted`, the one behind every summary:
    exact totals (Python ints where one passes int64), nsys's mean, exact medians.
    """
    if not len(values):
        empty_i, empty_f = np.zeros(0, np.int64), np.zeros(0, np.float64)
        return {"keys": empty_i, "count": empty_i, "total_ns": empty_i, "mean_ns": empty_f,
                "median_ns": empty_f, "min_ns": empty_i, "max_ns": empty_i,
                "std_ns": empty_f}  # fmt: skip
    sizes = bounds[1:] - bounds[:-1]
    keys = xp.flatnonzero(sizes)
    reduced = reduce_sorted(xp, values, bounds[keys], sizes[keys].astype(xp.int64))
    return {
        "keys": to_numpy(keys).astype(np.int64),
        "count": reduced["count"],
        "total_ns": reduced["total"],
        "mean_ns": reduced["mean"],
        "median_ns": reduced["median"],
        "min_ns": reduced["minimum"],
        "max_ns": reduced["maximum"],
        "std_ns": reduced["std"],
    }


def build_window_index(
    reports: Sequence[Report],
    kind: str,
    offsets_ns: Sequence[int] | None = None,
    xp: ModuleType | None = None,
    projection: Projector | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    threads: int | None = None,
) -> WindowIndex:
    """Index the events of ``kind`` of ``reports`` for :meth:`WindowIndex.stats`.

    Parameters
    ----------
    reports
        Loaded reports; report indices in results follow this order.
    kind
        One of :data:`WINDOW_KINDS`.
    offsets_ns
        Per-report shift onto the shared timeline axis (default 0 each).
    xp
        ``numpy`` (default) or ``cupy``: where the columns are kept and reduced.
    projection
        ``report -> project_nvtx(report)`` for 'nvtx_gpu' (a ReportSet's, computed once;
        default :func:`analysis.projection.project_nvtx`).
    progress
        ``progress(fraction, text)`` as the (NumPy) index is built.
    cancel
        Set it to stop the build: it raises :class:`CancelledError` within a level of the
        values' bits (~0.1 s per 10 M events).
    threads
        Build threads (default: one per usable core): reports in parallel, or the levels
        of one report in parts.

    Raises
    ------
    AnalysisError
        Unknown kind.
    CancelledError
        ``cancel`` was set.
    """
    check_panel(kind)
    xp = np if xp is None else xp
    offsets = [int(o) for o in (offsets_ns or [])] + [0] * len(reports)
    offsets = offsets[: len(reports)]
    project = projection if projection is not None else project_nvtx
    groups: dict[tuple, int] = {}
    shown: list[object] = []
    names = (kind,), False
    ranked = None
    if xp is np:
        build = RankedBuild(reports, kind, project, progress, cancel, threads, fits_ranked)
        ranked = build.run()
        groups, shown, names = build.groups, build.shown, (build.tables, build.has_style)
    parts: list[PanelRows] = []
    if ranked is None:  # CuPy, or a value outside [0, 2^48): sorted values for them all
        groups, shown = {}, []
        tables, has_style = (kind,), False
        for i, report in enumerate(reports):  # one report at a time: its temporaries go
            check_cancel(cancel)
            part = panel_rows(report, kind, None, project)
            tables = part.tables if i == 0 else tables
            has_style = has_style or part.styles is not None
            group_codes(part, groups, shown)
            parts.append(part)
        names = tables, has_style
    tables, has_style = names
    for part in ranked or []:
        part.pad_groups(max(len(groups), 1))
    keys = np.empty(len(groups), dtype=object)
    keys[:] = [k[0] for k in groups]
    labels = np.empty(len(groups), dtype=object)
    labels[:] = shown
    styles = np.array([k[1] for k in groups], dtype=object) if has_style else None
    return WindowIndex(kind, [r.name for r in reports], offsets,
                       EventNames(np.empty(0, np.int64), keys, labels, styles), tables, parts,
                       xp, ranked)  # fmt: skip
