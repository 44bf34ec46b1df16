"""Machinery of the ``nsys analyze`` rules: the registry, rule options, results and filters.

Each rule of nsys 2023.4 (``target-linux-x64/rules/*.py``) is registered here with its title,
its advice and no-result messages, and its options (``rows``, ``start``, ``end``, ``nvtx``
for all of them). Options are checked before any report is opened: a bad value is one
:class:`~analysis.errors.AnalysisError` line, where nsys prints an ``ERROR:`` per report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from strata.analysis.errors import AnalysisError
from strata.analysis.filters import MAX_TIME, FilterSkip, RowFilter, resolve_filter
from strata.analysis.model import Report
from strata.analysis.specname import SpecName
from strata.analysis.spelling import did_you_mean

__all__ = [
    "DEFAULT_ROWS",
    "REGISTRY",
    "Rule",
    "RuleResult",
    "RowFilter",
    "SkipRule",
    "limit_rows",
    "parse_rule_spec",
    "register",
    "row_filter",
]

#: nsys's ExpertSystemsReport.DEFAULT_ROW_LIMIT.
DEFAULT_ROWS = 50
#: Options every rule takes: name -> (type, default).
_COMMON_OPTIONS: dict[str, tuple[type, object]] = {
    "start": (int, None),
    "end": (int, None),
    "nvtx": (str, None),
    "rows": (int, DEFAULT_ROWS),
}


class SkipRule(Exception):  # noqa: N818 - a control-flow signal, caught by run_rule
    """Raised by a rule when the report lacks its tables (message = nsys's SKIPPED text)."""


@dataclass(frozen=True)
class Rule:
    """A registered rule: nsys's name, title, messages, extra options and its function.

    ``advice`` and ``noresult`` may name options in braces (``{gap}``), filled in from the
    options of a run. ``func(report, options, keep)`` returns ``(frame, units)``.
    """

    name: str
    title: str
    advice: str
    noresult: str
    func: Callable[..., tuple[pd.DataFrame, Mapping[str, str | None]]]
    options: Mapping[str, tuple[type, object]] = field(default_factory=dict)
    check: Callable[[Mapping[str, object]], None] | None = None

    def all_options(self) -> dict[str, tuple[type, object]]:
        return {**_COMMON_OPTIONS, **self.options}


@dataclass(frozen=True)
class RuleResult(SpecName):
    """One rule run on one report.

    Attributes
    ----------
    name
        The rule spec as asked, e.g. ``gpu_gaps:gap=1``.
    title
        nsys's display name, e.g. "GPU Gaps".
    frame
        One column per nsys column (header without its unit); columns named ``_...`` are
        not printed (the event a finding names: ``_Global ID``...).
    units
        Column -> unit tag ('dur', 'ts', 'mem', 'ratio' or None).
    advice, noresult
        nsys's messages, options filled in.
    rows
        The row limit (``rows=``; <= 0: none).
    skipped
        nsys's SKIPPED text when the report lacks the data.
    """

    name: str
    title: str
    frame: pd.DataFrame
    units: Mapping[str, str | None]
    advice: str
    noresult: str
    rows: int = DEFAULT_ROWS
    skipped: str | None = None

    def limit_message(self) -> str:
        """nsys's "Only the top N results are displayed" line, or '' (MessageRowLimit)."""
        count = len(self.frame)
        if self.rows <= 0 or count < self.rows:
            return ""
        if self.rows == 1:
            return "Only the top result is displayed. More data may be available."
        return f"Only the top {count} results are displayed. More data may be available."


REGISTRY: dict[str, Rule] = {}


def register(rule: Rule) -> Rule:
    REGISTRY[rule.name] = rule
    return rule


def parse_rule_spec(spec: str) -> tuple[Rule, dict[str, object]]:
    """Return the rule of ``name[:opt=value...]`` and its options (defaults filled in).

    Raises
    ------
    AnalysisError
        Unknown rule, unknown option, an option without a value or with a bad one.
    """
    name, *pieces = spec.strip().split(":")
    rule = REGISTRY.get(name)
    if rule is None:
        hint = did_you_mean(name, REGISTRY) or f"; choose from {', '.join(sorted(REGISTRY))}"
        raise AnalysisError(f"unknown rule '{name}'{hint}")
    allowed = rule.all_options()
    args = _join_text_values(pieces, allowed)
    options = {key: default for key, (_type, default) in allowed.items()}
    for arg in args:
        key, sep, text = arg.removeprefix("--").partition("=")
        if key not in allowed:
            hint = did_you_mean(key, allowed) or f"; choose from {', '.join(allowed)}"
            raise AnalysisError(f"{name}: unknown option '{key}'{hint}")
        if not sep:
            raise AnalysisError(f"{name}: option '{key}' needs a value ({key}=VALUE)")
        kind = allowed[key][0]
        try:
            options[key] = kind(text)
        except ValueError:
            raise AnalysisError(f"{name}: {key}={text!r} is not an integer") from None
        if kind is int and not -MAX_TIME - 1 <= options[key] <= MAX_TIME:
            raise AnalysisError(f"{name}: {key}={text} is out of the 64-bit range")
    if rule.check is not None:
        rule.check(options)
    return rule, options


def _join_text_values(pieces: list[str], allowed: Mapping[str, tuple[type, object]]) -> list[str]:
    """The ``opt=value`` arguments of a spec split on colons, with a text value's own colons
    put back: ``nvtx=aten::empty`` is one argument (nsys reads it so from --filter-nvtx), a
    piece that does not start another option belongs to the text before it."""
    args: list[str] = []
    for piece in pieces:
        key = args[-1].removeprefix("--").partition("=")[0] if args else ""
        starts_option = piece.removeprefix("--").partition("=")[0] in allowed and "=" in piece
        if args and not starts_option and allowed.get(key, (int,))[0] is str:
            args[-1] += ":" + piece
        else:
            args.append(piece)
    return args


def row_filter(report: Report, options: Mapping[str, object]) -> RowFilter | None:
    """Return the filter of a run's options, or None when they filter nothing.

    Raises
    ------
    SkipRule
        The NVTX range is not in the report, or start > end (nsys's SKIPPED texts).
    """
    pid = options.get("process", -1)
    tid = options.get("thread", -1)
    try:
        return resolve_filter(
            report,
            options["start"],
            options["end"],
            None if options["nvtx"] is None else str(options["nvtx"]),
            None if pid is None or pid < 0 else pid,
            None if tid is None or tid < 0 else tid,
        )
    except FilterSkip as skip:
        raise SkipRule(str(skip)) from None


def limit_rows(frame: pd.DataFrame, rows: int) -> pd.DataFrame:
    """SQLite's ``LIMIT rows``: negative is no limit, 0 is no row."""
    return frame if rows < 0 else frame.iloc[:rows]
