"""nsys's ``--start``/``--end``/``--nvtx`` of a recipe, on one loaded report.

nsys 2023.4's summary and rule recipes hand their parsed arguments to the stats report or
rule they run (``StatsService.read_sql_report``): its ``filter_time_range`` replaces every
table by the rows that overlap the window (and, with ``--nvtx``, lie on the range's thread
or process). That is :mod:`analysis.filters`' filter, which ``main.py stats`` and
``analyze`` use; here it is applied to a report a recipe loaded. A report the filter cannot
be set up for (the NVTX range is not in it) is SKIPPED by nsys's report, which its recipe
takes as "no data".
"""

from __future__ import annotations

from strata.analysis.filters import FilterSkip, RowFilter, filter_report, resolve_filter
from strata.analysis.model import Report
from strata.analysis.recipes.base import RecipeOptions

__all__ = ["filter_args", "filtered_report", "has_filter", "row_filter"]


def has_filter(options: RecipeOptions) -> bool:
    """Whether ``options`` set nsys's time or NVTX filter."""
    return any(v is not None for v in (options.start_ns, options.end_ns, options.nvtx))


def row_filter(report: Report, options: RecipeOptions) -> RowFilter | None:
    """Return the filter of ``options`` on ``report`` (None: it keeps every row).

    Raises
    ------
    FilterSkip
        The NVTX range is not in the report, or start > end (nsys's SKIPPED texts).
    """
    return resolve_filter(report, options.start_ns, options.end_ns, options.nvtx)


def filtered_report(report: Report, options: RecipeOptions) -> Report | None:
    """Return ``report`` as nsys's filtered views show it, or None where nsys's report is
    SKIPPED by the filter (no data for the recipe). ``report`` must be the full model."""
    try:
        keep = row_filter(report, options)
    except FilterSkip:
        return None
    return report if keep is None else filter_report(report, keep)


def filter_args(options: RecipeOptions) -> tuple[str, ...]:
    """The ``start=``/``end=``/``nvtx=`` arguments of a stats or rule spec for ``options``
    (``main.py stats``/``analyze`` take them after colons, as nsys's reports do)."""
    args = []
    if options.start_ns is not None:
        args.append(f"start={options.start_ns}")
    if options.end_ns is not None:
        args.append(f"end={options.end_ns}")
    if options.nvtx is not None:
        args.append(f"nvtx={options.nvtx}")
    return tuple(args)
