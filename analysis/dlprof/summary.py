"""DLProf's summary report and expert-system advice for one report (spec dlprof.md §3, §6).

Time shares are Strata's exclusive breakdown of ``wall clock × GPU count``: per GPU, time with
a Tensor Core kernel running, else another kernel, else a memory operation, else an op's
CPU range (CPU), else nothing profiled (Other); they add up to 100. DLProf's own summed
durations (spec §6) could exceed 100 % when work overlaps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from strata.analysis.dlprof.iterations import DEFAULT_KEY_NODES
from strata.analysis.timefmt import pluralize

__all__ = ["SummaryInputs", "expert_table", "summary_table", "union_ns"]

#: Kernels shorter than this are "small" (launch overhead is a few µs).
SMALL_KERNEL_NS = 10_000
_UNDERUSED_PCT = 50.0
_IDLE_SHARE = 0.10


def union_ns(start_ns: np.ndarray, end_ns: np.ndarray, lo: int, hi: int) -> int:
    """Length of the union of ``[start, end)`` intervals clipped to ``[lo, hi)``."""
    s = np.clip(np.asarray(start_ns, dtype=np.int64), lo, hi)
    e = np.clip(np.asarray(end_ns, dtype=np.int64), lo, hi)
    keep = e > s
    s, e = s[keep], e[keep]
    if not len(s):
        return 0
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)
    new = np.r_[True, s[1:] > reach[:-1]]
    firsts = np.flatnonzero(new)
    return int((np.maximum.reduceat(e, firsts) - s[firsts]).sum())


@dataclass(frozen=True)
class SummaryInputs:
    """What the summary and the advice are computed from (one report, selected iterations)."""

    ops: pd.DataFrame
    gpu: pd.DataFrame
    detailed: pd.DataFrame
    iterations: pd.DataFrame
    selected: tuple[int, int]
    key_node: str
    asked_key: str
    framework: str
    devices: np.ndarray
    system: dict

    @property
    def window(self) -> tuple[int, int]:
        frame = self.iterations
        start, stop = self.selected
        return int(frame["start_ns"].iloc[start]), int(frame["end_ns"].iloc[stop])


def _shares(x: SummaryInputs) -> dict[str, float]:
    lo, hi = x.window
    gpu = x.gpu
    dev = gpu["device_id"].to_numpy()
    is_kernel = gpu["table"].to_numpy() == "kernels"
    tc = gpu["uses_tc"].to_numpy(bool) & is_kernel
    cpu = x.ops
    parts = {"tc": 0, "kernel": 0, "gpu": 0, "busy": 0}
    for device in x.devices.tolist():
        on = dev == device
        layers = {"tc": on & tc, "kernel": on & is_kernel, "gpu": on}
        for name, mask in layers.items():
            parts[name] += union_ns(gpu["start_ns"][mask], gpu["end_ns"][mask], lo, hi)
        starts = np.r_[gpu["start_ns"][on], cpu["start_ns"]]
        ends = np.r_[gpu["end_ns"][on], cpu["end_ns"]]
        parts["busy"] += union_ns(starts, ends, lo, hi)
    total = max((hi - lo) * len(x.devices), 1)
    pct = {k: 100.0 * v / total for k, v in parts.items()}
    return {
        "GPU Utilization %": pct["gpu"],
        "Tensor Core Kernel Duration %": pct["tc"],
        "Non-Tensor Core Kernel Duration %": pct["kernel"] - pct["tc"],
        "Memory Duration %": pct["gpu"] - pct["kernel"],
        "CPU Duration %": pct["busy"] - pct["gpu"],
        "Other Duration %": 100.0 - pct["busy"],
    }


def _op_rows(x: SummaryInputs) -> list[tuple[str, str, object]]:
    d = x.detailed
    groups = {
        "All ops": np.ones(len(d), dtype=bool),
        "Ops using TC": d["Using TC"].to_numpy(bool),
        "Ops eligible for TC but not using": (d["TC Eligible"] & ~d["Using TC"]).to_numpy(bool),
    }
    groups["All other ops"] = ~groups["Ops using TC"] & ~groups["Ops eligible for TC but not using"]
    rows = []
    for name, mask in groups.items():
        rows.append(
            ("All Ops", f"{name}: GPU Time (ns)", int(d["Total GPU Time (ns)"][mask].sum()))
        )
        rows.append(
            ("All Ops", f"{name}: CPU Time (ns)", int(d["Total CPU Time (ns)"][mask].sum()))
        )
        rows.append(("All Ops", f"{name}: # Ops", int(mask.sum())))
    return rows


def _kernel_rows(x: SummaryInputs) -> list[tuple[str, str, object]]:
    g = x.gpu
    is_kernel = (g["table"] == "kernels").to_numpy()
    tc = g["uses_tc"].to_numpy(bool) & is_kernel
    groups = {"All kernels": np.ones(len(g), dtype=bool), "Kernels using TC": tc,
              "Memory": ~is_kernel, "All other kernels": is_kernel & ~tc}  # fmt: skip
    gpu_ns = (g["end_ns"] - g["start_ns"]).to_numpy(np.int64)
    api_ns = np.where(g["api_start_ns"] >= 0, g["api_end_ns"] - g["api_start_ns"], 0)
    rows = []
    for name, mask in groups.items():
        rows.append(("All Kernels", f"{name}: GPU Time (ns)", int(gpu_ns[mask].sum())))
        rows.append(("All Kernels", f"{name}: CPU Time (ns)", int(api_ns[mask].sum())))
        distinct = g["name"][mask].nunique()
        rows.append(("All Kernels", f"{name}: # Kernels", int(distinct)))
    return rows


def summary_table(x: SummaryInputs) -> pd.DataFrame:
    """DLProf's summary as (Section, Metric, Value) rows."""
    lo, hi = x.window
    start, stop = x.selected
    durations = x.iterations["duration_ns"].iloc[start : stop + 1].to_numpy(np.int64)
    eligible = x.ops[x.ops["tc_eligible"]]
    kernel_ns = eligible["gpu_ns"].sum()
    tc_util = 100.0 * eligible["tc_gpu_ns"].sum() / kernel_ns if kernel_ns else 0.0
    rows: list[tuple[str, str, object]] = [
        ("System Config", key, value) for key, value in x.system.items()
    ]
    rows.append(("System Config", "Framework", x.framework))
    rows.append(("Summary Report", "Wall Clock Time (ns)", hi - lo))
    rows.append(("Summary Report", "Tensor Core Kernel Utilization %", round(tc_util, 1)))
    rows += [("Summary Report", k, round(v, 1)) for k, v in _shares(x).items()]
    rows += [
        ("Iterations", "Key Node", x.key_node),
        ("Iterations", "Total Iterations", len(x.iterations)),
        ("Iterations", "Aggregated Iterations", stop - start + 1),
        ("Iterations", "Start Iteration", start),
        ("Iterations", "Stop Iteration", stop),
        ("Iterations", "Average Iteration Time (ns)", int(round(durations.mean()))),
        ("Iterations", "Iteration Time Standard Deviation (ns)",
         int(round(durations.std())) if len(durations) > 1 else 0),
    ]  # fmt: skip
    rows += _op_rows(x) + _kernel_rows(x)
    return pd.DataFrame(rows, columns=["Section", "Metric", "Value"])


def _idle_between(x: SummaryInputs) -> tuple[float, float] | None:
    """Mean GPU idle time between consecutive aggregated iterations, and its iteration share."""
    g = x.gpu
    if x.selected[1] - x.selected[0] < 1 or not len(g):
        return None
    by = g.groupby("iteration")
    first, last = by["start_ns"].min(), by["end_ns"].max()
    gaps = (first.shift(-1) - last).dropna()
    gaps = gaps[gaps.index + 1 <= x.selected[1]].clip(lower=0)
    if not len(gaps):
        return None
    mean_iter = float(x.iterations["duration_ns"].iloc[x.selected[0] : x.selected[1] + 1].mean())
    return float(gaps.mean()), float(gaps.mean()) / mean_iter if mean_iter else 0.0


def expert_table(x: SummaryInputs, summary: pd.DataFrame) -> pd.DataFrame:
    """DLProf's expert-system rows (Problem, Recommendation) that the data supports."""
    value = dict(zip(summary["Metric"], summary["Value"], strict=False))
    rows = []
    if not x.key_node:
        defaults = ", ".join(DEFAULT_KEY_NODES)
        named = repr(x.asked_key) if x.asked_key else f"(none of {defaults})"
        rows.append(
            (
                f"Unable to split profile into training iterations: key node {named} not found",
                "Name the NVTX range or op that ends each iteration with "
                "--key-node (e.g. ProfilerStep under torch.profiler)",
            )
        )
    d = x.detailed
    not_using = d[d["TC Eligible"] & ~d["Using TC"]]["Op ID"].nunique()
    if not_using:
        rows.append(
            (
                f"{pluralize(not_using, 'op')} eligible to use Tensor Cores but not using them",
                "Enable automatic mixed precision (torch.autocast / AMP) or TF32, "
                "and keep channel and batch sizes multiples of 8",
            )
        )
    gpu_pct = float(value["GPU Utilization %"])
    if gpu_pct < _UNDERUSED_PCT:
        cpu, other = float(value["CPU Duration %"]), float(value["Other Duration %"])
        if cpu >= other:
            rows.append(
                (
                    f"The GPU is underutilized: only {gpu_pct:.1f}% of the time runs GPU "
                    f"work; CPU op time takes {cpu:.1f}%",
                    "Cut CPU time between launches: "
                    "larger batches, fused ops (torch.compile), CUDA graphs",
                )
            )
        else:
            rows.append(
                (
                    f"The GPU is underutilized: only {gpu_pct:.1f}% of the time runs GPU "
                    f"work; {other:.1f}% is outside every op",
                    "Look at what runs outside "
                    "the ops: data loading (DataLoader workers, pinned memory, DALI), I/O, "
                    "synchronization",
                )
            )
    idle = _idle_between(x)
    if idle is not None and idle[1] > _IDLE_SHARE:
        rows.append(
            (
                f"The GPU is idle {idle[0]:,.0f} ns on average between iterations "
                f"({100 * idle[1]:.1f}% of an iteration)",
                "Overlap the next batch's "
                "loading with compute: DataLoader(num_workers>0, pin_memory=True), "
                "prefetching to the GPU, or NVIDIA DALI",
            )
        )
    kernels = x.gpu[x.gpu["table"] == "kernels"]
    dur = (kernels["end_ns"] - kernels["start_ns"]).to_numpy()
    small = int((dur < SMALL_KERNEL_NS).sum())
    if len(dur) >= 10 and small > len(dur) / 2:
        rows.append(
            (
                f"{small:,} of {pluralize(len(dur), 'kernel')} run under "
                f"{SMALL_KERNEL_NS // 1000} µs: launch overhead dominates",
                "Fuse small ops (torch.compile), capture CUDA graphs, or raise the batch size",
            )
        )
    if float(value["Memory Duration %"]) > float(value["Non-Tensor Core Kernel Duration %"]) + (
        float(value["Tensor Core Kernel Duration %"])
    ):
        rows.append(
            (
                "Memory operations take more GPU time than kernels",
                "Keep tensors on "
                "the GPU; avoid .cpu()/.item() in the loop; copy from pinned memory with "
                "non_blocking=True",
            )
        )
    if x.framework != "PyTorch":
        rows.append(
            (
                "No framework op ranges (aten:: or DLProf markers): the ops are the "
                "innermost NVTX ranges",
                "Profile under torch.autograd.profiler.emit_nvtx() to see PyTorch's ops",
            )
        )
    return pd.DataFrame(rows, columns=["Problem", "Recommendation"])
