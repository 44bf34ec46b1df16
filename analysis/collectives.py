"""Collectives across ranks: find them in every report, match them, measure who waited.

Facts: spec ``collectives.md`` (kernel names §1, NCCL NVTX §2, pitfalls §7, formulas §6) and
``kineto-trace.md`` §6. Per report, the collectives are taken from, in this order:

1. NCCL kernels (``ncclKernel_*``, ``ncclDevKernel_*``, ``ncclSym[k]DevKernel_*``, the
   ``nccl<Coll>…Kernel`` names of NCCL ≤ 2.7): GPU-side, what the formulas are about. A
   Kineto trace that puts torch.distributed metadata on its kernels adds the collective's
   name, process group, message size and sequence number.
2. Without NCCL kernels, a Kineto trace's ``record_param_comms`` ops with a ``Collective
   name`` (CPU-side; ``wait`` markers left out).
3. Without either, ranges of the NVTX domain ``NCCL`` (``ncclAllReduce``…; CPU-side; nsys
   2023.4 exports drop their payloads, so no communicator or size), or a PyTorch trace's
   ``nccl:all_reduce``-style annotations.

The kernel name only says the family (AllReduce, SendRecv…), never the algorithm (§1).
Collectives are grouped by (collective, communicator); the communicator is the process
group where a trace names it, else unknown ("(unknown)": every rank's collectives of that
family are taken as one communicator, and a note says so). Within a group the k-th
occurrence on every rank is one instance (or the same sequence number, where every
occurrence has one). Per instance (§6): arrival skew = last start − first start; the
straggler is the last to start; each rank's wait = min(max(last − start, 0), duration);
its transfer = max(end − max(last, start), 0); the instance's transfer = last end − last
start. Times are on the set's shared axis (:meth:`ReportSet.offsets_ns`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from strata.analysis.kinds import get_kind
from strata.analysis.model import Report
from strata.analysis.timefmt import pluralize

if TYPE_CHECKING:
    from strata.analysis.alignment import TimeAlignment
    from strata.analysis.reportset import ReportSet

__all__ = [
    "OP_COLUMNS",
    "UNKNOWN_COMMUNICATOR",
    "CollectiveMatch",
    "anchored_instance",
    "collective_family",
    "collectives",
    "find_collectives",
    "match_collectives",
]

#: The communicator of collectives whose trace does not name one.
UNKNOWN_COMMUNICATOR = "(unknown)"
#: Starts this close to the last one are ties for the straggler (spec §6.3: 1 µs).
TIE_NS = 1_000

#: Columns of :func:`find_collectives`' frame.
OP_COLUMNS = ("collective", "communicator", "size_bytes", "seq", "start_ns", "end_ns",
              "source", "table", "row", "name")  # fmt: skip

_KERNEL_PATTERNS = (
    re.compile(r"^ncclKernel_([A-Za-z]+?)_(?:RING|TREE|COLLNET|NVLS|PAT)"),  # 2.8-2.18
    re.compile(r"^ncclKernel_([A-Za-z]+)"),
    re.compile(r"^nccl(?:Sym|Symk)?DevKernel_([A-Za-z]+)"),  # 2.19+, symmetric 2.27+
    re.compile(r"^nccl([A-Z][A-Za-z]*?)(?:Ring|Tree|CollNet)[A-Za-z]*Kernel"),  # <= 2.7
)
#: NCCL's NVTX range names (``nccl`` + this) that are collectives (not groups, set-up).
_NVTX_COLLECTIVES = {"AllReduce", "AllGather", "Broadcast", "Reduce", "ReduceScatter", "Send",
                     "Recv", "AlltoAll", "Gather", "Scatter"}  # fmt: skip
#: torch.distributed ``Collective name`` (lower case, letters only, suffixes dropped).
_TORCH_NAMES = {
    "allreduce": "AllReduce", "allgather": "AllGather", "broadcast": "Broadcast",
    "reduce": "Reduce", "reducescatter": "ReduceScatter", "alltoall": "AlltoAll",
    "send": "Send", "recv": "Recv", "gather": "Gather", "scatter": "Scatter",
    "barrier": "Barrier",
}  # fmt: skip
_TORCH_SUFFIXES = ("base", "coalesced", "intotensor", "tensor")


def collective_family(name: str, source: str) -> str | None:
    """Return the collective a name stands for (``AllReduce``, ``SendRecv``…), or None.

    ``source``: ``kernel`` (a kernel's name), ``nvtx`` (an NVTX range's name, with or
    without the ``NCCL:`` domain) or ``kineto`` (a torch ``Collective name``).
    """
    if source == "kernel":
        base = re.sub(r"^_Z\d+", "", name.split("(", 1)[0].strip())
        for pattern in _KERNEL_PATTERNS:
            hit = pattern.match(base)
            if hit:
                return hit.group(1)
        return "Generic" if base.startswith("nccl") and "Kernel" in base else None
    if source == "nvtx":
        if name.startswith("nccl:"):  # a PyTorch trace's annotation: nccl:all_reduce
            return collective_family(name[5:], "kineto")
        text = name[5:] if name.startswith("NCCL:") else name
        family = text[4:] if text.startswith("nccl") else ""
        return family if family in _NVTX_COLLECTIVES else None
    key = re.sub(r"[^a-z]", "", name.lower())
    for suffix in _TORCH_SUFFIXES:
        if key.endswith(suffix) and key[: -len(suffix)] in _TORCH_NAMES:
            key = key[: -len(suffix)]
    return _TORCH_NAMES.get(key)


# --------------------------------------------------------------------------- one report
def _families(labels: np.ndarray, source: str) -> np.ndarray:
    """Per name (a kind's labels), its collective family or None."""
    return np.array(
        [None if t is None else collective_family(str(t), source) for t in labels], dtype=object
    )


def _ops(report: Report, kind_name: str, source: str, keep_family) -> pd.DataFrame:
    """The events of one kind whose name is a collective, as :data:`OP_COLUMNS`."""
    kind = get_kind(kind_name)
    rows = kind.rows(report)
    if not len(rows):
        return _empty_ops()
    names = kind.event_names(report, rows)
    family = _families(names.labels, source)[names.codes]
    hit = np.flatnonzero(np.array([f is not None and keep_family(f) for f in family], bool))
    if not len(hit):
        return _empty_ops()
    return pd.DataFrame({
        "collective": family[hit],
        "communicator": UNKNOWN_COMMUNICATOR,
        "size_bytes": np.full(len(hit), -1, np.int64),
        "seq": np.full(len(hit), -1, np.int64),
        "start_ns": rows.start_ns[hit],
        "end_ns": rows.end_ns[hit],
        "source": source,
        "table": np.asarray(rows.tables, dtype=object)[rows.table_codes[hit]],
        "row": rows.rows[hit],
        "name": names.labels[names.codes[hit]],
    })  # fmt: skip


def _with_torch_args(report: Report, ops: pd.DataFrame, table: str) -> pd.DataFrame:
    """``ops`` with the collective, group, size and sequence the trace attached to them."""
    args = report.collective_args
    if ops.empty or "table" not in args or not len(args):
        return ops
    args = args[args["table"] == table]
    row_ids = report.tables[table]["row_id"][ops["row"].to_numpy(np.int64)]
    where = pd.Index(args["row_id"].to_numpy()).get_indexer(row_ids)
    found = np.flatnonzero(where >= 0)
    if not len(found):
        return ops
    meta = args.iloc[where[found]]
    ops = ops.copy()
    families = [collective_family(str(n), "kineto") for n in meta["collective"]]
    col = ops.columns.get_loc
    ops.iloc[found, col("collective")] = [
        f or ops["collective"].iat[i] for f, i in zip(families, found, strict=True)
    ]
    ops.iloc[found, col("communicator")] = _communicators(meta)
    ops.iloc[found, col("size_bytes")] = meta["size_bytes"].to_numpy(np.int64)
    ops.iloc[found, col("seq")] = meta["seq"].to_numpy(np.int64)
    return ops


def _communicators(meta: pd.DataFrame) -> list[str]:
    out = []
    for group, ranks in zip(meta["group"], meta["group_ranks"], strict=True):
        text = f"pg {group} {ranks}".strip() if group or ranks else ""
        out.append(text or UNKNOWN_COMMUNICATOR)
    return out


def _torch_cpu_ops(report: Report) -> pd.DataFrame:
    """Kineto ``record_param_comms`` ops with a ``Collective name`` (``wait`` left out)."""
    args = report.collective_args
    if "table" not in args or not len(args):
        return _empty_ops()
    kind = get_kind("nvtx")
    rows = kind.rows(report)
    table = kind.tables[0]
    cpu = args[args["table"] == table]
    families = np.array([collective_family(str(n), "kineto") for n in cpu["collective"]], object)
    cpu = cpu[families != None]  # noqa: E711 - 'wait' and unknown names
    if cpu.empty or not len(rows):
        return _empty_ops()
    row_ids = report.tables[table]["row_id"][rows.rows]
    at = pd.Index(row_ids).get_indexer(cpu["row_id"].to_numpy())
    cpu, at = cpu[at >= 0], at[at >= 0]
    names = kind.event_names(report, rows.take(at))
    return pd.DataFrame({
        "collective": [collective_family(str(n), "kineto") for n in cpu["collective"]],
        "communicator": _communicators(cpu),
        "size_bytes": cpu["size_bytes"].to_numpy(np.int64),
        "seq": cpu["seq"].to_numpy(np.int64),
        "start_ns": rows.start_ns[at],
        "end_ns": rows.end_ns[at],
        "source": "kineto",
        "table": table,
        "row": rows.rows[at],
        "name": names.labels[names.codes],
    })  # fmt: skip


def _empty_ops() -> pd.DataFrame:
    kinds = {"size_bytes": np.int64, "seq": np.int64, "start_ns": np.int64,
             "end_ns": np.int64, "row": np.int64}  # fmt: skip
    return pd.DataFrame({c: pd.Series(dtype=kinds.get(c, object)) for c in OP_COLUMNS})


def find_collectives(report: Report) -> pd.DataFrame:
    """Return the collectives of one report, in start order (module docstring for where
    they come from).

    Returns
    -------
    pandas.DataFrame
        ``collective`` (str: ``AllReduce``, ``SendRecv``…), ``communicator`` (str, or
        :data:`UNKNOWN_COMMUNICATOR`), ``size_bytes`` (int64, one rank's message; -1 when
        unknown), ``seq`` (int64, -1 when unknown), ``start_ns``, ``end_ns`` (int64, the
        report's own time base), ``source`` (``kernel``, ``kineto`` or ``nvtx``), ``table``
        and ``row`` (the event's model table and row), ``name`` (str, as the stats spell it).
    """
    if not report.complete:
        return _empty_ops()
    ops = _ops(report, "kernels", "kernel", lambda _f: True)
    ops = _with_torch_args(report, ops, get_kind("kernels").tables[0])
    if ops.empty:
        ops = _torch_cpu_ops(report)
    if ops.empty:
        ops = _ops(report, "nvtx", "nvtx", lambda _f: True)
    order = np.argsort(ops["start_ns"].to_numpy(np.int64), kind="stable")
    return ops.iloc[order].reset_index(drop=True)


# --------------------------------------------------------------------------- across ranks
@dataclass(frozen=True)
class CollectiveMatch:
    """Collectives matched across the reports of a set.

    Attributes
    ----------
    instances
        One row per matched collective: ``collective``, ``communicator`` (str),
        ``instance`` (int64: occurrence index, or sequence number), ``ranks`` (int64,
        reports taking part), ``size_bytes`` (Int64, NA when unknown), ``first_start_ns``,
        ``last_start_ns``, ``end_ns`` (the last end), ``skew_ns`` (last − first start),
        ``end_skew_ns`` (last − first end: how far the ranks' clocks disagree where they
        finish together, what is left after aligning on another collective),
        ``transfer_ns`` (last end − last start), ``total_wait_ns``, ``max_wait_ns`` (int64
        ns, shared axis), ``straggler`` (str, the last report to start), ``straggler_index``
        (int64, its position in the set), ``near_ties`` (int64, other reports starting
        within 1 µs of it). Sorted by ``first_start_ns``.
    ranks
        One row per (instance, report): ``instance_row`` (int64, row of ``instances``),
        ``report`` (str), ``report_index`` (int64), ``start_ns``, ``end_ns`` (shared axis),
        ``wait_ns``, ``transfer_ns`` (int64 ns), ``source``, ``table``, ``row``, ``name``
        (as :func:`find_collectives`).
    summary
        One row per (collective, communicator): ``count``, ``ranks``, ``mean_skew_ns``
        (float64), ``max_skew_ns``, ``total_wait_ns`` (int64), ``worst_straggler`` (str:
        the report whose late starts made the others wait longest), ``straggler_count``
        (int64, instances it was last in), ``caused_wait_ns`` (int64, the waits of those
        instances).
    rank_waits
        One row per (collective, communicator, report): ``wait_ns``, ``wait_share``
        (float64, of the group's total wait; NaN when nobody waited), ``straggler_count``,
        ``instances`` (int64).
    notes
        One line each for what could not be matched, or only with a fallback.
    alignment
        How the reports were put on one axis, in words
        (:func:`analysis.alignment.describe_alignment`; '' when the caller gave offsets
        only): skews depend on it, so every surface shows it next to them.
    """

    instances: pd.DataFrame
    ranks: pd.DataFrame
    summary: pd.DataFrame
    rank_waits: pd.DataFrame
    notes: tuple[str, ...]
    alignment: str = ""


_INSTANCE_INTS = ("instance", "ranks", "first_start_ns", "last_start_ns", "end_ns", "skew_ns",
                  "end_skew_ns", "transfer_ns", "total_wait_ns", "max_wait_ns",
                  "straggler_index", "near_ties")  # fmt: skip
_RANK_INTS = ("instance_row", "report_index", "start_ns", "end_ns", "wait_ns", "transfer_ns",
              "row")  # fmt: skip


def _keys(members: list[pd.DataFrame], labels: list[str], what: str, notes: list[str]):
    """Per member, the instance key of each op (-1: left out), and the keys in order."""
    if all(len(m) and bool((m["seq"].to_numpy() >= 0).all()) for m in members):
        seqs = [m["seq"].to_numpy(np.int64) for m in members]
        keys = np.unique(np.concatenate(seqs))
        partial = sum(1 for k in keys if sum(bool((s == k).any()) for s in seqs) < len(seqs))
        if partial:
            notes.append(f"{what}: {pluralize(partial, 'sequence number')} not seen on "
                         "every rank; those instances are measured over the ranks that have "
                         "them")  # fmt: skip
        return seqs, keys
    counts = [len(m) for m in members]
    count = min(counts)
    if len(set(counts)) > 1:
        each = ", ".join(f"{label} {n}" for label, n in zip(labels, counts, strict=True))
        notes.append(f"{what}: counts differ ({each}); matched the first {count} by order, "
                     "the rest left out (the n-th rule may pair the wrong calls)")  # fmt: skip
    sizes = np.full((len(members), count), -1, np.int64)
    for i, m in enumerate(members):
        sizes[i] = m["size_bytes"].to_numpy(np.int64)[:count]
    known = np.where(sizes >= 0, sizes, sizes.max(axis=0, initial=-1))
    differ = np.flatnonzero((sizes >= 0).any(axis=0) & (known != known[:1]).any(axis=0))
    if len(differ):
        notes.append(f"{what}: message sizes differ at instance {int(differ[0])}; "
                     f"matching stopped there ({pluralize(count - int(differ[0]), 'instance')} "
                     "left out)")  # fmt: skip
        count = int(differ[0])
    index = [np.where(np.arange(len(m)) < count, np.arange(len(m)), -1) for m in members]
    return index, np.arange(count)


def _group(
    members: list[pd.DataFrame], idx: list[int], labels: list[str], offsets: list[int],
    notes: list[str], what: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """Instances and per-rank rows of one (collective, communicator)."""
    keys_of, keys = _keys(members, [labels[i] for i in idx], what, notes)
    k, r = len(keys), len(members)
    start = np.zeros((k, r), np.int64)
    end = np.zeros((k, r), np.int64)
    present = np.zeros((k, r), bool)
    pick = np.full((k, r), -1, np.int64)
    size = np.full(k, -1, np.int64)
    for j, (m, mk) in enumerate(zip(members, keys_of, strict=True)):
        ok = np.flatnonzero(mk >= 0)
        # With sequence numbers a repeated number keeps its first occurrence.
        pos = np.searchsorted(keys, mk[ok])
        first = np.unique(pos, return_index=True)[1]
        pos, ok = pos[first], ok[first]
        start[pos, j] = m["start_ns"].to_numpy(np.int64)[ok] + offsets[idx[j]]
        end[pos, j] = m["end_ns"].to_numpy(np.int64)[ok] + offsets[idx[j]]
        present[pos, j], pick[pos, j] = True, ok
        sizes = m["size_bytes"].to_numpy(np.int64)[ok]
        size[pos] = np.maximum(size[pos], sizes)
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    first = np.where(present, start, big).min(axis=1)
    last = np.where(present, start, small).max(axis=1)
    straggler = np.where(present, start, small).argmax(axis=1)
    last_end = np.where(present, end, small).max(axis=1)
    first_end = np.where(present, end, big).min(axis=1)
    wait = np.where(present, np.minimum(np.maximum(last[:, None] - start, 0), end - start), 0)
    transfer = np.where(present, np.maximum(end - np.maximum(last[:, None], start), 0), 0)
    ties = (present & (last[:, None] - start <= TIE_NS)).sum(axis=1) - 1
    member_label = np.array([labels[i] for i in idx], dtype=object)
    instances = pd.DataFrame({
        "instance": keys, "ranks": present.sum(axis=1), "size_bytes": size,
        "first_start_ns": first, "last_start_ns": last, "end_ns": last_end,
        "skew_ns": last - first, "end_skew_ns": last_end - first_end,
        "transfer_ns": np.maximum(last_end - last, 0),
        "total_wait_ns": wait.sum(axis=1), "max_wait_ns": wait.max(axis=1, initial=0),
        "straggler": member_label[straggler], "straggler_index": np.asarray(idx)[straggler],
        "near_ties": ties,
    })  # fmt: skip
    inst, col = np.nonzero(present)
    picked = pick[inst, col]

    def taken(column: str, dtype=object) -> np.ndarray:
        """Per (instance, rank) present, ``column`` of the rank's op (by array, not row)."""
        out = np.empty(len(inst), dtype)
        for j, m in enumerate(members):
            at = col == j
            out[at] = m[column].to_numpy()[picked[at]]
        return out

    ranks = pd.DataFrame({
        "instance_row": inst, "report": member_label[col], "report_index": np.asarray(idx)[col],
        "start_ns": start[inst, col], "end_ns": end[inst, col], "wait_ns": wait[inst, col],
        "transfer_ns": transfer[inst, col],
        "source": taken("source"), "table": taken("table"), "row": taken("row", np.int64),
        "name": taken("name"),
    })  # fmt: skip
    return instances, ranks


def match_collectives(
    ops: Sequence[pd.DataFrame], labels: Sequence[str], offsets_ns: Sequence[int] | None = None
) -> CollectiveMatch:
    """Match the collectives of several reports (module docstring for the rules).

    Parameters
    ----------
    ops
        Per report, :func:`find_collectives` of it.
    labels
        Per report, its label (what ``straggler`` and ``report`` say).
    offsets_ns
        Per report, the ns added to its times on the shared axis (default 0).

    Returns
    -------
    CollectiveMatch
    """
    labels = [str(label) for label in labels]
    offsets = [int(o) for o in (offsets_ns or [0] * len(ops))]
    notes: list[str] = []
    for label, frame in zip(labels, ops, strict=True):
        if frame.empty:
            notes.append(f"{label}: no collectives found (no NCCL kernels, torch.distributed "
                         "records or NCCL NVTX ranges)")  # fmt: skip
    sources = {s for frame in ops for s in frame["source"].unique()}
    if len(sources) > 1:
        notes.append(f"ranks measured on different sides ({', '.join(sorted(sources))}): "
                     "GPU kernel and CPU call times are compared as they are")  # fmt: skip
    groups: dict[tuple[str, str], list[int]] = {}
    for i, frame in enumerate(ops):
        for key in frame[["collective", "communicator"]].drop_duplicates().itertuples(False):
            groups.setdefault((key[0], key[1]), []).append(i)
    parts, rank_parts, done = [], [], 0
    for (family, comm), idx in sorted(groups.items()):
        what = family if comm == UNKNOWN_COMMUNICATOR else f"{family} on {comm}"
        members = [ops[i][(ops[i]["collective"] == family) & (ops[i]["communicator"] == comm)]
                   for i in idx]  # fmt: skip
        if comm == UNKNOWN_COMMUNICATOR and len(ops) > 1:
            notes.append(f"{family}: communicator unknown; every rank's {family} taken as one "
                         "communicator, matched by order")  # fmt: skip
        if len(idx) < len(ops) and len(ops) > 1:
            missing = [labels[i] for i in range(len(ops)) if i not in idx and not ops[i].empty]
            if missing:
                notes.append(f"{what}: not on {', '.join(missing)}")
        instances, ranks = _group(members, idx, labels, offsets, notes, what)
        instances.insert(0, "communicator", comm)
        instances.insert(0, "collective", family)
        ranks["instance_row"] += done
        done += len(instances)
        parts.append(instances)
        rank_parts.append(ranks)
    return _finish(parts, rank_parts, notes)


def _empty_instances() -> pd.DataFrame:
    columns = {"collective": object, "communicator": object, "instance": np.int64,
               "ranks": np.int64, "size_bytes": "Int64"}  # fmt: skip
    columns |= {c: np.int64 for c in _INSTANCE_INTS if c not in columns}
    columns |= {"straggler": object}
    order = ["collective", "communicator", "instance", "ranks", "size_bytes", "first_start_ns",
             "last_start_ns", "end_ns", "skew_ns", "end_skew_ns", "transfer_ns", "total_wait_ns",
             "max_wait_ns", "straggler", "straggler_index", "near_ties"]  # fmt: skip
    return pd.DataFrame({c: pd.Series(dtype=columns[c]) for c in order})


def _empty_ranks() -> pd.DataFrame:
    order = ["instance_row", "report", "report_index", "start_ns", "end_ns", "wait_ns",
             "transfer_ns", "source", "table", "row", "name"]  # fmt: skip
    return pd.DataFrame(
        {c: pd.Series(dtype=np.int64 if c in _RANK_INTS else object) for c in order}
    )


def _finish(parts: list, rank_parts: list, notes: list[str]) -> CollectiveMatch:
    """Stack the groups, order instances by first start, and summarise per group."""
    instances = pd.concat([_empty_instances(), *parts], ignore_index=True) if parts \
        else _empty_instances()  # fmt: skip
    ranks = pd.concat(rank_parts, ignore_index=True) if rank_parts else _empty_ranks()
    for column in _INSTANCE_INTS:
        instances[column] = instances[column].astype(np.int64)
    instances["size_bytes"] = instances["size_bytes"].astype("Int64")
    instances.loc[instances["size_bytes"] < 0, "size_bytes"] = pd.NA
    order = np.lexsort((instances["instance"].to_numpy(), instances["first_start_ns"].to_numpy()))
    instances = instances.iloc[order].reset_index(drop=True)
    new_row = np.empty(len(order), np.int64)
    new_row[order] = np.arange(len(order))
    ranks["instance_row"] = new_row[ranks["instance_row"].to_numpy(np.int64)]
    ranks = ranks.sort_values(["instance_row", "report_index"], kind="stable")
    ranks = ranks.reset_index(drop=True).astype({c: np.int64 for c in _RANK_INTS})
    summary, rank_waits = _summaries(instances, ranks)
    return CollectiveMatch(instances, ranks, summary, rank_waits, tuple(notes))


def _summaries(instances: pd.DataFrame, ranks: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per (collective, communicator) and per (collective, communicator, report)."""
    group = ["collective", "communicator"]
    if instances.empty:
        types = {"count": np.int64, "ranks": np.int64, "mean_skew_ns": np.float64,
                 "max_skew_ns": np.int64, "total_wait_ns": np.int64, "worst_straggler": object,
                 "straggler_count": np.int64, "caused_wait_ns": np.int64}  # fmt: skip
        summary = pd.DataFrame({c: pd.Series(dtype=object) for c in group})
        for c, t in types.items():
            summary[c] = pd.Series(dtype=t)
        waits = pd.DataFrame({c: pd.Series(dtype=object) for c in [*group, "report"]})
        for c, t in (("wait_ns", np.int64), ("wait_share", np.float64),
                     ("straggler_count", np.int64), ("instances", np.int64)):  # fmt: skip
            waits[c] = pd.Series(dtype=t)
        return summary, waits
    per = instances.groupby(group, sort=True)
    summary = per.agg(count=("instance", "size"), ranks=("ranks", "max"),
                      mean_skew_ns=("skew_ns", "mean"), max_skew_ns=("skew_ns", "max"),
                      total_wait_ns=("total_wait_ns", "sum")).reset_index()  # fmt: skip
    caused = (
        instances.groupby([*group, "straggler"], sort=True)
        .agg(straggler_count=("instance", "size"), caused_wait_ns=("total_wait_ns", "sum"))
        .reset_index()
    )
    caused = caused.sort_values([*group, "caused_wait_ns", "straggler_count"],
                                ascending=[True, True, False, False], kind="stable")  # fmt: skip
    worst = caused.drop_duplicates(group).rename(columns={"straggler": "worst_straggler"})
    summary = summary.merge(worst, on=group, how="left")
    summary["mean_skew_ns"] = summary["mean_skew_ns"].astype(np.float64)
    tagged = ranks.assign(
        collective=instances["collective"].to_numpy()[ranks["instance_row"].to_numpy()],
        communicator=instances["communicator"].to_numpy()[ranks["instance_row"].to_numpy()],
        is_last=instances["straggler_index"].to_numpy()[ranks["instance_row"].to_numpy()]
        == ranks["report_index"].to_numpy(),
    )
    waits = tagged.groupby([*group, "report_index", "report"], sort=True).agg(
        wait_ns=("wait_ns", "sum"), straggler_count=("is_last", "sum"),
        instances=("instance_row", "size"),
    ).reset_index()  # fmt: skip
    total = waits.groupby(group)["wait_ns"].transform("sum").to_numpy(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, waits["wait_ns"].to_numpy(np.float64) / total, np.nan)
    waits.insert(5, "wait_share", share)
    waits = waits.drop(columns="report_index").astype(
        {"wait_ns": np.int64, "straggler_count": np.int64, "instances": np.int64}
    )
    return summary, waits


def anchored_instance(match: CollectiveMatch, anchors: Mapping[int, tuple[str, int]]) -> int | None:
    """Return the row of ``match.instances`` whose events are the reports' anchors, or None.

    ``anchors``: per report index, its anchor event as ``(table, row)`` (the model table and
    row, as ``match.ranks`` names them). Every rank of the instance must be anchored on its
    own event of it.
    """
    ranks = match.ranks
    if ranks.empty or not anchors:
        return None
    picked = [anchors.get(int(i)) for i in ranks["report_index"]]
    is_anchor = np.array([a is not None and a == (t, int(r)) for a, t, r in
                          zip(picked, ranks["table"], ranks["row"], strict=True)])  # fmt: skip
    rows = ranks["instance_row"].to_numpy(np.int64)
    hit = np.unique(rows[is_anchor])
    for row in hit:
        if is_anchor[rows == row].all():
            return int(row)
    return None


def collectives(
    report_set: ReportSet,
    alignment: TimeAlignment | None = None,
    offsets_ns: Sequence[int] | None = None,
) -> CollectiveMatch:
    """Return the collectives of a report set matched across its reports, computed once.

    Parameters
    ----------
    report_set
        The reports, one per rank (their order and labels are the set's).
    alignment
        How the reports share one time axis (default: the set's own alignment, session
        starts at 0 unless set: what the timeline shows first; each rank's session clock
        is its own process's, while UTC starts add the hosts' clock error to the skew).
        With ``offsets_ns`` it only names how those offsets were made.
    offsets_ns
        Per report, its shift on the shared axis, instead of ``alignment``'s (the offsets
        a timeline shows, manual shifts included).

    Raises
    ------
    AnalysisError
        The alignment is impossible (:meth:`ReportSet.offsets_ns`).
    """
    from strata.analysis.alignment import describe_alignment

    if offsets_ns is None:
        offsets = tuple(report_set.offsets_ns(alignment))
    else:
        offsets = tuple(int(o) for o in offsets_ns)
    if alignment is not None or offsets_ns is None:
        words = describe_alignment(alignment or report_set.alignment)
    else:
        words = ""

    def compute(snap: ReportSet) -> CollectiveMatch:
        ops = [find_collectives(r) for r in snap.reports]
        return replace(match_collectives(ops, snap.labels, offsets), alignment=words)

    return report_set.derived(("collectives", offsets, words), compute)
