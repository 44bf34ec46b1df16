"""Call trees of CPU samples: top-down and bottom-up, with self and total sample counts.

A CPU sample (``COMPOSITE_EVENTS``) carries a call chain (``SAMPLING_CALLCHAINS``, spec §1.7:
depth 0 is the innermost frame). A frame is named by its symbol and its module as nsys
stores them (StringIds texts). The top-down tree grows from the outermost frames: a node's
total is the samples whose stack passes through it, its self the samples whose innermost
frame it is. The bottom-up tree grows from the innermost frames: a root's total is the
samples that stopped in that function (its self: the same), a child is a caller.

Qt-free and vectorised: the tree is built one stack level at a time with one ``np.unique``
over (parent node, frame) pairs; the only Python loop runs over levels. Samples without a
call chain count in :attr:`CallTree.samples` but in no node.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from strata.analysis.cpu import thread_intervals
from strata.analysis.errors import AnalysisError
from strata.analysis.model import Report, freeze
from strata.analysis.tracks import Track

__all__ = [
    "CallTree",
    "call_tree",
    "chain_text",
    "merge_stacks",
    "sample_stacks",
    "selected_samples",
    "selection_tree",
    "Stacks",
]


@dataclass(frozen=True)
class Stacks:
    """Call chains of samples as frame codes, ready to build trees from.

    Attributes
    ----------
    frames
        Per chain frame, its frame code (int64), chains one after the other, each from the
        innermost frame (depth 0) outwards.
    offsets
        Per sample, ``frames[offsets[i]:offsets[i + 1]]`` is its chain (length samples + 1).
    symbols, modules
        Per frame code, the symbol and module texts (object arrays; '' when unknown).
    """

    frames: npt.NDArray[np.int64]
    offsets: npt.NDArray[np.int64]
    symbols: npt.NDArray[np.object_]
    modules: npt.NDArray[np.object_]

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def take(self, samples: np.ndarray) -> Stacks:
        """Return the stacks of ``samples`` (indices), in that order."""
        samples = np.asarray(samples, dtype=np.int64)
        lo, hi = self.offsets[samples], self.offsets[samples + 1]
        lengths = hi - lo
        offsets = np.zeros(len(samples) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        idx = np.repeat(lo - offsets[:-1], lengths) + np.arange(offsets[-1])
        return Stacks(self.frames[idx], offsets, self.symbols, self.modules)


def sample_stacks(report: Report) -> Stacks:
    """Return the call chain of every row of ``report.tables["samples"]`` (table order).

    A sample's chain is the ``sample_chains`` rows whose ``chain_id`` is its ``sample_id``;
    frames with the same symbol and module texts share a code.
    """
    ids = np.asarray(report.tables["samples"]["sample_id"], dtype=np.int64)
    return _stacks(report, report.sample_chains, ids)


def chain_text(report: Report, chains: pd.DataFrame, chain_id: int) -> list[tuple[str, str]]:
    """Return one chain's frames as (symbol, module) texts, innermost first ([] if none)."""
    ids = chains["chain_id"].to_numpy()
    lo, hi = np.searchsorted(ids, [chain_id, chain_id + 1]) if chain_id < 2**63 - 1 else (0, 0)
    lookup = report.strings.lookup
    symbols = lookup(chains["symbol"].to_numpy()[lo:hi], missing="")
    modules = lookup(chains["module"].to_numpy()[lo:hi], missing="")
    return list(zip(symbols.tolist(), modules.tolist(), strict=True))


def _stacks(report: Report, chains: pd.DataFrame, ids: np.ndarray) -> Stacks:
    chain_ids = chains["chain_id"].to_numpy()
    symbol, module = chains["symbol"].to_numpy(), chains["module"].to_numpy()
    # Frame code per chain row: by the (symbol, module) pool codes, then by their texts.
    pair = (symbol.astype(np.int64) + 1) << 32 | (module.astype(np.int64) + 1)
    pairs, code = np.unique(pair, return_inverse=True)
    texts_s = report.strings.lookup((pairs >> 32) - 1, missing="")
    texts_m = report.strings.lookup((pairs & 0xFFFFFFFF) - 1, missing="")
    keys = pd.MultiIndex.from_arrays([texts_s, texts_m])
    by_text, uniq = pd.factorize(keys)
    frames = by_text[code.reshape(-1)].astype(np.int64)
    symbols = np.asarray(uniq.get_level_values(0), dtype=object)
    modules = np.asarray(uniq.get_level_values(1), dtype=object)
    lo = np.searchsorted(chain_ids, ids, side="left")
    hi = np.searchsorted(chain_ids, ids, side="right")
    lengths = hi - lo
    offsets = np.zeros(len(ids) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    idx = np.repeat(lo - offsets[:-1], lengths) + np.arange(offsets[-1])
    return Stacks(freeze(frames[idx]), freeze(offsets), symbols, modules)


def merge_stacks(parts: Sequence[Stacks]) -> Stacks:
    """Return one :class:`Stacks` of several (e.g. reports'), frames merged by their texts."""
    if len(parts) == 1:
        return parts[0]
    if not parts:
        empty = np.empty(0, dtype=object)
        return Stacks(np.empty(0, np.int64), np.zeros(1, np.int64), empty, empty)
    keys = pd.MultiIndex.from_arrays(
        [np.concatenate([p.symbols for p in parts]), np.concatenate([p.modules for p in parts])]
    )
    codes, uniq = pd.factorize(keys)
    at = np.cumsum([0] + [len(p.symbols) for p in parts])
    frames = np.concatenate([codes[at[i] + p.frames] for i, p in enumerate(parts)])
    lengths = np.concatenate([np.diff(p.offsets) for p in parts])
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return Stacks(
        frames.astype(np.int64), offsets,
        np.asarray(uniq.get_level_values(0), dtype=object),
        np.asarray(uniq.get_level_values(1), dtype=object),
    )  # fmt: skip


@dataclass(frozen=True)
class CallTree:
    """A call tree in preorder (children after their parent, the busiest child first).

    Attributes
    ----------
    parent
        Per node, its parent node (-1: a root).
    level
        Per node, its depth in the tree (0: a root).
    frame
        Per node, its frame code (indexes ``symbols`` / ``modules``).
    self_count, total_count
        Per node, the samples that end at it and that pass through it (int64).
    symbols, modules
        Per frame code, the symbol and module texts.
    samples
        The samples the tree was built from (those without a call chain included).
    bottom_up
        Whether roots are innermost frames (callers below) rather than outermost.
    """

    parent: npt.NDArray[np.int64]
    level: npt.NDArray[np.int64]
    frame: npt.NDArray[np.int64]
    self_count: npt.NDArray[np.int64]
    total_count: npt.NDArray[np.int64]
    symbols: npt.NDArray[np.object_]
    modules: npt.NDArray[np.object_]
    samples: int
    bottom_up: bool = False

    def __len__(self) -> int:
        return len(self.parent)

    def children(self, node: int) -> npt.NDArray[np.int64]:
        """Return the children of ``node`` (-1: the roots), busiest first."""
        return np.flatnonzero(self.parent == node)

    def to_frame(self) -> pd.DataFrame:
        """Return the nodes in preorder: level, symbol, module, self, total, total %."""
        total = max(self.samples, 1)
        return pd.DataFrame(
            {
                "level": self.level,
                "symbol": self.symbols[self.frame] if len(self) else np.empty(0, object),
                "module": self.modules[self.frame] if len(self) else np.empty(0, object),
                "self": self.self_count,
                "total": self.total_count,
                "total_pct": 100.0 * self.total_count / total,
                "parent": self.parent,
            }
        )


#: Most nodes a tree may have (a damaged report's 10^8 distinct frames would not draw).
MAX_NODES = 5_000_000


def call_tree(stacks: Stacks, bottom_up: bool = False) -> CallTree:
    """Build the top-down (or bottom-up) call tree of ``stacks``.

    Raises
    ------
    AnalysisError
        The tree would have more than :data:`MAX_NODES` nodes.
    """
    lengths = np.diff(stacks.offsets)
    node_parent, node_frame, node_total, node_self, node_level = [], [], [], [], []
    alive = np.flatnonzero(lengths > 0)
    parent = np.full(len(alive), -1, np.int64)
    n_nodes, level = 0, 0
    while len(alive):
        lo, hi = stacks.offsets[alive], stacks.offsets[alive + 1]
        at = lo + level if bottom_up else hi - 1 - level
        frame = stacks.frames[at]
        key = parent * (len(stacks.symbols) + 1) + frame
        uniq, first, inverse, counts = np.unique(
            key, return_index=True, return_inverse=True, return_counts=True
        )
        inverse = inverse.reshape(-1)
        ids = n_nodes + np.arange(len(uniq))
        n_nodes += len(uniq)
        if n_nodes > MAX_NODES:
            raise AnalysisError(f"the call tree has more than {MAX_NODES:,} nodes")
        ends = lengths[alive] == level + 1
        node_parent.append(parent[first])
        node_frame.append(frame[first])
        node_total.append(counts.astype(np.int64))
        node_self.append(np.bincount(inverse[ends], minlength=len(uniq)).astype(np.int64))
        node_level.append(np.full(len(uniq), level, np.int64))
        parent = ids[inverse][~ends]
        alive = alive[~ends]
        level += 1
    if not node_parent:
        empty = np.empty(0, np.int64)
        return CallTree(empty, empty, empty, empty, empty, stacks.symbols, stacks.modules,
                        len(stacks), bottom_up)  # fmt: skip
    parents = np.concatenate(node_parent)
    frames = np.concatenate(node_frame)
    totals = np.concatenate(node_total)
    selfs = np.concatenate(node_self)
    levels = np.concatenate(node_level)
    if bottom_up:
        selfs = np.where(levels == 0, totals, 0)  # a root is where its samples stopped
    order = _preorder(parents, totals, stacks.symbols[frames])
    new_id = np.empty(len(order), np.int64)
    new_id[order] = np.arange(len(order))
    parents = parents[order]
    parents = np.where(parents >= 0, new_id[np.maximum(parents, 0)], -1)
    return CallTree(
        freeze(parents), freeze(levels[order]), freeze(frames[order]), freeze(selfs[order]),
        freeze(totals[order]), stacks.symbols, stacks.modules, len(stacks), bottom_up,
    )  # fmt: skip


def _preorder(parent: np.ndarray, total: np.ndarray, name: np.ndarray) -> np.ndarray:
    """Node ids in preorder, siblings by total (descending), then name (one pass, no
    recursion: an explicit stack)."""
    n = len(parent)
    by_parent = np.lexsort((name.astype(str), -total, parent))
    grouped = parent[by_parent]
    starts = np.searchsorted(grouped, np.arange(-1, n), side="left")
    ends = np.searchsorted(grouped, np.arange(-1, n), side="right")
    children = by_parent.tolist()
    starts_l, ends_l = starts.tolist(), ends.tolist()
    out: list[int] = []
    stack = children[starts_l[0] : ends_l[0]][::-1]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(children[starts_l[node + 1] : ends_l[node + 1]][::-1])
    return np.array(out, dtype=np.int64)


def selected_samples(
    report: Report,
    tracks: Sequence[Track],
    report_index: int,
    t0_ns: int | None = None,
    t1_ns: int | None = None,
    threads: Sequence[int] = (),
) -> npt.NDArray[np.int64]:
    """Return the rows of ``report.tables["samples"]`` a selection holds.

    ``tracks``: the selected timeline rows (every report's; those of ``report_index`` count):
    a thread's row selects that thread's samples, a CPU core row the samples taken on that
    core; with no such row selected, every sample counts. ``t0_ns``/``t1_ns``: the time range
    in the report's own time base (None: open). ``threads``: thread ids (TIDs) to keep
    (the command line's ``--thread``).
    """
    samples = report.tables["samples"]
    start = samples["start_ns"]
    keep = np.ones(len(start), dtype=bool)
    if t0_ns is not None:
        keep &= start >= t0_ns
    if t1_ns is not None:
        keep &= start < t1_ns
    gtids, cores = _selected_threads(report, tracks, report_index)
    if gtids is not None or cores is not None:
        chosen = np.zeros(len(start), dtype=bool)
        if gtids is not None:
            chosen |= np.isin(samples["global_tid"], gtids)
        if cores is not None:
            chosen |= np.isin(samples["cpu"], cores)
        keep &= chosen
    if len(threads):
        from strata.analysis.schema import tid_of

        keep &= np.isin(tid_of(samples["global_tid"]), np.asarray(threads, dtype=np.int64))
    return np.flatnonzero(keep)


def _selected_threads(
    report: Report, tracks: Sequence[Track], report_index: int
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The threads (global ids) and cores that the selected rows of one report name."""
    gtids: list[np.ndarray] = []
    cores: list[int] = []
    for track in tracks:
        if track.report_index != report_index:
            continue
        for table, track_id in track.parts:
            if table == "cpu":
                cores.append(int(track.key.rsplit("core", 1)[-1]))
            elif table == "thread_state":
                # Its tracks are the threads that ran, by global_tid (analysis.kinds.builtin).
                runs = np.unique(thread_intervals(report).global_tid)
                gtids.append(runs[[track_id]] if track_id < len(runs) else runs[:0])
            elif table in report.tables and "global_tid" in report.tables[table].track_keys:
                keys = report.tables[table].track_keys["global_tid"].to_numpy(np.int64)
                gtids.append(keys[[track_id]] if track_id < len(keys) else keys[:0])
    return (
        np.unique(np.concatenate(gtids)) if gtids else None,
        np.asarray(cores, dtype=np.int64) if cores else None,
    )


def selection_tree(
    reports: Sequence[Report],
    stacks: Sequence[Stacks],
    tracks: Sequence[Track],
    window: tuple[int | None, int | None],
    offsets_ns: Sequence[int],
    bottom_up: bool = False,
    report_index: int | None = None,
) -> CallTree:
    """The call tree of the samples a timeline selection holds, over every report.

    ``stacks``: per report, :func:`sample_stacks` (a ReportSet keeps them); ``window``: the
    selected range on the shared axis (None: open); ``offsets_ns``: per report, its offset
    on that axis; ``report_index``: only that report's samples (None: every report's).
    """
    parts = []
    t0, t1 = window
    for i, (report, own) in enumerate(zip(reports, stacks, strict=True)):
        if report_index is not None and i != report_index:
            continue
        off = int(offsets_ns[i]) if i < len(offsets_ns) else 0
        rows = selected_samples(
            report, tracks, i, None if t0 is None else t0 - off, None if t1 is None else t1 - off
        )
        parts.append(own.take(rows))
    return call_tree(merge_stacks(parts), bottom_up)
