"""The findings of the ``nsys analyze`` rules over a report set, one row each, as the
window's Expert tab lists them: which rule, which report, what, where, and the event or gap.

Qt-free; computed once per report set by :meth:`analysis.reportset.ReportSet.findings`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from strata.analysis.errors import StrataError
from strata.analysis.model import Report
from strata.analysis.reportset import ReportSet
from strata.analysis.rules import DEFAULT_RULES, RuleResult, run_rule
from strata.analysis.timefmt import format_duration_ns

__all__ = ["FINDING_COLUMNS", "ExpertFindings", "find_expert_findings", "set_findings"]

#: Columns of :attr:`ExpertFindings.frame`.
FINDING_COLUMNS = (
    "rule",
    "title",
    "report",
    "report_index",
    "what",
    "where",
    "table",
    "index",
    "start_ns",
    "duration_ns",
    "name",
    "pid",
    "device",
)


@dataclass(frozen=True)
class ExpertFindings:
    """What the rules found in a set of reports.

    Attributes
    ----------
    frame
        One row per finding (:data:`FINDING_COLUMNS`), by report then in nsys's rule order
        and each rule's own order (longest first): ``rule`` (nsys's name), ``title``,
        ``report`` (label), ``report_index``, ``what`` and ``where`` (text), ``table`` and
        ``index`` (the timeline slice table and row of the event it names; ``''`` and -1
        for a gap or an event the timeline does not draw), ``start_ns``, ``duration_ns``
        (the report's own time base), ``name`` (the event's API name, or ''), ``pid`` and
        ``device`` (-1 where the rule does not say).
    problems
        One line per rule that could not run on a report (e.g. graphics GPU work).
    """

    frame: pd.DataFrame
    problems: tuple[str, ...] = field(default=())


def find_expert_findings(
    reports: Sequence[Report], labels: Sequence[str], rules: Sequence[str] = DEFAULT_RULES
) -> ExpertFindings:
    """Run ``rules`` (nsys's default set, default options) on every report."""
    frames, problems = [], []
    for index, (report, label) in enumerate(zip(reports, labels, strict=True)):
        for spec in rules:
            try:
                result = run_rule(report, spec)
            except StrataError as exc:
                problems.append(f"{label}: {spec}: {exc}")
                continue
            if result.skipped is None and len(result.frame):
                frames.append(_finding_rows(report, index, label, result))
    if not frames:
        return ExpertFindings(_empty(), tuple(problems))
    frame = pd.concat(frames, ignore_index=True)
    return ExpertFindings(frame[list(FINDING_COLUMNS)], tuple(problems))


def _empty() -> pd.DataFrame:
    text = {"rule", "title", "report", "what", "where", "table", "name"}
    return pd.DataFrame(
        {c: np.empty(0, object if c in text else np.int64) for c in FINDING_COLUMNS}
    )


def _column(frame: pd.DataFrame, name: str, default: object = -1) -> np.ndarray:
    if name not in frame:
        return np.full(len(frame), default, dtype=object)
    return frame[name].astype(object).where(frame[name].notna(), default).to_numpy(object)


def _finding_rows(report: Report, index: int, label: str, result: RuleResult) -> pd.DataFrame:
    """The rule's rows as findings: the event each names is found in the report's table."""
    found = result.frame.reset_index(drop=True)
    kind = str(found["_kind"].iloc[0]) if "_kind" in found else ""
    table, rows = _event_rows(report, kind, found)
    out = pd.DataFrame(
        {
            "rule": result.base_name,
            "title": result.title,
            "report": label,
            "report_index": index,
            "table": table if table else "",
            "index": rows,
            "start_ns": found["Start"].to_numpy(np.int64),
            "duration_ns": found["Duration"].to_numpy(np.int64),
            "name": [str(n) for n in _column(found, "API Name", "")],
            "pid": _column(found, "PID").astype(np.int64),
            "device": _column(found, "Device ID").astype(np.int64),
        }
    )
    out["what"] = _what(found, result.base_name)
    out["where"] = _where(found)
    return out


def _event_rows(report: Report, kind: str, found: pd.DataFrame) -> tuple[str, np.ndarray]:
    """(slice table, row per finding; -1 where not found) of the events the rows name.

    The rules name events by source rowid (``_row``); the model's tables are sorted by
    track, and the timeline's slice tables of CUDA API, memcpy and memset are views of them.
    """
    missing = np.full(len(found), -1, np.int64)
    if "_row" not in found or kind not in report.tables:
        return "", missing
    row_ids = np.asarray(report.tables[kind]["row_id"], np.int64)
    order = np.argsort(row_ids, kind="stable")
    wanted = found["_row"].to_numpy(np.int64)
    at = np.searchsorted(row_ids[order], wanted)
    at = np.minimum(at, max(len(order) - 1, 0))
    hit = (row_ids[order][at] == wanted) if len(order) else np.zeros(len(wanted), bool)
    return kind, np.where(hit, order[at] if len(order) else missing, -1)


def _what(found: pd.DataFrame, rule: str) -> list[str]:
    """A line per finding: the API and what it moves, or the gap and how idle it is."""
    durations = [format_duration_ns(d) for d in found["Duration"].tolist()]
    if rule == "gpu_gaps":
        return [f"GPU idle for {d}" for d in durations]
    if rule == "gpu_time_util":
        used = found["In-Use"].tolist()
        return [f"GPU in use {u:.1f}% over {d}" for u, d in zip(used, durations, strict=True)]
    if "Warning Type" in found:
        kinds = found["Warning Type"].tolist()
        return [f"{w}, {d}" for w, d in zip(kinds, durations, strict=True)]
    names = [str(n) for n in _column(found, "API Name", "")]
    if "Src Kind" in found:
        moves = [f"{s} → {t}" for s, t in zip(found["Src Kind"], found["Dst Kind"], strict=True)]
    elif "Memory Kind" in found:
        moves = [f"{m} memory" for m in found["Memory Kind"].tolist()]
    else:
        return [f"{n}, {d}" for n, d in zip(names, durations, strict=True)]
    sizes = [_bytes_text(b) for b in found["Bytes"].tolist()]
    return [
        f"{n}: {m}, {s}, {d}" for n, m, s, d in zip(names, moves, sizes, durations, strict=True)
    ]


def _where(found: pd.DataFrame) -> list[str]:
    """'PID 48213 · GPU 0 · stream 7' from the columns the rule has."""
    parts = []
    for column, text in (("PID", "PID"), ("TID", "TID"), ("Device ID", "GPU"),
                         ("Context ID", "context"), ("Stream ID", "stream")):  # fmt: skip
        if column in found:
            parts.append([None if v == -1 else f"{text} {v}" for v in _column(found, column)])
    if not parts:
        return [""] * len(found)
    return [" · ".join(p for p in row if p) for row in zip(*parts, strict=True)]


def _bytes_text(count: int) -> str:
    for scale, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if count >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{count} B"


def set_findings(reports: ReportSet) -> ExpertFindings:
    """The findings of a report set, computed once per membership (kept by the set)."""
    return reports.derived(
        ("rules.findings",), lambda snap: find_expert_findings(list(snap.reports), snap.labels)
    )
