"""Framework ops of one report and the GPU work and CUDA calls each launched (spec dlprof.md §4).

An *op* is an outermost framework range on a thread: a DLProf marker ``{'mod', 'op', …}`` or a
PyTorch ``emit_nvtx`` range (``aten::conv2d, seq = 0``); ranges inside it (the ``aten::``
chain a call goes through) belong to it. A report with neither counts its innermost NVTX
ranges (those with no range inside them) as its ops. An op's *name* is its path: DLProf's
``funcStack`` when its call-site marker has one, else the enclosing NVTX ranges' labels, as
``/outer/inner/op``, a repeated op under one parent instance numbered ``[2]``, ``[3]``…;
backward ops take the name of the forward op of their autograd sequence number.

GPU work (kernels, memcpy, memset) is joined to its launching call by
:func:`analysis.projection.api_index_of`, and a call to the ranges containing it on its
thread by :func:`analysis.nvtx.contained_pairs` (the projection's rules); a call inside no op
is an op of its own, ``unassociated_<API name>`` (spec §3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from strata.analysis.dlprof.markers import (
    TC_KERNEL_PATTERNS,
    MarkerInfo,
    classify_texts,
    is_tc_eligible,
    uses_tensor_cores,
)
from strata.analysis.errors import AnalysisError
from strata.analysis.model import Report
from strata.analysis.names import event_names
from strata.analysis.nvtx import contained_pairs, range_rows, range_texts
from strata.analysis.projection import api_index_of, range_levels, range_parents
from strata.analysis.schema import pid_of

__all__ = ["GPU_TABLES", "OpData", "RangeTree", "attribute_ops", "range_tree"]

#: GPU work an op's GPU time counts (spec §6: kernels and memory operations): DLProf's
#: definition, not the registry's GPU kinds (a new GPU kind would not join it by itself).
GPU_TABLES = ("kernels", "memcpy", "memset")
_UNASSOCIATED = "unassociated_"


@dataclass(frozen=True)
class RangeTree:
    """The NVTX ranges of a report used for ops: positions, nesting and what each is.

    ``parent`` indexes these arrays (-1 for a root); ``text_code`` indexes ``info``.
    """

    rows: np.ndarray
    tid: np.ndarray
    start_ns: np.ndarray
    end_ns: np.ndarray
    parent: np.ndarray
    level: np.ndarray
    text_code: np.ndarray
    texts: np.ndarray
    info: MarkerInfo


@dataclass(frozen=True)
class OpData:
    """The ops of one report and the GPU work they launched.

    Attributes
    ----------
    ops
        One row per op instance: ``op_name``, ``op_type``, ``direction`` ('fprop', 'bprop',
        '' for unassociated calls), ``tc_eligible`` (bool), ``tid`` (global tid),
        ``start_ns``, ``end_ns``, ``cpu_ns`` (range duration), ``api_ns`` (time in its CUDA
        API calls), ``gpu_ns`` (Σ durations of its kernels, memcpy and memset),
        ``kernels`` (launch count), ``tc_gpu_ns`` (GPU time of Tensor Core kernels),
        ``is_unassociated`` (bool), ``nvtx_row`` (the op's range: row of ``report.nvtx``, -1
        for an unassociated call), ``api_row`` (an unassociated call: row of
        ``report.cuda_api``, else -1). int64 times in ns.
    gpu
        One row per GPU operation: ``table`` (kernels/memcpy/memset), ``op`` (row of
        ``ops``, -1 when its launch is unknown), ``device_id``, ``start_ns``, ``end_ns``,
        ``api_start_ns``, ``api_end_ns`` (its launching call, -1 when unknown), ``row``.
    tree
        The ranges the ops came from.
    framework
        'PyTorch' when the report has framework ranges, else 'NVTX'.
    """

    ops: pd.DataFrame
    gpu: pd.DataFrame
    tree: RangeTree
    framework: str


def _domain_filter(report: Report, rows: np.ndarray, domains: Sequence[str] | None) -> np.ndarray:
    """Keep the ranges of the named NVTX domains ('default' is the unnamed domain 0)."""
    if domains is None:
        return rows
    nvtx = report.nvtx
    known = report.nvtx_domains
    names = {
        (int(p), int(d)): str(n) for p, d, n in known[["pid", "domain_id", "name"]].to_numpy()
    } if len(known) else {}  # fmt: skip
    wanted = set(domains)
    missing = wanted - set(names.values()) - {"default"}
    if missing:
        have = ", ".join(sorted({"default", *names.values()}))
        raise AnalysisError(
            f"{report.name}: no NVTX domain {sorted(missing)[0]!r}; the report has: {have}"
        )
    pids = pid_of(nvtx["global_tid"][rows])
    dom = nvtx["domain_id"][rows]
    keep = np.isin(dom, [0]) if "default" in wanted else np.zeros(len(rows), dtype=bool)
    for (pid, dom_id), name in names.items():
        if name in wanted:
            keep |= (pids == pid) & (dom == dom_id)
    return rows[keep]


def range_tree(report: Report, domains: Sequence[str] | None = None) -> RangeTree:
    """Return the report's same-thread NVTX ranges (of ``domains``), nested and classified."""
    nvtx = report.nvtx
    rows = _domain_filter(report, range_rows(report, same_thread_only=True), domains)
    start = nvtx["start_ns"][rows]
    end = np.where(nvtx["is_open"][rows].astype(bool), report.nvtx_max_ns, nvtx["end_ns"][rows])
    tid = nvtx["global_tid"][rows]
    parent = range_parents(tid, start, end, nvtx["row_id"][rows])
    level = range_levels(parent)
    if (level < 0).any():
        # Identical twins point at each other (the projection's rule); cut each such cycle
        # at its first range so that every range has a level.
        idx = np.arange(len(parent))
        up = np.maximum(parent, 0)
        cycle = (level < 0) & (parent >= 0) & (parent[up] == idx) & (idx < parent)
        parent = np.where(cycle, -1, parent)
        level = range_levels(parent)
    codes, texts = pd.factorize(pd.Series(range_texts(report, rows), dtype=object).fillna(""))
    texts = np.asarray(texts, dtype=object)
    return RangeTree(rows, tid, start, end, parent, level, codes.astype(np.int64), texts,
                     classify_texts(texts.tolist()))  # fmt: skip


def _by_level(level: np.ndarray) -> list[np.ndarray]:
    order = np.argsort(level, kind="stable")
    cuts = np.flatnonzero(np.diff(level[order])) + 1
    return np.split(order, cuts)


def _op_ranges(tree: RangeTree) -> tuple[np.ndarray, np.ndarray]:
    """Per range: whether it is an op, and its op (the outermost op range around it), or -1."""
    info = tree.info
    is_op = info.is_op[tree.text_code]
    if not is_op.any() and len(is_op):
        has_child = np.bincount(tree.parent[tree.parent >= 0], minlength=len(is_op)) > 0
        is_op = ~has_child  # no framework ranges: the innermost ranges are the ops
    op_of = np.full(len(is_op), -1, dtype=np.int64)
    for at in _by_level(tree.level):
        up = tree.parent[at]
        inherited = np.where(up >= 0, op_of[np.maximum(up, 0)], -1)
        op_of[at] = np.where(inherited >= 0, inherited, np.where(is_op[at], at, -1))
    return op_of == np.arange(len(op_of)), op_of


def _group_paths(tree: RangeTree, op_of: np.ndarray) -> np.ndarray:
    """Per range outside every op, its path ``/a/b/`` of labels (call-site markers skipped)."""
    info = tree.info
    label = info.label[tree.text_code]
    skip = info.is_trace[tree.text_code]
    paths = np.full(len(op_of), "/", dtype=object)
    for at in _by_level(tree.level):
        up = tree.parent[at]
        base = np.where(up >= 0, paths[np.maximum(up, 0)], "/")
        own = ~skip[at] & (op_of[at] < 0)
        # One string per distinct (parent path, label), not per range.
        pairs = pd.DataFrame({"b": base, "l": label[at]})
        codes, uniq = pd.MultiIndex.from_frame(pairs).factorize()
        joined = np.array([b + lab + "/" for b, lab in uniq], dtype=object)[codes]
        paths[at] = np.where(own, joined, base)
    return paths


def _op_names(tree: RangeTree, op_idx: np.ndarray, paths: np.ndarray) -> np.ndarray:
    """Op Name per op range: DLProf's funcStack, else its parent's path + label (+ ``[k]``)."""
    info = tree.info
    up = tree.parent[op_idx]
    has_up = up >= 0
    up_code = tree.text_code[np.maximum(up, 0)]
    stack = np.where(has_up, info.func_stack[up_code], "")
    label = info.label[tree.text_code[op_idx]]
    base = np.where(has_up, paths[np.maximum(up, 0)], "/")
    # The k-th op of one label under one parent instance is ``label[k]`` (DLProf's ``(k)``).
    frame = pd.DataFrame({"p": up, "l": label, "s": tree.start_ns[op_idx]})
    frame["p"] = np.where(has_up, up, -1 - tree.tid[op_idx] % (1 << 40))
    order = frame.sort_values("s", kind="stable").index
    nth = frame.loc[order].groupby(["p", "l"], sort=False).cumcount().reindex(frame.index) + 1
    nth = nth.to_numpy(np.int64)
    suffix = np.where(nth > 1, np.char.add("[", np.char.add(nth.astype(str), "]")), "")
    generic = np.array([b + lab + s for b, lab, s in zip(base, label, suffix, strict=True)],
                       dtype=object)  # fmt: skip
    return np.where(stack != "", stack, generic)


def _link_backward(tree: RangeTree, op_of: np.ndarray, ops: pd.DataFrame) -> None:
    """Backward ops take the name and type of the forward op of their sequence number."""
    info = tree.info
    seq = info.seq[tree.text_code]
    bwd = info.is_backward[tree.text_code]
    pid = pid_of(tree.tid)
    fwd = np.flatnonzero((seq >= 0) & ~bwd & (op_of >= 0))
    back = ops.index[ops["is_backward_range"].to_numpy()]
    if not len(fwd) or not len(back):
        return
    # Every op range is a row of ``ops``: the row of each forward range's op.
    row_of = pd.Series(ops.index, index=ops["range"]).reindex(op_of[fwd]).to_numpy(np.int64)
    forward = pd.DataFrame({"pid": pid[fwd], "seq": seq[fwd], "t": tree.start_ns[fwd],
                            "op": row_of})  # fmt: skip
    forward = forward[ops["direction"].to_numpy()[row_of] == "fprop"]
    ranges = ops.loc[back, "range"].to_numpy()
    wanted = pd.DataFrame({"pid": pid[ranges], "seq": seq[ranges],
                           "t": ops.loc[back, "start_ns"].to_numpy(), "back": back})  # fmt: skip
    if forward.empty:
        return
    linked = pd.merge_asof(
        wanted.sort_values("t"), forward.sort_values("t"), on="t", by=["pid", "seq"],
        direction="backward",
    ).dropna(subset=["op"])  # fmt: skip
    src = linked["op"].to_numpy(np.int64)
    dst = linked["back"].to_numpy(np.int64)
    ops.loc[dst, "op_name"] = ops.loc[src, "op_name"].to_numpy()
    ops.loc[dst, "op_type"] = ops.loc[src, "op_type"].to_numpy()


def _range_ops(tree: RangeTree) -> tuple[pd.DataFrame, np.ndarray]:
    """The op instances of the ranges, and per range the row of its op (-1: none)."""
    is_op, op_of = _op_ranges(tree)
    op_idx = np.flatnonzero(is_op)
    paths = _group_paths(tree, op_of)
    info = tree.info
    code = tree.text_code[op_idx]
    names = _op_names(tree, op_idx, paths)
    op_type = np.where(info.op_type[code] != "", info.op_type[code], info.label[code])
    # bprop: the op or a range inside it is a backward range, or its path says backward.
    bwd_inside = np.zeros(len(op_of), dtype=bool)
    inside = op_of >= 0
    np.logical_or.at(bwd_inside, op_of[inside], info.is_backward[tree.text_code][inside])
    says = pd.Series(names, dtype=object).str.contains("backward", case=False, regex=False)
    direction = np.where(bwd_inside[op_idx] | says.to_numpy(bool), "bprop", "fprop")
    ops = pd.DataFrame({
        "op_name": names, "op_type": op_type.astype(object), "direction": direction,
        "tid": tree.tid[op_idx], "start_ns": tree.start_ns[op_idx], "end_ns": tree.end_ns[op_idx],
        "range": op_idx, "is_backward_range": info.is_backward[code],
        "nvtx_row": tree.rows[op_idx].astype(np.int64), "api_row": np.int64(-1),
    })  # fmt: skip
    _link_backward(tree, op_of, ops)
    row_of_op = np.full(len(op_of), -1, dtype=np.int64)
    row_of_op[op_idx] = np.arange(len(op_idx))
    return ops, np.where(op_of >= 0, row_of_op[np.maximum(op_of, 0)], -1)


def _gpu_ops(report: Report, tc_patterns: Sequence[str]) -> pd.DataFrame:
    parts = []
    api = report.cuda_api
    for name in GPU_TABLES:
        table = report.tables[name]
        rows = np.arange(len(table), dtype=np.int64)
        part = pd.DataFrame({
            "table": name, "row": rows, "device_id": table["device_id"],
            "start_ns": table.start_ns, "end_ns": table.end_ns,
            "api": api_index_of(report, table["correlation_id"], table["global_pid"]),
        })  # fmt: skip
        short = event_names(report, name, rows, kernel_name="base")
        long = event_names(report, name, rows)
        part["name"] = short.labels[short.codes] if len(rows) else np.empty(0, object)
        part["long_name"] = long.labels[long.codes] if len(rows) else np.empty(0, object)
        part["uses_tc"] = False
        if name == "kernels" and len(rows):
            # Decided per distinct name (a run launches few kernel names many times).
            tc = uses_tensor_cores(long.labels, tc_patterns) | uses_tensor_cores(
                short.labels, tc_patterns
            )
            part["uses_tc"] = (
                tc[long.codes] | uses_tensor_cores(short.labels, tc_patterns)[short.codes]
            )
            for axis in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z"):
                part[axis] = table[axis]
        parts.append(part)
    gpu = pd.concat(parts, ignore_index=True)
    has = gpu["api"].to_numpy() >= 0
    at = np.maximum(gpu["api"].to_numpy(), 0)
    gpu["api_start_ns"] = np.where(has, api.start_ns[at] if len(api) else -1, -1)
    gpu["api_end_ns"] = np.where(has, api.end_ns[at] if len(api) else -1, -1)
    return gpu


def attribute_ops(
    report: Report,
    domains: Sequence[str] | None = None,
    tc_patterns: Sequence[str] = TC_KERNEL_PATTERNS,
) -> OpData:
    """Find the ops of ``report`` and attribute its CUDA calls and GPU work to them.

    Parameters
    ----------
    report
        A loaded (complete) report.
    domains
        NVTX domain names whose ranges count ('default' for the unnamed one); None: all.
    tc_patterns
        Kernel name substrings that mean Tensor Core use (:data:`TC_KERNEL_PATTERNS`).

    Returns
    -------
    OpData

    Raises
    ------
    AnalysisError
        A named domain is not in the report.
    """
    tree = range_tree(report, domains)
    ops, op_row = _range_ops(tree)
    api = report.cuda_api
    r_idx, c_idx = contained_pairs(tree.tid, tree.start_ns, tree.end_ns,
                                   api["global_tid"], api.start_ns, api.end_ns)  # fmt: skip
    call_op = np.full(len(api), -1, dtype=np.int64)
    np.maximum.at(call_op, c_idx, op_row[r_idx])
    # A call in no op is an op of its own: unassociated_<API name> (spec §3).
    loose = np.flatnonzero(call_op < 0)
    names = event_names(report, "cuda_api", loose)
    loose_ops = pd.DataFrame({
        "op_name": _UNASSOCIATED + names.labels[names.codes].astype(object),
        "direction": "", "tid": api["global_tid"][loose], "start_ns": api.start_ns[loose],
        "end_ns": api.end_ns[loose], "range": -1, "is_backward_range": False,
        "nvtx_row": np.int64(-1), "api_row": loose.astype(np.int64),
    })  # fmt: skip
    loose_ops["op_type"] = loose_ops["op_name"]
    call_op[loose] = len(ops) + np.arange(len(loose))
    ops = pd.concat([ops, loose_ops], ignore_index=True)
    ops["is_unassociated"] = ops["range"].to_numpy() < 0
    ops["cpu_ns"] = ops["end_ns"] - ops["start_ns"]
    ops["api_ns"] = np.bincount(call_op, weights=api.duration_ns, minlength=len(ops)).astype(
        np.int64
    )
    gpu = _gpu_ops(report, tc_patterns)
    api_rows = gpu["api"].to_numpy()
    gpu["op"] = np.where(api_rows >= 0, call_op[np.maximum(api_rows, 0)] if len(api) else -1, -1)
    ops["tc_eligible"] = is_tc_eligible(ops["op_type"].astype(str)) & ~ops["is_unassociated"]
    has_op = gpu["op"].to_numpy() >= 0
    dur = (gpu["end_ns"] - gpu["start_ns"]).to_numpy(np.int64)
    ops["gpu_ns"] = np.bincount(gpu["op"][has_op], weights=dur[has_op], minlength=len(ops))
    ops["gpu_ns"] = ops["gpu_ns"].astype(np.int64)
    is_kernel = has_op & (gpu["table"].to_numpy() == "kernels")
    ops["kernels"] = np.bincount(gpu["op"][is_kernel], minlength=len(ops)).astype(np.int64)
    is_tc = is_kernel & gpu["uses_tc"].to_numpy(bool)
    ops["tc_gpu_ns"] = np.bincount(gpu["op"][is_tc], weights=dur[is_tc], minlength=len(ops)).astype(
        np.int64
    )
    framework = "PyTorch" if tree.info.is_op.any() else "NVTX"
    ops = ops.drop(columns=["is_backward_range"])
    return OpData(ops=ops, gpu=gpu, tree=tree, framework=framework)
