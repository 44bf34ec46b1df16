"""Machinery of the ``nsys analyze`` rules: the registry, rule options, results and filters.

Each rule of nsys 2023.4 (``target-linux-x64/rules/*.py``) is registered here with its title,
its advice and no-result messages, and its options (``rows``, ``start``, ``end``, ``nvtx``
for all of them). Options are checked before any report is opened: a bad value is one
:class:`~analysis.errors.AnalysisError` line, where nsys prints an ``ERROR:`` per report.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pandas as pd

from analysis.errors import AnalysisError
from analysis.model import Report
from analysis.schema import NVTX_RANGE_TYPES, pid_of, tid_of

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
#: The largest timestamp nsys's filter uses for an open end.
_MAX_TIME = 0x7FFFFFFFFFFFFFFF
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
class RuleResult:
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

    @property
    def base_name(self) -> str:
        return self.name.split(":")[0]

    @property
    def args(self) -> tuple[str, ...]:
        return tuple(self.name.split(":")[1:])

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
        raise AnalysisError(f"unknown rule '{name}'; choose from {', '.join(sorted(REGISTRY))}")
    allowed = rule.all_options()
    args = _join_text_values(pieces, allowed)
    options = {key: default for key, (_type, default) in allowed.items()}
    for arg in args:
        key, sep, text = arg.removeprefix("--").partition("=")
        if key not in allowed:
            raise AnalysisError(f"{name}: unknown option '{key}'; choose from {', '.join(allowed)}")
        if not sep:
            raise AnalysisError(f"{name}: option '{key}' needs a value ({key}=VALUE)")
        kind = allowed[key][0]
        try:
            options[key] = kind(text)
        except ValueError:
            raise AnalysisError(f"{name}: {key}={text!r} is not an integer") from None
        if kind is int and not -_MAX_TIME - 1 <= options[key] <= _MAX_TIME:
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


@dataclass(frozen=True)
class RowFilter:
    """nsys's ``start``/``end``/``nvtx``/``process``/``thread`` filter of a rule's tables.

    A row is kept when it overlaps ``[start, end)`` (nsys's filtered views: starts inside,
    ends inside, or spans it), and, where the table has the ids, belongs to the process,
    thread or NVTX range's thread asked for.
    """

    start: int = 0
    end: int = _MAX_TIME
    pid: int | None = None
    tid: int | None = None
    nvtx_gtid: int | None = None

    def mask(
        self,
        start: npt.ArrayLike,
        end: npt.ArrayLike,
        global_tid: npt.ArrayLike | None = None,
        global_pid: npt.ArrayLike | None = None,
    ) -> npt.NDArray[np.bool_]:
        s, e = np.asarray(start, np.int64), np.asarray(end, np.int64)
        lo, hi = self.start, self.end
        keep = ((s >= lo) & (s < hi)) | ((e >= lo) & (e < hi)) | ((s < lo) & (e >= hi))
        if global_tid is not None:
            gtid = np.asarray(global_tid, np.int64)
            if self.pid is not None:
                keep &= pid_of(gtid) == self.pid
            if self.tid is not None:
                keep &= tid_of(gtid) == self.tid
            if self.nvtx_gtid is not None:
                keep &= self._nvtx_thread(gtid)
        elif global_pid is not None:
            gpid = np.asarray(global_pid, np.int64)
            if self.pid is not None:
                keep &= pid_of(gpid) == self.pid
            if self.nvtx_gtid is not None:
                keep &= (gpid >> 24) == (self.nvtx_gtid >> 24)
        return keep

    def _nvtx_thread(self, gtid: np.ndarray) -> npt.NDArray[np.bool_]:
        nvtx = self.nvtx_gtid
        if int(pid_of(nvtx)) != int(tid_of(nvtx)):
            return gtid == nvtx  # a push/pop range: its thread
        return (gtid >> 24) == (nvtx >> 24)  # a start/end range: its process


def row_filter(report: Report, options: Mapping[str, object]) -> RowFilter | None:
    """Return the filter of a run's options, or None when they filter nothing.

    Raises
    ------
    SkipRule
        The NVTX range is not in the report, or start > end (nsys's SKIPPED texts).
    """
    start, end, nvtx = options["start"], options["end"], options["nvtx"]
    pid = options.get("process", -1)
    tid = options.get("thread", -1)
    pid = None if pid is None or pid < 0 else pid
    tid = None if tid is None or tid < 0 else tid
    if all(v is None for v in (start, end, nvtx, pid, tid)):
        return None
    nvtx_gtid = None
    if nvtx is None:
        start = 0 if start is None else start
        end = _MAX_TIME if end is None else end
    else:
        nvtx_start, nvtx_end, nvtx_gtid = _nvtx_range(report, str(nvtx))
        start = nvtx_start if start is None else start
        end = nvtx_end if end is None else end
    if start > end:
        raise SkipRule("The start time cannot be greater than the end time.")
    if (pid is not None or tid is not None) and nvtx is not None:
        raise SkipRule("The 'nvtx' option cannot be used with 'pid' or 'tid'.")
    return RowFilter(int(start), int(end), pid, tid, nvtx_gtid)


def _nvtx_range(report: Report, spec: str) -> tuple[int, int, int]:
    """(start, end, globalTid) of the NVTX range ``name[@domain][/index]``, as nsys finds it."""
    if not report.has_source("NVTX_EVENTS"):
        raise SkipRule(f"{report.name} does not contain NV Tools Extension (NVTX) data.")
    name, index = spec, 0
    head, slash, tail = spec.rpartition("/")
    if slash and tail.strip().lstrip("+").isdigit():
        name, index = head, int(tail)
    nvtx = report.tables["nvtx"]
    rows = np.flatnonzero(np.isin(nvtx["event_type"], NVTX_RANGE_TYPES))
    texts = report.strings.lookup(nvtx["name_id"][rows], missing="")
    domains = report.nvtx_domains
    labels = {
        (int(p), int(d)): f"@{n}"
        for p, d, n in zip(domains["pid"], domains["domain_id"], domains["name"], strict=True)
    }
    pids = pid_of(nvtx["global_tid"][rows]).tolist()
    full = [
        f"{t}{labels.get((p, int(d)), '')}"
        for t, p, d in zip(texts.tolist(), pids, nvtx["domain_id"][rows].tolist(), strict=True)
    ]
    hits = rows[np.asarray(full, dtype=object) == name] if full else rows[:0]
    hits = hits[np.argsort(nvtx.start_ns[hits], kind="stable")]
    if index >= len(hits):
        raise SkipRule(f"NVTX range '{spec}' could not be found in {report.name}.")
    row = hits[index]
    end = _MAX_TIME if bool(nvtx["is_open"][row]) else int(nvtx.end_ns[row])
    return int(nvtx.start_ns[row]), end, int(nvtx["global_tid"][row])


def limit_rows(frame: pd.DataFrame, rows: int) -> pd.DataFrame:
    """SQLite's ``LIMIT rows``: negative is no limit, 0 is no row."""
    return frame if rows < 0 else frame.iloc[:rows]
