"""The stats panel's tab protocol: what a tab is (:class:`StatsTab`), what it is asked for
(:class:`TabScope`), and the per-name summary tabs.

A tab is a description. The panel (:mod:`viewer.stats_panel`) reads its first part: id,
title, columns, its own option selector and which of the panel's controls apply. The app
(:mod:`app.stats_list`) runs the second: ``compute`` the tab's result on a worker,
``rows`` to list it for the current scope, ``on_row`` when a row is chosen. A summary tab
(``is_summary``) has none of the second part: the shared per-name table
(:mod:`app.stats_table`) computes it for the scope. :mod:`app.stats_tabs` registers the
tabs the window shows; a new tab is one :class:`StatsTab` and one registration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import pandas as pd

from strata.analysis.alignment import TimeAlignment
from strata.analysis.kinds import panel_kinds, panel_title, panel_unit
from strata.viewer.state import Scope
from strata.viewer.style import report_color
from strata.viewer.table_model import Column

if TYPE_CHECKING:
    from strata.analysis.reportset import ReportSet

__all__ = [
    "SUMMARY_TABS",
    "ColumnsOf",
    "StatsTab",
    "TabOption",
    "TabScope",
    "summary_columns",
    "summary_tab",
]

#: ``columns(frame, report_labels, short_labels)``: the columns to show for ``frame``.
ColumnsOf = Callable[[pd.DataFrame, Sequence[str], Mapping[str, str] | None], list[Column]]


@dataclass(frozen=True)
class TabOption:
    """A tab's own selector: one combo box in the panel's scope row while the tab is current.

    ``choices`` are ``(value, title)`` pairs, the first the default; ``name`` is what a
    screen reader calls the combo box, ``tip`` its tooltip.
    """

    name: str
    tip: str
    choices: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class TabScope:
    """What a tab is asked for: the panel's ``scope``, the time window it means now
    (``window_ns``, shared-axis ns; ``(None, None)`` for the whole run; None for a selection
    scope with nothing selected), the tab's ``option`` value, and the shown reports'
    ``labels``, ``offsets_ns`` and ``alignment``."""

    scope: Scope = field(default_factory=Scope)
    window_ns: tuple[int | None, int | None] | None = (None, None)
    option: str | None = None
    labels: tuple[str, ...] = ()
    offsets_ns: tuple[int, ...] = ()
    alignment: TimeAlignment = field(default_factory=TimeAlignment)


@dataclass(frozen=True)
class StatsTab:
    """One tab of the stats panel.

    Parameters
    ----------
    id, title
        Its key (what :meth:`StatsPanel.kind` returns) and its tab text.
    columns
        The columns it shows: a list, or ``columns(frame, report_labels, short_labels)``.
    is_summary
        Statistics per name of the kind ``id`` for the panel's scope, computed by the shared
        table; else a list tab with rows of its own (``compute``, ``rows``, ``on_row``).
    option
        Its own selector, or None.
    name_kind
        None: a row is a record (choosing it runs ``on_row``). Else a row is a name of
        the kind ``name_kind(option)``: a click highlights it, a double-click zooms to its
        longest instance.
    time_scoped, report_scoped
        Whether the time range and by-report controls, and the report selector, apply.
    shows_histogram, steps_instances
        Whether the highlighted name's histogram and count, and Next / Previous, apply.
    filter_key, name_min_px
        The column the name filter matches; the least width of that column (px).
    compute
        ``compute(reports, scope) -> result`` on a worker (:class:`TabScope`).
    rows
        ``rows(result, scope) -> (frame, status)``: the rows to list now, on the GUI
        thread (default: the result is the frame, no status).
    on_row
        ``on_row(tab, record)``: a row was chosen; ``tab`` is the app's running tab
        (:class:`app.stats_list.ListTab`: the shown reports, the result, the timeline),
        ``record`` the row's fields.
    recompute_on
        What else than new reports computes again: ``offsets``, ``scope``, ``option``.
    follows
        What lists the result again: ``offsets``, ``scope``, ``option``, ``view_range``,
        ``selection``.
    lazy
        Computed only once the tab is shown (no cost for those who never look).
    loading, failure
        The status while it computes; what a failure's status begins with (the title).
    lifecycle
        The app class that runs it (a subclass of :class:`app.stats_list.ListTab` for a
        tab that does more than list; None: that class itself).
    """

    id: str
    title: str
    columns: Sequence[Column] | ColumnsOf
    is_summary: bool = False
    option: TabOption | None = None
    name_kind: Callable[[str | None], str] | None = None
    time_scoped: bool = True
    report_scoped: bool = True
    shows_histogram: bool = False
    steps_instances: bool = False
    filter_key: str = "name"
    name_min_px: int = 320
    compute: Callable[[ReportSet, TabScope], object] | None = None
    rows: Callable[[Any, TabScope], tuple[pd.DataFrame, str]] | None = None
    on_row: Callable[[Any, dict], None] | None = None
    recompute_on: frozenset[str] = frozenset()
    follows: frozenset[str] = frozenset()
    lazy: bool = False
    loading: str = ""
    failure: str = ""
    lifecycle: Callable[..., Any] | None = None

    def columns_of(
        self,
        frame: pd.DataFrame,
        report_labels: Sequence[str] = (),
        short_labels: Mapping[str, str] | None = None,
    ) -> list[Column]:
        """Return the columns to show for ``frame``."""
        if callable(self.columns):
            return list(self.columns(frame, list(report_labels), short_labels))
        return list(self.columns)


def summary_columns(
    kind: str,
    frame: pd.DataFrame,
    report_labels: Sequence[str],
    short_labels: Mapping[str, str] | None = None,
) -> list[Column]:
    """Return a summary tab's columns for ``frame`` (units in headers).

    A by-report column group is headed by its report's ``short_labels`` entry (default: the
    label without ``.sqlite``).
    """
    unit = panel_unit(kind)
    head = [Column("name", "Name", "text"), Column("style", "Style", "text")]
    if "slowest" in frame.columns:  # by-report view: the comparison first, then per report
        cols = [*head,
                Column("slowest", "Slowest", "text", "Report with the largest median"),
                Column("spread", "Spread", "ratio", "Largest / smallest median over reports"),
                Column("total_ns", f"Total ({unit})", "int", "Over every report")]  # fmt: skip
        for i, label in enumerate(report_labels):
            short = (short_labels or {}).get(label) or label.removesuffix(".sqlite")
            color = report_color(i)  # as in the histogram
            cols += [
                Column(f"{label}|median_ns", f"{short} Med ({unit})", "dec1",
                       f"{label}: median", color),
                Column(f"{label}|count", f"{short} Count", "int", f"{label}: instances", color),
                Column(f"{label}|total_ns", f"{short} Total ({unit})", "int",
                       f"{label}: total", color),
            ]  # fmt: skip
        return cols
    total = "Total" if unit == "B" else "Total Time"
    # nsys's cuda_gpu_mem_size_sum has no share column; ours is of the bytes, not of time.
    share = (
        Column("time_pct", "Size (%)", "pct", "Share of the bytes moved by every name")
        if unit == "B"
        else Column("time_pct", "Time (%)", "pct")
    )
    return [
        *head, share, Column("total_ns", f"{total} ({unit})"),
        Column("count", "Count"), Column("mean_ns", f"Avg ({unit})", "dec1"),
        Column("median_ns", f"Med ({unit})", "dec1"), Column("min_ns", f"Min ({unit})"),
        Column("max_ns", f"Max ({unit})"), Column("std_ns", f"StdDev ({unit})", "dec1"),
    ]  # fmt: skip


def _same_kind(kind: str, _option: str | None) -> str:
    return kind


def summary_tab(kind: str, title: str) -> StatsTab:
    """Return the summary tab of ``kind`` (one of :data:`analysis.window_stats.WINDOW_KINDS`)."""
    return StatsTab(
        kind,
        title,
        partial(summary_columns, kind),
        is_summary=True,
        name_kind=partial(_same_kind, kind),
        shows_histogram=True,
        steps_instances=True,
    )


#: The per-name summaries, in tab order: one per panel kind of the registry (analysis.kinds),
#: titled as the kind says.
SUMMARY_TABS = tuple(summary_tab(kind, panel_title(kind)) for kind in panel_kinds())
