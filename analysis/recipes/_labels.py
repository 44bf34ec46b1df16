"""Group keys of the summary recipes: kernel names and NVTX range labels of one report.

spec: nsys-sqlite.md §3.2 (kernels group by name *string*), §3.4 (NVTX label and style,
2023.4 rules: ``domain:text`` for a named domain, plain text otherwise).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from analysis.model import Report
from analysis.schema import NVTX_PUSHPOP_TYPES, NVTX_RANGE_TYPES, pid_of

__all__ = ["factorize_rows", "kernel_groups", "nvtx_range_groups", "range_labels"]


def factorize_rows(frame: pd.DataFrame) -> tuple[npt.NDArray[np.int64], pd.DataFrame]:
    """Return (code per row, one row per distinct key in order of first appearance)."""
    if frame.empty:
        return np.empty(0, dtype=np.int64), frame.iloc[:0].reset_index(drop=True)
    codes, uniques = pd.factorize(pd.MultiIndex.from_frame(frame))
    keys = pd.DataFrame(
        {c: uniques.get_level_values(i).to_numpy(dtype=object) for i, c in enumerate(frame)}
    )
    return codes.astype(np.int64), keys


def kernel_groups(report: Report) -> tuple[npt.NDArray[np.int64], pd.DataFrame]:
    """Return (group code per kernel row, ``Name`` per code) for the report's kernels.

    Kernels group by the demangled name's string (spec §3.2, 2023.4+), so two string ids
    with the same text are one group.
    """
    name_ids = report.kernels["name_id"]
    unique_ids, inverse = np.unique(name_ids, return_inverse=True)
    names = report.strings.lookup(unique_ids, missing="")
    codes, uniques = pd.factorize(pd.Series(names, dtype=object))
    return codes[inverse].astype(np.int64), pd.DataFrame({"Name": np.asarray(uniques, object)})


def range_labels(report: Report, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.object_]:
    """Return the nvtx_sum label of NVTX rows ``rows``: ``domain:text`` or ``text``.

    The domain is the eventType-75 row with the same ``domainId`` and PID (spec §3.4).
    """
    nvtx = report.nvtx
    name_ids = nvtx["name_id"][rows].astype(np.int64)
    domain_ids = nvtx["domain_id"][rows].astype(np.int64)
    pids = pid_of(nvtx["global_tid"][rows])
    domains = report.nvtx_domains.drop_duplicates(["pid", "domain_id"])
    key = pd.MultiIndex.from_arrays([pids, domain_ids])
    domain_index = pd.MultiIndex.from_arrays(
        [domains["pid"].to_numpy(np.int64), domains["domain_id"].to_numpy(np.int64)]
    )
    hit = domain_index.get_indexer(key)
    domain_names = np.append(domains["name"].to_numpy(dtype=object), None)
    # Build each distinct (text, domain) label once, then spread it over the rows.
    pairs = pd.DataFrame({"text": name_ids, "domain": hit})
    combo, uniques = pd.factorize(pd.MultiIndex.from_frame(pairs))
    texts = report.strings.lookup(uniques.get_level_values(0).to_numpy(), missing="")
    doms = domain_names[uniques.get_level_values(1).to_numpy()]
    labels = np.array(
        [t if not d else f"{d}:{t}" for t, d in zip(texts.tolist(), doms.tolist(), strict=True)],
        dtype=object,
    )
    return labels[combo] if len(labels) else np.empty(0, dtype=object)


def nvtx_range_groups(
    report: Report,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], pd.DataFrame]:
    """Return (NVTX row indices of ranges, group code per row, ``Style``/``Range`` per code).

    Ranges are event types 59, 60, 70, 71, cross-thread ranges included (spec §3.4).
    """
    nvtx = report.nvtx
    rows = np.flatnonzero(np.isin(nvtx["event_type"], NVTX_RANGE_TYPES))
    labels = range_labels(report, rows)
    styles = np.where(
        np.isin(nvtx["event_type"][rows], NVTX_PUSHPOP_TYPES), "PushPop", "StartEnd"
    ).astype(object)
    codes, keys = factorize_rows(pd.DataFrame({"Style": styles, "Range": labels}))
    return rows, codes, keys
