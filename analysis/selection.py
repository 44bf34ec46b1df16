"""What the user selected (time window × tracks × reports) and the per-name statistics of the
events in it: the live stats panel's hot path.

``aggregate`` groups durations (or bytes) by name with the sort + segment-reduction engine
(:func:`analysis.engine.group_stats`), NumPy or CuPy. Measured on the 2-core reference
machine: ~0.3 s for 10 M kernels with NumPy, the engine's sort being most of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import ModuleType

import numpy as np
import pandas as pd

from strata.analysis.engine import group_stats
from strata.analysis.errors import AnalysisError
from strata.analysis.kinds import (
    KindRows,
    PanelRows,
    Projector,
    check_panel,
    panel_has_style,
    panel_kinds,
    panel_rows,
)
from strata.analysis.model import Report
from strata.analysis.projection import project_nvtx
from strata.analysis.xp import get_xp

__all__ = ["AGGREGATE_KINDS", "AGGREGATE_COLUMNS", "Selection", "aggregate"]

#: What can be aggregated: the panel kinds of :mod:`analysis.kinds` (the built-in ones; a
#: kind registered later can be aggregated too).
AGGREGATE_KINDS = panel_kinds()
AGGREGATE_COLUMNS = ["name", "count", "total_ns", "mean_ns", "median_ns", "min_ns", "max_ns",
                     "std_ns"]  # fmt: skip


@dataclass(frozen=True)
class Selection:
    """A selection: events overlapping ``[t0_ns, t1_ns)`` on some tracks of some reports.

    Attributes
    ----------
    t0_ns, t1_ns
        Session-relative window; None means unbounded on that side.
    report_names
        Names (``Report.name``) of the reports to include; None for all.
    track_ids
        Per event-table kind, the ``track_id`` values to include; a kind that is absent (or
        None) keeps every track of that table. The ``nvtx_gpu`` kind (projected ranges, not
        rows of an event table) takes the window only.

    An event is in the window when it overlaps it (``start < t1_ns`` and ``end > t0_ns``, or
    zero-length at ``t0_ns``); its whole duration counts (not clipped to the window).
    """

    t0_ns: int | None = None
    t1_ns: int | None = None
    report_names: frozenset[str] | None = None
    track_ids: Mapping[str, tuple[int, ...]] | None = None

    def includes_report(self, report: Report) -> bool:
        return self.report_names is None or report.name in self.report_names

    def mask(self, rows: KindRows) -> np.ndarray | slice:
        """Return a boolean mask of the events of ``rows`` in the window and on the selected
        tracks of their tables (derived rows, without tracks, take the window only).

        Returns ``slice(None)`` when nothing is filtered (no copy of 10 M values).
        """
        start_ns, end_ns = rows.start_ns, rows.end_ns
        picked = self.track_ids or {}
        tracks = [picked.get(t) for t in rows.tables] if rows.track_ids is not None else []
        if self.t0_ns is None and self.t1_ns is None and all(t is None for t in tracks):
            return slice(None)
        keep = np.ones(len(start_ns), dtype=bool)
        if self.t1_ns is not None:
            keep &= start_ns < self.t1_ns
        if self.t0_ns is not None:
            # Zero-length events at t0 count as inside.
            keep &= (end_ns > self.t0_ns) | (start_ns >= self.t0_ns)
        for code, wanted in enumerate(tracks):
            if wanted is not None:
                on_track = np.isin(rows.track_ids, np.asarray(wanted, dtype=np.int64))
                keep &= on_track | (rows.table_codes != code)
        return keep


def _rows_of(report: Report, kind: str, sel: Selection, projection: Projector) -> PanelRows:
    return panel_rows(report, kind, sel.mask, projection)


def aggregate(
    reports: Report | Sequence[Report],
    kind: str,
    selection: Selection | None = None,
    xp: ModuleType | None = None,
    by_report: bool = False,
    quantiles: tuple[float, ...] = (),
    projection: Projector | None = None,
    selections: Sequence[Selection] | None = None,
    with_keys: bool = False,
) -> pd.DataFrame:
    """Return per-name statistics of the selected events.

    Parameters
    ----------
    reports
        One report or several (their events are pooled unless ``by_report``).
    kind
        One of :data:`AGGREGATE_KINDS`: 'kernels', 'cuda_api', 'memcpy' (durations of
        memcpy and memset), 'memcpy_bytes' (their sizes), 'nvtx' (CPU ranges), 'nvtx_gpu'
        (projected ranges), 'osrt'.
    selection
        Window, tracks and reports; None selects everything.
    xp
        ``numpy`` or ``cupy`` (default: :func:`analysis.xp.get_xp`).
    by_report
        Group by (report, name) and add a ``report`` column.
    quantiles
        Extra quantiles, returned as ``q<percent>_ns`` columns (e.g. ``q25_ns``).
    projection
        ``report -> project_nvtx(report)`` for 'nvtx_gpu': a
        :meth:`analysis.reportset.ReportSet.projection_of` keeps it computed once; default
        :func:`analysis.projection.project_nvtx` (computed on every call).
    selections
        One selection per report, in place of ``selection`` (an area of a shared axis on
        which each report has its own offset, and its own track ids).
    with_keys
        Add a ``key`` column: the full name a row is grouped by (a CUDA API name keeps its
        ``_vNNNN`` suffix), as :meth:`analysis.window_stats.WindowIndex.stats` has it.

    Returns
    -------
    pandas.DataFrame
        Sorted by ``total_ns`` descending: [``report`` (str)], ``name`` (str), [``style``
        (str), NVTX kinds only], ``count`` (int64), ``total_ns`` (int64), ``mean_ns``,
        ``median_ns`` (float64), ``min_ns``, ``max_ns`` (int64), ``std_ns`` (float64, sample
        std, 0 for one event). For 'memcpy_bytes' the ``_ns`` columns hold bytes.

    Raises
    ------
    AnalysisError
        Unknown kind.
    """
    check_panel(kind)
    sel = selection or Selection()
    module = xp if xp is not None else get_xp()
    report_list = [reports] if isinstance(reports, Report) else list(reports)
    project = projection if projection is not None else project_nvtx
    chosen = list(selections) if selections is not None else [sel] * len(report_list)
    if len(chosen) != len(report_list):
        raise AnalysisError(
            f"one selection per report: {len(chosen)} given, reports: {len(report_list)}"
        )
    parts = [
        (r.name, _rows_of(r, kind, s, project))
        for r, s in zip(report_list, chosen, strict=True)
        if s.includes_report(r)
    ]
    has_style = panel_has_style(kind)
    # Map each report's local label codes into one shared label table.
    keys: list[tuple] = []
    index: dict[tuple, int] = {}
    codes, values = [], []
    locals_: list[np.ndarray] = []
    shown: list[object] = []  # the name each group is shown by
    merged = False
    for name, rows in parts:
        # Only groups that occur (a string pool can hold 10^5 names; bincount is one pass).
        used = np.flatnonzero(np.bincount(rows.codes, minlength=len(rows.keys)))
        local = np.zeros(len(rows.keys), dtype=np.int64)
        for i in used.tolist():
            style = rows.styles[i] if has_style else None
            key = (name if by_report else None, rows.keys[i], style)
            if key in index:
                merged = True
            else:
                index[key] = len(keys)
                keys.append(key)
                shown.append(rows.labels[i])
            local[i] = index[key]
        codes.append(rows.codes)
        values.append(rows.values)
        locals_.append(local)
    if len(parts) == 1 and not merged:
        # One report, no two codes merged: group by its own codes, relabel the groups after
        # (saves a 10 M-row remap and copy on the live panel's path).
        stats = group_stats(codes[0], values[0], module, quantiles)
        stats = replace(stats, keys=locals_[0][stats.keys])
    else:
        all_codes = np.concatenate(
            [np.empty(0, np.int64)] + [loc[c] for loc, c in zip(locals_, codes, strict=True)]
        )
        all_values = np.concatenate([np.empty(0, np.int64), *values])
        stats = group_stats(all_codes, all_values, module, quantiles)
    key_arr = _objects(keys)
    chosen = key_arr[stats.keys] if len(keys) else np.empty(0, dtype=object)
    frame = pd.DataFrame()
    if by_report:
        frame["report"] = _objects([k[0] for k in chosen])
    labels = _objects(shown)
    frame["name"] = labels[stats.keys] if len(shown) else np.empty(0, dtype=object)
    if has_style:
        frame["style"] = _objects([k[2] for k in chosen])
    frame["count"] = stats.count
    frame["total_ns"] = stats.total
    frame["mean_ns"] = stats.mean
    frame["median_ns"] = stats.median
    frame["min_ns"] = stats.minimum
    frame["max_ns"] = stats.maximum
    frame["std_ns"] = stats.std
    for q, arr in stats.quantiles.items():
        frame[f"q{round(q * 100):g}_ns"] = arr
    if with_keys:  # NaN from a string pool: None, as the window index keys it
        frame["key"] = _objects([None if k[1] is None or k[1] != k[1] else k[1] for k in chosen])
    frame = frame.sort_values(["total_ns", "name"], ascending=[False, True], kind="mergesort")
    return frame.reset_index(drop=True)


def _objects(values: Sequence) -> np.ndarray:
    """``values`` as an object column: an empty one too (a list of none would be float64)."""
    column = np.empty(len(values), dtype=object)
    column[:] = values
    return column
