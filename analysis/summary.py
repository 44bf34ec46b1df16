"""The one stats entry: per-name statistics of a summary or a panel kind, by one of its strategies.

Every per-name statistics table goes through here: :meth:`ReportSet.summary
<analysis.reportset.ReportSet.summary>` (memoised per report set membership, name, window and
rows; the stats panel and the notebook's :meth:`~analysis.reportset.ReportSet.stats` and
:meth:`~analysis.reportset.ReportSet.window` call it) and, for ``strata stats``, which has no
loaded report set, :func:`file_summaries`. :func:`choose_strategy` is the one choice of how
a table is computed; the strategies are:

* :data:`STORED`: a summary computed before for the same report file, printed from its
  stored table (:mod:`analysis.answers`: neither NumPy nor pandas imported);
* :data:`SQL`: a small report's summaries inside SQLite, reduced in plain Python
  (:mod:`analysis.stats.sql`, :mod:`analysis.plainstats`);
* :data:`COLUMNS`: the column engine, one shot: the columns the summaries read (or the
  loaded report's) through :func:`analysis.engine.group_stats` (:mod:`analysis.stats`);
* :data:`INDEX`: a panel kind's window index (:mod:`analysis.window_stats`), sorted once,
  then every window without sorting again;
* :data:`ONE_SHOT`: the same window's numbers without the index
  (:func:`analysis.area.aggregate_window`), while the index is built;
* :data:`AREA`: an area selection (some rows x a window, :func:`analysis.area.area_stats`).

Each formula they apply is written once (:mod:`analysis.formulas`). Importing this module
imports neither NumPy nor pandas: the CLI's small-report path stays plain Python.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import threading  # an annotation only: the answered stats path starts no thread

    import pandas as pd

    from strata.analysis.reportset import ReportSet
    from strata.analysis.tracks import Track

__all__ = [
    "AREA",
    "COLUMNS",
    "INDEX",
    "ONE_SHOT",
    "SQL",
    "STORED",
    "choose_strategy",
    "compute_file",
    "file_summaries",
    "is_summary_name",
    "set_summary",
]

STORED = "stored"
SQL = "sql"
COLUMNS = "columns"
INDEX = "index"
ONE_SHOT = "one-shot"
AREA = "area"

#: Panel answers kept per report set membership (a drag asks a new window at every step).
_KEPT_WINDOWS = 64


def is_summary_name(name: str) -> bool:
    """Whether ``name`` (``cuda_gpu_kern_sum:base``...) names an nsys summary, not a kind."""
    from strata.analysis.stats.catalog import REPORT_NAMES

    return name.strip().partition(":")[0] in REPORT_NAMES


def choose_strategy(
    name: str | Sequence[str],
    window: tuple[int | None, int | None] | None = None,
    rows: Sequence[str] | None = None,
    *,
    path: str | Path | None = None,
    use_cache: bool = True,
    stored_checked: bool = False,
    index_built: bool = False,
    build: bool = True,
) -> str:
    """Return how to compute ``name`` (one of the strategies of the module docstring).

    An nsys summary (``name``, or several of one report file's, e.g. ``cuda_gpu_kern_sum``):

    * of a report file not opened (``path``: the CLI), with ``use_cache``, unless the store
      was asked already (``stored_checked``): :data:`STORED`. A stored table is printed in
      ~0.1 s in a fresh interpreter, with no column read and no NumPy import; the specs it
      lacks come back here;
    * of a report file, otherwise: :data:`SQL` where :func:`analysis.stats.compute.choose_path`
      says so (no cache entry to map, at most ``SQL_MAX_ROWS`` events in the tables read,
      every summary one the SQL path answers): asking SQLite for a thousand rows takes half
      the time of a columnar read and imports neither NumPy nor pandas; else :data:`COLUMNS`,
      which reads (and caches) only the columns the summaries need;
    * of a loaded report set: :data:`COLUMNS` (the engine on the loaded columns; a
      ``window`` becomes nsys's ``start=``/``end=`` filter of each report).

    A panel kind (``kernels``, ``cuda_api``...) over ``window``:

    * with ``rows`` (an area selection): :data:`AREA`, a one-shot aggregate of those rows;
      an index covers every row, not a choice of them;
    * with its window index built, or when it may be built now (``build``: the notebook,
      which waits): :data:`INDEX`: sorted once (seconds per 10 M events), then each window
      in milliseconds, so a moving window never sorts again;
    * else (the panel, which never waits for an index): :data:`ONE_SHOT`, the same numbers
      in ~0.5 s per 10 M events while the index is built on a worker.

    Raises
    ------
    AnalysisError
        ``$STRATA_STATS_PATH`` is not ``sql``, ``columns`` or ``auto``; rows for a summary.
    """
    names = [name] if isinstance(name, str) else list(name)
    if names and all(is_summary_name(n) for n in names):
        if rows:
            from strata.analysis.errors import AnalysisError

            raise AnalysisError(f"{names[0]}: an nsys summary takes a window, not rows")
        if path is None:
            return COLUMNS
        if use_cache and not stored_checked:
            return STORED
        from strata.analysis.stats.compute import choose_path

        return SQL if choose_path(path, names, use_cache) == "sql" else COLUMNS
    if rows:
        return AREA
    return INDEX if index_built or build else ONE_SHOT


# -- report files (the CLI) ---------------------------------------------------------------------


def file_summaries(
    path: str | Path,
    specs: Sequence[str],
    compute: Callable[[list[str]], tuple[str, list]],
    use_cache: bool = True,
) -> tuple[str, list]:
    """Return (report name, one result per spec) of a report file: the stored answers
    (:data:`STORED`), and ``compute(missing specs)`` for the rest (stored for next time).

    ``compute`` is :func:`compute_file` for the file (the CLI passes its own hook).
    """
    if choose_strategy(specs, path=path, use_cache=use_cache) == STORED:
        from strata.analysis import answers

        return answers.summaries(path, specs, compute)
    return compute(list(specs))


def compute_file(
    path: str | Path,
    specs: Sequence[str],
    xp: ModuleType | Callable[[], ModuleType | None] | None = None,
    use_cache: bool = True,
) -> tuple[str, list]:
    """Compute ``specs`` for one report file by :data:`SQL` or :data:`COLUMNS`; return
    (report name, results).

    A report the SQL path does not answer (one its checks refuse, say) goes the column path,
    which answers it or refuses it with its own message. The SQL path's results are
    :class:`~analysis.stats.plain.PlainResult` and it imports neither NumPy nor pandas; the
    column path's are :class:`~analysis.stats.StatsResult`, computed with ``xp`` (a callable
    is called for it only there: choosing the backend imports NumPy).
    """
    strategy = choose_strategy(specs, path=path, use_cache=use_cache, stored_checked=True)
    if strategy == SQL:
        from strata.analysis.stats.sql import NotServed, sql_summaries

        try:
            return sql_summaries(path, specs)
        except NotServed:
            pass
    from strata.analysis.stats.compute import column_summaries

    return column_summaries(path, specs, xp() if callable(xp) else xp, use_cache)


# -- a loaded report set (the panel, the notebook) ----------------------------------------------


def set_summary(
    reports: ReportSet,
    name: str,
    window: tuple[int | None, int | None] | None = None,
    rows: Sequence[str] | None = None,
    *,
    timeunit: str = "nsec",
    offsets_ns: Sequence[int] | None = None,
    report_index: int | None = None,
    by_report: bool = False,
    xp: ModuleType | None = None,
    build: bool = True,
    tracks: Sequence[Track] | None = None,
    cancel: threading.Event | None = None,
) -> pd.DataFrame:
    """:meth:`ReportSet.summary <analysis.reportset.ReportSet.summary>`: see there; memoised
    in the set (per membership) under the strategy, name, window, rows and options."""
    window = None if window is None else (_bound(window[0]), _bound(window[1]))
    rows = tuple(rows) if rows else ()
    if is_summary_name(name):
        strategy = choose_strategy(name, window, rows)
        key = ("summary", strategy, name.strip(), window, timeunit)
        return _copy(
            reports._set_value(key, lambda snap: _set_columns(snap, name, window, timeunit))
        )
    import numpy as np

    from strata.analysis.kinds import panel_kinds, resolve_kind

    kind = resolve_kind(name, panel_kinds())
    offsets = tuple(int(o) for o in (reports.offsets_ns() if offsets_ns is None else offsets_ns))
    module = np if xp is None else xp
    built = not rows and reports.window_index(kind, offsets, module, build=False) is not None
    strategy = choose_strategy(kind, window, rows, index_built=built, build=build)
    t0, t1 = window if window is not None else (None, None)
    key = ("summary", strategy, kind, window, rows, offsets, module.__name__, report_index,
           bool(by_report))  # fmt: skip

    def compute(snap: ReportSet) -> pd.DataFrame:
        from strata.analysis import area

        if strategy == INDEX:
            index = snap.window_index(kind, offsets, module, cancel=cancel)
            return index.stats(t0, t1, report_index, by_report=by_report)
        if strategy == ONE_SHOT:
            return area.aggregate_window(snap, kind, t0, t1, offsets, report_index, by_report,
                                         cancel)  # fmt: skip
        chosen = _tracks_of(snap, rows, tracks)
        return area.area_stats(snap, kind, chosen, t0, t1, offsets, report_index, by_report)

    frame = reports._set_value(key, compute)
    reports._memo_trim(lambda k: k[0] == "summary" and k[1] != COLUMNS, _KEPT_WINDOWS)
    out = _copy(frame)
    out.attrs["strategy"] = strategy
    return out


def _bound(value: Any) -> int | None:
    return None if value is None else int(value)


def _copy(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy the caller may change (the memo keeps the original)."""
    import copy

    out = frame.copy()
    out.attrs = copy.deepcopy(frame.attrs)
    return out


def _set_columns(snap: ReportSet, name: str, window, timeunit: str) -> pd.DataFrame:
    """:data:`COLUMNS` on a loaded set: each report's summary as its CSV shows it, a
    ``window`` on the shared axis as nsys's ``start=``/``end=`` in each report's time."""
    from strata.analysis.filterspec import with_filter
    from strata.analysis.reportset_api import csv_by_report
    from strata.analysis.stats import run_report

    offsets = snap.offsets_ns() if window is not None else []

    def run(report):  # noqa: ANN001, ANN202
        spec = name
        if window is not None:
            off = offsets[snap.index(report)]
            start, end = (None if t is None else t - off for t in window)
            text = f"{'' if start is None else start}/{'' if end is None else end}"
            spec = with_filter([name], text, None)[0]
        return run_report(report, spec)

    return csv_by_report(snap, run, timeunit)


def _tracks_of(snap: ReportSet, rows: Sequence[str], tracks: Sequence[Track] | None) -> list:
    """The tracks of ``rows`` (track keys), from ``tracks`` or else the set's own."""
    wanted = set(rows)
    return [t for t in (snap.tracks() if tracks is None else tracks) if t.key in wanted]
