"""The loaded reports and everything derived from them, each computed once, lazily, thread-safely.

A :class:`ReportSet` owns its reports and every table derived from them: report labels, time
offsets, timeline slice tables, the NVTX → GPU projection, timeline rows, window indexes and
outliers. Nothing derived lives in a module global and nothing is written into a
:class:`~analysis.model.Report` (frozen by contract). The GUI holds one set, the CLI builds
one, and a notebook gets one from :func:`open_reports`::

    from strata.analysis import open_reports
    rs = open_reports(["a.sqlite", "runs/"])
    rs.events("kernel")             # one row per kernel, named
    rs.stats("cuda_gpu_kern_sum")   # the table `strata stats -f csv` prints
    rs.outliers().instances         # robust z-score outliers
    rs.window(0, 10_000_000)        # per-name statistics of a time window
    rs.summary("kernels", (0, 10_000_000))  # the one entry behind both (analysis.summary)

Per-report values (slice tables, projection) are kept while the report stays in the set;
values over the whole set (labels, offsets, rows, window indexes, outliers) belong to one
membership and are dropped when a report is added or removed. Two threads asking for the
same value wait for one computation; different values are computed in parallel.
"""

# Over 600 lines: one facade class, each public method a documented question of the set
# (the computations live in the modules it names: summary, outliers, tracks, window_stats).

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd

from strata.analysis import projection as _projection
from strata.analysis.alignment import TimeAlignment
from strata.analysis.discover import find_reports
from strata.analysis.errors import AnalysisError
from strata.analysis.kinds import event_kinds, kinds_at, panel_kinds, resolve_kind, resolve_kinds
from strata.analysis.memo import Memo
from strata.analysis.model import Report
from strata.analysis.open import open_report
from strata.analysis.progress import Progress
from strata.analysis.reportset_api import ReportSetAnalyses, with_report
from strata.analysis.timefmt import pluralize

__all__ = ["EVENT_KINDS", "ReportSet", "open_reports"]

#: What :meth:`ReportSet.events` lists (any spelling :func:`analysis.kinds.resolve_kind`
#: reads: ``kernel`` for ``kernels``): the kinds a panel summarises, GPU work first.
EVENT_KINDS = tuple(k.name for k in kinds_at("gpu") if k.panels) + tuple(
    k.name for k in event_kinds() if k.panels and k.place != "gpu"
)


_MISSING = object()
#: Numbers memberships of report sets (0: no report): never one number for two memberships.
_MEMBERSHIPS = itertools.count(1)


class _Store:
    """The per-report values of a live set and its snapshots, keyed by report identity."""

    def __init__(self) -> None:
        self.memo = Memo()
        self.live: dict[int, Report] = {}  # id -> report, of the live set's reports
        self.lock = threading.Lock()

    def is_live(self, report: Report) -> bool:
        with self.lock:
            return self.live.get(id(report)) is report


class ReportSet(ReportSetAnalyses):
    """Loaded reports, in order, and the data derived from them.

    Besides what it derives, a set answers the questions of the command line as DataFrames
    (:class:`~analysis.reportset_api.ReportSetAnalyses`): :meth:`stats`, :meth:`analyze`,
    :meth:`diff`, :meth:`collectives`, :meth:`recipe`; ``docs/api.md`` lists them all.

    Parameters
    ----------
    reports
        Loaded reports (:func:`analysis.open_report`); their order is the view order.
    alignment
        How the reports share one time axis (default: every session starts at 0).

    Notes
    -----
    Thread-safe: any method may be called from any thread. A worker that must see one
    membership throughout takes :meth:`snapshot` on the thread that changes the set.
    """

    def __init__(
        self, reports: Iterable[Report] = (), alignment: TimeAlignment | None = None
    ) -> None:
        self._lock = threading.Lock()
        self._store = _Store()
        self._alignment = alignment or TimeAlignment()
        self._is_frozen = False
        self._reports: tuple[Report, ...] = ()
        self._memo = Memo()
        self._version = 0
        self.set_reports(reports)

    # -- membership -----------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._reports)

    def __iter__(self) -> Iterator[Report]:
        return iter(self._reports)

    def __getitem__(self, index: int) -> Report:
        return self._reports[index]

    def __contains__(self, report: object) -> bool:
        return any(r is report for r in self._reports)

    def __repr__(self) -> str:
        names = ", ".join(self.labels[:3]) + (", …" if len(self) > 3 else "")
        events = sum(r.event_count for r in self._reports)
        count = pluralize(len(self), "report")
        return f"<ReportSet: {count} ({names}), {pluralize(events, 'event')}>"

    @property
    def reports(self) -> tuple[Report, ...]:
        """The reports, in view order."""
        return self._reports

    @property
    def version(self) -> int:
        """A number naming this membership, shared by its snapshots: a new one each time a
        report is added or removed, never used for another membership (unlike the ``id()``
        of a report, which a report loaded later may get); 0 while the set is empty."""
        return self._version

    def index(self, report: Report | int) -> int:
        """Return the position of ``report`` (a report of the set, or an index)."""
        reports = self._reports
        if isinstance(report, (int, np.integer)):
            if not 0 <= int(report) < len(reports):
                raise AnalysisError(f"no report #{int(report)}; {len(reports)} in the set")
            return int(report)
        for i, r in enumerate(reports):
            if r is report:
                return i
        raise AnalysisError(f"{getattr(report, 'name', report)} is not in this report set")

    def set_reports(self, reports: Iterable[Report]) -> None:
        """Make ``reports`` the set's reports, in that order.

        Values derived from a report that stays are kept; those of reports that leave, and
        every value over the whole set, are dropped.
        """
        if self._is_frozen:
            raise AnalysisError("a report set snapshot cannot change; change the live set")
        new = tuple(reports)
        for report in new:
            if not isinstance(report, Report):
                raise AnalysisError(
                    f"a ReportSet holds loaded reports, not {type(report).__name__}"
                )
        with self._lock:
            if len(new) == len(self._reports) and all(
                a is b for a, b in zip(new, self._reports, strict=True)
            ):
                return
            self._reports, self._memo = new, Memo()
            self._version = next(_MEMBERSHIPS) if new else 0
        store = self._store
        with store.lock:
            store.live = {id(r): r for r in new}
            live = dict(store.live)
        store.memo.discard(lambda key: live.get(key[0]) is None)

    def add(self, report: Report) -> None:
        """Append ``report`` (no effect when it is in the set already)."""
        if report not in self:
            self.set_reports((*self._reports, report))

    def remove(self, report: Report | int) -> None:
        """Remove ``report`` (a report of the set, or its index)."""
        i = self.index(report)
        self.set_reports(self._reports[:i] + self._reports[i + 1 :])

    def snapshot(self) -> ReportSet:
        """Return a set that keeps this membership, sharing every value computed for it.

        For a worker: what it computes from the snapshot belongs to the reports it was given,
        even if the live set changes meanwhile (values of a report that left are not kept).
        """
        snap = ReportSet.__new__(ReportSet)
        snap._lock = threading.Lock()
        with self._lock:
            snap._reports, snap._memo, snap._version = self._reports, self._memo, self._version
        snap._store, snap._alignment, snap._is_frozen = self._store, self._alignment, True
        return snap

    def subset(self, indices: Iterable[int]) -> ReportSet:
        """Return a fixed set of some of these reports (by position, in the order given).

        It shares the per-report values (slice tables, projections) with this set, so a
        diff of two groups of the loaded reports does not project their NVTX ranges again;
        values over the whole set (window indexes, outliers) are its own. Its alignment is
        the default one (sessions start at 0): what it is for, whole-run statistics, does
        not depend on the time axis, and an NVTX alignment may not hold for a part.
        """
        chosen = tuple(self._reports[self.index(int(i))] for i in indices)
        sub = ReportSet.__new__(ReportSet)
        sub._lock, sub._memo = threading.Lock(), Memo()
        sub._reports, sub._store, sub._alignment = chosen, self._store, TimeAlignment()
        sub._version = next(_MEMBERSHIPS) if chosen else 0
        sub._is_frozen = True
        return sub

    def _set_value(self, key: tuple, compute: Callable[[ReportSet], object]) -> object:
        # Computed from a snapshot: the value belongs to the membership whose memo holds it.
        snap = self if self._is_frozen else self.snapshot()
        return snap._memo.get(key, lambda: compute(snap))

    def _memo_trim(self, match: Callable[[Hashable], bool], n: int) -> None:
        """Keep only the ``n`` latest of this membership's values whose key ``match`` takes."""
        with self._lock:
            memo = self._memo
        memo.keep_latest(match, n)

    def _report_value(self, report: Report, what: Hashable, compute: Callable[[], object]):
        store, key = self._store, (id(report), what)
        if not self._is_frozen:
            return store.memo.get(key, compute, lambda: store.is_live(report))
        # A snapshot keeps what it computed for a report that left the live set meanwhile (a
        # progressive open's newer partial report): the layout made of it is still shown,
        # and must not be computed again on the GUI thread. (A snapshot's memo stops being
        # the live set's once the membership changes, before the report stops being live.)
        kept = self._memo.peek(("left", key), _MISSING)
        if kept is not _MISSING:
            return kept
        value = store.memo.get(key, compute, lambda: store.is_live(report))
        if not store.is_live(report):
            self._memo.get(("left", key), lambda: value)
        return value

    # -- time axis ------------------------------------------------------------------------

    @property
    def alignment(self) -> TimeAlignment:
        """How the reports share one time axis (see :mod:`analysis.alignment`)."""
        return self._alignment

    def set_alignment(self, alignment: TimeAlignment) -> None:
        """Use ``alignment`` for :meth:`offsets_ns` and the windows from now on."""
        if self._is_frozen:
            raise AnalysisError("a report set snapshot cannot change; change the live set")
        self._alignment = alignment

    @property
    def labels(self) -> list[str]:
        """One unique, readable label per report (file name; parent folder if needed)."""
        from strata.analysis.tracks import report_labels

        return list(self._set_value(("labels",), lambda s: report_labels(list(s.reports))))

    def offsets_ns(self, alignment: TimeAlignment | None = None) -> list[int]:
        """Return per report the ns added to its times on the shared axis.

        Raises
        ------
        AnalysisError
            The alignment is impossible (e.g. no report has the NVTX range it names).
        """
        align = alignment or self._alignment
        return list(self._set_value(("offsets", align), lambda s: align.offsets(s.reports)))

    # -- per report -----------------------------------------------------------------------

    def projection(self, report: Report | int) -> pd.DataFrame:
        """Return :func:`analysis.projection.project_nvtx` of one report, computed once."""
        report = self._reports[self.index(report)]
        return self._report_value(report, "projection", lambda: _projection.project_nvtx(report))

    def projection_of(self, report: Report) -> pd.DataFrame:
        """As :meth:`projection`, for a report that may have left the set (not kept then)."""
        if report in self or self._store.is_live(report):
            return self._report_value(
                report, "projection", lambda: _projection.project_nvtx(report)
            )
        return _projection.project_nvtx(report)

    def slice_tables(self, report: Report | int) -> dict:
        """Return the timeline slice tables of one report by name (a new dict each call).

        ``nvtx_gpu`` is in it once :meth:`projected_slices` has run for the report.
        """
        from strata.analysis.tracks import build_slice_tables

        report = self._reports[self.index(report)]
        tables = dict(self._report_value(report, "slices", lambda: build_slice_tables(report)))
        projected = self._store.memo.peek((id(report), "nvtx_gpu"))
        if projected is None and self._is_frozen:
            projected = self._memo.peek(("left", (id(report), "nvtx_gpu")))
        if projected is not None:
            tables["nvtx_gpu"] = projected
        return tables

    def projected_slices(self, report: Report | int):
        """Return the slice table of the NVTX ranges projected onto the GPU, or None."""
        from strata.analysis.tracks import projected_slice_table

        report = self._reports[self.index(report)]
        projection = self.projection(report)
        return self._report_value(
            report, "nvtx_gpu", lambda: projected_slice_table(report, projection)
        )

    # -- over the set ---------------------------------------------------------------------

    def tracks(self, include_projection: bool = True) -> list:
        """Return every timeline row (:class:`analysis.tracks.Track`), in display order.

        ``include_projection``: add the NVTX-on-GPU rows (computes the projection, seconds
        on huge reports; without it the rows are ready in tens of ms). A partial report
        (``report.complete`` False, a progressive open) gets them once it is complete: its
        projection would need the NVTX and CUDA API tables still being read.
        """
        from strata.analysis.tracks import build_tracks

        def compute(snap: ReportSet) -> list:
            if include_projection:
                for report in snap.reports:
                    if report.complete:
                        snap.projected_slices(report)
            tables = [snap.slice_tables(r) for r in snap.reports]
            return build_tracks(list(snap.reports), tables, snap.labels)

        return list(self._set_value(("tracks", include_projection), compute))

    def window_index(
        self,
        kind: str,
        offsets_ns: Sequence[int] | None = None,
        xp: ModuleType | None = None,
        build: bool = True,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
    ):
        """Return the :class:`~analysis.window_stats.WindowIndex` of ``kind``, built once.

        Its ``report_names`` are :attr:`labels`; ``offsets_ns`` default to
        :meth:`offsets_ns`; ``xp`` is ``numpy`` (default) or ``cupy``. With ``build``
        False, None unless it was built already. ``progress`` and ``cancel`` are those of
        :func:`~analysis.window_stats.build_window_index` (a cancelled build keeps nothing:
        the next caller builds it).
        """
        from strata.analysis.window_stats import build_window_index

        offsets = tuple(int(o) for o in (self.offsets_ns() if offsets_ns is None else offsets_ns))
        module = np if xp is None else xp
        key = ("window", kind, offsets, module.__name__)

        def compute(snap: ReportSet):
            index = build_window_index(list(snap.reports), kind, offsets, module,
                                       projection=snap.projection_of, progress=progress,
                                       cancel=cancel)  # fmt: skip
            index.report_names = snap.labels
            # One alignment at a time: an index for other offsets (or another array module)
            # is memory, not speed. Other kinds' indexes for these offsets stay: the panel
            # keeps the highlighted kind's index while another tab's is built (dropping it
            # made the two rebuild each other for ever).
            snap._memo.discard(lambda k: k[0] == "window" and k[2:] != key[2:])
            return index

        if not build:
            return self._memo.peek(key)
        return self._set_value(key, compute)

    def outliers(self, threshold: float | None = None, kinds: Iterable[str] | None = None,
                 xp: ModuleType | None = None, min_ratio: float | None = None,
                 min_delta_ns: float | None = None):  # fmt: skip
        """Return the :class:`~analysis.outliers.Outliers` of the set (computed once).

        Parameters
        ----------
        threshold
            Keep rows with ``|robust_z|`` above it (default 3.5).
        kinds
            Which of :data:`analysis.outliers.OUTLIER_KINDS` to score (default: all; any
            spelling :func:`analysis.kinds.resolve_kind` reads).
        xp
            ``numpy`` (default) or ``cupy`` for the group reductions.
        min_ratio, min_delta_ns
            The minimum effect against the median (defaults
            :data:`analysis.outliers.DEFAULT_MIN_RATIO`, ``DEFAULT_MIN_DELTA_NS``).
        """
        from strata.analysis.outliers import (
            DEFAULT_MIN_DELTA_NS,
            DEFAULT_MIN_RATIO,
            DEFAULT_THRESHOLD,
            OUTLIER_KINDS,
            find_outliers,
        )

        limit = DEFAULT_THRESHOLD if threshold is None else float(threshold)
        ratio = DEFAULT_MIN_RATIO if min_ratio is None else float(min_ratio)
        delta = DEFAULT_MIN_DELTA_NS if min_delta_ns is None else float(min_delta_ns)
        wanted = OUTLIER_KINDS if kinds is None else resolve_kinds(kinds, OUTLIER_KINDS)
        module = np if xp is None else xp
        return self._set_value(
            ("outliers", limit, wanted, module.__name__, ratio, delta),
            lambda snap: find_outliers(
                list(snap.reports),
                limit,
                wanted,
                module,
                projection=snap.projection_of,
                min_ratio=ratio,
                min_delta_ns=delta,
            ),  # fmt: skip
        )

    def derived(self, key: Hashable, compute: Callable[[ReportSet], object]) -> object:
        """Return a value over the whole set, ``compute(snapshot)``, computed once per
        membership (dropped when a report is added or removed), as the set's own values are.

        For analyses above the set (e.g. :func:`analysis.rules.findings.set_findings`) that
        the set must not import. ``key`` names the value; use a tuple starting with a name
        of your module.
        """
        return self._set_value(("derived", key), compute)

    # -- the notebook API -----------------------------------------------------------------

    def events(self, kind: str = "kernels") -> pd.DataFrame:
        """Return every event of ``kind`` of every report, one row each, named.

        Parameters
        ----------
        kind
            One of :data:`EVENT_KINDS`, as :func:`analysis.kinds.resolve_kind` reads it
            (``kernel`` means ``kernels``).

        Returns
        -------
        pandas.DataFrame
            ``report`` (str, :attr:`labels`), ``name`` (str, spelled as the stats tables
            spell it), ``start``, ``end``, ``duration`` (int64 ns, the report's own time
            base), then the kind's columns: ``device``, ``stream``, ``context``, ``pid``,
            ``correlation_id``… for GPU work; ``pid``, ``tid`` for CPU-side events; ids of
            names are resolved to strings. In report order, then time order.

        Raises
        ------
        AnalysisError
            Unknown kind.
        """
        from strata.analysis.event_frames import event_frame

        wanted = resolve_kind(kind, EVENT_KINDS)
        snap = self.snapshot()
        frames = [
            event_frame(r, wanted, snap.projection(r) if wanted == "nvtx_gpu" else None)
            for r in snap.reports
        ]
        return with_report(frames, snap.labels, always=True)

    def summary(
        self,
        name: str,
        window: tuple[int | None, int | None] | None = None,
        rows: Sequence[str] | None = None,
        **options,
    ) -> pd.DataFrame:
        """Return per-name statistics: the one stats entry (:mod:`analysis.summary`).

        Memoised per membership, ``name``, ``window``, ``rows`` and options; the strategy
        (window index, one-shot aggregate, area, column engine) is chosen by
        :func:`analysis.summary.choose_strategy`, and named in ``attrs["strategy"]`` for a
        panel kind. The frame returned is the caller's own (a copy of the memoised one).

        Parameters
        ----------
        name
            An nsys summary and its options (``cuda_gpu_kern_sum:base``, nsys's filters
            ``nvtx_sum:start=NS:end=NS``...): its CSV table (:meth:`stats`); or a panel kind
            (:data:`analysis.window_stats.WINDOW_KINDS`, e.g. ``kernels``): the per-name
            table of :meth:`window`.
        window
            ``(start_ns, end_ns)`` on the shared axis (report time + :meth:`offsets_ns`),
            either None for unbounded; None: the whole run. For a summary, nsys's
            ``start=``/``end=`` filter in each report's time.
        rows
            Track keys of an area selection (a panel kind only): only their events.
        **options
            ``timeunit`` (a summary's, default ``nsec``); for a panel kind ``offsets_ns``
            (default :meth:`offsets_ns`), ``report_index`` (one report), ``by_report``,
            ``xp`` (``numpy`` or ``cupy``), ``build`` (False: never wait for the window
            index, answer one-shot while it is not built), ``tracks`` (where ``rows`` are
            looked up; default :meth:`tracks`), ``cancel`` (a :class:`threading.Event`).

        Raises
        ------
        AnalysisError
            Unknown summary, kind or option; rows for a summary.
        """
        from strata.analysis.summary import set_summary

        return set_summary(self, name, window, rows, **options)

    def stats(
        self,
        name: str,
        timeunit: str = "nsec",
        filter_time: str | None = None,
        filter_nvtx: str | None = None,
    ) -> pd.DataFrame:
        """Return an nsys stats summary, as ``strata stats -f csv -r NAME`` prints it.

        Parameters
        ----------
        name
            A summary and its options, e.g. ``cuda_gpu_kern_sum``, ``cuda_gpu_kern_sum:base``,
            ``cuda_gpu_kern_sum:mangled``, ``cuda_gpu_kern_sum:nvtx-name``, or nsys's filter
            options ``nvtx_sum:start=NS:end=NS`` (``strata stats --help-reports`` lists them).
        timeunit
            ``nsec`` (default), ``usec``, ``msec`` or ``seconds``, as ``--timeunit``.
        filter_time
            ``--filter-time [START]/[END]``: only events overlapping that window (ns, or
            with units: ``1s/2s``, ``/500ms``).
        filter_nvtx
            ``--filter-nvtx RANGE[@DOMAIN][/INDEX]``: only events overlapping that NVTX
            range (its first instance, or the INDEX-th) on its thread (push/pop) or process
            (start/end); wins over ``filter_time``.

        Returns
        -------
        pandas.DataFrame
            The columns and values of the CSV (headers with their units, e.g.
            ``Total Time (ns)``; sizes in MB); with several reports, a ``report`` column
            first. A report that lacks the data gives no rows (``frame.attrs["skipped"]``
            holds nsys's reason per report).

        Raises
        ------
        AnalysisError
            Unknown summary, option or time unit; a bad filter.
        """
        from strata.analysis.filterspec import with_filter
        from strata.analysis.stats.catalog import parse_spec
        from strata.analysis.stats.text import parse_timeunit

        unit = parse_timeunit(timeunit)
        name = with_filter([name], filter_time, filter_nvtx)[0]
        parse_spec(name)  # an unknown summary is refused as such, not read as a kind
        return self.summary(name, timeunit=unit)

    def window(
        self, start_ns: int | None, end_ns: int | None, kind: str = "kernels",
        by_report: bool | None = None,
    ) -> pd.DataFrame:  # fmt: skip
        """Return per-name statistics of the events overlapping ``[start_ns, end_ns)``.

        Parameters
        ----------
        start_ns, end_ns
            The window on the shared axis (report time + :meth:`offsets_ns`; with the
            default alignment, each report's own time); None is unbounded.
        kind
            One of :data:`analysis.window_stats.WINDOW_KINDS`, as
            :func:`analysis.kinds.resolve_kind` reads it (``kernel`` means ``kernels``).
        by_report
            One row per (report, name); default: when the set holds several reports.

        Returns
        -------
        pandas.DataFrame
            [``report``], ``name``, [``style``, NVTX kinds], ``count``, ``total_ns``,
            ``mean_ns``, ``median_ns``, ``min_ns``, ``max_ns``, ``std_ns``: every event that
            overlaps the window counts whole; sorted by ``total_ns`` descending.
        """
        split = len(self) > 1 if by_report is None else bool(by_report)
        kind = resolve_kind(kind, panel_kinds())
        frame = self.summary(kind, (start_ns, end_ns), by_report=split)
        frame.attrs.pop("strategy", None)
        return frame.drop(columns=["group", "key"], errors="ignore")


def open_reports(paths: str | Path | Iterable[str | Path], use_cache: bool = True) -> ReportSet:
    """Open reports and folders of reports into a :class:`ReportSet`.

    Parameters
    ----------
    paths
        Report files (``.sqlite``; ``.nsys-rep`` when ``nsys`` is installed) and folders
        (every report inside them, sorted); one path or several.
    use_cache
        Use (and fill) the columnar cache that makes the second open near-instant.

    Returns
    -------
    ReportSet

    Raises
    ------
    ReportError
        A path is not a report, is damaged, or cannot be read (the message says which).
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    return ReportSet(open_report(p, use_cache=use_cache) for p in find_reports(paths))
