"""The analyses of a :class:`~analysis.reportset.ReportSet` as methods returning DataFrames.

A notebook asks one object, as Holistic Trace Analysis's ``TraceAnalysis`` facade delegates
to its analyzers: ``rs.analyze("gpu_gaps", gap=1)`` runs an expert rule,
``rs.diff([0], [1])`` compares reports, ``rs.collectives()`` matches collectives across
ranks, ``rs.recipe("cuda_gpu_kern_sum")`` runs a recipe over the set's report files. Each
method is thin: it builds the same request the command line builds and hands it to the
module that computes it (:mod:`analysis.rules`, :mod:`analysis.diff`,
:mod:`analysis.collectives`, :mod:`analysis.recipes`), so the window, the CLI and a notebook
cannot disagree. Those modules sit above the set (they take one), hence the imports inside
the methods (and the import contract's exceptions for this module).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from strata.analysis.errors import AnalysisError
from strata.analysis.model import Report

if TYPE_CHECKING:
    from strata.analysis.alignment import TimeAlignment

__all__ = ["ReportSetAnalyses"]

#: The tables of :meth:`ReportSetAnalyses.collectives`.
COLLECTIVE_TABLES = ("instances", "ranks", "summary", "rank_waits")


class ReportSetAnalyses:
    """The analysis methods of :class:`~analysis.reportset.ReportSet` (a mixin: ``self`` is
    the set; its ``snapshot``, ``labels``, ``subset``, ``index`` and ``reports`` serve)."""

    def analyze(
        self,
        rule: str,
        filter_time: str | None = None,
        filter_nvtx: str | None = None,
        timeunit: str = "nsec",
        **options: object,
    ) -> pd.DataFrame:
        """Return an expert rule's findings, as ``strata analyze -f csv -r RULE`` prints them.

        Parameters
        ----------
        rule
            One of :data:`analysis.rules.RULE_NAMES` (``gpu_gaps``, ``cuda_api_sync``...),
            optionally with nsys's options after colons (``gpu_gaps:gap=1``).
        filter_time, filter_nvtx
            ``--filter-time [START]/[END]`` (ns, or with units: ``1s/2s``) and
            ``--filter-nvtx RANGE[@DOMAIN][/INDEX]``; the NVTX range wins.
        timeunit
            ``nsec`` (default), ``usec``, ``msec`` or ``seconds``, as ``--timeunit``.
        **options
            The rule's options by name: ``rows`` (default here -1, every finding, where
            ``analyze`` prints nsys's top 50), ``start``, ``end``, ``nvtx``; ``gap`` (ms,
            gpu_gaps); ``threshold`` (%), ``chunks`` (gpu_time_util); ``process``,
            ``thread`` (cuda_api_sync).

        Returns
        -------
        pandas.DataFrame
            The rule's columns as its CSV heads them, units in the header (``Duration
            (ns)``, ``Start (ns)``, ``Bytes (MB)``, ``In-Use (%)``; ``PID``, ``TID``,
            ``Device ID``, ``API Name``... as the rule has them); with several reports a
            ``report`` column first. ``attrs["skipped"]``: per report label, nsys's reason
            where the rule SKIPPED it (it lacks the tables).

        Raises
        ------
        AnalysisError
            Unknown rule, option or time unit; a bad filter.
        """
        from strata.analysis.filterspec import with_filter
        from strata.analysis.rules import run_rule
        from strata.analysis.stats.text import parse_timeunit

        unit = parse_timeunit(timeunit)
        if "rows" not in options and ":rows=" not in rule:
            options = {"rows": -1, **options}
        spec = ":".join([rule, *(f"{k}={v}" for k, v in options.items())])
        spec = with_filter([spec], filter_time, filter_nvtx)[0]
        return csv_by_report(self.snapshot(), lambda report: run_rule(report, spec), unit)

    def diff(
        self,
        before: int | str | Report | Sequence[int | str | Report] | None = None,
        after: int | str | Report | Sequence[int | str | Report] | None = None,
        kinds: Sequence[str] | None = None,
        tolerance_pct: float | None = None,
        confidence: float | None = None,
        resamples: int | None = None,
        seed: int = 0,
    ) -> pd.DataFrame:
        """Return what changed per name from the ``before`` reports to the ``after`` ones:
        the table ``strata diff --before ... --after ... -f csv`` prints, its numbers in ns
        (the CSV's headers add ``(ns)``).

        Parameters
        ----------
        before, after
            Reports of the set, each side one or several (pooled): positions, labels
            (:attr:`labels`) or reports. Default: the first and the second report of a set
            of two.
        kinds
            What to compare (default :data:`analysis.diff.DIFF_KINDS`: ``kernels``,
            ``nvtx``, ``nvtx_gpu``, ``cuda_api``).
        tolerance_pct, confidence, resamples, seed
            As ``--tolerance`` (default 5 %), ``--confidence`` (0.95), ``--resamples``
            (2000) and ``--seed``.

        Returns
        -------
        pandas.DataFrame
            ``Kind``, ``Name``, ``Style`` (str; None outside NVTX kinds), ``Status``
            (``slower``, ``faster``, ``slower, few``, ``faster, few``, ``appeared``,
            ``vanished``, ``too few``, ``noise``), ``Total Delta``, ``Total Before``,
            ``Total After`` (int64 ns), ``Instances Before``, ``Instances After``,
            ``Instances Delta`` (int64), ``Med Before``, ``Med After``, ``Med Delta``,
            ``Med Delta Low``, ``Med Delta High`` (float64 ns), ``Med Change (%)``
            (float64); changes first, by impact.

        Raises
        ------
        AnalysisError
            A side is empty or names no report of the set; an option is out of range.
        """
        from strata.analysis import diff as _diff

        if before is None and after is None and len(self) == 2:
            before, after = 0, 1
        if before is None or after is None:
            raise AnalysisError("diff needs before= and after= (reports of the set)")
        options = _diff.DiffOptions(
            _diff.DEFAULT_CONFIDENCE if confidence is None else float(confidence),
            _diff.DEFAULT_TOLERANCE_PCT if tolerance_pct is None else float(tolerance_pct),
            _diff.DEFAULT_RESAMPLES if resamples is None else int(resamples),
            int(seed),
        )
        options.check()
        sides = [self.subset(self._positions(side)) for side in (before, after)]
        return _diff.diff_sets(sides[0], sides[1], tuple(kinds or _diff.DIFF_KINDS), options)

    def collectives(
        self,
        table: str = "instances",
        alignment: str | TimeAlignment | None = None,
    ) -> pd.DataFrame:
        """Return the collectives matched across the reports (one per rank), as
        ``strata collectives`` prints them.

        Parameters
        ----------
        table
            ``instances`` (one row per matched collective), ``ranks`` (per collective and
            rank), ``summary`` (per collective type) or ``rank_waits`` (per type and rank).
        alignment
            The shared clock: ``session`` (every session at 0), ``wallclock`` (UTC session
            starts, as ``nsys recipe``), a :class:`~analysis.alignment.TimeAlignment`, or
            None for the set's own (:attr:`alignment`).

        Returns
        -------
        pandas.DataFrame
            ``instances``: ``collective``, ``communicator`` (str), ``instance``, ``ranks``
            (int64), ``size_bytes`` (Int64 bytes), ``first_start_ns``, ``last_start_ns``,
            ``end_ns``, ``skew_ns``, ``end_skew_ns``, ``transfer_ns``, ``total_wait_ns``,
            ``max_wait_ns`` (int64 ns on the shared axis), ``straggler`` (str),
            ``straggler_index``, ``near_ties`` (int64). ``ranks``: ``instance_row``,
            ``report``, ``report_index``, ``start_ns``, ``end_ns``, ``wait_ns``,
            ``transfer_ns`` (ns), ``source``, ``table``, ``row``, ``name``. ``summary``:
            ``collective``, ``communicator``, ``count``, ``ranks``, ``mean_skew_ns``
            (float64 ns), ``max_skew_ns``, ``total_wait_ns`` (int64 ns), ``worst_straggler``,
            ``straggler_count``, ``caused_wait_ns``. ``rank_waits``: ``collective``,
            ``communicator``, ``report``, ``wait_ns`` (ns), ``wait_share`` (float64, 0-1),
            ``straggler_count``, ``instances``. ``attrs["notes"]``: what could not be
            matched; ``attrs["alignment"]``: the clock, in words.

        Raises
        ------
        AnalysisError
            An unknown table or alignment, or an impossible alignment.
        """
        from strata.analysis.alignment import TimeAlignment
        from strata.analysis.collectives import collectives

        if table not in COLLECTIVE_TABLES:
            raise AnalysisError(
                f"unknown collectives table {table!r}; use one of {', '.join(COLLECTIVE_TABLES)}"
            )
        align = TimeAlignment(alignment) if isinstance(alignment, str) else alignment
        found = collectives(self, align)
        frame = getattr(found, table).copy()
        frame.attrs["notes"] = list(found.notes)
        frame.attrs["alignment"] = found.alignment
        return frame

    def recipe(
        self,
        name: str,
        table: str | None = None,
        mode: str = "none",
        workers: int | None = None,
        **options: Any,
    ) -> pd.DataFrame:
        """Return one table of a recipe run over the set's report files.

        Parameters
        ----------
        name
            A recipe (:func:`analysis.recipes.recipe_names`), e.g. ``cuda_gpu_kern_sum``.
        table
            Which of its tables (:meth:`recipe_tables` lists them); default its first:
            ``all_stats`` (summaries), ``analysis`` (rule tables, gaps), ``trace``,
            ``pace_start``, ``histogram``, ``collectives``...
        mode, workers
            As ``recipe --mode`` (``none``: in this process, the default here;
            ``concurrent``; ``dask-futures``) and ``--workers``.
        **options
            :class:`analysis.recipes.RecipeOptions` fields: ``kernel_name`` (``--name``),
            ``start_ns``, ``end_ns``, ``nvtx``, ``rows``, ``base``, ``mangled``, ``gap_ms``,
            ``threshold_pct``, ``chunks``, ``bins``, ``bins_per_decade``, ``cumulative``,
            ``tolerance_pct``, ``use_cache``.

        Returns
        -------
        pandas.DataFrame
            The table as the recipe writes it to Parquet (its columns are those of nsys's
            recipe: ``Total Time``, ``Avg``... in ns; ``File`` names the report).
            ``attrs["skipped"]``: per report that could not be used, the reason;
            ``attrs["no_data"]``: the reports without data for it.

        Raises
        ------
        AnalysisError
            Unknown recipe, table or option; no report gave data.
        """
        tables, run = self._recipe_run(name, mode, workers, options)
        if table is None:
            table = next(iter(tables))
        if table not in tables:
            raise AnalysisError(f"recipe {name} has no table {table!r}; it has {', '.join(tables)}")
        frame = tables[table]
        frame.attrs["skipped"] = {f.file: f.reason for f in run.failures}
        frame.attrs["no_data"] = list(run.no_data)
        return frame

    def recipe_tables(
        self,
        name: str,
        mode: str = "none",
        workers: int | None = None,
        **options: Any,
    ) -> dict[str, pd.DataFrame]:
        """Return every table of a recipe run over the set's report files, by table name
        (the Parquet files ``strata recipe`` writes); arguments as :meth:`recipe`."""
        return self._recipe_run(name, mode, workers, options)[0]

    def _recipe_run(self, name: str, mode: str, workers, options: dict):
        from dataclasses import fields

        from strata.analysis.recipes import RecipeOptions, run_recipe

        known = {f.name for f in fields(RecipeOptions)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise AnalysisError(
                f"unknown recipe option {unknown[0]!r}; use one of {', '.join(sorted(known))}"
            )
        if not len(self):
            raise AnalysisError("the report set is empty; open reports first")
        paths = [report.path for report in self.reports]
        run = run_recipe(name, paths, RecipeOptions(**options), mode=mode, workers=workers)
        return dict(run.output.tables), run

    def _positions(self, which: object) -> list[int]:
        """Positions of ``which``: a position, label or report, or a sequence of them."""
        items = [which] if isinstance(which, (int, str, Report)) else list(which)
        labels = self.labels
        positions = []
        for item in items:
            if isinstance(item, str):
                if item not in labels:
                    raise AnalysisError(f"no report labelled {item!r}; the set has {labels}")
                positions.append(labels.index(item))
            else:
                positions.append(self.index(item))
        if not positions:
            raise AnalysisError("a diff side names no report")
        return positions


def with_report(frames: list[pd.DataFrame], labels: list[str], always: bool) -> pd.DataFrame:
    """Stack per-report frames; a ``report`` column first when ``always`` or several."""
    if not frames:
        return pd.DataFrame({"report": pd.Series(dtype=object)}) if always else pd.DataFrame()
    if not always and len(frames) == 1:
        return frames[0]
    parts = [f.assign(report=label) for f, label in zip(frames, labels, strict=True)]
    stacked = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return stacked[["report", *[c for c in stacked.columns if c != "report"]]]


def csv_by_report(snap: Any, run: Callable[[Report], Any], timeunit: str) -> pd.DataFrame:
    """Stack the CSV frames (:func:`csv_frame`) of ``run`` (a summary or a rule) on each
    report of ``snap`` (a :class:`~analysis.reportset.ReportSet` snapshot), a ``report``
    column first with several; ``attrs["skipped"]``: nsys's reason per label of a report it
    SKIPPED."""
    frames, skipped = [], {}
    for report, label in zip(snap.reports, snap.labels, strict=True):
        result = run(report)
        if result.skipped:
            skipped[label] = result.skipped
        frames.append(csv_frame(result, timeunit))
    frame = with_report(frames, snap.labels, always=False)
    frame.attrs["skipped"] = skipped
    return frame


def csv_frame(result, timeunit: str) -> pd.DataFrame:
    """A summary's or rule's frame as its CSV shows it: printed headers, sizes in MB, the
    chosen time unit (hidden ``_`` columns dropped)."""
    import numpy as np

    from strata.analysis.stats.format import column_strings
    from strata.analysis.stats.text import header_of

    visible = [c for c in result.frame.columns if not str(c).startswith("_")]
    out = {}
    for column in visible:
        unit = result.units.get(column)
        values = result.frame[column]
        if unit in ("mem", "thru") or (unit in ("dur", "ts") and timeunit != "nsec"):
            # Scaled and rounded as printed (column_strings is the CSV's own formatter).
            texts = column_strings(result.frame[[column]], result.units, timeunit)[0]
            values = pd.Series([float(t) if t else np.nan for t in texts], dtype=np.float64)
        out[header_of(column, unit, timeunit)] = values.reset_index(drop=True)
    return pd.DataFrame(out)
