"""One spelling and one grouping per event: the name an event is shown by, and the group it
counts in, for every kind of event and every view.

The nsys-compatible stats tables, the stats panel and its histogram, outliers, the timeline
(box labels and tooltips) and the Events view all name events through this module, so that
an event is spelled the same way everywhere and two views never count different instances
under one name. The rules are nsys 2023.4's (spec: nsys-sqlite.md):

* **CUDA API calls** (§3.3, ``cuda_api_sum``): grouped by their *full* name
  (``cudaMalloc_v3020``), shown with the version suffix dropped: when the two characters six
  from the end are ``_v``, the last six characters go (``_v10000`` stays). So
  ``cudaMalloc`` and ``cudaMalloc_v3020`` are two groups that are both shown as
  ``cudaMalloc``. (nsys groups by string id; an export writes each string once, so the id
  and the full name are the same grouping, and only the full name can be matched across
  reports.)
* **kernels** (§3.2): the demangled name by default; ``base`` is the short name and
  ``mangled`` the mangled one (when the export has that column), each falling back to the
  demangled name where it is NULL. Grouped by the text. The timeline draws the ``base``
  name inside boxes (as the nsys GUI does) and says the demangled one in tooltips.
* **memory operations** (§3.6): ``[CUDA memcpy <ENUM_CUDA_MEMCPY_OPER label>]`` (the 2023.x
  labels, e.g. ``[CUDA memcpy Host-to-Device]``); a copy kind the enum has no label for has
  no name (nsys's inner join drops it from the memory summaries, and so does every summary
  here); memsets are ``[CUDA memset]``.
* **NVTX ranges** (§3.4): ``domain:text`` in a non-default domain, else ``text``; grouped by
  (label, style) with style ``PushPop`` or ``StartEnd`` (§4.4). The timeline draws the text
  inside boxes and says the label in tooltips.
* **OS runtime calls** (§3.5): the name string, grouped by it.

A missing name (NULL string id) is ``None`` (nsys prints an empty cell) and forms its own
group, as SQL's GROUP BY does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from strata.analysis.errors import AnalysisError
from strata.analysis.model import Report
from strata.analysis.nametext import MEMSET_NAME, api_display_name, memcpy_name
from strata.analysis.nvtx import range_labels, range_rows, range_styles
from strata.analysis.shortnames import distinct_base_names

__all__ = [
    "KERNEL_NAME_VARIANTS",
    "MEMSET_NAME",
    "NAMED_KINDS",
    "EventNames",
    "api_display_names",
    "event_name",
    "event_names",
    "kernel_display_names",
    "kernel_name_ids",
    "kernel_variant",
    "memcpy_names",
    "nvtx_range_texts",
    "pair_names",
    "string_codes",
]

#: Which kernel name: nsys's default (demangled), ``:base`` (short) or ``:mangled``.
KERNEL_NAME_VARIANTS = ("demangled", "base", "mangled")
#: Kinds :func:`event_names` names (rows of the report table of that name): the tables whose
#: nsys spelling rules this module holds, not a list of kinds (a kind without rules here is
#: named by its ``name_id`` string: :func:`analysis.kinds.string_names`).
NAMED_KINDS = ("kernels", "cuda_api", "memcpy", "memset", "nvtx", "osrt")

_MANGLED_COLUMN = ("CUPTI_ACTIVITY_KIND_KERNEL", "mangledName")


@dataclass(frozen=True)
class EventNames:
    """Names of some rows of one event kind, factorised into groups.

    Attributes
    ----------
    codes
        Per row, the index of its group into ``keys`` (int64 >= 0).
    keys
        Per group, what it is keyed by (object: str or None): the full name (a CUDA API
        name keeps its ``_vNNNN`` suffix here), or the NVTX label.
    labels
        Per group, the name shown (object: str or None), nsys's spelling.
    styles
        Per group, the NVTX style ('PushPop', 'StartEnd'), or None for other kinds.

    Groups no row uses may be present (codes of a whole string pool); every group is
    distinct by ``(keys, styles)``, except that two string-pool ids with one text are one
    group (nsys groups kernels by text).
    """

    codes: npt.NDArray[np.int64]
    keys: npt.NDArray[np.object_]
    labels: npt.NDArray[np.object_]
    styles: npt.NDArray[np.object_] | None = None

    def __len__(self) -> int:
        return len(self.keys)

    def compact(self) -> EventNames:
        """Return the same grouping with only the groups some row uses (codes renumbered)."""
        if not len(self.codes):
            return EventNames(self.codes, self.keys[:0], self.labels[:0],
                              None if self.styles is None else self.styles[:0])  # fmt: skip
        used = np.bincount(self.codes, minlength=len(self.keys)) > 0
        remap = np.cumsum(used) - 1
        return EventNames(
            remap[self.codes].astype(np.int64), self.keys[used], self.labels[used],
            None if self.styles is None else self.styles[used],
        )  # fmt: skip


def api_display_names(names: npt.ArrayLike) -> npt.NDArray[np.object_]:
    """Return CUDA API names as nsys prints them: a ``_vNNNN`` suffix dropped (spec §3.3).

    The suffix goes when the two characters six from the end are ``_v`` (``substr(name,
    -6, 2) = '_v'``), so ``cudaMalloc_v3020`` is ``cudaMalloc`` while
    ``cudaGraphAddKernelNode_v10000`` stays as it is. None stays None.
    """
    return np.array([api_display_name(n) for n in np.asarray(names)], dtype=object)


def kernel_variant(args: tuple[str, ...]) -> str:
    """Return the :data:`KERNEL_NAME_VARIANTS` entry that nsys report ``args`` ask for."""
    if "base" in args:
        return "base"
    if "mangled" in args:
        return "mangled"
    return "demangled"


def kernel_name_ids(report: Report, variant: str = "demangled") -> npt.NDArray[np.int64]:
    """Return the StringIds id naming each kernel, as ``coalesce(<variant>, demangledName)``.

    spec: nsys-sqlite.md §3.2; ``mangled`` falls back to the demangled name when the export
    has no ``mangledName`` column at all.

    Raises
    ------
    AnalysisError
        ``variant`` is not one of :data:`KERNEL_NAME_VARIANTS`.
    """
    if variant not in KERNEL_NAME_VARIANTS:
        raise AnalysisError(
            f"unknown kernel name variant {variant!r}; use {', '.join(KERNEL_NAME_VARIANTS)}"
        )
    kernels = report.tables["kernels"]
    ids = kernels["name_id"]
    if variant == "base":
        alt = kernels["short_name_id"]
    elif variant == "mangled" and _MANGLED_COLUMN[1] in report.source_columns.get(
        _MANGLED_COLUMN[0], ()
    ):
        alt = kernels["mangled_name_id"]
    else:
        return ids
    if len(alt) and int(alt.min()) >= 0:
        return alt  # every kernel has one: the column itself, no copy per kernel
    return np.where(alt >= 0, alt, ids)


def kernel_display_names(reports: Sequence[Report], variant: str) -> dict[str, str]:
    """Return, for each kernel's demangled name (what the stats tables group by), its
    ``variant`` name: the short name (``base``, what ``nsys stats`` prints with ``:base``)
    or the mangled one, for the on-screen tables' display toggle.

    A demangled name that maps to several names of ``variant`` (two reports that disagree)
    keeps the first report's. ``demangled`` maps every name to itself. Base names that
    several demangled names share are told apart by the words each one has of its own
    (:func:`analysis.shortnames.distinct_base_names`): rows that read alike are no help.

    Raises
    ------
    AnalysisError
        ``variant`` is not one of :data:`KERNEL_NAME_VARIANTS`.
    """
    shown: dict[str, str] = {}
    for report in reports:
        full_ids = np.asarray(report.tables["kernels"]["name_id"], dtype=np.int64)
        if not len(full_ids):
            continue
        alt_ids = np.asarray(kernel_name_ids(report, variant), dtype=np.int64)
        keep = (full_ids >= 0) & (alt_ids >= 0)
        # One int64 per (full, alt) pair: a 1-D unique, not a row-wise one (ids < 2^31).
        pairs = np.unique((full_ids[keep] << 32) | alt_ids[keep])
        fulls = report.strings.lookup(pairs >> 32).tolist()
        alts = report.strings.lookup(pairs & 0xFFFFFFFF).tolist()
        for full, alt in zip(fulls, alts, strict=True):
            if full is not None and alt is not None:
                shown.setdefault(str(full), str(alt))
    return distinct_base_names(shown) if variant == "base" else shown


def memcpy_names(report: Report, copy_kinds: npt.ArrayLike | None = None) -> np.ndarray:
    """Return ``[CUDA memcpy <label>]`` per memcpy row (or per given copy kind).

    A copy kind without an ``ENUM_CUDA_MEMCPY_OPER`` label gives None: nsys's memory
    summaries join on the enum and drop such rows (spec §3.6).
    """
    kinds = report.tables["memcpy"]["copy_kind"] if copy_kinds is None else copy_kinds
    kinds = np.asarray(kinds)
    if not len(kinds):
        return np.empty(0, dtype=object)
    labels = report.enums.get("memcpy_kind", {})
    uniq, inverse = np.unique(kinds, return_inverse=True)
    table = np.array(
        [memcpy_name(labels[k]) if k in labels else None for k in uniq.tolist()],
        dtype=object,
    )
    return table[inverse.ravel()]


def string_codes(report: Report, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (group code per row, label per code) grouping StringIds ids by their *text*.

    nsys groups kernels by name string (spec §3.2), so two ids with one text are one group.
    nsys writes each string once, so the ids usually are the codes already (no pass over the
    rows); otherwise a lookup table maps them. NULL ids (-1) get the last code, labelled
    None. The pool's factorisation is computed once (:meth:`StringIds.text_codes`).
    """
    lookup, labels, is_identity = report.strings.text_codes()
    if is_identity and (len(ids) == 0 or int(ids.min()) >= 0):
        return ids, labels
    return lookup[ids], labels


def pair_names(labels: npt.ArrayLike, styles: npt.ArrayLike) -> EventNames:
    """Group rows by (label, style), NVTX's grouping (spec §3.4); None labels included."""
    key = pd.MultiIndex.from_arrays(
        [pd.Series(np.asarray(labels, dtype=object), dtype=object), np.asarray(styles)]
    )
    codes, uniques = key.factorize()
    names = uniques.get_level_values(0).to_numpy(object).copy()
    names[pd.isna(names)] = None
    return EventNames(
        codes.astype(np.int64), names, names.copy(), uniques.get_level_values(1).to_numpy(object)
    )


def _by_string(report: Report, ids: np.ndarray, is_api: bool) -> EventNames:
    codes, texts = string_codes(report, ids)
    labels = texts
    if is_api and len(codes):
        # Only the names that occur are respelled (a pool can hold 10^6 strings).
        used = np.flatnonzero(np.bincount(np.asarray(codes, dtype=np.int64), minlength=len(texts)))
        labels = texts.copy()
        labels[used] = api_display_names(texts[used])
    return EventNames(np.asarray(codes, dtype=np.int64), texts, labels)


def event_names(
    report: Report,
    kind: str,
    rows: npt.ArrayLike | None = None,
    kernel_name: str = "demangled",
) -> EventNames:
    """Return the names and groups of rows of ``report.tables[kind]``, as nsys spells them.

    Parameters
    ----------
    report
        A loaded report.
    kind
        One of :data:`NAMED_KINDS`.
    rows
        Rows of that table (default: every row; for ``nvtx`` every push/pop and start/end
        range, :func:`analysis.nvtx.range_rows`).
    kernel_name
        For kernels, one of :data:`KERNEL_NAME_VARIANTS`.

    Returns
    -------
    EventNames
        One code per row of ``rows`` (module docstring for the rules).

    Raises
    ------
    AnalysisError
        Unknown kind or kernel name variant.
    """
    if kind not in NAMED_KINDS:
        raise AnalysisError(f"unknown event kind {kind!r}; use {', '.join(NAMED_KINDS)}")
    table = report.tables[kind]
    if rows is None:
        rows = range_rows(report) if kind == "nvtx" else np.arange(len(table))
    rows = np.asarray(rows, dtype=np.int64)
    if kind == "kernels":
        return _by_string(report, kernel_name_ids(report, kernel_name)[rows], False)
    if kind in ("cuda_api", "osrt"):
        return _by_string(report, table["name_id"][rows], kind == "cuda_api")
    if kind == "nvtx":
        return pair_names(range_labels(report, rows), range_styles(table["event_type"][rows]))
    if kind == "memset":
        names = np.array([MEMSET_NAME], dtype=object)
        return EventNames(np.zeros(len(rows), np.int64), names, names.copy())
    kinds = table["copy_kind"][rows]
    uniq, inverse = np.unique(kinds, return_inverse=True)
    names = memcpy_names(report, uniq)
    return EventNames(inverse.ravel().astype(np.int64), names, names.copy())


def event_name(report: Report, kind: str, row: int, kernel_name: str = "demangled") -> str | None:
    """Return the name one event (row ``row`` of ``report.tables[kind]``) is shown by.

    The spelling of the stats tables and the stats panel, for tooltips and the Events view;
    None when the event has no name (or ``kind`` names nothing, e.g. CPU samples).
    """
    if kind not in NAMED_KINDS or not 0 <= row < len(report.tables[kind]):
        return None
    names = event_names(report, kind, np.array([row]), kernel_name)
    return names.labels[names.codes[0]]


def nvtx_range_texts(report: Report) -> set[str]:
    """Return the texts of the report's NVTX ranges: the names NVTX alignment matches
    (:func:`analysis.alignment.first_nvtx_start_ns`), marks and empty texts left out."""
    nvtx = report.tables["nvtx"]
    ids = np.unique(nvtx["name_id"][range_rows(report)]) if len(nvtx) else np.empty(0, np.int64)
    return {str(t) for t in report.strings.lookup(ids).tolist() if t}
