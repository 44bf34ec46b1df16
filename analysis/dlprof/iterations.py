"""Training iterations from a key node, and the ops and GPU work of a range of them.

spec: dlprof.md §7 (Strata's rule, DLProf's own being unpublished): the instances of the key
node (an NVTX range or op whose name is the key), sorted by end, cut the run; iteration k is
``(end of instance k-1, end of instance k]``, the first from the start of the profile. An op
belongs to the iteration its range starts in, GPU work to that of its launching call's start;
what starts after the last instance ends is in no iteration. Without a key node the whole
profile is iteration 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from strata.analysis.dlprof.ops import OpData
from strata.analysis.errors import AnalysisError
from strata.analysis.model import Report

__all__ = ["DEFAULT_KEY_NODES", "Iterations", "find_iterations", "select_iterations"]

#: Tried in order when no ``--key-node`` is given: torch.profiler's step ranges, then the
#: ``train_step`` range of Strata's demo and of many training loops, then an op named ``step``
#: (``optimizer.step()`` under DLProf's markers).
DEFAULT_KEY_NODES = ("ProfilerStep", "train_step", "step")


@dataclass(frozen=True)
class Iterations:
    """Where the iterations of one report lie.

    Attributes
    ----------
    key_node
        The key node used ('' when none: the profile is one iteration).
    asked
        The key node the user named ('' for the default).
    frame
        One row per iteration: ``iteration``, ``start_ns``, ``end_ns``, ``duration_ns``.
    ends_ns
        The key instances' ends, sorted (empty without a key node).
    """

    key_node: str
    asked: str
    frame: pd.DataFrame
    ends_ns: np.ndarray

    def of(self, times_ns: np.ndarray) -> np.ndarray:
        """Iteration of each time (-1 after the last key instance ended)."""
        times_ns = np.asarray(times_ns, dtype=np.int64)
        if not len(self.ends_ns):
            return np.zeros(len(times_ns), dtype=np.int64)
        it = np.searchsorted(self.ends_ns, times_ns, side="left").astype(np.int64)
        return np.where(it < len(self.ends_ns), it, -1)


def _key_matches(data: OpData, name: str) -> np.ndarray:
    tree = data.tree
    info = tree.info
    code = tree.text_code
    names = (info.node[code], tree.texts[code], info.label[code], info.op_type[code])
    hit = np.zeros(len(code), dtype=bool)
    for column in names:
        hit |= column == name
    return hit


def find_iterations(report: Report, data: OpData, key_node: str | None) -> Iterations:
    """Cut ``report`` into iterations at the ends of ``key_node`` (None: the defaults)."""
    lo, hi = report.span_ns()
    candidates = (key_node,) if key_node else DEFAULT_KEY_NODES
    for name in candidates:
        hit = _key_matches(data, name)
        if hit.any():
            ends = np.unique(data.tree.end_ns[hit])
            starts = np.r_[min(lo, int(ends[0])), ends[:-1]]
            frame = pd.DataFrame({"iteration": np.arange(len(ends)), "start_ns": starts,
                                  "end_ns": ends, "duration_ns": ends - starts})  # fmt: skip
            return Iterations(name, key_node or "", frame, ends)
    frame = pd.DataFrame({"iteration": [0], "start_ns": [lo], "end_ns": [hi],
                          "duration_ns": [hi - lo]})  # fmt: skip
    return Iterations("", key_node or "", frame, np.empty(0, np.int64))


def select_iterations(
    iterations: Iterations, iter_start: int | None, iter_stop: int | None, report: Report
) -> tuple[int, int]:
    """Return the (start, stop) iterations to aggregate, both included.

    Raises
    ------
    AnalysisError
        The range is empty or outside the report's iterations.
    """
    count = len(iterations.frame)
    start = 0 if iter_start is None else int(iter_start)
    stop = count - 1 if iter_stop is None else int(iter_stop)
    if not 0 <= start < count or not 0 <= stop < count:
        bad = f"--iter-start {start}" if not 0 <= start < count else f"--iter-stop {stop}"
        raise AnalysisError(
            f"{report.name}: {bad} is outside its iterations 0..{count - 1} "
            f"(key node {iterations.key_node or 'none'!r})"
        )
    if stop < start:
        raise AnalysisError(f"--iter-stop {stop} is before --iter-start {start}")
    return start, stop
