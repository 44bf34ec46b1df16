"""What the stats panel's Collectives tab shows: its views (each matched instance, each
collective type, each rank's wait, :class:`analysis.collectives.CollectiveMatch`) and their
columns. Qt-free."""

from __future__ import annotations

import numpy as np
import pandas as pd

from strata.analysis.collectives import CollectiveMatch
from strata.viewer.table_model import Column

__all__ = ["COLLECTIVE_VIEW_TITLES", "collective_view_frame", "collectives_columns"]

#: (view, title) of the Collectives tab's view selector.
COLLECTIVE_VIEW_TITLES = (("instance", "Instances"), ("type", "By type"), ("rank", "By rank"))

_INSTANCE_COLUMNS = [
    Column("collective", "Collective", "text"),
    Column("communicator", "Communicator", "text"), Column("instance", "#", "int"),
    Column("ranks", "Ranks", "int"),
    Column("skew_ns", "Skew (ns)", "int", "Last rank's start − first rank's start"),
    Column("end_skew_ns", "End skew (ns)", "int", "Last rank's end − first rank's "
           "end: after aligning on another collective, the residual skew"),
    Column("straggler", "Straggler", "text", "The last report to start"),
    Column("max_wait_ns", "Max wait (ns)", "int", "The longest any rank waited"),
    Column("total_wait_ns", "Total wait (ns)", "int", "Every rank's wait, summed"),
    Column("transfer_ns", "Transfer (ns)", "int", "Last end − last start"),
    Column("first_start_ns", "Start (ns)"),
]  # fmt: skip
_TYPE_COLUMNS = [
    Column("collective", "Collective", "text"),
    Column("communicator", "Communicator", "text"),
    Column("count", "Count", "int", "Matched instances"),
    Column("ranks", "Ranks", "int"),
    Column("total_wait_ns", "Total wait (ns)", "int", "Every rank's wait, summed"),
    Column("worst_straggler", "Worst straggler", "text",
           "The report whose late starts made the others wait longest"),
    Column("straggler_count", "Times last", "int", "Instances the worst straggler was last in"),
    Column("caused_wait_ns", "Caused wait (ns)", "int", "The waits of those instances"),
    Column("mean_skew_ns", "Mean skew (ns)", "dec1"),
    Column("max_skew_ns", "Max skew (ns)", "int"),
]  # fmt: skip
_RANK_COLUMNS = [
    Column("collective", "Collective", "text"),
    Column("communicator", "Communicator", "text"), Column("report", "Report", "text"),
    Column("wait_ns", "Wait (ns)", "int", "The rank's wait in every instance, summed"),
    Column("wait_share", "Wait share (%)", "pct", "Of the type's total wait"),
    Column("straggler_count", "Times last", "int", "Instances the rank was last in"),
    Column("instances", "Instances", "int"),
]  # fmt: skip
_COLUMNS = {"instance": _INSTANCE_COLUMNS, "type": _TYPE_COLUMNS, "rank": _RANK_COLUMNS}


def collective_view_frame(found: CollectiveMatch, view: str) -> pd.DataFrame:
    """Return the rows of ``view``: instances carry ``instance_row``; each type carries the
    ``instance_row`` of its worst instance (largest total wait, first on ties) so that
    choosing it centres that one; each rank's wait share is in percent."""
    if view == "type":
        inst = found.instances
        worst = (
            inst.assign(instance_row=np.arange(len(inst), dtype=np.int64))
            .sort_values("total_wait_ns", ascending=False, kind="stable")
            .drop_duplicates(["collective", "communicator"])[
                ["collective", "communicator", "instance_row"]
            ]
        )
        return found.summary.merge(worst, on=["collective", "communicator"], how="left")
    if view == "rank":
        return found.rank_waits.assign(wait_share=found.rank_waits["wait_share"] * 100.0)
    return found.instances.assign(instance_row=np.arange(len(found.instances), dtype=np.int64))


def collectives_columns(frame: pd.DataFrame) -> list[Column]:
    """Return the Collectives tab's columns for ``frame`` (a view told by its columns)."""
    if "wait_share" in frame.columns:
        view = "rank"
    elif "worst_straggler" in frame.columns:
        view = "type"
    else:
        view = "instance"
    return _COLUMNS[view]
