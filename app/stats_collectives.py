"""The stats panel's Collectives tab: collectives matched across the shown reports (one per
rank), found once per set and offsets on a worker; choosing one centres the timeline on it
across every rank and selects its span over the ranks' collective rows. The match is also
handed to the timeline state, which draws it over the rows (each rank's wait shaded, the
ranks joined) while the overlay is on. The tab's view selector lists each instance, each
collective type (count, total wait, worst straggler; choosing one centres its worst
instance) or each rank's share of the wait. Aligned on anchor events, the status says how far
apart the other collectives' ends still are (the residual skew).

Like the Expert tab it lists the whole reports, not the panel's time scope: matching the
n-th collective needs every occurrence.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from strata.analysis.collectives import CollectiveMatch, anchored_instance, collectives
from strata.analysis.reportset import ReportSet
from strata.analysis.timefmt import format_duration_ns, pluralize
from strata.app.stats_list import ListTab
from strata.viewer.collectives_view import (
    COLLECTIVE_VIEW_TITLES,
    collective_view_frame,
    collectives_columns,
)
from strata.viewer.state.collective_overlay import CollectiveOverlay
from strata.viewer.stats_tabs import StatsTab, TabOption, TabScope

__all__ = ["COLLECTIVES", "COLLECTIVES_TAB", "CollectiveList"]

COLLECTIVES_TAB = "collectives"


def _match(reports: ReportSet, scope: TabScope) -> CollectiveMatch:
    return collectives(reports, scope.alignment, offsets_ns=scope.offsets_ns)


class CollectiveList(ListTab):
    """The Collectives tab: its match is also drawn over the timeline (the timeline state's
    collectives), and showing the tab turns that overlay on unless the user chose."""

    _status = ""  # the status line of the listed match

    def found(self) -> CollectiveMatch | None:
        return self.result()

    def cleared(self) -> None:
        self.context.timeline.state.set_collectives(None)  # of other reports or offsets

    def finished(self, found: CollectiveMatch) -> None:
        shown = self.shown
        overlay = CollectiveOverlay.from_match(found, shown.reports.reports, shown.offsets)
        self.context.timeline.state.set_collectives(overlay)
        status = _status(found)
        anchors = self.context.app.binding.anchor_rows()
        if anchors:
            status = _residual_status(found, anchored_instance(found, anchors)) + " · " + status
        self._status = status

    def rows(self, found: CollectiveMatch, scope: TabScope) -> tuple[pd.DataFrame, str]:
        """The chosen view of the match."""
        return collective_view_frame(found, scope.option), self._status

    def became_current(self) -> None:
        if not self.context.app.is_collective_overlay_chosen:
            self.context.timeline.state.set_collectives_shown(True)

    def focus_collective(self, record: dict) -> None:
        """Centre the timeline on one matched collective (of a type: its worst) across every
        rank and select its span (first start to last end) over the rows of its ranks'
        collective events."""
        found, row = self.result(), record.get("instance_row")
        if found is None or row is None or pd.isna(row):  # a rank's wait: nothing to centre
            return
        ranks = found.ranks[found.ranks["instance_row"] == int(row)]
        if ranks.empty:
            return
        start, end = int(ranks["start_ns"].min()), int(ranks["end_ns"].max())
        self.select_span(start, end, self._rows_of(ranks), max((end - start) // 4, 1_000))

    def _rows_of(self, ranks: pd.DataFrame) -> list[str]:
        """Keys of the timeline rows holding each rank's collective event."""
        reports = self.shown.reports
        wanted = set()
        for index, table, row in zip(ranks["report_index"], ranks["table"], ranks["row"],
                                     strict=True):  # fmt: skip
            events = reports[int(index)].tables.get(str(table))
            if events is not None and "track_id" in events and 0 <= int(row) < len(events):
                wanted.add((int(index), str(table), int(events["track_id"][int(row)])))
        keys = []
        for track in self.context.timeline.state.tracks():
            if any((track.report_index, t, i) in wanted for t, i in track.parts):
                keys.append(track.key)
        return keys


COLLECTIVES = StatsTab(
    COLLECTIVES_TAB,
    "Collectives",
    lambda frame, _labels, _short: collectives_columns(frame),
    option=TabOption(
        "Collectives view",
        "Each matched collective, each type or each rank",
        COLLECTIVE_VIEW_TITLES,
    ),
    time_scoped=False,
    filter_key="collective",
    compute=_match,
    on_row=CollectiveList.focus_collective,
    recompute_on=frozenset({"offsets"}),
    follows=frozenset({"option"}),
    loading="Matching collectives across ranks…",
    lifecycle=CollectiveList,
)


def _status(found: CollectiveMatch) -> str:
    """'40 collectives matched across 4 reports; worst straggler rank2.sqlite · notes'."""
    inst = found.instances
    if not len(inst):
        text = "No collectives matched"
    else:
        reports = pluralize(int(inst["ranks"].max()), "report")
        text = f"{pluralize(len(inst), 'collective')} matched across {reports}"
        worst = found.summary.sort_values("caused_wait_ns", ascending=False).iloc[0]
        text += f"; worst straggler {worst['worst_straggler']} ({worst['collective']})"
    if found.alignment:
        text += f" · alignment: {found.alignment}"
    if found.notes:
        text += " · " + "; ".join(found.notes)
    return text


def _residual_status(found: CollectiveMatch, anchor: int | None) -> str:
    """'Aligned on AllReduce #11: the other 39 collectives' ends 3.1 µs apart at most …'."""
    inst = found.instances
    others = np.ones(len(inst), bool)
    if anchor is None:
        text = "Aligned on the anchor events"
    else:
        others[anchor] = False
        row = inst.iloc[anchor]
        text = f"Aligned on {row['collective']} #{int(row['instance'])}"
    skew = inst["end_skew_ns"].to_numpy(np.int64)[others & (inst["ranks"].to_numpy() > 1)]
    if not len(skew):
        return text
    what = pluralize(len(skew), "other collective") if anchor is not None else \
        pluralize(len(skew), "collective")  # fmt: skip
    return (f"{text}: residual skew (last end − first end) of the {what}: median "
            f"{format_duration_ns(float(np.median(skew)))}, max "
            f"{format_duration_ns(int(skew.max()))}")  # fmt: skip
