"""The stats panel's Diff tab and the timeline's diff colours: what changed from the baseline
reports to the compared ones, per name of one kind, and (when switched on) the events of the
names that got slower / faster coloured on the timeline.

What is compared is the timeline state's (:meth:`viewer.state.TimelineState.diff`), by
report path: the reports panel and the View → Diff menu set it. The diff and the tints are
computed on workers (:mod:`app.diff_jobs`); a result for another set of reports, sides or
kind is dropped. A closed report leaves its side; a side left empty ends the diff.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
from PySide6.QtCore import QObject, Signal

from strata.analysis.timefmt import pluralize
from strata.app.diff_jobs import TINTED, DiffRequest, DiffResult, compute_diff, tint_codes
from strata.app.jobs import JobRunner
from strata.app.stats_highlight import NameHighlighter
from strata.app.stats_jobs import ShownReports, error_text
from strata.app.theme import DIFF_COLORS, diff_colors
from strata.viewer.frame import EventTints
from strata.viewer.state import DiffState, TimelineState
from strata.viewer.stats_panel import DIFF_KIND_TITLES, StatsPanel

__all__ = ["HINT", "DiffList"]

HINT = ("No diff: right-click a report in the Reports panel → Set as Baseline (Ctrl+B), "
        "then another → Compare with Baseline (Ctrl+Shift+B)")  # fmt: skip


class DiffList(QObject):
    """Fill the Diff tab and the timeline's diff tints from the timeline state's diff.

    ``path_of(report)`` is the path the user opened a shown report from (the diff's key).

    Signals
    -------
    diff_ready(object)
        The Diff tab shows a new table (the DataFrame of :func:`app.diff_jobs.diff_frame`).
    tints_ready(object)
        The timeline's diff tints changed (:class:`viewer.state.values.EventTints`, or None: off).
    failed(str)
        A diff could not be computed (one line).
    """

    diff_ready = Signal(object)
    tints_ready = Signal(object)
    failed = Signal(str)

    def __init__(
        self,
        panel: StatsPanel,
        runner: JobRunner,
        highlighter: NameHighlighter,
        state: TimelineState,
        path_of: Callable[[object], Path | None],
        scheme: Callable[[], str] = lambda: "dark",
    ) -> None:
        super().__init__(panel)
        self._panel, self._runner, self._highlighter = panel, runner, highlighter
        self._state, self._path_of, self._scheme = state, path_of, scheme
        self._shown = ShownReports()
        self._request: DiffRequest | None = None
        self._result: DiffResult | None = None
        self._sides = DiffState()
        state.diff_changed.connect(self._on_diff_changed)
        panel.diff_kind_changed.connect(lambda _kind: self._compute())

    def frame(self) -> pd.DataFrame | None:
        """Return the table the tab shows (None while there is none)."""
        return None if self._result is None else self._result.frame

    def set_shown(self, shown: ShownReports, is_new: bool) -> None:
        """Follow the shown reports; a new set is compared again (on a worker)."""
        self._shown = shown
        if is_new:
            self._compute()

    def forget_report(self, path: str | Path) -> None:
        """A report was closed: it leaves the diff (an empty side ends it)."""
        state = self._state
        state.set_diff(state.diff().without([str(path)]))

    def _on_diff_changed(self, diff: DiffState) -> None:
        sides_changed = (diff.before, diff.after) != (self._sides.before, self._sides.after)
        self._sides = diff
        if sides_changed:
            self._compute()
        else:
            self._update_tints()

    # -- the table ------------------------------------------------------------------------

    def _positions(self, paths: tuple[str, ...]) -> tuple[int, ...]:
        shown = [self._path_of(r) for r in self._shown.reports]
        where = {str(p): i for i, p in enumerate(shown) if p is not None}
        return tuple(where[p] for p in paths if p in where)

    def _compute(self) -> None:
        diff, kind = self._state.diff(), self._panel.diff_kind()
        self._request, self._result = None, None
        self._highlighter.set_tints(None)
        self.tints_ready.emit(None)
        before, after = self._positions(diff.before), self._positions(diff.after)
        if not diff.is_ready:
            self._show_empty(diff)
            return
        if not before or not after:  # a side's reports are not shown (yet)
            self._panel.show_diff(pd.DataFrame(), "Waiting for the compared reports…")
            return
        self._request = request = DiffRequest(kind, before, after, self._shown.key[0])
        self._panel.show_diff(pd.DataFrame(), f"Comparing {self._title(request)}…")
        shown = self._shown
        job = self._runner.submit(lambda _p, _c: compute_diff(shown, request), channel="diff")
        job.finished.connect(self._on_ready)
        job.failed.connect(self._on_failed)

    def _show_empty(self, diff: DiffState) -> None:
        if diff.before:
            names = ", ".join(Path(p).name for p in diff.before)
            text = f"Baseline: {names}. Now choose the reports to compare with it " \
                   "(Compare with Baseline, Ctrl+Shift+B)"  # fmt: skip
        elif diff.after:
            text = "Choose a baseline to compare with (Set as Baseline, Ctrl+B)"
        else:
            text = HINT
        self._panel.show_diff(pd.DataFrame(), text)

    def _title(self, request: DiffRequest) -> str:
        labels = self._shown.labels

        def side(positions: tuple[int, ...]) -> str:
            names = [labels[i] for i in positions if i < len(labels)]
            return names[0] if len(names) == 1 else pluralize(len(names), "report")

        kind = dict(DIFF_KIND_TITLES)[request.kind]
        return f"{kind}: {side(request.before)} → {side(request.after)}"

    def _on_failed(self, error: Exception) -> None:
        text = error_text(error)
        self._panel.show_diff(pd.DataFrame(), f"Diff failed: {text}")
        self.failed.emit(text)

    def _on_ready(self, result: DiffResult) -> None:
        if result.request != self._request or result.request.key != self._shown.key[0]:
            return
        self._result = result
        frame = result.frame
        colors = diff_colors(self._scheme())
        row_colors = [colors.get(s) for s in frame["status"].tolist()]
        self._panel.show_diff(frame, self._status(frame, result.request), row_colors)
        self.diff_ready.emit(frame)
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
        result, diff = self._result, self._state.diff()
        if result is None or not diff.is_colored:
            self._highlighter.set_tints(None)
            self.tints_ready.emit(None)
            return
        shown, request = self._shown, result.request
        positions = tuple(sorted({*request.before, *request.after}))

        def work(_progress, _cancel) -> tuple[DiffRequest, dict]:
            return request, tint_codes(shown, request.kind, result.frame, positions)

        job = self._runner.submit(work, channel="diff_tints")
        job.finished.connect(self._on_tints_ready)
        job.failed.connect(self._on_failed)

    def _on_tints_ready(self, value: tuple[DiffRequest, dict]) -> None:
        request, codes = value
        current = self._result.request if self._result is not None else None
        if request != current or not self._state.diff().is_colored:
            return
        colors = tuple(0xFF000000 | int(DIFF_COLORS[s].lstrip("#"), 16) for s in TINTED)
        tints = EventTints(codes, colors)
        self._highlighter.set_tints(tints)
        self.tints_ready.emit(tints)
