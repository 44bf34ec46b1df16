"""Multi-report alignment against the SQLite files' own session starts and NVTX ranges."""

from __future__ import annotations

import sqlite3

import pytest

from strata.analysis.alignment import TimeAlignment, alignment_offsets
from strata.analysis.errors import AnalysisError
from tests.conftest import REAL_DIR, requires_shared

S1 = REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite"
S2 = REAL_DIR / "extra-p__extrap__concurrent.s2__profile2.sqlite"


def _one(path, query):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        return con.execute(query).fetchone()[0]


@requires_shared
def test_session_mode_shifts_nothing(load_report) -> None:
    reports = [load_report(S1), load_report(S2)]
    assert alignment_offsets(reports) == [0, 0]
    assert alignment_offsets(reports, manual_ns=[5, -7]) == [5, -7]


@requires_shared
def test_wallclock_uses_utc_session_starts(load_report) -> None:
    reports = [load_report(S1), load_report(S2)]
    utc = [_one(p, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME") for p in (S1, S2)]
    first = min(utc)
    assert alignment_offsets(reports, "wallclock") == [u - first for u in utc]


@requires_shared
def test_nvtx_mode_lines_up_first_instances(load_report) -> None:
    reports = [load_report(S1), load_report(S2)]
    name = "main"
    query = (
        "SELECT min(start) FROM NVTX_EVENTS WHERE eventType IN (59, 60, 70, 71) AND "
        f"coalesce((SELECT value FROM StringIds WHERE id = textId), text) = '{name}'"
    )
    firsts = [_one(p, query) for p in (S1, S2)]
    offsets = TimeAlignment("nvtx", name).offsets(reports)
    assert firsts[0] + offsets[0] == firsts[1] + offsets[1] == min(firsts)


@requires_shared
def test_bad_requests_raise(load_report) -> None:
    reports = [load_report(S1)]
    with pytest.raises(AnalysisError):
        alignment_offsets(reports, "nvtx")
    with pytest.raises(AnalysisError):
        alignment_offsets(reports, "nvtx", "no such range anywhere")
    with pytest.raises(AnalysisError):
        alignment_offsets(reports, "sideways")
