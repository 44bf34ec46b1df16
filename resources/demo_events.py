"""Turn the demo simulation into nsys rows: CUDA API, GPU activity, NVTX, OS runtime, CPU.

Strings are interned once in :data:`STRINGS` (the same ids in every rank's report), so event
columns hold integer ids and are built with lookup arrays, not per-event Python.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from strata.resources import demo_catalog as cat
from strata.resources.demo_rank import RankTrace, SimulatorState, StepState

__all__ = ["STRINGS", "finish", "nccl_init", "record_step", "startup", "string_id"]

_US = 1000
_MS = 1_000_000

_OSRT = ("pthread_cond_wait", "pthread_cond_signal", "read", "ioctl", "poll", "open64")
_OSRT += ("close", "mmap64", "socket", "connect")
_INIT_API = ("cudaFree_v3020", "cudaStreamCreateWithPriority_v5050", "cudaMalloc_v3020")
_INIT_API += ("cudaHostAlloc_v3020", "cudaMemcpy_v3020")
THREAD_NAMES = ("python3", "data_loader", "nccl_progress")
_NCCL_TEXTS = ("ncclCommInitRank", "ncclAllReduce")


def _all_strings() -> tuple[str, ...]:
    names: list[str] = [*cat.API_NAMES, *_INIT_API, *_OSRT, *THREAD_NAMES, *_NCCL_TEXTS]
    for k in cat.KERNELS.values():
        names += [k.demangled, k.short] + ([k.mangled] if k.mangled else [])
    return tuple(dict.fromkeys(names))


#: Every string of the demo reports; the StringIds id of ``STRINGS[i]`` is ``i + 1``.
STRINGS = _all_strings()
_ID = {s: i + 1 for i, s in enumerate(STRINGS)}


def string_id(text: str) -> int:
    """Return the StringIds id of ``text``."""
    return _ID[text]


@cache
def _kernel_ids() -> dict[str, np.ndarray]:
    """Kernel index -> string ids and launch shape, as lookup arrays."""
    ks = list(cat.KERNELS.values())
    return {
        "demangledName": np.array([_ID[k.demangled] for k in ks]),
        "shortName": np.array([_ID[k.short] for k in ks]),
        "mangledName": np.array([_ID[k.mangled] if k.mangled else -1 for k in ks]),
        "registersPerThread": np.array([k.registers for k in ks]),
        "staticSharedMemory": np.array([k.static_smem_bytes for k in ks]),
        "dynamicSharedMemory": np.array([k.dynamic_smem_bytes for k in ks]),
        **{f"grid{a}": np.array([k.grid[i] for k in ks]) for i, a in enumerate("XYZ")},
        **{f"block{a}": np.array([k.block[i] for k in ks]) for i, a in enumerate("XYZ")},
    }


@cache
def _runs(phase: tuple[int, ...], layer: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """Start index of each run of equal (phase, layer) and of equal phase in the template."""
    p, lay = np.array(phase), np.array(layer)
    layer_runs = np.flatnonzero(np.r_[True, (np.diff(p) != 0) | (np.diff(lay) != 0)])
    phase_runs = np.flatnonzero(np.r_[True, np.diff(p) != 0])
    return layer_runs, phase_runs


# --------------------------------------------------------------------------- shared helpers
def _api(tr: RankTrace, names, start, end) -> np.ndarray:
    """Record main-thread CUDA runtime calls; return their correlation ids."""
    n = len(start)
    corr = tr.next_correlation + np.arange(n)
    tr.next_correlation += n
    tr.table("CUPTI_ACTIVITY_KIND_RUNTIME").add(
        start=start, end=end, eventClass=0, globalTid=tr.gtid(tr.main_tid),
        correlationId=corr, nameId=names, returnValue=0,
    )  # fmt: skip
    return corr


def _osrt(tr: RankTrace, tid: int, name: str | np.ndarray, start, end) -> None:
    names = np.vectorize(_ID.get)(name) if not isinstance(name, str) else _ID[name]
    tr.table("OSRT_API").add(
        start=start, end=end, eventClass=27, globalTid=tr.gtid(tid), nameId=names,
        returnValue=0, nestingLevel=0, callchainId=0,
    )  # fmt: skip


def _nvtx(tr: RankTrace, tid: int, start, end, text=None, **cols) -> None:
    """Record NVTX rows (push/pop by default); ``end`` NaN for instant events."""
    n = np.size(start)
    tr.table("NVTX_EVENTS").add(
        start=start, end=end, eventType=cols.get("event_type", 59),
        rangeId=cols.get("range_id", -1), color=cols.get("color", -1),
        text=np.asarray(text if text is not None else [None] * n, dtype=object),
        globalTid=tr.gtid(tid), textId=cols.get("text_id", -1),
        domainId=cols.get("domain_id", 0),
    )  # fmt: skip


def _sequence(rng: np.random.Generator, t0: float, n: int, dur_us, gap_us) -> tuple:
    """``n`` back-to-back calls from ``t0`` with durations/gaps drawn uniformly (µs ranges)."""
    dur = rng.uniform(*dur_us, n) * _US
    gap = rng.uniform(*gap_us, n) * _US
    start = t0 + np.cumsum(gap) + np.concatenate([[0.0], np.cumsum(dur)[:-1]])
    return start, start + dur


# --------------------------------------------------------------------------- start-up
def startup(sim: SimulatorState, tr: RankTrace) -> float:
    """Record process start-up (files, CUDA context, allocations, weight upload).

    Returns the global time at which the rank enters NCCL initialisation.
    """
    rng = sim.rngs[tr.rank]
    tr.next_correlation = 1
    t = 25 * _MS + tr.rank * 370 * _US + rng.uniform(0, 200) * _US
    files = np.array(["open64", "read", "close", "mmap64"] * 4, dtype=object)
    s, e = _sequence(rng, t, len(files), (5, 40), (20, 200))
    _osrt(tr, tr.main_tid, files, s, e)
    ctx0 = e[-1] + 1 * _MS
    ctx1 = ctx0 + rng.uniform(120, 150) * _MS
    slots = np.linspace(ctx0, ctx1, 61)
    width = np.diff(slots)
    io_s = slots[:-1] + width * rng.uniform(0.02, 0.3, 60)
    _osrt(tr, tr.main_tid, "ioctl", io_s, io_s + width * rng.uniform(0.05, 0.6, 60))
    names = ["cudaFree_v3020"] + ["cudaStreamCreateWithPriority_v5050"] * 2
    names += ["cudaMalloc_v3020"] * 24 + ["cudaHostAlloc_v3020"]
    s, e = _sequence(rng, ctx1 + 30 * _US, len(names) - 1, (12, 300), (15, 60))
    s, e = np.r_[ctx0, s], np.r_[ctx1, e]
    e[-1] = s[-1] + 1.8 * _MS
    _api(tr, np.array([_ID[n] for n in names]), s, e)
    copy_start = e[-1] + 40 * _US
    gpu_s = copy_start + 15 * _US
    gpu_e = gpu_s + 348e6 / 13.2e9 * 1e9
    corr = _api(tr, _ID["cudaMemcpy_v3020"], np.r_[copy_start], np.r_[gpu_e + 6 * _US])
    _memcpy(tr, np.r_[gpu_s], np.r_[gpu_e], corr, 348_000_000, 1, 0)
    sim.free[tr.rank, 0] = gpu_e
    return gpu_e + 200 * _US


def nccl_init(sim: SimulatorState, tr: RankTrace, enter: float, done: float) -> float:
    """Record NCCL communicator set-up, which ends on every rank when the last one joins.

    Returns the global time of the rank's first training step.
    """
    rng = sim.rngs[tr.rank]
    _nvtx(tr, tr.main_tid, enter - 10 * _US, np.nan, ["NCCL"], event_type=75, domain_id=1)
    end = done + rng.uniform(10, 40) * _US
    _nvtx(tr, tr.main_tid, enter, end, text_id=_ID["ncclCommInitRank"], domain_id=1)
    calls = np.array(["socket", "connect"], dtype=object)
    call_start = enter + np.r_[20, 45] * _US
    _osrt(tr, tr.main_tid, calls, call_start, call_start + np.r_[12, 45] * _US)
    edges = np.linspace(enter + 120 * _US, done, max(2, int((done - enter) / (5 * _MS)) + 2))
    _osrt(tr, tr.main_tid, "poll", edges[:-1] + 2 * _US, edges[1:])
    tr.nccl_start_ns = end
    return end + rng.uniform(100, 400) * _US


# --------------------------------------------------------------------------- one step
def _memcpy(tr: RankTrace, start, end, corr, nbytes, copy_kind, src_kind, stream=None) -> None:
    tr.table("CUPTI_ACTIVITY_KIND_MEMCPY").add(
        start=start, end=end, deviceId=tr.rank, contextId=1,
        streamId=cat.STREAM_COMPUTE if stream is None else stream, correlationId=corr,
        globalPid=tr.gpid, bytes=nbytes, copyKind=copy_kind, srcKind=src_kind,
        dstKind=np.where(np.asarray(copy_kind) == 1, 2, 0),
    )  # fmt: skip


def _gpu_rows(tr: RankTrace, sim: SimulatorState, st: StepState, corr: np.ndarray) -> None:
    tpl = sim.tpl
    k = np.flatnonzero(tpl.op == cat.OP_KERNEL)
    kernel = tpl.kernel[k]
    shape = {name: col[kernel] for name, col in _kernel_ids().items()}
    tr.table("CUPTI_ACTIVITY_KIND_KERNEL").add(
        start=st.gpu_start[k], end=st.gpu_end[k], deviceId=tr.rank, contextId=1,
        streamId=tpl.stream[k], correlationId=corr[k], globalPid=tr.gpid, launchType=0,
        cacheConfig=0, localMemoryPerThread=0, localMemoryTotal=0,
        gridId=tr.next_grid + np.arange(len(k)), sharedMemoryExecuted=0,
        sharedMemoryLimitConfig=0, **shape,
    )  # fmt: skip
    tr.next_grid += len(k)
    m = np.flatnonzero(tpl.op == cat.OP_MEMCPY)
    src = np.where(tpl.copy_kind[m] == 1, 1, 2)  # pinned upload, device readback
    _memcpy(tr, st.gpu_start[m], st.gpu_end[m], corr[m], tpl.bytes[m], tpl.copy_kind[m], src)
    z = np.flatnonzero(tpl.op == cat.OP_MEMSET)
    tr.table("CUPTI_ACTIVITY_KIND_MEMSET").add(
        start=st.gpu_start[z], end=st.gpu_end[z], deviceId=tr.rank, contextId=1,
        streamId=tpl.stream[z], correlationId=corr[z], globalPid=tr.gpid, value=0,
        bytes=tpl.bytes[z], memKind=2,
    )  # fmt: skip
    w = np.flatnonzero(np.isin(tpl.op, (cat.OP_WAIT, cat.OP_STREAM_SYNC)))
    tr.table("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION").add(
        start=st.a[w], end=st.api_end[w], deviceId=tr.rank, contextId=1,
        streamId=tpl.stream[w], correlationId=corr[w], globalPid=tr.gpid,
        syncType=np.where(tpl.op[w] == cat.OP_WAIT, 2, 3), eventId=corr[w] % 977,
    )  # fmt: skip


_COLORS = {"train_step": 0xFF76B900, "forward": 0xFF1F77B4, "backward": 0xFFFF7F0E}
_COLORS |= {"allreduce": 0xFFD62728, "optimizer": 0xFF9467BD}


def _step_nvtx(tr: RankTrace, sim: SimulatorState, st: StepState, step_end: float) -> None:
    tpl = sim.tpl
    main = tr.main_tid
    _nvtx(tr, main, st.t0, step_end, ["train_step"], color=_COLORS["train_step"])
    layer_runs, phase_runs = _runs(tuple(tpl.phase), tuple(tpl.layer))
    lo = np.minimum.reduceat(st.a, phase_runs) - 2 * _US
    hi = np.maximum.reduceat(st.api_end, phase_runs) + 1 * _US
    names = np.array(cat.PHASES, dtype=object)[tpl.phase[phase_runs]]
    keep = np.isin(names, list(_COLORS))
    colors = np.array([_COLORS.get(n, -1) for n in names])
    _nvtx(tr, main, lo[keep], hi[keep], names[keep], color=colors[keep])
    lo = np.minimum.reduceat(st.a, layer_runs) - 1 * _US
    hi = np.maximum.reduceat(st.api_end, layer_runs) + 0.5 * _US
    layer = tpl.layer[layer_runs]
    suffix = np.where(tpl.phase[layer_runs] == 2, ".backward", "")
    keep = layer >= 0
    text = [f"encoder.layer.{n}{s}" for n, s in zip(layer[keep], suffix[keep], strict=True)]
    _nvtx(tr, main, lo[keep], hi[keep], text)
    n = sim.nccl_idx
    _nvtx(tr, main, st.a[n] - 1 * _US, st.api_end[n] + 1 * _US,
          text_id=_ID["ncclAllReduce"], domain_id=1)  # fmt: skip


def _data_loading(tr: RankTrace, rng: np.random.Generator, st: StepState) -> None:
    """The main thread waits for the batch; the loader thread reads it and signals."""
    wait_start = st.t0 + 8 * _US
    _osrt(tr, tr.main_tid, "pthread_cond_wait", wait_start, wait_start + st.wait_ns)
    tr.main_sleeps.append((wait_start, wait_start + st.wait_ns))
    reads = rng.uniform(60, 250, 4) * _US
    if st.wait_ns > 1 * _MS:  # a slow batch: one read stalls
        reads[rng.integers(0, 4)] += 0.8 * st.wait_ns
    signal_end = wait_start + st.wait_ns - 4 * _US
    load_start = signal_end - reads.sum() - 4 * 8 * _US - 3 * _US - 10 * _US
    r_start = load_start + 10 * _US + np.r_[0.0, np.cumsum(reads[:-1] + 8 * _US)]
    _osrt(tr, tr.loader_tid, "read", r_start, r_start + reads)
    _osrt(tr, tr.loader_tid, "pthread_cond_signal", signal_end - 3 * _US, signal_end)
    _nvtx(tr, tr.loader_tid, load_start, signal_end + 1 * _US, ["load_batch"])
    tr.loader_runs.append((load_start, signal_end + 2 * _US))


def record_step(
    sim: SimulatorState, tr: RankTrace, step: int, st: StepState, step_end: float
) -> None:
    """Record one training step of one rank."""
    rng = sim.rngs[tr.rank]
    corr = _api(tr, np.array([_ID[n] for n in cat.API_NAMES])[sim.tpl.api], st.a, st.api_end)
    _gpu_rows(tr, sim, st, corr)
    _step_nvtx(tr, sim, st, step_end)
    _data_loading(tr, rng, st)
    if (tr.rank, step) in sim.planted:
        i = sim.slow_idx[sim.planted[(tr.rank, step)]]
        tr.gpu_slow.append((st.gpu_start[i], st.gpu_end[i]))
    tr.step_spans.append((st.t0, step_end))
    if step % 10 == 9:
        loss = 7.0 * np.exp(-step / 60) + rng.normal(0, 0.02)
        _nvtx(tr, tr.main_tid, step_end, np.nan, [f"step {step + 1}: loss={loss:.4f}"],
              event_type=34)  # fmt: skip


# --------------------------------------------------------------------------- whole run
def _inside(times: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Index of the interval ``[lo, hi)`` holding each time, or -1 (intervals sorted)."""
    i = np.searchsorted(lo, times, side="right") - 1
    ok = (i >= 0) & (times < hi[np.maximum(i, 0)])
    return np.where(ok, i, -1)


def _cpu_rows(tr: RankTrace, rng: np.random.Generator, tid: int, runs: np.ndarray, core: int):
    """Sched-in/out rows for each run interval of a thread, and 1 kHz samples inside them."""
    lo, hi = runs[:, 0], runs[:, 1]
    cpu = np.where(rng.random(len(lo)) < 0.1, 8 * tr.rank + 3, core)
    is_in = np.r_[np.ones(len(lo), dtype=np.int64), np.zeros(len(lo), dtype=np.int64)]
    tr.table("SCHED_EVENTS").add(
        start=np.r_[lo, hi], cpu=np.r_[cpu, cpu], isSchedIn=is_in, globalTid=tr.gtid(tid)
    )
    grid = np.arange(lo[0], hi[-1], 1 * _MS) + rng.uniform(-20, 20) * _US
    where = _inside(grid, lo, hi)
    t = grid[where >= 0]
    tr.table("COMPOSITE_EVENTS").add(
        start=t, cpu=cpu[where[where >= 0]], threadState=1, globalTid=tr.gtid(tid),
        cpuCycles=rng.integers(1_900_000, 2_600_000, len(t)),
    )  # fmt: skip


def _complement(start: float, end: float, gaps: np.ndarray) -> np.ndarray:
    """Intervals of ``[start, end)`` outside the sorted, disjoint ``gaps``."""
    lo = np.r_[start, gaps[:, 1]]
    hi = np.r_[gaps[:, 0], end]
    return np.column_stack([lo, hi])[hi > lo]


def finish(sim: SimulatorState, tr: RankTrace, end_ns: float) -> None:
    """Record whole-run rows (epoch range, NCCL progress thread, CPU), then shift to local time."""
    rng = sim.rngs[tr.rank]
    first, last = tr.step_spans[0][0], tr.step_spans[-1][1]
    _nvtx(tr, tr.main_tid, first - 30 * _US, last + 20 * _US, ["epoch 0"],
          event_type=60, range_id=1, color=0xFF00A0A0)  # fmt: skip
    span = end_ns - tr.nccl_start_ns
    s, e = _sequence(rng, tr.nccl_start_ns, int(span / (0.6 * _MS)) + 2, (550, 1000), (4, 20))
    keep = e < end_ns
    _osrt(tr, tr.nccl_tid, "poll", s[keep], e[keep])
    sleeps = np.array(tr.main_sleeps)
    main_start = float(tr.table("OSRT_API").chunks["start"][0][0])
    _cpu_rows(tr, rng, tr.main_tid, _complement(main_start, end_ns, sleeps), 8 * tr.rank)
    _cpu_rows(tr, rng, tr.loader_tid, np.array(tr.loader_runs), 8 * tr.rank + 1)
    polls = np.column_stack([s[keep] + 1 * _US, e[keep] - 1 * _US])
    runs = _complement(tr.nccl_start_ns, end_ns, polls)
    _cpu_rows(tr, rng, tr.nccl_tid, runs, 8 * tr.rank + 2)
    tr.end_ns = end_ns
    tr.shift(tr.offset_ns)
