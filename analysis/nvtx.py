"""NVTX ranges as the nsys stats reports see them: labels, styles and containment.

spec: nsys-sqlite.md §3.4 (labels: ``domain:text`` for a non-default domain, plain ``text``
for the default domain — the 2023.4 rule; 2024+ nsys prints default-domain ranges as
``:text``, which we deliberately do not follow), §4.4 (style), §4.1/§4.2 (containment: a
range contains an API call when ``range.start <= call.start`` and ``call.end <= range.end``,
both ends inclusive, on the same thread).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

from strata.analysis.model import Report
from strata.analysis.nametext import STYLE_PUSHPOP, STYLE_STARTEND, nvtx_domain_names, nvtx_label
from strata.analysis.schema import NVTX_PUSHPOP_TYPES, NVTX_RANGE_TYPES, NVTX_STARTEND_TYPES, pid_of

__all__ = [
    "STYLE_PUSHPOP",
    "STYLE_STARTEND",
    "contained_pairs",
    "containing_bounds",
    "range_labels",
    "range_rows",
    "range_styles",
    "range_texts",
]


def range_rows(
    report: Report, types: tuple[int, ...] = NVTX_RANGE_TYPES, same_thread_only: bool = False
) -> npt.NDArray[np.int64]:
    """Return the indices (into ``report.nvtx``) of the NVTX ranges of ``types``.

    Parameters
    ----------
    report
        A loaded report.
    types
        NVTX event types to keep (default push/pop and start/end, incl. NVTXT).
    same_thread_only
        Drop start/end ranges that ended on another thread (``endGlobalTid`` set), as the
        GPU projection and kernel attribution do (spec §4.1).
    """
    nvtx = report.nvtx
    keep = np.isin(nvtx["event_type"], types)
    if same_thread_only:
        keep &= nvtx["end_global_tid"] == 0
    return np.flatnonzero(keep)


def range_styles(event_types: npt.ArrayLike) -> npt.NDArray[np.object_]:
    """Return 'PushPop', 'StartEnd' or 'Unknown' per NVTX event type (spec §4.4): the rule
    of :func:`analysis.nametext.nvtx_style`, on a column."""
    event_types = np.asarray(event_types)
    out = np.full(event_types.shape, "Unknown", dtype=object)
    out[np.isin(event_types, NVTX_PUSHPOP_TYPES)] = STYLE_PUSHPOP
    out[np.isin(event_types, NVTX_STARTEND_TYPES)] = STYLE_STARTEND
    return out


def range_texts(report: Report, rows: npt.ArrayLike) -> npt.NDArray[np.object_]:
    """Return ``coalesce(StringIds[textId], text)`` of NVTX rows (None when both are NULL)."""
    return report.strings.lookup(report.nvtx["name_id"][np.asarray(rows, dtype=np.int64)])


def _domain_names(report: Report, pids: np.ndarray, domain_ids: np.ndarray) -> np.ndarray:
    """Return the domain name per (pid, domain id), None for the default/unknown domain."""
    out = np.full(len(pids), None, dtype=object)
    domains = report.nvtx_domains
    if domains.empty or not np.any(domain_ids != 0):
        return out
    # The creations in rowid order (Report.nvtx_domains): a row's position is its rowid's.
    key_of = nvtx_domain_names(
        zip(
            domains["start_ns"].tolist(),
            range(len(domains)),
            domains["pid"].tolist(),
            domains["domain_id"].tolist(),
            domains["name"].tolist(),
            strict=True,
        )
    )
    pairs = np.stack([pids, domain_ids], axis=1)
    uniq, inverse = np.unique(pairs, axis=0, return_inverse=True)
    names = np.array([key_of.get((p, d)) for p, d in uniq.tolist()], dtype=object)
    out[:] = names[inverse.ravel()]
    return out


def range_labels(
    report: Report, rows: npt.ArrayLike, with_domain: bool = True
) -> npt.NDArray[np.object_]:
    """Return the nsys 2023.4 label of NVTX rows: ``domain:text`` or plain ``text``.

    Parameters
    ----------
    report
        A loaded report.
    rows
        Indices into ``report.nvtx``.
    with_domain
        Prefix the name of a non-default domain (nvtx_sum and friends); the ``:nvtx-name``
        kernel prefix uses the bare text (spec §4.2).
    """
    rows = np.asarray(rows, dtype=np.int64)
    texts = range_texts(report, rows)
    if not with_domain or len(rows) == 0:
        return texts
    nvtx = report.nvtx
    domains = _domain_names(report, pid_of(nvtx["global_tid"][rows]), nvtx["domain_id"][rows])
    has = np.flatnonzero(domains != None)  # noqa: E711 - elementwise on an object array
    if len(has):
        texts = texts.copy()
        texts[has] = [
            nvtx_label(d, t)
            for d, t in zip(domains[has].tolist(), texts[has].tolist(), strict=True)
        ]
    return texts


def containing_bounds(
    range_tid: np.ndarray,
    range_start_ns: np.ndarray,
    range_end_ns: np.ndarray,
    item_tid: np.ndarray,
    item_start_ns: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Locate, per range, the items on its thread that start inside it.

    Returns ``(order, lo, hi)``: ``order`` sorts the items by (thread, start); the items
    ``order[lo[i]:hi[i]]`` are those on range i's thread with
    ``range_start <= item_start <= range_end``.
    """
    all_tid = np.concatenate([range_tid, range_tid, item_tid])
    inverse, uniq = pd.factorize(all_tid, sort=False)  # hashing: no sort of every id
    inverse = inverse.astype(np.int64)
    n_r = len(range_tid)
    times = np.concatenate([range_start_ns, range_end_ns, item_start_ns])
    if len(times) == 0:
        empty = np.empty(0, np.int64)
        return empty, empty, empty
    t_min = int(times.min())
    span = int(times.max()) - t_min + 2
    if span.bit_length() + len(uniq).bit_length() <= 62:
        key = inverse * span + (times - t_min)
        item_key = key[2 * n_r :]
        order = np.argsort(item_key, kind="stable")
        sorted_key = item_key[order]
        lo = np.searchsorted(sorted_key, key[:n_r], side="left")
        hi = np.searchsorted(sorted_key, key[n_r : 2 * n_r], side="right")
        return order, lo.astype(np.int64), hi.astype(np.int64)
    # Times too wide to pack with the thread index: one binary search per thread.
    item_thread = inverse[2 * n_r :]
    order = np.lexsort((item_start_ns, item_thread))
    bounds = np.searchsorted(item_thread[order], np.arange(len(uniq) + 1))
    lo = np.empty(n_r, np.int64)
    hi = np.empty(n_r, np.int64)
    range_thread = inverse[:n_r]
    for t in np.unique(range_thread).tolist():
        sel = np.flatnonzero(range_thread == t)
        starts = item_start_ns[order[bounds[t] : bounds[t + 1]]]
        lo[sel] = bounds[t] + np.searchsorted(starts, range_start_ns[sel], side="left")
        hi[sel] = bounds[t] + np.searchsorted(starts, range_end_ns[sel], side="right")
    return order, lo, hi


def contained_pairs(
    range_tid: np.ndarray,
    range_start_ns: np.ndarray,
    range_end_ns: np.ndarray,
    item_tid: np.ndarray,
    item_start_ns: np.ndarray,
    item_end_ns: np.ndarray,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Return every (range index, item index) pair where the range contains the item.

    Containment is on the same thread with inclusive ends: ``range.start <= item.start``
    and ``item.end <= range.end`` (spec §4.1 step 2). The cost is proportional to the
    number of items that start inside some range (nesting depth x items), not ranges x items.
    """
    order, lo, hi = containing_bounds(
        range_tid, range_start_ns, range_end_ns, item_tid, item_start_ns
    )
    counts = np.maximum(hi - lo, 0)
    total = int(counts.sum())
    if total == 0:
        empty = np.empty(0, np.int64)
        return empty, empty
    range_idx = np.repeat(np.arange(len(lo), dtype=np.int64), counts)
    first = np.repeat(lo - (np.cumsum(counts) - counts), counts)
    item_idx = order[first + np.arange(total, dtype=np.int64)]
    keep = item_end_ns[item_idx] <= range_end_ns[range_idx]
    return range_idx[keep], item_idx[keep]
