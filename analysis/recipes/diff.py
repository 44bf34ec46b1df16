"""``diff``: what got slower, faster, appeared or vanished between two runs.

The two inputs are reports (compared on their ``cuda_gpu_kern_sum``, ``nvtx_sum`` and
``nvtx_gpu_proj_sum`` tables) or output folders of one stats recipe (compared on their
``all_stats``). The first input is *before*, the second *after*; deltas are after - before
(nsys's diff recipe subtracts the other way round, DIR1 - DIR2, spec §5.4).

The decision is :mod:`analysis.diff`'s (the one ``main.py diff`` and the stats panel use): a
name present in both is *slower* / *faster* when the bootstrap interval of its median change
excludes 0 and the median moved by more than ``--tolerance`` percent, else *noise*; with a
single instance on a side *slower, few* / *faster, few* or *too few* (:mod:`analysis.diff`);
*appeared* / *vanished* when only the after / before side has it. Output folders carry no
instances: there the tolerance alone decides (no interval).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from strata.analysis.diff import STATUSES as _DIFF_STATUSES
from strata.analysis.diff import (
    DiffOptions,
    NameSamples,
    by_impact,
    classify,
    diff_samples,
    name_samples,
)
from strata.analysis.engine import sqlite_round
from strata.analysis.errors import AnalysisError
from strata.analysis.escape import escape_text
from strata.analysis.open import open_report
from strata.analysis.recipes.base import (
    RECIPES,
    FilePartial,
    Recipe,
    RecipeOptions,
    RecipeOutput,
)
from strata.analysis.recipes.output import load_manifest, load_output
from strata.analysis.recipes.partials import merge_partials
from strata.analysis.recipes.summaries import StatsRecipe

__all__ = ["STATUSES", "Diff", "diff_tables"]

STATUSES = _DIFF_STATUSES  # the statuses of analysis.diff, one vocabulary
#: Recipes compared when the inputs are reports, and the panel kind of their instances.
_REPORT_RECIPES = {
    "cuda_gpu_kern_sum": "kernels",
    "nvtx_sum": "nvtx",
    "nvtx_gpu_proj_sum": "nvtx_gpu",
}


@dataclass(frozen=True)
class DiffSide:
    """One side of a diff: stats tables by recipe name, and where they came from."""

    tables: dict[str, pd.DataFrame]
    source: str  # "report" or "output"
    samples: dict[str, NameSamples] | None = None  # by recipe name; reports only


def _stats_recipe(name: str) -> StatsRecipe:
    recipe = RECIPES.get(name)
    if not isinstance(recipe, StatsRecipe):
        diffable = ", ".join(n for n, r in sorted(RECIPES.items()) if isinstance(r, StatsRecipe))
        raise AnalysisError(f"diff compares outputs of {diffable}; not of {name!r}")
    return recipe


def diff_tables(
    before: pd.DataFrame, after: pd.DataFrame, recipe: StatsRecipe, tolerance_pct: float,
    samples: tuple[NameSamples, NameSamples] | None = None,
) -> pd.DataFrame:  # fmt: skip
    """Compare two stats tables of ``recipe`` name by name.

    Parameters
    ----------
    samples
        Both sides' instances of the recipe's kind (:func:`analysis.diff.name_samples`), for
        the interval of the median change; None: no interval, the tolerance alone decides.

    Returns
    -------
    DataFrame
        The key columns; ``Status`` (one of :data:`STATUSES`); ``Avg Before``, ``Avg After``
        (float64 ns), ``Avg Change (%)`` (float64, +inf when the before mean is 0);
        ``Total Before``, ``Total After``, ``Total Delta`` (Int64 ns);
        ``Instances Before``, ``Instances After`` (Int64); ``Med Before``, ``Med After``
        (float64 ns), ``Med Change (%)``, ``Med Delta Low``, ``Med Delta High`` (float64 ns,
        NaN without instances). Sorted by impact (:func:`analysis.diff.by_impact`).
    """
    keys = list(recipe.key_columns)
    total, count, mean, med = recipe.stat_names[:4]
    columns = [*keys, total, count, mean, *([med] if med in before and med in after else [])]
    joined = before[columns].merge(
        after[columns], on=keys, how="outer", suffixes=(" Before", " After"), indicator=True
    )
    avg_a = joined[f"{mean} Before"].to_numpy(np.float64)
    avg_b = joined[f"{mean} After"].to_numpy(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        change = np.where(
            avg_a > 0, 100.0 * (avg_b - avg_a) / avg_a, np.where(avg_b > 0, np.inf, 0)
        )
    change[joined["_merge"].astype(str).to_numpy() != "both"] = np.nan
    med_b, med_a = (_medians(joined, med, side, mean) for side in ("Before", "After"))
    low, high = _interval(joined[keys], recipe, samples)
    counts = [
        joined[f"{count} {side}"].fillna(0).to_numpy(np.int64) for side in ("Before", "After")
    ]
    status, med_change = classify(med_b, med_a, low, high, tolerance_pct, tuple(counts))
    t_a = joined[f"{total} Before"].astype("Int64")
    t_b = joined[f"{total} After"].astype("Int64")
    table = pd.DataFrame({k: joined[k].to_numpy(dtype=object) for k in keys})
    table["Status"] = status
    table["Avg Before"] = avg_a
    table["Avg After"] = avg_b
    table["Avg Change (%)"] = sqlite_round(change)
    table["Total Before"] = t_a.to_numpy()
    table["Total After"] = t_b.to_numpy()
    table["Total Delta"] = (t_b.fillna(0) - t_a.fillna(0)).astype("Int64").to_numpy()
    table["Instances Before"] = joined[f"{count} Before"].astype("Int64").to_numpy()
    table["Instances After"] = joined[f"{count} After"].astype("Int64").to_numpy()
    table["Med Before"], table["Med After"] = med_b, med_a
    table["Med Change (%)"] = sqlite_round(med_change)
    table["Med Delta Low"], table["Med Delta High"] = low, high
    return by_impact(table, _label_column(recipe))


def _medians(joined: pd.DataFrame, med: str, side: str, mean: str) -> np.ndarray:
    """A side's medians; an output folder without its median column gives its means."""
    column = f"{med} {side}" if f"{med} {side}" in joined else f"{mean} {side}"
    return joined[column].to_numpy(np.float64)


def _label_column(recipe: StatsRecipe) -> str:
    return recipe.key_columns[-1] if recipe.key_columns[-1] != "Style" else "Range"


def _interval(
    keys: pd.DataFrame, recipe: StatsRecipe, samples: tuple[NameSamples, NameSamples] | None
) -> tuple[np.ndarray, np.ndarray]:
    """The interval of the median change per row of ``keys`` (NaN without instances)."""
    nan = np.full(len(keys), np.nan)
    if samples is None:
        return nan, nan.copy()
    found = diff_samples(*samples, DiffOptions())
    found = found.rename(columns={"Name": _label_column(recipe)})
    on = [c for c in keys.columns if c in found]
    ci = found[[*on, "Med Delta Low", "Med Delta High"]].drop_duplicates(on)
    merged = keys.astype(object).merge(ci.astype({c: object for c in on}), on=on, how="left")
    return merged["Med Delta Low"].to_numpy(np.float64), merged["Med Delta High"].to_numpy(
        np.float64
    )


def _check_stats(table: pd.DataFrame, recipe: StatsRecipe) -> None:
    """Refuse an ``all_stats`` read back from a folder that :func:`diff_tables` cannot trust.

    The folder may have been edited or come from elsewhere: a missing column would raise
    KeyError, text or fractions in a total TypeError, and a negative total could wrap the
    delta. The run names the folder with the reason, so the message does not.

    Raises
    ------
    AnalysisError
        A key or statistics column is missing; a total or count that is not a whole number
        >= 0 in every row; a mean that is not a finite number >= 0 in every row.
    """
    total, count, mean = recipe.stat_names[:3]
    for column in (*recipe.key_columns, total, count, mean):
        if column not in table:
            raise AnalysisError(f"its all_stats table has no {column!r} column")
    for column in (total, count):
        values = table[column]
        if not pd.api.types.is_integer_dtype(values) or values.isna().any() or (values < 0).any():
            raise AnalysisError(f"all_stats column {column!r} must hold whole numbers >= 0")
    means = table[mean]
    if not pd.api.types.is_numeric_dtype(means) or pd.api.types.is_bool_dtype(means):
        raise AnalysisError(f"all_stats column {mean!r} must hold numbers")
    values = means.to_numpy(np.float64, na_value=np.nan)
    if not (np.isfinite(values) & (values >= 0)).all():
        raise AnalysisError(f"all_stats column {mean!r} must hold finite numbers >= 0")


class Diff(Recipe):
    """``diff BEFORE AFTER``: two reports or two outputs of one stats recipe."""

    name = "diff"
    description = "what got slower, faster, appeared or vanished between two runs"
    takes_reports = False
    notebook = "diff.ipynb"

    def check_inputs(self, paths: Sequence[Path]) -> None:
        if len(paths) != 2:
            raise AnalysisError(f"diff needs exactly two inputs (before, after), got {len(paths)}")

    def map(self, report_path: Path, options: RecipeOptions) -> DiffSide:
        if report_path.is_dir():
            manifest = load_manifest(report_path)
            recipe = _stats_recipe(str(manifest.get("RecipeName")))
            table = load_output(report_path).get("all_stats")
            if table is None:
                raise AnalysisError(f"{report_path}: recipe output without an all_stats table")
            _check_stats(table, recipe)
            return DiffSide({recipe.name: table}, "output")
        needs = {t for name in _REPORT_RECIPES for t in _stats_recipe(name).tables or ()}
        report = open_report(report_path, use_cache=options.use_cache, tables=needs)
        tables, samples = {}, {}
        for name, kind in _REPORT_RECIPES.items():
            recipe = _stats_recipe(name)
            groups = recipe.groups_of(report)
            if len(groups):
                merged = merge_partials([groups], [escape_text(report.name)])
                tables[name] = recipe.stats_table(merged, with_files=False)
                samples[name] = name_samples([report], kind)
        return DiffSide(tables, "report", samples)

    def reduce(self, partials: Sequence[FilePartial], options: RecipeOptions) -> RecipeOutput:
        if len(partials) != 2:
            raise AnalysisError(
                f"diff needs both inputs; only {', '.join(p.file for p in partials)} loaded"
            )
        before, after = partials
        common = [n for n in before.partial.tables if n in after.partial.tables]
        if not common:
            raise AnalysisError(
                f"nothing to compare: {before.file} has {sorted(before.partial.tables)}, "
                f"{after.file} has {sorted(after.partial.tables)}"
            )
        tables = {}
        lines = [f"diff: before = {before.file}, after = {after.file}"]
        for name in common:
            recipe = _stats_recipe(name)
            pair = [side.partial.samples for side in (before, after)]
            table = diff_tables(
                before.partial.tables[name],
                after.partial.tables[name],
                recipe,
                options.tolerance_pct,
                (pair[0][name], pair[1][name]) if all(pair) else None,
            )
            tables[name] = table
            lines.append(_summary_line(name, table, options.tolerance_pct))
            lines.extend(_top_lines(table, recipe))
        files = pd.DataFrame(
            {
                "Side": ["before", "after"],
                "File": [before.file, after.file],
                "Path": [str(before.path), str(after.path)],
            }
        )
        tables["files"] = files
        return RecipeOutput(self.name, tables, {}, "\n".join(lines), [before.file, after.file])


def _summary_line(name: str, table: pd.DataFrame, tolerance_pct: float) -> str:
    counts = table["Status"].value_counts()
    always = ("slower", "faster", "appeared", "vanished", "noise")  # the others when present
    parts = ", ".join(f"{int(counts.get(s, 0))} {s}" for s in STATUSES
                      if s in always or counts.get(s, 0))  # fmt: skip
    return f"  {name} (tolerance {tolerance_pct:g}%): {parts}"


def _top_lines(table: pd.DataFrame, recipe: StatsRecipe, n: int = 3) -> list[str]:
    label_column = _label_column(recipe)
    lines = []
    for status in ("slower", "faster", "slower, few", "faster, few", "appeared", "vanished"):
        rows = table[table["Status"] == status].head(n)
        for row in rows.to_dict("records"):
            label = str(row[label_column])
            label = label if len(label) <= 50 else label[:49] + "…"
            change = row["Med Change (%)"]
            detail = f"{change:+.1f}% median" if np.isfinite(change) else ""
            lines.append(
                f"    {status:11s} {label:50s} {detail:>14s}  total delta "
                f"{int(row['Total Delta']):+,d} ns"
            )
    return lines
