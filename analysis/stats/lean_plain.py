"""The lean summaries of a report read without a cache, as plain tables: no pandas.

``stats --no-cache -r cuda_gpu_kern_sum,cuda_api_sum`` on a 10 M-kernel report needs the
durations and name ids of two tables (:func:`analysis.stats.lean.read_columns`), the engine's
group reduction (NumPy) and nsys's table rules (:mod:`analysis.stats.plaintables`, which the
SQL path and the column path's frames share): no DataFrame. Importing pandas took ~0.25 s
of CPU and ~50 MB of the peak of such a run (2-core machine), more than the summaries.

The results are :class:`~analysis.stats.plain.PlainResult`, printed byte for byte as the
column path's :class:`~analysis.stats.StatsResult` of the same report (tests compare them):
the groups are the column path's (:func:`analysis.stats.cuda.cuda_gpu_kern_sum` groups
kernels by the *text* of their name, ``:base``/``:mangled`` falling back to the demangled
name; :func:`analysis.stats.cuda.cuda_api_sum` by name id, NULL last, then drops the
version suffix), the statistics :func:`analysis.engine.group_stats`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from strata.analysis._sqlfile import is_sqlite_file, usable_cores
from strata.analysis.engine import group_stats
from strata.analysis.model import StringIds
from strata.analysis.nametext import api_display_name
from strata.analysis.stats import plaintables
from strata.analysis.stats.catalog import parse_spec
from strata.analysis.stats.lean import LEAN_REPORTS, read_columns
from strata.analysis.stats.plain import PlainResult

__all__ = ["lean_summaries", "serves"]

#: table kind -> (source table, what nsys's SKIPPED message says the report lacks)
_SOURCES = {
    "kernels": ("CUPTI_ACTIVITY_KIND_KERNEL", "CUDA kernel data"),
    "cuda_api": ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUDA trace data"),
}


def serves(path: str | Path, specs: Sequence[str]) -> bool:
    """Whether :func:`lean_summaries` computes ``specs`` for the report at ``path``: every
    one a lean summary (:data:`~analysis.stats.lean.LEAN_REPORTS`), of a plain SQLite file."""
    return (
        bool(specs) and all(s.strip() in LEAN_REPORTS for s in specs) and is_sqlite_file(Path(path))
    )


def lean_summaries(path: str | Path, specs: Sequence[str]) -> tuple[str, list[PlainResult]]:
    """Read what ``specs`` need (checked as :func:`analysis.open_report` checks the report)
    and compute them; return (report name, one result per spec).

    Raises
    ------
    ReportError
        The report is refused, in the loader's words.
    AnalysisError
        A group's total passes int64 (nsys's ``sum()`` fails there), the first in ``specs``
        order, in the column path's words.
    """
    specs = [s.strip() for s in specs]
    wanted: dict[str, set[str]] = {}
    for spec in specs:
        kind, names = LEAN_REPORTS[spec]
        wanted.setdefault(kind, set()).update(names)
    info, values, _, columns, sources = read_columns(Path(path), wanted)
    strings = StringIds(values)

    def summary(spec: str) -> PlainResult:
        return _summary(spec, info.name, strings, columns, sources)

    if len(specs) < 2 or usable_cores() < 2:
        return info.name, [summary(s) for s in specs]
    # NumPy's sorts and reductions release the GIL: two tables side by side, as the column
    # path runs them (analysis.stats.compute).
    with ThreadPoolExecutor(min(len(specs), usable_cores())) as pool:
        return info.name, list(pool.map(summary, specs))


def _summary(
    spec: str,
    report_name: str,
    strings: StringIds,
    columns: dict[str, dict[str, np.ndarray]],
    sources: dict[str, tuple[str, ...]],
) -> PlainResult:
    """One summary; a total past int64 fails as the column path's (its registry's) does."""
    info, args = parse_spec(spec)
    name = ":".join((info.name, *args))
    kind = LEAN_REPORTS[spec][0]
    table, what = _SOURCES[kind]
    if table not in sources:
        return PlainResult(name, info.title, (), {}, f"{report_name} does not contain {what}.")
    try:
        rows = _grouped_table(kind, args, strings, columns[kind], sources[table])
    except plaintables.TotalOverflowError as exc:
        raise plaintables.overflow_error(report_name, name, exc) from exc
    return PlainResult(name, info.title, *rows)


def _grouped_table(
    kind: str,
    args: tuple[str, ...],
    strings: StringIds,
    cols: dict[str, np.ndarray],
    present: tuple[str, ...],
) -> plaintables.Table:
    """The kernel or CUDA API table of one report's columns (:mod:`analysis.stats.plaintables`)."""
    if kind == "kernels":
        lookup, texts, is_identity = strings.text_codes()
        ids = _kernel_name_ids(cols, args, present)
        if not (is_identity and (len(ids) == 0 or int(ids.min()) >= 0)):
            ids = lookup[ids]  # ids with one text share a code; NULL (-1) the last one
        stats = group_stats(ids, cols["duration_ns"], np)
        return plaintables.kernel_table(texts[stats.keys].tolist(), stats.plain())
    ids = cols["name_id"]
    null = len(strings)  # NULL ids group last, as a code past the pool
    if len(ids) and int(ids.min()) < 0:
        ids = np.where(ids >= 0, ids, null)
    stats = group_stats(ids, cols["duration_ns"], np)
    keys = np.where(stats.keys == null, -1, stats.keys)
    labels = [api_display_name(t) for t in strings.lookup(keys).tolist()]
    return plaintables.calls_table(labels, stats.plain())


def _kernel_name_ids(
    cols: dict[str, np.ndarray], args: tuple[str, ...], present: tuple[str, ...]
) -> np.ndarray:
    """``coalesce(<variant>, demangledName)`` per kernel, as
    :func:`analysis.names.kernel_name_ids`: ``mangled`` only where the export has the column."""
    ids = cols["name_id"]
    if "base" in args:
        alt = cols["short_name_id"]
    elif "mangled" in args and "mangledName" in present:
        alt = cols["mangled_name_id"]
    else:
        return ids
    if len(alt) and int(alt.min()) >= 0:
        return alt
    return np.where(alt >= 0, alt, ids)
