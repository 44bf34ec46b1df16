"""What the user selected (time window × tracks × reports) and the per-name statistics of the
events in it: the live stats panel's hot path.

``aggregate`` groups durations (or bytes) by name with the sort + segment-reduction engine
(:func:`analysis.engine.group_stats`), NumPy or CuPy. Measured on the 2-core reference
machine: ~0.3 s for 10 M kernels with NumPy, the engine's sort being most of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import ModuleType

import numpy as np
import pandas as pd

from analysis.engine import group_stats
from analysis.errors import AnalysisError
from analysis.model import EventTable, Report
from analysis.names import MEMSET_NAME, EventNames, event_names, pair_names
from analysis.nvtx import range_rows
from analysis.projection import project_nvtx
from analysis.schema import OSRT_CLASS_CALL
from analysis.xp import get_xp

__all__ = ["AGGREGATE_KINDS", "AGGREGATE_COLUMNS", "Selection", "aggregate"]

#: kind -> the event table it reads ("nvtx_gpu" reads the NVTX projection).
AGGREGATE_KINDS = {
    "kernels": "kernels",
    "cuda_api": "cuda_api",
    "memcpy": "memcpy",
    "memcpy_bytes": "memcpy",
    "nvtx": "nvtx",
    "nvtx_gpu": "nvtx",
    "osrt": "osrt",
}
#: ``report -> project_nvtx(report)``, as a ReportSet keeps it.
Projector = Callable[[Report], pd.DataFrame]
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

    def rows(self, table: EventTable, start_ns: np.ndarray, end_ns: np.ndarray):
        """Return a boolean mask of rows in the window and on the selected tracks.

        Returns ``slice(None)`` when nothing is filtered (no copy of 10 M values).
        """
        tracks = (self.track_ids or {}).get(table.kind)
        if self.t0_ns is None and self.t1_ns is None and tracks is None:
            return slice(None)
        keep = np.ones(len(start_ns), dtype=bool)
        if self.t1_ns is not None:
            keep &= start_ns < self.t1_ns
        if self.t0_ns is not None:
            # Zero-length events at t0 count as inside.
            keep &= (end_ns > self.t0_ns) | (start_ns >= self.t0_ns)
        if tracks is not None and len(table) == len(start_ns):
            on_track = np.zeros(len(start_ns), dtype=bool)
            offsets = table.track_offsets
            for track in tracks:
                if 0 <= track < len(offsets) - 1:
                    on_track[offsets[track] : offsets[track + 1]] = True
            keep &= on_track
        return keep


class _Rows:
    """Per-report rows to group: their names (:mod:`analysis.names`) and values."""

    def __init__(self, names: EventNames, values: np.ndarray) -> None:
        self.codes = names.codes
        self.keys = names.keys
        self.labels = names.labels
        self.styles = names.styles
        self.values = values


def _name_rows(report: Report, kind: str, sel: Selection, only: np.ndarray | None = None):
    # CUDA API calls group by their full name, as cuda_api_sum groups by name id (spec §3.3):
    # a report with both cudaMalloc and cudaMalloc_v3020 gets two rows, both cudaMalloc.
    table = report.tables[kind]
    mask = np.zeros(len(table), dtype=bool)
    mask[sel.rows(table, table.start_ns, table.end_ns)] = True
    if only is not None:
        mask &= only
    picked = np.flatnonzero(mask)
    return _Rows(event_names(report, kind, picked), table.duration_ns[picked])


def _memory_rows(report: Report, sel: Selection, by_bytes: bool) -> _Rows:
    memcpy, memset = report.memcpy, report.memset
    keep = sel.rows(memcpy, memcpy.start_ns, memcpy.end_ns)
    picked = np.arange(len(memcpy))[keep]
    names = event_names(report, "memcpy", picked)
    # As cuda_gpu_mem_*_sum: a copy kind nsys has no name for is left out (spec §3.6).
    named = names.labels[names.codes] != None  # noqa: E711
    memset_values = (memset["bytes"] if by_bytes else memset.duration_ns)[
        sel.rows(memset, memset.start_ns, memset.end_ns)
    ]
    copy_values = (memcpy["bytes"] if by_bytes else memcpy.duration_ns)[picked]
    keys = np.append(names.keys, MEMSET_NAME)
    codes = np.concatenate([names.codes[named], np.full(len(memset_values), len(names.keys))])
    merged = EventNames(codes.astype(np.int64), keys, keys.copy())
    return _Rows(merged, np.concatenate([copy_values[named], memset_values]))


def _nvtx_rows(report: Report, sel: Selection) -> _Rows:
    nvtx = report.nvtx
    rows = range_rows(report)
    keep = sel.rows(nvtx, nvtx.start_ns, nvtx.end_ns)
    if not isinstance(keep, slice):
        rows = rows[keep[rows]]
    return _Rows(event_names(report, "nvtx", rows), nvtx.end_ns[rows] - nvtx.start_ns[rows])


def _nvtx_gpu_rows(report: Report, sel: Selection, projection: Projector) -> _Rows:
    proj = projection(report)
    start, end = proj["start_ns"].to_numpy(), proj["end_ns"].to_numpy()
    keep = Selection(sel.t0_ns, sel.t1_ns).rows(report.nvtx, start, end)
    proj = proj[keep]
    names = pair_names(proj["name"].to_numpy(object), proj["style"].to_numpy(object))
    return _Rows(names, (proj["end_ns"] - proj["start_ns"]).to_numpy(np.int64))


def _osrt_rows(report: Report, sel: Selection) -> _Rows:
    return _name_rows(report, "osrt", sel, report.osrt["event_class"] == OSRT_CLASS_CALL)


def _rows_of(report: Report, kind: str, sel: Selection, projection: Projector) -> _Rows:
    if kind in ("kernels", "cuda_api"):
        return _name_rows(report, kind, sel)
    if kind in ("memcpy", "memcpy_bytes"):
        return _memory_rows(report, sel, kind == "memcpy_bytes")
    if kind == "nvtx":
        return _nvtx_rows(report, sel)
    if kind == "nvtx_gpu":
        return _nvtx_gpu_rows(report, sel, projection)
    return _osrt_rows(report, sel)


def aggregate(
    reports: Report | Sequence[Report],
    kind: str,
    selection: Selection | None = None,
    xp: ModuleType | None = None,
    by_report: bool = False,
    quantiles: tuple[float, ...] = (),
    projection: Projector | None = None,
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
    if kind not in AGGREGATE_KINDS:
        raise AnalysisError(f"unknown kind '{kind}'; choose one of {', '.join(AGGREGATE_KINDS)}")
    sel = selection or Selection()
    module = xp if xp is not None else get_xp()
    report_list = [reports] if isinstance(reports, Report) else list(reports)
    project = projection if projection is not None else project_nvtx
    parts = [
        (r.name, _rows_of(r, kind, sel, project)) for r in report_list if sel.includes_report(r)
    ]
    has_style = kind in ("nvtx", "nvtx_gpu")
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
    key_arr = np.empty(len(keys), dtype=object)
    key_arr[:] = keys
    chosen = key_arr[stats.keys] if len(keys) else np.empty(0, dtype=object)
    frame = pd.DataFrame()
    if by_report:
        frame["report"] = [k[0] for k in chosen]
    labels = np.empty(len(shown), dtype=object)
    labels[:] = shown
    frame["name"] = labels[stats.keys] if len(shown) else np.empty(0, dtype=object)
    if has_style:
        frame["style"] = [k[2] for k in chosen]
    frame["count"] = stats.count
    frame["total_ns"] = stats.total
    frame["mean_ns"] = stats.mean
    frame["median_ns"] = stats.median
    frame["min_ns"] = stats.minimum
    frame["max_ns"] = stats.maximum
    frame["std_ns"] = stats.std
    for q, arr in stats.quantiles.items():
        frame[f"q{round(q * 100):g}_ns"] = arr
    frame = frame.sort_values(["total_ns", "name"], ascending=[False, True], kind="mergesort")
    return frame.reset_index(drop=True)
