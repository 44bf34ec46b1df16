"""NVTX → GPU projection as ``nsys stats`` computes it (nvtx_gpu_proj_trace / _sum).

spec: nsys-sqlite.md §4.1. Ranges are the push/pop and start/end NVTX rows that ended on the
thread that started them. Every GPU op (kernel, memcpy, memset) is joined to its launching
CUDA API call by (correlationId, process); a range *contains* the op when the call lies
inside it on the same thread (inclusive ends), so an op counts for every enclosing range.
The projected span is the first contained op's start to the last one's end.

Vectorised: ops are reduced per launching call (``np.minimum.at``), the calls of a thread are
sorted by start, and when calls on a thread do not nest (their ends rise with their starts —
always, in practice) the calls inside a range are one contiguous run found by two binary
searches, reduced with one ``reduceat``. Otherwise every (range, call) pair is enumerated.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from strata.analysis.errors import AnalysisError
from strata.analysis.model import Report
from strata.analysis.nvtx import contained_pairs, range_labels, range_rows, range_styles
from strata.analysis.schema import global_pid_of, pid_of, tid_of

__all__ = [
    "PROJECTION_COLUMNS",
    "Projection",
    "api_index_of",
    "api_matches",
    "correlated_row",
    "project_nvtx",
    "projection_details",
    "range_levels",
    "range_parents",
    "range_stacks",
]

_I64_MAX = np.iinfo(np.int64).max
_I64_MIN = np.iinfo(np.int64).min
#: The GPU ops a CUDA API call launches (spec §4.1: kernels, memcpy and memset).
_OP_TABLES = ("kernels", "memcpy", "memset")

#: Columns of :func:`project_nvtx`.
PROJECTION_COLUMNS = [
    "name",
    "style",
    "range_id",
    "global_tid",
    "pid",
    "tid",
    "start_ns",
    "end_ns",
    "orig_start_ns",
    "orig_end_ns",
    "num_gpu_ops",
    "level",
    "parent_id",
    "num_child",
    "range_stack",
]


class Projection:
    """Projected ranges plus the 2023.4 anonymous row (ops launched outside every range).

    Attributes
    ----------
    frame
        :func:`project_nvtx`'s frame.
    outside
        None, or a dict with ``start_ns``, ``end_ns``, ``num_gpu_ops``, ``pid``, ``tid`` of
        the ops whose launch lies in no range.
    """

    def __init__(self, frame: pd.DataFrame, outside: dict[str, int] | None) -> None:
        self.frame = frame
        self.outside = outside


def project_nvtx(report: Report) -> pd.DataFrame:
    """Project NVTX ranges onto the GPU work they launched (spec §4.1).

    Parameters
    ----------
    report
        A loaded report.

    Returns
    -------
    pandas.DataFrame
        One row per range with at least one GPU op, ordered by ``range_id``:
        ``name`` (str, 2023.4 label), ``style`` ('PushPop'/'StartEnd'), ``range_id`` (int64,
        NVTX_EVENTS rowid), ``global_tid``, ``pid``, ``tid`` (int64), ``start_ns``,
        ``end_ns`` (int64, projected span), ``orig_start_ns``, ``orig_end_ns`` (int64, the
        CPU range), ``num_gpu_ops`` (int64), ``level`` (float64, NaN where the range is not
        reachable from a root, see §4.1 twins), ``parent_id`` (float64 rowid or NaN),
        ``num_child`` (int64, children with GPU work), ``range_stack`` (str, ``:1:2``; ''
        when unreachable).
    """
    return projection_details(report).frame


def projection_details(report: Report) -> Projection:
    """Return the projection plus the anonymous outside-every-range row of the 2023.4 trace."""
    rows = range_rows(report, same_thread_only=True)
    ranges = _range_arrays(report, rows)
    launches = _launches(report)
    per_range, covered = _project(ranges, launches)
    parent = range_parents(ranges["tid"], ranges["start"], ranges["end"], ranges["row_id"])
    nops = per_range["count"]
    has_ops = nops > 0
    num_child = np.bincount(parent[(parent >= 0) & has_ops], minlength=len(rows))
    level = range_levels(parent)
    stacks = range_stacks(parent, level, ranges["row_id"], has_ops)
    out = np.flatnonzero(has_ops)
    out = out[np.argsort(ranges["row_id"][out], kind="stable")]
    nvtx = report.nvtx
    gtid = ranges["tid"][out]
    parent_out = parent[out]
    reachable = level[out] >= 0
    frame = pd.DataFrame(
        {
            "name": range_labels(report, rows[out]),
            "style": range_styles(nvtx["event_type"][rows[out]]),
            "range_id": ranges["row_id"][out],
            "global_tid": gtid,
            "pid": pid_of(gtid),
            "tid": tid_of(gtid),
            "start_ns": per_range["start"][out],
            "end_ns": per_range["end"][out],
            "orig_start_ns": ranges["start"][out],
            "orig_end_ns": ranges["end"][out],
            "num_gpu_ops": nops[out].astype(np.int64),
            "level": np.where(reachable, level[out], np.nan),
            "parent_id": np.where(
                reachable & (parent_out >= 0),
                ranges["row_id"][np.maximum(parent_out, 0)].astype(np.float64),
                np.nan,
            ),
            "num_child": num_child[out].astype(np.int64),
            "range_stack": stacks[out],
        },
        columns=PROJECTION_COLUMNS,
    )
    return Projection(frame, _outside(launches, covered))


def _range_arrays(report: Report, rows: np.ndarray) -> dict[str, np.ndarray]:
    nvtx = report.nvtx
    start = nvtx["start_ns"][rows]
    end = nvtx["end_ns"][rows].copy()
    is_open = nvtx["is_open"][rows].astype(bool)
    if is_open.any():
        # spec §4.1: an unclosed range ends at the largest start/end of the range rows.
        all_rows = range_rows(report)
        closed = ~nvtx["is_open"][all_rows].astype(bool)
        ends = nvtx["end_ns"][all_rows][closed]
        m = max(int(nvtx["start_ns"][all_rows].max()), int(ends.max()) if len(ends) else 0)
        end[is_open] = m
    return {"tid": nvtx["global_tid"][rows], "start": start, "end": end,
            "row_id": nvtx["row_id"][rows]}  # fmt: skip


def _launches(report: Report) -> dict[str, np.ndarray]:
    """Return the CUDA API calls that launched GPU ops, with their ops' first start/last end."""
    ops = [report.tables[k] for k in _OP_TABLES]
    op_start = np.concatenate([t.start_ns for t in ops])
    op_end = np.concatenate([t.end_ns for t in ops])
    op_idx, op_api = api_matches(
        report, np.concatenate([t["correlation_id"] for t in ops]),
        np.concatenate([t["global_pid"] for t in ops]),
    )  # fmt: skip
    api = report.cuda_api
    first = np.full(len(api), _I64_MAX, dtype=np.int64)
    last = np.full(len(api), _I64_MIN, dtype=np.int64)
    np.minimum.at(first, op_api, op_start[op_idx])
    np.maximum.at(last, op_api, op_end[op_idx])
    idx = np.flatnonzero(first != _I64_MAX)
    return {
        "corr_key": (global_pid_of(api["global_tid"][idx]) ^ api["correlation_id"][idx]),
        # An op matched by two API rows: old exports repeat calls (see api_matches).
        "repeated": np.array(len(op_idx) > 0 and bool(np.any(op_idx[1:] == op_idx[:-1]))),
        "tid": api["global_tid"][idx],
        "start": api.start_ns[idx],
        "end": api.end_ns[idx],
        "gpu_start": first[idx],
        "gpu_end": last[idx],
    }


def api_index_of(
    report: Report, correlation_ids: np.ndarray, global_pids: np.ndarray
) -> npt.NDArray[np.int64]:
    """Return, per GPU op, the first row of ``report.cuda_api`` that launched it, or -1."""
    op_idx, api_idx = api_matches(report, correlation_ids, global_pids)
    out = np.full(len(correlation_ids), -1, dtype=np.int64)
    out[op_idx[::-1]] = api_idx[::-1]
    return out


def correlated_row(
    report: Report, table: str, row: int, op_tables: tuple[str, ...] = _OP_TABLES
) -> tuple[str, int] | None:
    """Return the correlated partner of one event, by :func:`api_matches`'s join rule.

    For a GPU op (row ``row`` of table ``table``, one of ``op_tables``), the first CUDA API
    call that launched it: ``("cuda_api", api row)``; for a CUDA API call, the first op it
    launched, looking in ``op_tables`` in order. None when there is none. One scan of the
    correlation ids (a tooltip's cost), not the whole join.
    """
    api = report.cuda_api
    if table == "cuda_api":
        corr, gtid = api["correlation_id"][row], api["global_tid"][row]
        for name in op_tables:
            ops = report.tables[name]
            hits = np.flatnonzero(ops["correlation_id"] == corr)
            hits = hits[ops["global_pid"][hits] == global_pid_of(gtid)]
            if len(hits):
                return name, int(hits[0])
        return None
    if table not in op_tables:
        return None
    ops = report.tables[table]
    hits = np.flatnonzero(api["correlation_id"] == ops["correlation_id"][row])
    hits = hits[global_pid_of(api["global_tid"][hits]) == ops["global_pid"][row]]
    return ("cuda_api", int(hits[0])) if len(hits) else None


def api_matches(
    report: Report, correlation_ids: np.ndarray, global_pids: np.ndarray
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Join GPU ops to the CUDA API rows that launched them; return (op index, api row) pairs.

    The match is ``api.correlationId = op.correlationId`` and
    ``op.globalPid = api.globalTid & 0xFFFFFFFFFF000000`` (spec §1.2), an SQL inner join: an
    op matching two API rows (old exports repeat some calls) appears twice, as in nsys.
    Pairs are ordered by op index, then API row.
    """
    api = report.cuda_api
    empty = np.empty(0, np.int64)
    if len(api) == 0 or len(correlation_ids) == 0:
        return empty, empty
    api_gpid = global_pid_of(api["global_tid"])
    n_api = len(api)
    if (
        int(api_gpid.min())
        == int(api_gpid.max())
        == int(global_pids.min())
        == int(global_pids.max())
    ):
        # One process (the usual case): no need to number processes.
        n_procs, proc = 1, np.zeros(n_api + len(global_pids), dtype=np.int64)
    else:
        codes, uniques = pd.factorize(np.concatenate([api_gpid, global_pids]), sort=False)
        n_procs, proc = len(uniques), codes.astype(np.int64)
    corr_all = np.concatenate([api["correlation_id"], correlation_ids]).astype(np.int64)
    corr_min = int(corr_all.min())
    span = int(corr_all.max()) - corr_min + 1
    slot = proc * span + (corr_all - corr_min)
    if n_procs * span <= 4 * len(slot) + 1024:
        # Correlation ids are dense per process: a direct table instead of sort + search
        # (10 M ops: 0.1 s instead of 3 s here).
        table = np.full(n_procs * span, -1, dtype=np.int64)
        hits = np.bincount(slot[:n_api], minlength=n_procs * span)
        if hits.max(initial=0) <= 1:
            table[slot[:n_api]] = np.arange(n_api, dtype=np.int64)
            found = table[slot[n_api:]]
            op_idx = np.flatnonzero(found >= 0)
            return op_idx, found[op_idx]
    if span.bit_length() + n_procs.bit_length() > 62:
        raise AnalysisError(f"{report.name}: correlation ids too wide to join")
    key = (proc << span.bit_length()) | (corr_all - corr_min)
    api_key, op_key = key[:n_api], key[n_api:]
    order = np.argsort(api_key, kind="stable")
    sorted_key = api_key[order]
    lo = np.searchsorted(sorted_key, op_key, side="left")
    hi = np.searchsorted(sorted_key, op_key, side="right")
    counts = hi - lo
    if counts.max(initial=0) <= 1:
        op_idx = np.flatnonzero(counts)
        return op_idx, order[lo[op_idx]].astype(np.int64)
    op_idx = np.repeat(np.arange(len(op_key), dtype=np.int64), counts)
    first = np.repeat(lo - (np.cumsum(counts) - counts), counts)
    return op_idx, order[first + np.arange(len(op_idx))].astype(np.int64)


def _thread_time_keys(
    tid_parts: list[np.ndarray], time_parts: list[np.ndarray]
) -> list[np.ndarray] | None:
    """Return int64 keys ordering by (thread, time) for several arrays, or None if too wide.

    Threads are numbered by hashing (``pd.factorize``: 0.2 s for 22 M ids where a sorting
    ``np.unique`` took 4 s); any numbering works as long as all parts share it.
    """
    tids = np.concatenate(tid_parts)
    if len(tids) == 0:
        return [np.empty(0, np.int64) for _ in tid_parts]
    codes, uniques = pd.factorize(tids, sort=False)
    t_min = min(int(t.min()) for t in time_parts if len(t))
    t_max = max(int(t.max()) for t in time_parts if len(t))
    span = t_max - t_min + 2
    if span.bit_length() + len(uniques).bit_length() > 62:
        return None
    key = codes.astype(np.int64)
    key *= span
    key += np.concatenate(time_parts) - t_min
    cuts = np.cumsum([len(p) for p in tid_parts])[:-1]
    return np.split(key, cuts)


def _project(
    ranges: dict[str, np.ndarray], launches: dict[str, np.ndarray]
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Return per-range projected start/end/count and, per launch, whether a range holds it."""
    n_r, n_l = len(ranges["start"]), len(launches["start"])
    keys = _thread_time_keys(
        [ranges["tid"], ranges["tid"], launches["tid"], launches["tid"]],
        [ranges["start"], ranges["end"], launches["start"], launches["end"]],
    )
    # Old exports repeat some API rows (same correlation id): count distinct ids exactly then.
    distinct = not bool(launches.get("repeated", False))
    if keys is not None and n_l and distinct:
        r_start_key, r_end_key, l_start_key, l_end_key = keys
        order = np.argsort(l_start_key, kind="stable")
        end_sorted = l_end_key[order]
        if not np.all(end_sorted[1:] >= end_sorted[:-1]):
            # Zero-length calls sharing a start with a longer one: order ties by end too.
            order = np.lexsort((l_end_key, l_start_key))
            end_sorted = l_end_key[order]
        if np.all(end_sorted[1:] >= end_sorted[:-1]):
            lo = np.searchsorted(l_start_key[order], r_start_key, side="left")
            hi = np.searchsorted(end_sorted, r_end_key, side="right")
            return _reduce_runs(launches, order, lo, np.maximum(hi, lo))
    r_idx, l_idx = contained_pairs(
        ranges["tid"], ranges["start"], ranges["end"],
        launches["tid"], launches["start"], launches["end"],
    )  # fmt: skip
    start = np.full(n_r, _I64_MAX, dtype=np.int64)
    end = np.full(n_r, _I64_MIN, dtype=np.int64)
    np.minimum.at(start, r_idx, launches["gpu_start"][l_idx])
    np.maximum.at(end, r_idx, launches["gpu_end"][l_idx])
    covered = np.zeros(n_l, dtype=bool)
    covered[l_idx] = True
    pairs = pd.DataFrame({"r": r_idx, "k": launches["corr_key"][l_idx]}).drop_duplicates()
    count = np.bincount(pairs["r"].to_numpy(np.int64), minlength=n_r)
    return {"start": start, "end": end, "count": count}, covered


def _reduce_runs(
    launches: dict[str, np.ndarray], order: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    n_l = len(order)
    count = hi - lo
    gpu_start = launches["gpu_start"][order]
    gpu_end = launches["gpu_end"][order]
    # reduceat over interleaved [lo, hi) bounds; an index must be < n, so a run reaching the
    # end stops one short and takes the last value in afterwards.
    at_end = hi == n_l
    bounds = np.empty(2 * len(lo), dtype=np.int64)
    bounds[0::2] = np.minimum(lo, n_l - 1)
    bounds[1::2] = np.minimum(hi, n_l - 1)
    if len(bounds):
        start = np.minimum.reduceat(gpu_start, bounds)[0::2]
        end = np.maximum.reduceat(gpu_end, bounds)[0::2]
        tail = at_end & (count > 0)
        start[tail] = np.minimum(start[tail], gpu_start[-1])
        end[tail] = np.maximum(end[tail], gpu_end[-1])
    else:
        start = end = np.empty(0, np.int64)
    # Launches inside at least one range: a +1/-1 sweep over the runs.
    sweep = np.zeros(n_l + 1, dtype=np.int32)
    np.add.at(sweep, lo[count > 0], 1)
    np.add.at(sweep, hi[count > 0], -1)
    covered = np.zeros(n_l, dtype=bool)
    covered[order] = np.cumsum(sweep[:-1]) > 0
    return {"start": start, "end": end, "count": count}, covered


def _outside(launches: dict[str, np.ndarray], covered: np.ndarray) -> dict[str, int] | None:
    out = np.flatnonzero(~covered)
    if len(out) == 0:
        return None
    gtid = int(launches["tid"][out[0]])
    return {
        "start_ns": int(launches["gpu_start"][out].min()),
        "end_ns": int(launches["gpu_end"][out].max()),
        "num_gpu_ops": (
            len(pd.unique(launches["corr_key"][out])) if launches.get("repeated") else len(out)
        ),
        "pid": int(pid_of(gtid)),
        "tid": int(tid_of(gtid)),
    }


def range_parents(
    tid: np.ndarray, start_ns: np.ndarray, end_ns: np.ndarray, row_id: np.ndarray
) -> npt.NDArray[np.int64]:
    """Return each range's tightest enclosing range on its thread (index, or -1 for roots).

    spec §4.1 step 1: the parent minimises ``(c.start - p.start) + (p.end - c.end)`` among
    ranges ``p != c`` with ``p.start <= c.start`` and ``p.end >= c.end``; ties go to the
    lowest rowid. Identical twins are each other's parent (a cycle, as nsys). Properly
    nested threads use a stack-depth search; threads with crossing ranges are solved
    exactly in blocks.
    """
    n = len(start_ns)
    parent = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return parent
    order = np.lexsort((row_id, -end_ns, start_ns, tid))
    sorted_tid = tid[order]
    thread = np.zeros(n, dtype=np.int64)
    np.cumsum(sorted_tid[1:] != sorted_tid[:-1], out=thread[1:])
    uniq = np.arange(int(thread[-1]) + 1)
    base = np.searchsorted(thread, thread, side="left")
    pos = np.arange(n, dtype=np.int64)
    s, e = start_ns[order], end_ns[order]
    keys = _thread_time_keys([tid[order], tid[order]], [s, e])
    bad_threads = np.zeros(len(uniq), dtype=bool)
    par_sorted = np.full(n, -1, dtype=np.int64)
    if keys is None:
        bad_threads[:] = True
    else:
        start_key, end_key = keys
        # Ranges of this thread that ended by c's start, counting only those sorted before c:
        # zero-length ranges at c's start sort after it (end descending) but end <= start.
        sorted_end = np.sort(end_key)
        closed = np.searchsorted(sorted_end, start_key, side="right") - base
        zero = np.cumsum(s == e)
        block_end = np.searchsorted(start_key, start_key, side="right") - 1
        closed -= zero[block_end] - np.where(pos > 0, zero[np.maximum(pos - 1, 0)], 0)
        # A zero-length range at t sits inside the ranges that end at t (inclusive ends).
        strict = np.searchsorted(sorted_end, start_key, side="left") - base
        closed = np.where(s == e, strict, closed)
        depth = np.maximum(pos - base - closed, 0)
        par_sorted = _stack_parent(thread, depth, pos)
        has = par_sorted >= 0
        p = np.maximum(par_sorted, 0)
        wrong = has & ~((s[p] <= s) & (e[p] >= e))
        wrong |= (depth > 0) & ~has
        bad_threads[np.unique(thread[wrong])] = True
    par_sorted = _twin_parents(thread, s, e, par_sorted)
    for t in np.flatnonzero(bad_threads).tolist():
        lo, hi = np.searchsorted(thread, [t, t + 1])
        exact = _exact_parents(s[lo:hi], e[lo:hi], row_id[order][lo:hi])
        par_sorted[lo:hi] = np.where(exact >= 0, lo + exact, -1)
    parent[order] = np.where(par_sorted >= 0, order[np.maximum(par_sorted, 0)], -1)
    return parent


def _stack_parent(thread: np.ndarray, depth: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Parent = the last earlier range of the same thread one level up (sorted order)."""
    n = len(pos)
    width = int(depth.max()) + 2
    key = (thread * width + depth) * n + pos
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    want = (thread * width + depth - 1) * n + pos
    idx = np.searchsorted(sorted_key, want, side="left") - 1
    ok = (depth > 0) & (idx >= 0)
    cand = order[np.maximum(idx, 0)]
    ok &= (thread[cand] == thread) & (depth[cand] == depth - 1)
    return np.where(ok, cand, -1)


def _twin_parents(thread: np.ndarray, s: np.ndarray, e: np.ndarray, parent: np.ndarray):
    """Apply the identical-range rule: twins point at each other, children at the first."""
    n = len(s)
    same = np.zeros(n, dtype=bool)
    same[1:] = (thread[1:] == thread[:-1]) & (s[1:] == s[:-1]) & (e[1:] == e[:-1])
    if not same.any():
        return parent
    group_first = np.maximum.accumulate(np.where(~same, np.arange(n), 0))
    size = np.bincount(group_first, minlength=n)
    in_twins = size[group_first] > 1
    parent = parent.copy()
    has = parent >= 0
    parent[has] = group_first[parent[has]]
    # Sorted order puts the lowest rowid first: it points at the second, others at it.
    is_first = in_twins & ~same
    parent[is_first] = np.flatnonzero(is_first) + 1
    parent[in_twins & same] = group_first[in_twins & same]
    return parent


def _exact_parents(s: np.ndarray, e: np.ndarray, row_id: np.ndarray) -> np.ndarray:
    """Tightest enclosing range by brute force in blocks (threads with crossing ranges)."""
    m = len(s)
    by_row = np.argsort(row_id, kind="stable")
    ps, pe = s[by_row], e[by_row]
    out = np.full(m, -1, dtype=np.int64)
    block = max(1, 4_000_000 // max(m, 1))
    for lo in range(0, m, block):
        cs, ce = s[lo : lo + block, None], e[lo : lo + block, None]
        ok = (ps[None, :] <= cs) & (pe[None, :] >= ce)
        ok &= by_row[None, :] != np.arange(lo, min(lo + block, m))[:, None]
        cost = np.where(ok, (cs - ps[None, :]) + (pe[None, :] - ce), _I64_MAX)
        best = np.argmin(cost, axis=1)
        found = cost[np.arange(len(best)), best] != _I64_MAX
        out[lo : lo + block] = np.where(found, by_row[best], -1)
    return out


def range_levels(parent: np.ndarray) -> npt.NDArray[np.int64]:
    """Depth from a root (-1 where a cycle of twins makes the range unreachable).

    Pointer doubling: each round adds the distance to the current ancestor and jumps to its
    ancestor, so ``log2(n)`` rounds reach every root. A level-by-level walk took one round
    per level: 200,000 nested ranges on one thread cost 200,000 passes over all ranges.
    """
    n = len(parent)
    up = parent.astype(np.int64, copy=True)
    dist = (up >= 0).astype(np.int64)
    for _ in range(max(1, n.bit_length()) + 1):
        live = np.flatnonzero(up >= 0)
        if not len(live):
            break
        nxt = up[live]
        dist[live] += dist[nxt]
        up[live] = up[nxt]
    # Still pointing somewhere after enough rounds for any chain: a cycle (twins).
    return np.where(up >= 0, -1, dist)


#: Characters of range-stack text built at most (~1 GiB): deeper nesting is refused.
_MAX_STACK_CHARS = 1 << 30


def range_stacks(
    parent: np.ndarray,
    level: np.ndarray,
    row_id: np.ndarray,
    wanted: np.ndarray | None = None,
) -> np.ndarray:
    """``:root:...:self`` rowid paths of the ``wanted`` ranges (None: all); '' for others.

    The projection shows only ranges with GPU work, and their parents have GPU work too (a
    parent holds its child), so only the output's strings are built: 200,000 nested ranges
    without GPU work cost nothing here, where every range's path (quadratic in the depth)
    once exhausted memory.

    Raises
    ------
    AnalysisError
        The paths would exceed :data:`_MAX_STACK_CHARS` (ranges nested tens of thousands
        deep, each shown with its whole path).
    """
    stacks = np.full(len(parent), "", dtype=object)
    chosen = level >= 0 if wanted is None else wanted & (level >= 0)
    rows = np.flatnonzero(chosen)
    if not len(rows):
        return stacks
    width = len(str(int(np.abs(row_id[rows]).max()))) + 2
    chars = int((level[rows].astype(np.int64) + 1).sum()) * width
    if chars > _MAX_STACK_CHARS:
        raise AnalysisError(
            f"NVTX ranges nest {int(level[rows].max()) + 1} deep: their range stacks would "
            f"take ~{chars / 1e9:.1f} GB of text; use a summary without range stacks"
        )
    rows = rows[np.argsort(level[rows], kind="stable")]
    cuts = np.flatnonzero(np.diff(level[rows])) + 1
    ids = np.array([f":{r}" for r in row_id[rows].tolist()], dtype=object)
    for lo, hi in zip(np.r_[0, cuts].tolist(), np.r_[cuts, len(rows)].tolist(), strict=True):
        at = rows[lo:hi]
        up = parent[at]
        # A parent without GPU work (not in ``rows``) starts the path afresh.
        stacks[at] = np.where(up >= 0, stacks[np.maximum(up, 0)], "") + ids[lo:hi]
    return stacks
