"""NVTX ranges as nsys 2023.4's recipes see them: names, the NCCL domain, GPU projection.

These are the rules of nsys's recipe library (``data_service``, ``lib/nvtx``), which differ
from the ``nvtx_gpu_proj_*`` stats reports (:mod:`analysis.projection`):

* a row's name is the string of its ``textId`` where that resolves, else its ``text``; no
  domain prefix;
* a domain's ranges are the push/pop and start/end rows (event types 59, 60) whose
  ``domainId`` is that of the first domain-creation row (75) whose raw ``text`` is the
  domain's name — in any process;
* a range projects onto the GPU through the CUDA runtime calls *of its own thread* that it
  encloses: ``range.start <= call.start`` and ``range.end`` after the running latest end of
  the thread's calls so far (in start order), the calls joined to their GPU operations by
  correlation id and process. The projection spans the earliest GPU start to the latest
  GPU end of those operations. Ranges that end on another thread, or lack a start or an
  end, are left out. Rows come in the order nsys builds them: by the first enclosed call in
  the runtime table's order.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from strata.analysis.recipes._raw import filter_time_range

__all__ = [
    "DOMAIN_CREATE",
    "RANGE_TYPES",
    "GPU_COLUMNS",
    "GPU_TABLES",
    "RUNTIME_COLUMNS",
    "combine_api_gpu",
    "gpu_calls",
    "projection_tables",
    "domain_ranges",
    "pid_of",
    "project_onto_gpu",
    "range_text",
]

DOMAIN_CREATE = 75
#: Push/pop and start/end ranges (nsys's recipes leave out the payload variants 70, 71).
RANGE_TYPES = (59, 60)


#: The GPU work a launch call correlates with, as nsys's recipes read it.
GPU_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
              "CUPTI_ACTIVITY_KIND_MEMSET")  # fmt: skip
#: The columns of :data:`GPU_TABLES` and of the runtime calls the projection needs.
GPU_COLUMNS = ("correlationId", "globalPid", "start", "end")
RUNTIME_COLUMNS = ("correlationId", "globalTid", "start", "end")


def projection_tables(nvtx_columns: tuple[str, ...]) -> dict[str, tuple[str, ...] | None]:
    """The tables (and columns) :func:`gpu_calls` and the NVTX ranges are read from."""
    return {"StringIds": None, "NVTX_EVENTS": nvtx_columns,
            "CUPTI_ACTIVITY_KIND_RUNTIME": RUNTIME_COLUMNS,
            **dict.fromkeys(GPU_TABLES, GPU_COLUMNS)}  # fmt: skip


def gpu_calls(raw, start_ns: int | None, end_ns: int | None) -> pd.DataFrame:  # noqa: ANN001
    """Each runtime call with the GPU work it launched, the GPU work cut to the time range
    (``raw``: :func:`analysis.recipes._raw.read_tables` of :func:`projection_tables`)."""
    gpu = pd.concat(
        [filter_time_range(raw[t], start_ns, end_ns, ("start", "end")) for t in GPU_TABLES],
        ignore_index=True,
    )
    return combine_api_gpu(raw["CUPTI_ACTIVITY_KIND_RUNTIME"], gpu)


def pid_of(global_ids: pd.Series) -> npt.NDArray[np.int64]:
    """The process id inside a ``globalPid``/``globalTid`` (bits 24-47)."""
    return (global_ids.astype("int64").to_numpy(np.int64) >> 24) & 0xFFFFFF


def range_text(nvtx: pd.DataFrame, strings: dict[int, str]) -> pd.Series:
    """Each row's name: its ``textId`` string where that resolves, else its ``text``."""
    text = nvtx["text"].astype(object)
    ids = nvtx["textId"]
    if not ids.notna().any():
        return text
    looked = ids.map(lambda i: strings.get(int(i)) if pd.notna(i) else None)
    return looked.where(looked.notna(), text).astype(object)


def domain_ranges(nvtx: pd.DataFrame, domain: str) -> pd.DataFrame:
    """The push/pop and start/end rows of ``domain`` (nsys's ``get_domain_range_df``)."""
    created = nvtx[(nvtx["eventType"] == DOMAIN_CREATE).fillna(False) & (nvtx["text"] == domain)]
    if created.empty:
        return nvtx.iloc[:0]
    domain_id = created["domainId"].iloc[0]
    keep = (nvtx["domainId"] == domain_id).fillna(False) & nvtx["eventType"].isin(RANGE_TYPES)
    return nvtx[keep.to_numpy(bool)]


def combine_api_gpu(runtime: pd.DataFrame, gpu: pd.DataFrame) -> pd.DataFrame:
    """CUDA runtime calls joined to their GPU operations (correlation id and process).

    Returns ``globalTid``, ``start``, ``end`` (the call), ``gpu_start``, ``gpu_end`` and
    ``order`` (the call's row in the runtime table), in the runtime table's order.
    """
    calls = pd.DataFrame(
        {
            "correlationId": runtime["correlationId"].astype("Int64"),
            "pid": pid_of(runtime["globalTid"]),
            "globalTid": runtime["globalTid"].astype("int64").to_numpy(np.int64),
            "start": runtime["start"].astype("int64").to_numpy(np.int64),
            "end": runtime["end"].astype("int64").to_numpy(np.int64),
            "order": np.arange(len(runtime), dtype=np.int64),
        }
    )
    ops = pd.DataFrame(
        {
            "correlationId": gpu["correlationId"].astype("Int64"),
            "pid": pid_of(gpu["globalPid"]),
            "gpu_start": gpu["start"].astype("int64").to_numpy(np.int64),
            "gpu_end": gpu["end"].astype("int64").to_numpy(np.int64),
        }
    )
    merged = calls.merge(ops, on=["correlationId", "pid"], how="inner", sort=False)
    return merged.drop(columns=["correlationId", "pid"])


def project_onto_gpu(ranges: pd.DataFrame, cuda: pd.DataFrame) -> pd.DataFrame:
    """Project NVTX ``ranges`` (``name``, ``start``, ``end``, ``globalTid``,
    ``endGlobalTid``) onto the GPU through ``cuda`` (:func:`combine_api_gpu`).

    Returns ``name``, ``start``, ``end`` (int64) per range that encloses some GPU work, in
    nsys's order (see the module docstring).
    """
    complete = ranges[
        (ranges["start"].notna() & ranges["end"].notna() & ranges["endGlobalTid"].isna())
        .fillna(False)
        .to_numpy(bool)
    ]
    names = complete["name"].to_numpy(object)
    r_start = complete["start"].astype("int64").to_numpy(np.int64)
    r_end = complete["end"].astype("int64").to_numpy(np.int64)
    r_tid = complete["globalTid"].astype("int64").to_numpy(np.int64)
    found_lo: list[np.ndarray] = []
    found_rows: list[np.ndarray] = []
    found_hi: list[np.ndarray] = []
    found_first: list[np.ndarray] = []
    c_tid = cuda["globalTid"].to_numpy(np.int64)
    for tid in np.unique(r_tid):
        on = np.flatnonzero(c_tid == tid)
        if not len(on):
            continue
        calls = cuda.iloc[on]
        by_start = np.argsort(calls["start"].to_numpy(np.int64), kind="stable")
        c_start = calls["start"].to_numpy(np.int64)[by_start]
        c_end = calls["end"].to_numpy(np.int64)[by_start]
        # A range still active at a call: it started at or before the call, and its end lies
        # past every end the sweep has passed (the latest call end so far, or this start).
        passed = np.maximum(c_start, np.maximum.accumulate(c_end))
        rows = np.flatnonzero(r_tid == tid)
        lo = np.searchsorted(c_start, r_start[rows], side="left")
        hi = np.searchsorted(passed, r_end[rows], side="left")
        hit = lo < hi
        if not hit.any():
            continue
        rows, lo, hi = rows[hit], lo[hit], hi[hit]
        bounds = np.column_stack([lo, hi]).ravel()

        def reduce(ufunc: np.ufunc, values: np.ndarray, pad: int) -> np.ndarray:
            ordered = np.r_[values[by_start], pad]  # noqa: B023 - used at once
            return ufunc.reduceat(ordered, bounds)[::2]  # noqa: B023

        found_rows.append(rows)
        found_lo.append(reduce(np.minimum, calls["gpu_start"].to_numpy(np.int64), 0))
        found_hi.append(reduce(np.maximum, calls["gpu_end"].to_numpy(np.int64), 0))
        found_first.append(reduce(np.minimum, calls["order"].to_numpy(np.int64), 0))
    if not found_rows:
        return pd.DataFrame(
            {"name": pd.Series(dtype=object), "start": np.empty(0, np.int64),
             "end": np.empty(0, np.int64)}
        )  # fmt: skip
    rows = np.concatenate(found_rows)
    first = np.concatenate(found_first)
    order = np.lexsort((rows, first))  # the first enclosed call, then the range's row
    return pd.DataFrame(
        {
            "name": names[rows[order]],
            "start": np.concatenate(found_lo)[order],
            "end": np.concatenate(found_hi)[order],
        }
    )
