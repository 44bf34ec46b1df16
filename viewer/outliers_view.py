"""What the stats panel's Outliers tab shows: its columns and its rows' distance from their
name's median in MADs. The panel shows this tab on its own (the outlier instances of the
summaries' names); :mod:`app.stats_outliers` finds, lists and marks them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from strata.analysis.outliers import Z_MAD
from strata.viewer.stats_tabs import StatsTab
from strata.viewer.table_model import Column

__all__ = ["OUTLIERS_TAB", "OUTLIERS_VIEW", "with_mads"]

OUTLIERS_TAB = "outliers"

# The report (short label) follows the name and the values: a column that says what
# differs, not a wide lead column.
_COLUMNS = (
    Column("name", "Name", "text"),
    Column("mads", "MADs off", "z", "How many median absolute deviations from the "
           "name's median duration (over every report)"),
    Column("duration_ns", "Duration (ns)"),
    Column("median_ns", "Median (ns)", "dec1", "The name's median over every report"),
    Column("report", "Report", "text"),
    Column("row", "Row", "text"), Column("start_ns", "Start (ns)"),
    Column("kind", "Kind", "text"),
    Column("robust_z", "Robust z", "z", f"{Z_MAD} × MADs off (Iglewicz–Hoaglin)"),
)  # fmt: skip

#: The tab as the panel shows it (:mod:`app.stats_outliers` adds what the app runs).
OUTLIERS_VIEW = StatsTab(OUTLIERS_TAB, "Outliers", _COLUMNS, name_min_px=220)


def with_mads(frame: pd.DataFrame) -> pd.DataFrame:
    """Return outlier rows (:meth:`analysis.outliers.Outliers.within`) with ``mads``: how
    many MADs each duration is off its name's median."""
    frame = frame.copy()
    if "mad_ns" in frame and len(frame):
        mad = frame["mad_ns"].to_numpy(float)
        dev = frame["duration_ns"].to_numpy(float) - frame["median_ns"].to_numpy(float)
        # MAD 0: the score used the mean absolute deviation; show it in MAD-like units.
        by_z = frame["robust_z"].to_numpy(float) / Z_MAD
        frame["mads"] = np.where(mad > 0, dev / np.where(mad > 0, mad, 1.0), by_z)
    return frame
