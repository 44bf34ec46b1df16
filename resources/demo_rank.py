"""The state the demo simulation and its row writers share: one rank's trace, one step.

Kept apart from demo_trace (the simulation) and demo_events (the nsys rows it records) so
that neither has to import the other for its types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from strata.resources.demo_catalog import StepTemplate

__all__ = ["RankTrace", "SimulatorState", "StepState"]


def _is_array(value: object) -> bool:
    return isinstance(value, list) or (isinstance(value, np.ndarray) and value.ndim > 0)


@dataclass
class _Columns:
    """Appends column chunks; a scalar stands for a chunk of that value."""

    chunks: dict[str, list] = field(default_factory=dict)

    def add(self, **cols) -> None:
        n = max(len(v) if _is_array(v) else 1 for v in cols.values())
        for name, value in cols.items():
            chunk = value if _is_array(value) else (value, n)
            self.chunks.setdefault(name, []).append(chunk)

    def finish(self) -> dict[str, np.ndarray]:
        out = {}
        for name, parts in self.chunks.items():
            arrays = [np.full(p[1], p[0]) if isinstance(p, tuple) else np.asarray(p) for p in parts]
            out[name] = np.concatenate(arrays)
        return out


@dataclass
class RankTrace:
    """One rank's events, by SQLite table, columns named as nsys names them.

    String columns hold the strings themselves (``name``, ``text``...); the writer interns
    them. Times are global ns until :func:`simulate` shifts them to the rank's clock.
    """

    rank: int
    pid: int
    offset_ns: int
    tables: dict[str, _Columns] = field(default_factory=dict)
    gpu_slow: list[tuple[float, float]] = field(default_factory=list)
    step_spans: list[tuple[float, float]] = field(default_factory=list)
    main_sleeps: list[tuple[float, float]] = field(default_factory=list)
    loader_runs: list[tuple[float, float]] = field(default_factory=list)
    #: Start of each step's all-reduce kernel, global clock (not shifted).
    allreduce_starts: list[float] = field(default_factory=list)
    next_correlation: int = 1
    next_grid: int = 1
    nccl_start_ns: float = 0.0
    end_ns: float = 0.0
    columns: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)

    def shift(self, offset_ns: int) -> None:
        """Freeze the columns and move every time from the global clock to the rank's own."""
        for name, table in self.tables.items():
            cols = table.finish()
            for col in ("start", "end"):
                if col in cols:
                    t = np.round(cols[col] - offset_ns)
                    cols[col] = t if np.isnan(t).any() else t.astype(np.int64)
            self.columns[name] = cols
        self.gpu_slow = [(round(s - offset_ns), round(e - offset_ns)) for s, e in self.gpu_slow]
        self.step_spans = [(round(s - offset_ns), round(e - offset_ns)) for s, e in self.step_spans]
        self.end_ns -= offset_ns

    def table(self, name: str) -> _Columns:
        return self.tables.setdefault(name, _Columns())

    @property
    def main_tid(self) -> int:
        return self.pid

    def gtid(self, tid: int) -> int:
        return (1 << 48) | (self.pid << 24) | tid

    @property
    def gpid(self) -> int:
        return (1 << 48) | (self.pid << 24)

    @property
    def loader_tid(self) -> int:
        return self.pid + 37

    @property
    def nccl_tid(self) -> int:
        return self.pid + 52


@dataclass
class StepState:
    """Per-rank arrays of one step, CPU and GPU times of every template entry."""

    t0: float
    wait_ns: float
    a: np.ndarray
    api_end: np.ndarray
    gpu_start: np.ndarray
    gpu_end: np.ndarray
    ready_ns: float = 0.0


class SimulatorState(Protocol):
    """What the row writers read from the running simulation (demo_trace's ``_Simulator``)."""

    tpl: StepTemplate
    rngs: list[np.random.Generator]
    free: np.ndarray
    nccl_idx: int
    slow_idx: np.ndarray
    planted: dict[tuple[int, int], int]
