"""Group keys of the summary recipes: kernel names and NVTX range labels of one report.

They are the names ``main.py stats`` prints (spec: nsys-sqlite.md §3.2: kernels group by
name *string*; §3.4: NVTX ``domain:text`` for a named domain, plain text otherwise, 2023.4).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from strata.analysis.model import Report
from strata.analysis.nvtx import range_labels, range_rows, range_styles

__all__ = ["factorize_rows", "kernel_groups", "nvtx_range_groups"]


def factorize_rows(frame: pd.DataFrame) -> tuple[npt.NDArray[np.int64], pd.DataFrame]:
    """Return (code per row, one row per distinct key in order of first appearance)."""
    if frame.empty:
        return np.empty(0, dtype=np.int64), frame.iloc[:0].reset_index(drop=True)
    # dropna=False: a missing name (NULL string) is a group of its own, as in SQL's GROUP BY.
    codes = frame.groupby(list(frame), sort=False, dropna=False).ngroup().to_numpy(np.int64)
    keys = frame.drop_duplicates().reset_index(drop=True).astype(object)
    return codes, keys


def kernel_groups(
    report: Report, args: tuple[str, ...] = ()
) -> tuple[npt.NDArray[np.int64], pd.DataFrame]:
    """Return (group code per kernel row, ``Name`` per code) for the report's kernels.

    Names are those of ``main.py stats`` (:func:`analysis.stats.cuda.kernel_names`; ``args``
    its ``base``/``mangled``); kernels group by the name's string (spec §3.2, 2023.4+).
    """
    from strata.analysis.stats.cuda import kernel_names

    codes, keys = factorize_rows(pd.DataFrame({"Name": kernel_names(report, args)}))
    return codes, keys


def nvtx_range_groups(
    report: Report,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], pd.DataFrame]:
    """Return (NVTX row indices of ranges, group code per row, ``Style``/``Range`` per code).

    Ranges are event types 59, 60, 70, 71, cross-thread ranges included; labels and styles
    are those of ``main.py stats`` (:mod:`analysis.nvtx`, spec §3.4).
    """
    rows = range_rows(report)
    labels = range_labels(report, rows)
    styles = range_styles(report.nvtx["event_type"][rows])
    codes, keys = factorize_rows(pd.DataFrame({"Style": styles, "Range": labels}))
    return rows, codes, keys
