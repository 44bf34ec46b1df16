"""Put several reports on one time axis: a shift in ns per report.

Each report's events are on its own session time base (0 = its session start, spec §1.1).
The viewer draws event ``t`` of report ``i`` at ``t + offsets[i]``. An ``anchor`` alignment
takes one event per report (a matched collective, typically: its ranks finish together) and
makes the reports' clocks agree on its end.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from strata.analysis.errors import AnalysisError
from strata.analysis.model import Report
from strata.analysis.schema import NVTX_RANGE_TYPES

__all__ = [
    "ALIGNMENT_MODES",
    "TimeAlignment",
    "alignment_offsets",
    "describe_alignment",
    "anchor_offsets",
    "first_nvtx_start_ns",
]

log = logging.getLogger(__name__)

ALIGNMENT_MODES = ("session", "wallclock", "nvtx", "anchor")


def describe_alignment(alignment: TimeAlignment) -> str:
    """Return how ``alignment`` puts the reports on one axis, in words for a header or label
    (``session starts at 0``, ``wall clock (UTC session starts)``, ``first NVTX range
    'step'``, ``anchor events``; ``, manual shifts`` when any report is shifted by hand)."""
    words = {
        "session": "session starts at 0",
        "wallclock": "wall clock (UTC session starts)",
        "nvtx": f"first NVTX range {alignment.nvtx_name!r}",
        "anchor": "anchor events",
    }.get(alignment.mode, alignment.mode)
    if any(alignment.manual_ns):
        words += ", manual shifts"
    return words


@dataclass(frozen=True)
class TimeAlignment:
    """How reports share the time axis.

    Attributes
    ----------
    mode
        ``session`` (every session starts at 0), ``wallclock`` (UTC session starts, the
        earliest at 0; what ``nsys recipe`` does, spec §1.1), ``nvtx`` (the first
        instance of ``nvtx_name`` in every report lines up with the earliest one) or
        ``anchor`` (every report's anchor event ends where the earliest-ending one does).
    nvtx_name
        The NVTX range name for ``nvtx`` mode.
    manual_ns
        Extra shift per report, added after the mode's shift (empty = none).
    anchors_ns
        For ``anchor`` mode, per report the end of its anchor event on its own clock
        (``None``: that report has no anchor).
    """

    mode: str = "session"
    nvtx_name: str | None = None
    manual_ns: tuple[int, ...] = ()
    anchors_ns: tuple[int | None, ...] = ()

    def offsets(self, reports: Sequence[Report]) -> list[int]:
        """Return the shift in ns per report."""
        return alignment_offsets(reports, self.mode, self.nvtx_name, list(self.manual_ns),
                                 self.anchors_ns)  # fmt: skip


def first_nvtx_start_ns(report: Report, name: str) -> int | None:
    """Return the start of the first NVTX range called ``name`` in ``report``, or None."""
    nvtx = report.tables["nvtx"]
    if not len(nvtx):
        return None
    ids = report.strings.find(name)
    if not len(ids):
        return None
    hit = np.isin(nvtx["name_id"], ids) & np.isin(nvtx["event_type"], NVTX_RANGE_TYPES)
    if not hit.any():
        return None
    return int(nvtx["start_ns"][hit].min())


def alignment_offsets(
    reports: Sequence[Report],
    mode: str = "session",
    nvtx_name: str | None = None,
    manual_ns: Sequence[int] | None = None,
    anchors_ns: Sequence[int | None] = (),
) -> list[int]:
    """Return, per report, the ns to add to its timestamps to place it on the shared axis.

    Parameters
    ----------
    reports
        The reports, in view order.
    mode
        ``session``, ``wallclock`` or ``nvtx`` (see :class:`TimeAlignment`).
    nvtx_name
        Range name for ``nvtx`` mode. Reports without that range keep a shift of 0 (logged).
    manual_ns
        Extra shift per report; shorter lists are padded with 0.
    anchors_ns
        For ``anchor`` mode: per report, the end of its anchor event (its own clock).

    Returns
    -------
    list of int

    Raises
    ------
    AnalysisError
        Unknown mode, ``nvtx`` mode without a name, no report has the range, or a report
        has no anchor in ``anchor`` mode.
    """
    if mode not in ALIGNMENT_MODES:
        raise AnalysisError(f"unknown alignment {mode!r}; use one of {', '.join(ALIGNMENT_MODES)}")
    n = len(reports)
    base = [0] * n
    if mode == "wallclock" and n:
        starts = [int(r.info.session_start_utc_ns) for r in reports]
        first = min(starts)
        base = [s - first for s in starts]
    elif mode == "nvtx":
        if not nvtx_name:
            raise AnalysisError("NVTX alignment needs a range name")
        firsts = [first_nvtx_start_ns(r, nvtx_name) for r in reports]
        known = [f for f in firsts if f is not None]
        if not known:
            raise AnalysisError(f"no report has an NVTX range named {nvtx_name!r}")
        anchor = min(known)
        for i, f in enumerate(firsts):
            if f is None:
                log.info("%s has no NVTX range %r; not shifted", reports[i].name, nvtx_name)
            else:
                base[i] = anchor - f
    elif mode == "anchor":
        base = anchor_offsets(reports, anchors_ns)
    manual = list(manual_ns or [])
    manual += [0] * (n - len(manual))
    return [int(b) + int(m) for b, m in zip(base, manual[:n], strict=False)]


def anchor_offsets(reports: Sequence[Report], anchors_ns: Sequence[int | None]) -> list[int]:
    """Return the shifts that make every report's anchor end where the earliest one does.

    Raises
    ------
    AnalysisError
        A report has no anchor (its name is in the message).
    """
    anchors = list(anchors_ns) + [None] * (len(reports) - len(anchors_ns))
    missing = [r.name for r, a in zip(reports, anchors, strict=False) if a is None]
    if missing:
        raise AnalysisError(
            f"no anchor event in {', '.join(missing)}: right-click an event of each report, "
            "Use as Alignment Anchor"
        )
    first = min(int(a) for a in anchors[: len(reports)]) if reports else 0
    return [first - int(a) for a in anchors[: len(reports)]]
