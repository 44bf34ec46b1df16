"""Background jobs: run an ``analysis`` callable on a worker thread, report back by signal.

A job's callable is called as ``func(progress, cancel)`` on a ``QThreadPool`` worker, where
``progress(fraction, text)`` forwards to the job's :attr:`Job.progressed` signal,
``progress.publish(value)`` hands an intermediate result to :attr:`Job.published` (a partial
report while the rest loads), and ``cancel`` is the job's ``threading.Event``. Its return
value arrives as :attr:`Job.finished`, an exception as :attr:`Job.failed`; all are delivered
on the GUI thread, in the order the worker sent them. Jobs submitted on the same *channel*
supersede each other: only the newest request of a channel delivers its result, older ones
are cancelled and their results dropped (style.md §2, request ids). Loads run on a pool of
their own, so that the short jobs that draw what a load hands over (layouts, offsets,
window statistics) never wait behind the loads of other reports.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

__all__ = ["Job", "JobFunc", "JobProgress", "JobRunner"]

log = logging.getLogger(__name__)

#: ``func(progress, cancel) -> result``
JobFunc = Callable[[Callable[[float, str], None], threading.Event], Any]


class Job(QObject):
    """Handle of one submitted job: its signals, its request id and its cancel event.

    Signals
    -------
    progressed(float, str)
        Fraction done in [0, 1] and a short text, as the callable reported it.
    published(object)
        An intermediate result the callable handed over with ``progress.publish``
        (not emitted once the job is superseded or cancelled).
    finished(object)
        The callable's return value (not emitted when the job was superseded or cancelled).
    failed(object)
        The exception the callable raised (not emitted when superseded or cancelled).
    """

    progressed = Signal(float, str)
    published = Signal(object)
    finished = Signal(object)
    failed = Signal(object)

    def __init__(self, request_id: int, channel: str | None, parent: QObject | None = None):
        super().__init__(parent)
        self.request_id = request_id
        self.channel = channel
        self.cancel_event = threading.Event()
        self.is_done = False

    def cancel(self) -> None:
        """Ask the callable to stop; its result, if any, is dropped."""
        self.cancel_event.set()

    @property
    def is_cancelled(self) -> bool:
        return self.cancel_event.is_set()


class _Relay(QObject):
    """Lives on the GUI thread; the worker emits these, Qt queues them to the GUI thread."""

    progressed = Signal(int, float, str)
    published = Signal(int, object)
    succeeded = Signal(int, object)
    errored = Signal(int, object)


class _Worker(QRunnable):
    def __init__(self, job_id: int, func: JobFunc, cancel: threading.Event, relay: _Relay):
        super().__init__()
        self.setAutoDelete(True)
        self._job_id = job_id
        self._func = func
        self._cancel = cancel
        self._relay = relay

    def run(self) -> None:  # QRunnable's own name
        progress = JobProgress(self._job_id, self._relay)
        try:
            result = self._func(progress, self._cancel)
        except Exception as exc:  # noqa: BLE001 - the job runner forwards every error (style §6)
            if not isinstance(exc, _expected_errors()):
                log.exception("job %d failed with an unexpected error", self._job_id)
            self._relay.errored.emit(self._job_id, exc)
        else:
            self._relay.succeeded.emit(self._job_id, result)


class JobProgress:
    """The ``progress`` a job's callable gets: ``progress(fraction, text)`` reports how far it
    is; ``progress.publish(value)`` hands over an intermediate result (both thread-safe)."""

    def __init__(self, job_id: int, relay: _Relay) -> None:
        self._job_id = job_id
        self._relay = relay

    def __call__(self, fraction: float, text: str = "") -> None:
        self._relay.progressed.emit(self._job_id, float(fraction), str(text))

    def publish(self, value: object) -> None:
        """Deliver ``value`` as the job's :attr:`Job.published` on the GUI thread."""
        self._relay.published.emit(self._job_id, value)


def _expected_errors() -> tuple[type[BaseException], ...]:
    from strata.analysis.errors import StrataError

    return (StrataError,)


class JobRunner(QObject):
    """Run callables on a private thread pool and deliver their outcome on the GUI thread.

    Parameters
    ----------
    max_threads
        Worker threads; ``None`` keeps Qt's default (the number of CPU cores).
    """

    def __init__(self, parent: QObject | None = None, max_threads: int | None = None):
        super().__init__(parent)
        self._pool = QThreadPool(self)
        # Long jobs (loads): as many at once as short ones, on threads of their own.
        self._long_pool = QThreadPool(self)
        if max_threads is not None:
            self._pool.setMaxThreadCount(max_threads)
        self._long_pool.setMaxThreadCount(self._pool.maxThreadCount())
        self._ids = itertools.count(1)
        self._jobs: dict[int, Job] = {}
        self._latest: dict[str, int] = {}
        self._relay = _Relay(self)
        self._relay.progressed.connect(self._on_progressed)
        self._relay.published.connect(self._on_published)
        self._relay.succeeded.connect(self._on_succeeded)
        self._relay.errored.connect(self._on_errored)

    def submit(self, func: JobFunc, channel: str | None = None, long: bool = False) -> Job:
        """Start ``func(progress, cancel)`` on a worker and return its :class:`Job`.

        A job on a ``channel`` supersedes the running job of that channel: the older one is
        cancelled and whatever it returns is dropped. A ``long`` job (a report's load, which
        holds its worker for seconds to minutes) runs on the pool of long jobs: with two
        cores, two loads no longer leave the layout of their partial reports queued until
        one of them ends.
        """
        job = Job(next(self._ids), channel, self)
        if channel is not None:
            older = self._jobs.get(self._latest.get(channel, -1))
            if older is not None:
                older.cancel()
            self._latest[channel] = job.request_id
        self._jobs[job.request_id] = job
        pool = self._long_pool if long else self._pool
        pool.start(_Worker(job.request_id, func, job.cancel_event, self._relay))
        return job

    def active_jobs(self) -> list[Job]:
        """Return the jobs that have not delivered their outcome yet."""
        return list(self._jobs.values())

    def cancel_all(self) -> None:
        """Cancel every job; their outcomes are dropped."""
        for job in self._jobs.values():
            job.cancel()

    def wait_for_done(self, timeout_ms: int = -1) -> bool:
        """Block until the workers are idle (for shutdown and tests); return whether they are."""
        if timeout_ms < 0:
            return self._long_pool.waitForDone(-1) and self._pool.waitForDone(-1)
        deadline = time.monotonic() + timeout_ms / 1000
        if not self._long_pool.waitForDone(timeout_ms):
            return False
        left = max(0, int((deadline - time.monotonic()) * 1000))
        return self._pool.waitForDone(left)

    def _is_current(self, job: Job) -> bool:
        if job.is_cancelled:
            return False
        return job.channel is None or self._latest.get(job.channel) == job.request_id

    def _take(self, job_id: int) -> Job | None:
        job = self._jobs.pop(job_id, None)
        if job is None:
            return None
        job.is_done = True
        if not self._is_current(job):
            log.debug("dropping the outcome of stale job %d", job_id)
            job.deleteLater()
            return None
        return job

    @Slot(int, float, str)
    def _on_progressed(self, job_id: int, fraction: float, text: str) -> None:
        job = self._jobs.get(job_id)
        if job is not None and self._is_current(job):
            job.progressed.emit(fraction, text)

    @Slot(int, object)
    def _on_published(self, job_id: int, value: object) -> None:
        job = self._jobs.get(job_id)
        if job is not None and self._is_current(job):
            job.published.emit(value)

    @Slot(int, object)
    def _on_succeeded(self, job_id: int, result: object) -> None:
        job = self._take(job_id)
        if job is not None:
            job.finished.emit(result)
            job.deleteLater()

    @Slot(int, object)
    def _on_errored(self, job_id: int, error: object) -> None:
        job = self._take(job_id)
        if job is not None:
            job.failed.emit(error)
            job.deleteLater()
