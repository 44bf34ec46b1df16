"""The heatmap recipes: GPU use per time bin on one clock across reports.

spec: nsys-sqlite.md §5.4; nsys 2023.4's ``cuda_gpu_time_util_map``,
``nccl_gpu_time_util_map`` and ``gpu_metric_util_map``. Every report's times move onto the
clock of the earliest session start (``utcEpochNs``); the span is the longest session on
that clock (``ANALYSIS_DETAILS.duration`` + the report's offset), cut into ``--bins`` equal
bins of ``ceil(span / bins)`` ns. Each map step returns its report's raw times; the reduce
step, which alone knows the bins, computes:

* ``cuda_gpu_time_util_map``: per process and device, the percentage of each bin in which
  some kernel ran (overlapping kernels merged first), or with ``--cumulative`` the sum of
  every kernel's share (may pass 100). A bin only partly inside the report's own session
  is scaled to that part; bins outside it are NaN.
* ``nccl_gpu_time_util_map``: the same for all kernels, the NCCL kernels (those whose span
  equals the GPU projection of a range of the ``NCCL`` NVTX domain, :mod:`._ranges`) and the
  others (``Compute``).
* ``gpu_metric_util_map``: per GPU, the mean of the ``SM Active``, ``SM Issue`` and
  ``Tensor Active`` GPU metric samples (``GENERIC_EVENTS``) in each bin (a bin holds the
  samples in ``(start, end]``), bins without samples left out.

Percentages and means are rounded to 0.1 as nsys does (NumPy: half to even). Where nsys's
code fails (a kernel ending past the longest session would index past the last bin; a
metric sample lacking a metric), those parts are left out here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd

from strata.analysis.errors import AnalysisError
from strata.analysis.recipes._ranges import (
    combine_api_gpu,
    domain_ranges,
    pid_of,
    project_onto_gpu,
    range_text,
)
from strata.analysis.recipes._raw import RawTables, filter_time_range, read_tables, strings_of
from strata.analysis.recipes.base import (
    TIME_FILTER,
    FilePartial,
    Recipe,
    RecipeOptions,
    RecipeOutput,
    heatmap,
)
from strata.analysis.timefmt import pluralize

__all__ = ["CudaGpuTimeUtilMap", "GpuMetricUtilMap", "NcclGpuTimeUtilMap", "bin_percentages"]

_SESSION = {"ANALYSIS_DETAILS": ("duration",), "TARGET_INFO_SESSION_START_TIME": ("utcEpochNs",)}
_METRICS = ("SM Active", "SM Issue", "Tensor Active")


@dataclass(frozen=True)
class Busy:
    """One (process, device)'s kernel spans of one kind (``All``, ``NCCL``, ``Kernel``, …)."""

    pid: int
    device: int
    kind: str
    start_ns: npt.NDArray[np.int64]
    end_ns: npt.NDArray[np.int64]


@dataclass(frozen=True)
class MapPartial:
    """One report's session (for the common clock) and its raw data (empty: none)."""

    session_start_utc_ns: int
    duration_ns: int
    busy: tuple[Busy, ...] = ()
    samples: pd.DataFrame | None = None


def _session(raw: RawTables) -> tuple[int, int]:
    return (
        raw.first_int("TARGET_INFO_SESSION_START_TIME", "utcEpochNs"),
        raw.first_int("ANALYSIS_DETAILS", "duration"),
    )


def _ints(series: pd.Series) -> npt.NDArray[np.int64]:
    return series.astype("int64").to_numpy(np.int64)


def _bin_info(
    starts: np.ndarray, ends: np.ndarray, bin_size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """nsys's ``_calculate_bin_info``: first and last bin, and the covered part of each."""
    start_scaled = np.asarray(starts, np.float64) / bin_size
    end_scaled = np.asarray(ends, np.float64) / bin_size
    start_bins = np.floor(start_scaled).astype(np.int64)
    end_bins = np.floor(end_scaled).astype(np.int64)
    start_parts = np.minimum(np.ceil(start_scaled), end_scaled) - start_scaled
    end_parts = end_scaled - np.maximum(np.floor(end_scaled), start_scaled)
    return start_bins, end_bins, start_parts, end_parts


def consolidate(
    starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Merge overlapping spans (touching ones too): one (start, end) per merged run."""
    if len(starts) == 0:
        return starts, ends
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    new = np.r_[True, s[1:] > reach[:-1]]
    heads = np.flatnonzero(new)
    return s[heads], np.maximum.reduceat(e, heads)


def bin_percentages(
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
    bin_size: int,
    bins: int,
    profile_end_ns: int,
    offset_ns: int,
) -> npt.NDArray[np.float64]:
    """Percentage of each bin the spans cover, as nsys's ``calculate_bin_pcts`` computes it.

    The bins around the report's own session [``offset_ns``, ``profile_end_ns``] are scaled
    to the part inside it, those outside are NaN.
    """
    pcts = np.zeros(bins, dtype=np.float64)
    sb, eb, sp, ep = _bin_info(starts, ends, bin_size)
    inside = (sb >= 0) & (eb < bins)  # nsys indexes past the last bin there and fails
    sb, eb, sp, ep = sb[inside], eb[inside], sp[inside], ep[inside]
    single = sb == eb
    pcts += np.bincount(sb[single], weights=sp[single], minlength=bins)[:bins]
    multi = ~single
    np.add.at(pcts, eb[multi], ep[multi])
    np.add.at(pcts, sb[multi], sp[multi])
    steps = np.zeros(bins + 1, dtype=np.float64)
    np.add.at(steps, sb[multi] + 1, 1.0)
    np.add.at(steps, eb[multi], -1.0)
    pcts += np.cumsum(steps)[:bins]
    # nsys's _rectify_pct_inplace
    (first,), (last,), (first_part,), (last_part,) = _bin_info(
        np.array([offset_ns]), np.array([profile_end_ns]), bin_size
    )
    if first_part != 0 and 0 <= first < bins:
        pcts[first] /= first_part
    if last_part != 0 and first != last and 0 <= last < bins:
        pcts[last] /= last_part
    pcts[max(last + 1, 0) :] = np.nan
    pcts[: max(min(first, bins), 0)] = np.nan
    return np.round(pcts * 100, 1)


@dataclass(frozen=True)
class _Clock:
    """The common clock of a run: earliest session start, bin size, bin count."""

    first_utc_ns: int
    bin_size: int
    bins: int

    def offset(self, partial: MapPartial) -> int:
        return partial.session_start_utc_ns - self.first_utc_ns


def _clock(partials: Sequence[FilePartial], bins: int) -> _Clock:
    first = min(p.partial.session_start_utc_ns for p in partials)
    longest = max(p.partial.duration_ns + p.partial.session_start_utc_ns - first for p in partials)
    return _Clock(first, max(math.ceil(longest / bins), 1), bins)


def _no_data(name: str, partials: Sequence[FilePartial]) -> AnalysisError:
    return AnalysisError(
        f"no report gave data for recipe {name!r}: "
        f"{pluralize(len(partials), 'report')} had no data for it"
    )


class _UtilMap(Recipe):
    """A heatmap recipe: ``--bins`` equal bins (checked, with every number, by
    :func:`analysis.recipes.runner.check_numbers`) over the longest session."""

    options_taken = TIME_FILTER
    notebook = "heatmap.ipynb"


class _TimeUtilMap(_UtilMap):
    """The GPU time heatmaps: per (process, device) and kind, percentages per bin."""

    #: The columns of kinds in the output, in order.
    kinds: tuple[str, ...] = ()

    def reduce(self, partials: Sequence[FilePartial], options: RecipeOptions) -> RecipeOutput:
        if not any(p.partial.busy for p in partials):
            raise _no_data(self.name, partials)
        clock = _clock(partials, options.bins)
        edges = np.arange(clock.bins, dtype=np.int64) * clock.bin_size
        frames = []
        for p in partials:
            offset = clock.offset(p.partial)
            end = p.partial.duration_ns + offset
            groups: dict[tuple[int, int], dict[str, np.ndarray]] = {}
            for b in p.partial.busy:
                starts, ends = b.start_ns + offset, b.end_ns + offset
                if not options.cumulative:
                    starts, ends = consolidate(starts, ends)
                groups.setdefault((b.pid, b.device), {})[b.kind] = bin_percentages(
                    starts, ends, clock.bin_size, clock.bins, end, offset
                )
            for (pid, device), kinds in sorted(groups.items()):
                frames.append(
                    pd.DataFrame(
                        {
                            "Duration": edges,
                            **{k: kinds[k] for k in self.kinds},
                            "PID": np.int64(pid),
                            "Device ID": np.int64(device),
                            "File": p.file,
                        }
                    )
                )
        table = pd.concat(frames, ignore_index=True)
        first = self.kinds[0]
        rows = table["File"] + " pid " + table["PID"].astype(str)
        rows += " gpu " + table["Device ID"].astype(str)
        title = f"{self.name}: {first} GPU time (%) per bin of {clock.bin_size:,d} ns"
        plot = heatmap(table, rows, "Duration", first, title, "report, process, device")
        mean = float(np.nanmean(table[first].to_numpy(np.float64))) if len(table) else math.nan
        summary = (
            f"{self.name}: {pluralize(len(frames), 'process and device', 'processes and devices')}"
            f" in {pluralize(len(partials), 'report')}, {pluralize(clock.bins, 'bin')} of "
            f"{clock.bin_size:,d} ns; mean {first} use {mean:.1f}%"
        )
        return self.output(partials, {"analysis": table}, summary, {"heatmap": plot})


_KERNEL_COLUMNS = ("correlationId", "globalPid", "start", "end", "deviceId")


class CudaGpuTimeUtilMap(_TimeUtilMap):
    """``cuda_gpu_time_util_map``: kernel time per bin, per process and device."""

    name = "cuda_gpu_time_util_map"
    description = "heatmap of GPU kernel time per time bin, per process and device"
    kinds = ("Kernel",)

    def map(self, report_path: Path, options: RecipeOptions) -> MapPartial | None:
        raw = read_tables(
            report_path,
            options.use_cache,
            {**_SESSION, "CUPTI_ACTIVITY_KIND_KERNEL": _KERNEL_COLUMNS},
        )
        if raw is None:
            return None
        kernels = filter_time_range(
            raw["CUPTI_ACTIVITY_KIND_KERNEL"], options.start_ns, options.end_ns, ("start", "end")
        )
        start, duration = _session(raw)
        busy = [
            Busy(pid, device, "Kernel", _ints(g["start"]), _ints(g["end"]))
            for (pid, device), g in _by_device(kernels)
        ]
        return MapPartial(start, duration, tuple(busy))


def _by_device(kernels: pd.DataFrame) -> list[tuple[tuple[int, int], pd.DataFrame]]:
    if kernels.empty:
        return []
    keyed = kernels.assign(_pid=pid_of(kernels["globalPid"]), _dev=_ints(kernels["deviceId"]))
    return [((int(p), int(d)), g) for (p, d), g in keyed.groupby(["_pid", "_dev"], sort=True)]


class NcclGpuTimeUtilMap(_TimeUtilMap):
    """``nccl_gpu_time_util_map``: all, NCCL and compute kernel time per bin."""

    name = "nccl_gpu_time_util_map"
    description = "heatmap of all, NCCL and compute kernel time per time bin"
    kinds = ("All", "NCCL", "Compute")

    def map(self, report_path: Path, options: RecipeOptions) -> MapPartial | None:
        raw = read_tables(
            report_path,
            options.use_cache,
            {
                **_SESSION,
                "StringIds": None,
                "NVTX_EVENTS": (
                    "text", "start", "end", "textId", "globalTid", "endGlobalTid", "domainId",
                    "eventType",
                ),
                "CUPTI_ACTIVITY_KIND_RUNTIME": ("correlationId", "globalTid", "start", "end"),
                "CUPTI_ACTIVITY_KIND_KERNEL": _KERNEL_COLUMNS,
            },
        )  # fmt: skip
        if raw is None:
            return None
        start, duration = _session(raw)
        kernels = filter_time_range(
            raw["CUPTI_ACTIVITY_KIND_KERNEL"], options.start_ns, options.end_ns, ("start", "end")
        )
        # nsys projects onto the kernels already moved to the common clock, and matches
        # kernels to projections by (start, end) there; both sides move alike, so this
        # works on the report's own clock.
        cuda = combine_api_gpu(raw["CUPTI_ACTIVITY_KIND_RUNTIME"], kernels)
        nccl = domain_ranges(raw["NVTX_EVENTS"], "NCCL")
        if nccl.empty or cuda.empty:
            return MapPartial(start, duration)
        nccl = nccl.assign(name=range_text(nccl, strings_of(raw)))
        projected = project_onto_gpu(nccl, cuda)
        if projected.empty:
            return MapPartial(start, duration)
        # nsys's left merge on (start, end): a kernel counts once per projection it equals.
        matches = projected.groupby(["start", "end"]).size().rename("m").reset_index()
        busy = []
        for (pid, device), group in _by_device(kernels):
            spans = pd.DataFrame({"start": _ints(group["start"]), "end": _ints(group["end"])})
            m = spans.merge(matches, on=["start", "end"], how="left")["m"].fillna(0)
            m = m.to_numpy(np.int64)
            s, e = spans["start"].to_numpy(np.int64), spans["end"].to_numpy(np.int64)
            every = np.repeat(np.arange(len(s)), np.maximum(m, 1))
            nccl_rows = np.repeat(np.arange(len(s)), m)
            compute = np.flatnonzero(m == 0)
            for kind, rows in (("All", every), ("NCCL", nccl_rows), ("Compute", compute)):
                busy.append(Busy(pid, device, kind, s[rows], e[rows]))
        return MapPartial(start, duration, tuple(busy))


class GpuMetricUtilMap(_UtilMap):
    """``gpu_metric_util_map``: mean SM active, SM issue and tensor active per bin."""

    name = "gpu_metric_util_map"
    description = "heatmap of GPU metrics (SM active, SM issue, tensor active) per time bin"

    def map(self, report_path: Path, options: RecipeOptions) -> MapPartial | None:
        raw = read_tables(
            report_path,
            options.use_cache,
            {**_SESSION, "GENERIC_EVENTS": ("rawTimestamp", "typeId", "data")},
        )
        if raw is None:
            return None
        start, duration = _session(raw)
        events = filter_time_range(
            raw["GENERIC_EVENTS"],
            options.start_ns,
            options.end_ns,
            ("rawTimestamp", "rawTimestamp"),
        )
        rows = {"t": [], "gpu": [], **{m: [] for m in _METRICS}}
        for t, type_id, data in zip(
            events["rawTimestamp"].tolist(), events["typeId"].tolist(), events["data"].tolist(),
            strict=True,
        ):  # fmt: skip
            try:
                values = json.loads(data)
                metrics = [int(values[m]) for m in _METRICS]
            except (TypeError, ValueError, KeyError):
                continue  # not a GPU metrics sample (nsys's astype(int) fails there)
            rows["t"].append(int(t))
            rows["gpu"].append(int(type_id) & 0xFF)
            for m, v in zip(_METRICS, metrics, strict=True):
                rows[m].append(v)
        samples = pd.DataFrame({k: np.asarray(v, np.int64) for k, v in rows.items()})
        return MapPartial(start, duration, samples=samples)

    def reduce(self, partials: Sequence[FilePartial], options: RecipeOptions) -> RecipeOutput:
        clock = _clock(partials, options.bins)
        edges = np.arange(clock.bins + 1, dtype=np.int64) * clock.bin_size
        frames = []
        for p in partials:
            offset = clock.offset(p.partial)
            samples = p.partial.samples
            t = samples["t"].to_numpy(np.int64) + offset
            keep = (t >= offset) & (t <= p.partial.duration_ns + offset)
            # (edge[i], edge[i + 1]] holds bin i, as pandas.cut with its default right=True.
            index = np.searchsorted(edges, t, side="left") - 1
            keep &= (index >= 0) & (index < clock.bins)
            if not keep.any():
                continue
            binned = samples[keep].assign(Duration=edges[index[keep]], GPU=samples["gpu"][keep])
            means = (
                binned.groupby(["GPU", "Duration"], sort=True)[list(_METRICS)]
                .mean()
                .round(1)
                .reset_index()
            )
            frames.append(means[["Duration", *_METRICS, "GPU"]].assign(File=p.file))
        if not frames:
            raise _no_data(self.name, partials)
        table = pd.concat(frames, ignore_index=True)
        rows = table["File"] + " gpu " + table["GPU"].astype(str)
        title = f"gpu_metric_util_map: SM Active (%) per bin of {clock.bin_size:,d} ns"
        plot = heatmap(table, rows, "Duration", "SM Active", title, "report, GPU")
        summary = (
            f"gpu_metric_util_map: {pluralize(len(table), 'GPU bin')} in "
            f"{pluralize(len(partials), 'report')}, {pluralize(clock.bins, 'bin')} of "
            f"{clock.bin_size:,d} ns; mean SM Active {table['SM Active'].mean():.1f}%"
        )
        return self.output(partials, {"analysis": table}, summary, {"heatmap": plot})
