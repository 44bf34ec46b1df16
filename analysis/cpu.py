"""CPU-core occupancy: turn SCHED_EVENTS context switches into per-core run intervals.

spec: nsys-sqlite.md §1.7 — a thread runs from an ``isSchedIn != 0`` row to its next row of
the same thread. Vectorised: one lexsort by (thread, time), a shifted comparison, one more
sort by (core, time).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from strata.analysis.model import Report, freeze

__all__ = ["CoreIntervals", "core_intervals", "thread_intervals"]


@dataclass(frozen=True)
class CoreIntervals:
    """Run intervals of threads on CPU cores, sorted by ``(cpu, start_ns)``.

    Attributes
    ----------
    cpu
        Core number per interval (int32).
    start_ns, end_ns
        Interval bounds (int64 ns, session time base); intervals on one core never overlap.
    global_tid
        The thread that ran (int64).
    cores
        The distinct core numbers, ascending (int32).
    """

    cpu: npt.NDArray[np.int32]
    start_ns: npt.NDArray[np.int64]
    end_ns: npt.NDArray[np.int64]
    global_tid: npt.NDArray[np.int64]
    cores: npt.NDArray[np.int32]

    def __len__(self) -> int:
        return len(self.start_ns)


def core_intervals(report: Report) -> CoreIntervals:
    """Return the run intervals of every thread on every core of ``report``.

    A sched-in row opens an interval that ends at the thread's next scheduling row (normally
    its sched-out). A sched-in without a later row of the same thread is dropped: the
    report does not say when it stopped. Overlaps on one core (lost events) are clipped so
    that an interval ends no later than the next one on that core starts.

    Parameters
    ----------
    report
        A loaded report; an empty ``sched`` table gives empty intervals.

    Returns
    -------
    CoreIntervals
    """
    sched = report.tables["sched"]
    start = sched["start_ns"]
    gtid = sched["global_tid"]
    cpu = sched["cpu"]
    if len(start) == 0:
        return _empty()
    # A thread's sched-out and its next sched-in can share a timestamp: out comes first (as
    # nsys writes them), whatever order the rows are stored in.
    order = np.lexsort((sched["row_id"], sched["is_sched_in"], start, gtid))
    s_start, s_gtid, s_cpu = start[order], gtid[order], cpu[order]
    s_in = sched["is_sched_in"][order] != 0
    has_next = np.zeros(len(order), dtype=bool)
    has_next[:-1] = s_gtid[:-1] == s_gtid[1:]
    opens = np.flatnonzero(s_in & has_next)
    run_start = s_start[opens]
    run_end = s_start[opens + 1]
    run_cpu = s_cpu[opens].astype(np.int32)
    run_gtid = s_gtid[opens]
    by_core = np.lexsort((run_start, run_cpu))
    run_start, run_end = run_start[by_core], run_end[by_core]
    run_cpu, run_gtid = run_cpu[by_core], run_gtid[by_core]
    # Clip an interval at the next start on the same core (a lost sched-out).
    same_core_next = np.zeros(len(run_start), dtype=bool)
    same_core_next[:-1] = run_cpu[:-1] == run_cpu[1:]
    next_start = np.empty_like(run_start)
    next_start[:-1] = run_start[1:]
    next_start[-1:] = run_end[-1:]
    run_end = np.where(same_core_next, np.minimum(run_end, next_start), run_end)
    return CoreIntervals(
        cpu=freeze(run_cpu),
        start_ns=freeze(run_start),
        end_ns=freeze(np.maximum(run_end, run_start)),
        global_tid=freeze(run_gtid),
        cores=freeze(np.unique(run_cpu)),
    )


def thread_intervals(report: Report) -> CoreIntervals:
    """Return the run intervals of :func:`core_intervals` sorted by ``(global_tid, start_ns)``.

    What a thread's "thread state" row draws: running on ``cpu`` inside an interval, not
    running (waiting, sleeping, preempted) between them. A thread runs on one core at a
    time, so one thread's intervals never overlap.
    """
    runs = core_intervals(report)
    order = np.lexsort((runs.start_ns, runs.global_tid))
    return CoreIntervals(
        cpu=freeze(runs.cpu[order]),
        start_ns=freeze(runs.start_ns[order]),
        end_ns=freeze(runs.end_ns[order]),
        global_tid=freeze(runs.global_tid[order]),
        cores=runs.cores,
    )


def _empty() -> CoreIntervals:
    return CoreIntervals(
        cpu=freeze(np.empty(0, np.int32)),
        start_ns=freeze(np.empty(0, np.int64)),
        end_ns=freeze(np.empty(0, np.int64)),
        global_tid=freeze(np.empty(0, np.int64)),
        cores=freeze(np.empty(0, np.int32)),
    )
