"""Simulate the demo's data-parallel training run: every rank's events as NumPy columns.

All ranks are simulated together on one global clock (ns since rank 0's session start),
because the all-reduce couples them: each rank's NCCL kernel starts when its own backward
pass is done and ends when the slowest rank's is done plus the transfer. Each rank's
timestamps are then shifted to its own session start (a few µs apart).

GPU streams are filled with the max-plus recurrence ``start_i = max(arrive_i,
end_{i-1} + gap)``, solved without a loop over kernels as
``start = P + maximum.accumulate(arrive - P)`` where ``P`` is the exclusive prefix sum of
``duration + gap``.
"""

from __future__ import annotations

import numpy as np

from strata.resources import demo_catalog as cat
from strata.resources import demo_events as ev
from strata.resources.demo_rank import RankTrace, StepState

__all__ = [
    "LATE_NS",
    "LATE_RANK",
    "LATE_STEPS",
    "PLANTED_SLOW",
    "SLOW_FACTOR",
    "SLOW_KERNEL_KEY",
    "STRAGGLER_FACTOR",
    "STRAGGLER_RANK",
    "simulate",
]

STRAGGLER_RANK = 2
STRAGGLER_FACTOR = 1.30
SLOW_KERNEL_KEY = "ln_fwd"
SLOW_FACTOR = 10
#: (rank, step, n-th launch of the slow kernel within that step)
PLANTED_SLOW = ((0, 5, 3), (1, 17, 10), (3, 26, 0), (0, 33, 21))
#: In these steps rank LATE_RANK's all-reduce kernel starts LATE_NS late (a delayed launch):
#: it, not the throttled STRAGGLER_RANK, is the last to arrive, and the others wait for it.
LATE_RANK = 1
LATE_STEPS = (11, 29)
LATE_NS = 20_000_000

_US = 1000
_MS = 1_000_000
_JITTER_SIGMA = 0.04
_NCCL_TRANSFER_NS = 3_500_000


def _chain(arrive: np.ndarray, dur: np.ndarray, gap: np.ndarray, free_ns: float):
    """Start and end of work queued on one stream, in order (module docstring)."""
    arrive = arrive.astype(np.float64)
    arrive[0] = max(arrive[0], free_ns)
    inc = dur + gap
    prefix = np.concatenate([[0.0], np.cumsum(inc)[:-1]])
    start = prefix + np.maximum.accumulate(arrive - prefix)
    return start, start + dur


class _Simulator:
    """Steps every rank through the run; rank-local state lives in arrays indexed by rank."""

    def __init__(self, ranks: int, steps: int, seed: int) -> None:
        self.ranks, self.steps, self.seed = ranks, steps, seed
        self.tpl = cat.step_template()
        self.rngs = [np.random.default_rng([seed, r]) for r in range(ranks)]
        self.shared_rng = np.random.default_rng([seed, 10_000])
        self.traces = [
            RankTrace(r, 48_213 + 7 * r, r * 3_100 + int(self.rngs[r].integers(0, 900)))
            for r in range(ranks)
        ]
        tpl = self.tpl
        self.is_gpu = np.isin(tpl.op, (cat.OP_KERNEL, cat.OP_MEMCPY, cat.OP_MEMSET))
        self.nccl_idx = int(np.flatnonzero(tpl.kernel == list(cat.KERNELS).index("nccl"))[0])
        self.slow_idx = np.flatnonzero(tpl.kernel == list(cat.KERNELS).index(SLOW_KERNEL_KEY))
        before = np.arange(len(tpl)) < self.nccl_idx
        s7 = self.is_gpu & (tpl.stream == cat.STREAM_COMPUTE)
        self.s7_pre = np.flatnonzero(s7 & before)
        self.s7_post = np.flatnonzero(s7 & ~before)
        self.s13 = np.flatnonzero(self.is_gpu & (tpl.stream == cat.STREAM_BACKWARD))
        self.free = np.zeros((ranks, 3))  # stream 7, 13, 17 free-at, global ns
        self.planted = {(r, s): n for r, s, n in PLANTED_SLOW if r < ranks and s < steps}

    # ----------------------------------------------------------------- CPU side
    def _cpu_calls(self, rng: np.random.Generator, launch0: float):
        tpl = self.tpl
        base = np.select(
            [tpl.op == cat.OP_MEMCPY, tpl.op == cat.OP_NONE, tpl.op == cat.OP_WAIT],
            [9.0, 1.8, 2.1],
            4.2,
        )
        base[self.nccl_idx] = 6.0
        api_dur = base * _US * rng.uniform(0.8, 1.5, len(tpl))
        idle = np.where(np.isin(tpl.op, (cat.OP_NONE, cat.OP_WAIT)), 2.0, 11.0) * _US
        idle = idle * rng.uniform(0.6, 1.6, len(tpl))
        idle[1:][np.diff(tpl.phase) != 0] += 55 * _US  # python between phases
        gaps = np.concatenate([[0.0], api_dur[:-1] + idle[1:]])
        a = launch0 + np.cumsum(gaps)
        return a, api_dur

    def _durations(self, rank: int, step: int, rng: np.random.Generator) -> np.ndarray:
        tpl = self.tpl
        dur = tpl.nominal_ns * rng.lognormal(0.0, _JITTER_SIGMA, len(tpl))
        if rank == STRAGGLER_RANK:
            throttled = (tpl.op == cat.OP_KERNEL) & (np.arange(len(tpl)) != self.nccl_idx)
            dur[throttled] *= STRAGGLER_FACTOR
        if (rank, step) in self.planted:
            idx = self.slow_idx[self.planted[(rank, step)]]
            dur[idx] = tpl.nominal_ns[idx] * SLOW_FACTOR
        return np.where(self.is_gpu, np.round(dur), 0.0)

    # ----------------------------------------------------------------- one step
    def _before_allreduce(self, rank: int, step: int, t0: float) -> StepState:
        rng, tpl = self.rngs[rank], self.tpl
        slow_batch = rng.random() < 0.06
        wait = rng.uniform(2.0, 5.0) * _MS if slow_batch else rng.uniform(30, 400) * _US
        a, api_dur = self._cpu_calls(rng, t0 + 8 * _US + wait + rng.uniform(20, 60) * _US)
        dur = self._durations(rank, step, rng)
        lat = rng.uniform(3, 8, len(tpl)) * _US
        gap = rng.uniform(1.2, 2.5, len(tpl)) * _US
        gs, ge = np.zeros(len(tpl)), np.zeros(len(tpl))
        i7 = self.s7_pre
        gs[i7], ge[i7] = _chain(a[i7] + lat[i7], dur[i7], gap[i7], self.free[rank, 0] + _US)
        i13 = self.s13
        arrive = np.maximum(a[i13] + lat[i13], ge[tpl.depends_on[i13]] + 1.5 * _US)
        gs[i13], ge[i13] = _chain(arrive, dur[i13], gap[i13], self.free[rank, 1] + _US)
        state = StepState(t0, wait, a, a + api_dur, gs, ge)
        n = self.nccl_idx
        state.ready_ns = max(a[n] + lat[n], ge[i7].max(), ge[i13].max(), self.free[rank, 2])
        state.ready_ns += rng.uniform(3, 9) * _US
        if rank == LATE_RANK and step in LATE_STEPS:
            state.ready_ns += LATE_NS
        return state

    def _after_allreduce(self, rank: int, st: StepState, nccl_end: float) -> float:
        rng, tpl = self.rngs[rank], self.tpl
        n = self.nccl_idx
        st.gpu_start[n], st.gpu_end[n] = st.ready_ns, nccl_end + rng.uniform(0, 6) * _US
        i7 = self.s7_post
        dur = self._durations(rank, -1, rng)[i7]
        gap = rng.uniform(1.2, 2.5, len(i7)) * _US
        arrive = st.a[i7] + rng.uniform(3, 8, len(i7)) * _US
        arrive[0] = max(arrive[0], st.gpu_end[n] + 2 * _US)
        st.gpu_start[i7], st.gpu_end[i7] = _chain(arrive, dur, gap, st.gpu_end[self.s7_pre[-1]])
        sync = len(tpl) - 1
        done = st.gpu_end[i7[-1]] + rng.uniform(3, 6) * _US
        st.api_end[sync] = max(st.api_end[sync], done)
        self.free[rank] = [st.gpu_end[i7[-1]], st.gpu_end[self.s13[-1]], st.gpu_end[n]]
        return st.api_end[sync] + rng.uniform(5, 15) * _US

    def run(self) -> list[RankTrace]:
        """Simulate start-up and every step; return the traces on each rank's own clock."""
        enter = [ev.startup(self, tr) for tr in self.traces]
        done = max(enter) + 42 * _MS * self.shared_rng.uniform(0.9, 1.1)
        t_cpu = np.array([ev.nccl_init(self, tr, enter[tr.rank], done) for tr in self.traces])
        self.free[:, 1:] = t_cpu[:, None]
        for step in range(self.steps):
            states = [self._before_allreduce(r, step, t_cpu[r]) for r in range(self.ranks)]
            transfer = _NCCL_TRANSFER_NS * self.shared_rng.lognormal(0.0, _JITTER_SIGMA)
            nccl_end = max(s.ready_ns for s in states) + transfer
            for r, st in enumerate(states):
                self.traces[r].allreduce_starts.append(st.ready_ns)
                step_end = self._after_allreduce(r, st, nccl_end)
                ev.record_step(self, self.traces[r], step, st, step_end)
                t_cpu[r] = step_end + self.rngs[r].uniform(40, 120) * _US
        for trace in self.traces:
            ev.finish(self, trace, float(t_cpu[trace.rank]))
        return self.traces


def simulate(ranks: int, steps: int, seed: int) -> list[RankTrace]:
    """Return every rank's trace (deterministic for a seed).

    Raises
    ------
    ValueError
        ``ranks`` or ``steps`` is below 1.
    """
    if ranks < 1 or steps < 1:
        raise ValueError(f"the demo needs at least 1 rank and 1 step, not {ranks} and {steps}")
    return _Simulator(ranks, steps, seed).run()
