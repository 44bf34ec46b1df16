"""The stats panel's Diff tab and the timeline's diff colours: what changed from the baseline
reports to the compared ones, per name of one kind, and (when switched on) the events of the
names that got slower / faster coloured on the timeline.

What is compared is the timeline state's (:meth:`viewer.state.TimelineState.diff`), by
report path: the reports panel and the View → Diff menu set it. The diff and the tints are
computed on workers (:mod:`app.diff_jobs`); a result for another set of reports, sides or
kind is dropped. A closed report leaves its side; a side left empty ends the diff. A row is
a name of the compared kind: choosing it highlights that name, as a summary's row.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from PySide6.QtCore import Signal

from strata.analysis.diff import DIFF_KINDS
from strata.analysis.timefmt import pluralize
from strata.app.diff_jobs import TINTED, DiffRequest, DiffResult, compute_diff, tint_codes
from strata.app.stats_list import ListTab, TabContext
from strata.app.theme import DIFF_COLORS, diff_colors
from strata.viewer.frame import EventTints
from strata.viewer.state import DiffState
from strata.viewer.stats_tabs import SUMMARY_TABS, StatsTab, TabOption
from strata.viewer.table_model import Column

__all__ = ["DIFF", "DIFF_KIND_TITLES", "DIFF_TAB", "HINT", "DiffList"]

DIFF_TAB = "diff"
HINT = ("No diff: right-click a report in the Reports panel → Set as Baseline (Ctrl+B), "
        "then another → Compare with Baseline (Ctrl+Shift+B)")  # fmt: skip
#: (kind, title) the Diff tab compares, one at a time (:data:`analysis.diff.DIFF_KINDS`),
#: titled as their summary tabs.
DIFF_KIND_TITLES = tuple(
    (kind, next(tab.title for tab in SUMMARY_TABS if tab.id == kind)) for kind in DIFF_KINDS
)
_COLUMNS = (
    Column("change", "Change", "text", "slower / faster: the median moved beyond the noise "
           "(interval and tolerance); noise: it did not; n=1: one instance on a side, slower / "
           "faster by x1.2 and 1 µs, else too few instances; appeared / vanished: one side only"),
    Column("name", "Name", "text"), Column("style", "Style", "text"),
    Column("total_delta_ns", "Total Δ (ns)", "delta", "After - before, over each side's reports"),
    Column("med_change_pct", "Med Δ (%)", "delta_pct", "Change of the median duration"),
    Column("med_delta_ns", "Med Δ (ns)", "delta"),
    Column("interval", "Med Δ interval (ns)", "text",
           "Bootstrap interval of the median change (95 %)"),
    Column("count_before", "Count before"), Column("count_after", "Count after"),
    Column("med_before_ns", "Med before (ns)", "dec1"),
    Column("med_after_ns", "Med after (ns)", "dec1"),
    Column("total_before_ns", "Total before (ns)"), Column("total_after_ns", "Total after (ns)"),
)  # fmt: skip


class DiffList(ListTab):
    """Fill the Diff tab and the timeline's diff tints from the timeline state's diff.

    The window's ``report_list`` says which path each shown report was opened from (the
    diff's key); its ``theme_switcher`` the colour scheme of the rows.

    Signals
    -------
    diff_ready(object)
        The Diff tab shows a new table (the DataFrame of :func:`app.diff_jobs.diff_frame`).
    tints_ready(object)
        The timeline's diff tints changed (:class:`viewer.state.values.EventTints`, or None: off).
    """

    diff_ready = Signal(object)
    tints_ready = Signal(object)

    def __init__(self, tab: StatsTab, context: TabContext) -> None:
        super().__init__(tab, context)
        self._state = context.timeline.state
        self._sides = DiffState()
        self._state.diff_changed.connect(self._on_diff_changed)
        self.ready.connect(self._on_ready)
        context.app.report_list.entry_removed.connect(lambda entry: self.forget_report(entry.path))

    def frame(self) -> pd.DataFrame | None:
        """Return the table the tab shows (None while there is none)."""
        result = self.result()
        return None if result is None else result.frame

    def forget_report(self, path: str | Path) -> None:
        """A report was closed: it leaves the diff (an empty side ends it)."""
        self._state.set_diff(self._state.diff().without([str(path)]))

    def _update(self, change: str) -> None:
        # What is compared is the timeline state's, not the panel's scope.
        if change in ("reports", "option"):
            self._compute()

    def _on_diff_changed(self, diff: DiffState) -> None:
        sides_changed = (diff.before, diff.after) != (self._sides.before, self._sides.after)
        self._sides = diff
        if sides_changed:
            self._compute()
        else:
            self._update_tints()

    # -- the table ------------------------------------------------------------------------

    def _path_of(self, report) -> Path | None:
        """The path the user opened ``report`` from (what the diff names reports by)."""
        for entry in self.context.app.report_list.entries():
            if entry.report is report:
                return entry.path
        return None

    def _positions(self, paths: tuple[str, ...]) -> tuple[int, ...]:
        shown = [self._path_of(r) for r in self.shown.reports]
        where = {str(p): i for i, p in enumerate(shown) if p is not None}
        return tuple(where[p] for p in paths if p in where)

    def _compute(self) -> None:
        diff, kind = self._state.diff(), self.context.panel.option(self.tab.id)
        self._result, self._asked = None, None
        self.context.highlighter.set_tints(None)
        self.tints_ready.emit(None)
        before, after = self._positions(diff.before), self._positions(diff.after)
        if not diff.is_ready:
            self._show_empty(diff)
            return
        if not before or not after:  # a side's reports are not shown (yet)
            self.show(pd.DataFrame(), "Waiting for the compared reports…")
            return
        shown = self.shown
        request = DiffRequest(kind, before, after, shown.key[0])
        self.show(pd.DataFrame(), f"Comparing {self._title(request)}…")
        self._submit(lambda: compute_diff(shown, request), request)

    def _show_empty(self, diff: DiffState) -> None:
        if diff.before:
            names = ", ".join(Path(p).name for p in diff.before)
            text = f"Baseline: {names}. Now choose the reports to compare with it " \
                   "(Compare with Baseline, Ctrl+Shift+B)"  # fmt: skip
        elif diff.after:
            text = "Choose a baseline to compare with (Set as Baseline, Ctrl+B)"
        else:
            text = HINT
        self.show(pd.DataFrame(), text)

    def _title(self, request: DiffRequest) -> str:
        labels = self.shown.labels

        def side(positions: tuple[int, ...]) -> str:
            names = [labels[i] for i in positions if i < len(labels)]
            return names[0] if len(names) == 1 else pluralize(len(names), "report")

        kind = dict(DIFF_KIND_TITLES)[request.kind]
        return f"{kind}: {side(request.before)} → {side(request.after)}"

    def relist(self) -> pd.DataFrame | None:
        result = self.result()
        if result is None:
            return None
        frame = result.frame
        switcher = self.context.app.theme_switcher
        colors = diff_colors(switcher.scheme() if switcher is not None else "dark")
        row_colors = [colors.get(s) for s in frame["status"].tolist()]
        self.show(frame, self._status(frame, result.request), row_colors)
        return frame

    def _on_ready(self, result: DiffResult) -> None:
        self.diff_ready.emit(result.frame)
        self._update_tints()

    def _status(self, frame: pd.DataFrame, request: DiffRequest) -> str:
        counts = frame["status"].value_counts()
        changes = ("slower", "faster", "slower, few", "faster, few", "appeared", "vanished")
        parts = [f"{int(counts.get(s, 0)):,} {s}" for s in changes if counts.get(s, 0)]
        few = int(counts.get("too few", 0))
        if few:
            parts.append(f"{few:,} with too few instances")
        noise = int(counts.get("noise", 0))
        parts.append(f"{noise:,} within noise")
        return f"{self._title(request)} · {', '.join(parts)}"

    # -- the timeline ---------------------------------------------------------------------

    def _update_tints(self) -> None:
        """Colour the changed names on the timeline (on a worker), or stop."""
        result, diff = self.result(), self._state.diff()
        if result is None or not diff.is_colored:
            self.context.highlighter.set_tints(None)
            self.tints_ready.emit(None)
            return
        shown, request = self.shown, result.request
        positions = tuple(sorted({*request.before, *request.after}))

        def work(_progress, _cancel) -> tuple[DiffRequest, dict]:
            return request, tint_codes(shown, request.kind, result.frame, positions)

        job = self.context.runner.submit(work, channel="diff_tints")
        job.finished.connect(self._on_tints_ready)
        job.failed.connect(self.show_failure)

    def _on_tints_ready(self, value: tuple[DiffRequest, dict]) -> None:
        request, codes = value
        result = self.result()
        current = result.request if result is not None else None
        if request != current or not self._state.diff().is_colored:
            return
        colors = tuple(0xFF000000 | int(DIFF_COLORS[s].lstrip("#"), 16) for s in TINTED)
        tints = EventTints(codes, colors)
        self.context.highlighter.set_tints(tints)
        self.tints_ready.emit(tints)


def _compared_kind(option: str | None) -> str:
    return option or DIFF_KINDS[0]


DIFF = StatsTab(
    DIFF_TAB,
    "Diff",
    _COLUMNS,
    option=TabOption("Diff kind", "What the diff compares", DIFF_KIND_TITLES),
    name_kind=_compared_kind,
    time_scoped=False,  # the whole reports: the scope does not apply
    report_scoped=False,
    steps_instances=True,
    lifecycle=DiffList,
)
