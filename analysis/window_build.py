"""The window index's threaded build: the ranked indexes of several reports side by side.

:func:`analysis.window_stats.build_window_index` hands NumPy builds to :class:`RankedBuild`:
reports on threads (NumPy releases the GIL in its loops), or one report's levels in parts,
with the group codes given in report order whatever order the threads run in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor

import numpy as np

from strata.analysis._sqlfile import usable_cores
from strata.analysis.errors import CancelledError
from strata.analysis.kinds import PanelRows, Projector, panel_rows
from strata.analysis.model import Report
from strata.analysis.progress import Progress
from strata.analysis.window_ranked import RankedReport, fits_ranked

__all__ = ["RankedBuild", "check_cancel", "group_codes"]


def check_cancel(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise CancelledError("indexing cancelled")


class RankedBuild:
    """The ranked indexes of several reports, built on threads (NumPy releases the GIL in
    its loops): several reports at once, or one report's levels in parts.

    Group codes are given in report order whatever order the threads run in (each report
    waits for its turn to code its names, a loop over names), so the index is the one a
    serial build gives. :meth:`run` returns None when a report has a value outside
    ``[0, 2**48)`` (``fits``, default :func:`~analysis.window_ranked.fits_ranked`, says no:
    the caller then indexes sorted values).
    """

    def __init__(self, reports: Sequence[Report], kind: str, project: Projector,
                 progress: Progress | None, cancel: threading.Event | None,
                 threads: int | None,
                 fits: Callable[[np.ndarray], bool] = fits_ranked) -> None:  # fmt: skip
        self.reports, self.kind, self.project = list(reports), kind, project
        self.fits = fits
        self.progress, self.cancel = progress, cancel
        self.threads = max(1, threads if threads is not None else usable_cores())
        self.groups: dict[tuple, int] = {}
        self.shown: list[object] = []
        self.tables: tuple[str, ...] = (kind,)
        self.has_style = False
        self._turn = 0
        self._fits = True
        self._failed = False
        self._error: BaseException | None = None
        self._done = [0.0] * len(self.reports)
        self._lock = threading.Condition()

    def run(self) -> list[RankedReport] | None:
        n = len(self.reports)
        at_once = min(self.threads, n)
        try:
            with ThreadPoolExecutor(self.threads, thread_name_prefix="strata-index") as pool:
                if at_once <= 1:  # one report (or one thread): its levels in parts
                    parts = self.threads
                    return self._all([self._build(i, pool if parts > 1 else None, parts)
                                      for i in range(n)])  # fmt: skip
                return self._all(list(pool.map(lambda i: self._build(i, None, 1), range(n))))
        except BaseException:
            check_cancel(self.cancel)
            if not self._fits:  # the others stopped for it: sorted values instead
                return None
            if self._error is not None:
                raise self._error from None  # what stopped the others, not their stop
            raise

    def _all(self, built: list[RankedReport | None]) -> list[RankedReport] | None:
        return built if self._fits else None

    def _build(self, i: int, pool: Executor | None, parts: int) -> RankedReport | None:
        error: BaseException | None = None
        try:
            check_cancel(self.cancel)
            part = panel_rows(self.reports[i], self.kind, None, self.project)
        except BaseException as exc:  # noqa: BLE001 - re-raised once the next report may go
            error = exc
        with self._lock:
            self._lock.wait_for(lambda: self._turn == i)
            try:
                if error is None and self._fits and not self.fits(part.values):
                    self._fits = False
                if error is None and self._fits:
                    self.tables = part.tables if i == 0 else self.tables
                    self.has_style = self.has_style or part.styles is not None
                    group_codes(part, self.groups, self.shown)
                    n_groups = len(self.groups)
            finally:
                self._turn += 1
                self._lock.notify_all()
        if error is not None:
            self._stop(error)
            raise error
        if not self._fits:
            return None
        try:
            return RankedReport.build(part, part.codes, n_groups, pool, parts,
                                      lambda fraction: self._step(i, fraction))  # fmt: skip
        except BaseException as exc:
            self._stop(exc)
            raise

    def _stop(self, error: BaseException) -> None:
        """Stop the other reports at their next step; keep the first error that is not
        such a stop."""
        with self._lock:
            if self._error is None and not self._failed:
                self._error = error
            self._failed = True

    def _step(self, i: int, fraction: float) -> None:
        check_cancel(self.cancel)
        if self._failed or not self._fits:
            raise CancelledError("indexing stopped: another report failed or cannot be ranked")
        if self.progress is None:
            return
        with self._lock:  # under the lock: the fractions reported only grow
            self._done[i] = fraction
            self.progress(sum(self._done) / len(self._done), "")


def group_codes(part: PanelRows, groups: dict[tuple, int], shown: list[object]) -> None:
    """Key ``part``'s groups by (full name, style) in ``groups`` (one table for every report;
    new ones get the next codes) and recode ``part.codes`` to them (a loop over names)."""
    # Only groups that occur (a string pool can hold 10^5 names; bincount is one pass).
    used = np.flatnonzero(np.bincount(part.codes, minlength=len(part.keys)))
    local = np.full(len(part.keys), -1, dtype=np.int64)
    for i in used.tolist():
        style = part.styles[i] if part.styles is not None else None
        key = part.keys[i]
        key = None if key is None or key != key else key  # NaN from the pool
        if (key, style) not in groups:
            groups[(key, style)] = len(groups)
            shown.append(part.labels[i])
        local[i] = groups[(key, style)]
    part.codes = local[part.codes] if len(part.codes) else part.codes
