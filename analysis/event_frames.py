"""One report's events of one kind as a pandas DataFrame with names, not ids (the notebook API).

:meth:`analysis.reportset.ReportSet.events` stacks these frames over its reports. Names are
spelled as the stats tables spell them (:mod:`analysis.names`); every id of a string is
resolved to its string, and packed ids (globalTid / globalPid) become ``pid`` and ``tid``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from strata.analysis.kinds import get_kind, table_rows
from strata.analysis.model import Report
from strata.analysis.nvtx import range_styles
from strata.analysis.schema import pid_of, tid_of

__all__ = ["event_frame"]

#: Columns every frame starts with (those the kind has), in this order.
_FIRST = ("name", "start", "end", "duration", "device", "stream", "context", "pid", "tid")
#: Model columns shown under a shorter name.
_RENAMED = {"device_id": "device", "stream_id": "stream", "context_id": "context",
            "green_context_id": "green_context"}  # fmt: skip
#: Model columns that say nothing to a reader (ids of strings are resolved instead).
_HIDDEN = {"row_id", "track_id", "start_ns", "end_ns", "global_pid", "global_tid", "name_id",
           "text_id", "end_global_tid", "level", "is_open"}  # fmt: skip
#: String-id columns shown as strings, under these names.
_STRINGS = {"short_name_id": "short_name", "mangled_name_id": "mangled_name"}
#: Enum columns shown by their label: column -> Report.enums table.
_ENUMS = {"copy_kind": "memcpy_kind", "src_kind": "mem_kind", "dst_kind": "mem_kind",
          "mem_kind": "mem_kind"}  # fmt: skip


def event_frame(report: Report, kind: str, projection: pd.DataFrame | None = None) -> pd.DataFrame:
    """Return the events of ``kind`` of ``report``: name, start, end, duration, then details.

    Parameters
    ----------
    report
        A loaded report.
    kind
        ``kernels``, ``memcpy``, ``memset``, ``cuda_api``, ``nvtx`` (push/pop and start/end
        ranges), ``osrt``, ``nvtx_gpu`` (the ranges of ``projection``), or any kind of the
        registry (:mod:`analysis.kinds`) with a table of its own, named as it names them.
    projection
        ``project_nvtx(report)``, for ``nvtx_gpu`` only.

    Returns
    -------
    pandas.DataFrame
        ``name`` (str), ``start``, ``end``, ``duration`` (int64 ns), then the kind's columns
        (see :meth:`analysis.reportset.ReportSet.events`); sorted by start.
    """
    if kind == "nvtx_gpu":
        return _projected(projection)
    entry = get_kind(kind)
    # NVTX: its ranges (its locate); any other kind: every row of its table, as ever.
    found = entry.rows(report) if kind == "nvtx" else table_rows(report, kind)
    table, rows = report.tables[kind], found.rows
    names = entry.event_names(report, found)
    start, end = table.start_ns[rows], table.end_ns[rows]
    columns: dict[str, object] = {
        "name": names.labels[names.codes] if len(rows) else np.empty(0, dtype=object),
        "start": start,
        "end": end,
        "duration": end - start,
    }
    if kind == "nvtx":
        columns["style"] = range_styles(table["event_type"][rows])
    for column, values in table.columns.items():
        if column in _HIDDEN:
            continue
        if column in _STRINGS:
            columns[_STRINGS[column]] = report.strings.lookup(values[rows])
        elif column in _ENUMS:
            labels = report.enums.get(_ENUMS[column], {})
            columns[column] = np.array([labels.get(int(v)) for v in values[rows]], dtype=object)
        else:
            columns[_RENAMED.get(column, column)] = values[rows]
    for packed in ("global_pid", "global_tid"):
        if packed in table:
            columns["pid"] = pid_of(table[packed][rows])
            if packed == "global_tid":
                columns["tid"] = tid_of(table[packed][rows])
    first = [c for c in _FIRST if c in columns]
    frame = pd.DataFrame(columns)[first + [c for c in columns if c not in first]]
    order = np.argsort(frame["start"].to_numpy(), kind="stable")
    return frame.iloc[order].reset_index(drop=True)


def _projected(projection: pd.DataFrame | None) -> pd.DataFrame:
    """The projected NVTX ranges, with the columns of :meth:`ReportSet.events`."""
    if projection is None or projection.empty:
        empty = {c: np.empty(0, np.int64) for c in ("start", "end", "duration")}
        return pd.DataFrame({"name": np.empty(0, dtype=object), **empty})
    start = projection["start_ns"].to_numpy(np.int64)
    end = projection["end_ns"].to_numpy(np.int64)
    frame = pd.DataFrame({"name": projection["name"].to_numpy(object), "start": start,
                          "end": end, "duration": end - start})  # fmt: skip
    for column in ("style", "pid", "tid", "range_id", "num_gpu_ops", "level",
                   "orig_start_ns", "orig_end_ns"):  # fmt: skip
        if column in projection:
            frame[column] = projection[column].to_numpy()
    order = np.argsort(start, kind="stable")
    return frame.iloc[order].reset_index(drop=True)
