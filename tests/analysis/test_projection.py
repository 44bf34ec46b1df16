"""NVTX → GPU projection (spec §4.1): nsys's printed trace, and a brute-force reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strata.analysis.projection import _project, project_nvtx, range_parents
from tests.analysis.test_stats_fixtures import parse_sections
from tests.conftest import EXPECTED_DIR, FIXTURES_DIR, requires_fixtures


def _nsys_trace(db: str) -> list[dict[str, str]]:
    text = (EXPECTED_DIR / f"{db}.csv.txt").read_text()
    section = next(s for s in parse_sections(text) if s.spec == "nvtx_gpu_proj_trace")
    header, *rows = (line.split(",") for line in section.body)
    return [dict(zip(header, row, strict=True)) for row in rows]


@requires_fixtures
@pytest.mark.parametrize("db", ["syn", "syn2", "syn3"])
def test_frame_matches_nsys_trace(db: str, load_report) -> None:
    frame = project_nvtx(load_report(FIXTURES_DIR / f"{db}.sqlite"))
    named = [r for r in _nsys_trace(db) if r["RangeId"]]  # the 2023.4 anonymous row aside
    assert len(frame) == len(named)
    for row, want in zip(frame.itertuples(), named, strict=True):
        assert row.name == want["Name"]
        assert row.start_ns == int(want["Projected Start (ns)"])
        assert row.end_ns - row.start_ns == int(want["Projected Duration (ns)"])
        assert row.orig_start_ns == int(want["Orig Start (ns)"])
        assert row.orig_end_ns - row.orig_start_ns == int(want["Orig Duration (ns)"])
        assert (row.style, str(row.pid), str(row.tid)) == (want["Style"], want["PID"], want["TID"])
        assert row.num_gpu_ops == int(want["NumGPUOps"])
        assert row.num_child == int(want["NumChild"])
        assert row.range_id == int(want["RangeId"])
        assert ("" if np.isnan(row.level) else str(int(row.level))) == want["Lvl"]
        assert ("" if np.isnan(row.parent_id) else str(int(row.parent_id))) == want["ParentId"]
        assert row.range_stack == want["RangeStack"]


@requires_fixtures
def test_no_gpu_work_means_no_rows(load_report) -> None:
    # spec §6.1: the 'empty' range launched nothing and is absent.
    frame = project_nvtx(load_report(FIXTURES_DIR / "syn.sqlite"))
    assert "empty" not in set(frame["name"])


def _brute_parents(tid, start, end, row_id) -> list[int]:
    out = []
    for c in range(len(start)):
        best, best_key = -1, None
        for p in range(len(start)):
            if p != c and tid[p] == tid[c] and start[p] <= start[c] and end[p] >= end[c]:
                key = ((start[c] - start[p]) + (end[p] - end[c]), row_id[p])
                if best_key is None or key < best_key:
                    best, best_key = p, key
        out.append(best)
    return out


def _nested(draw_ints: list[tuple[int, int, int]]) -> tuple[np.ndarray, ...]:
    """Properly nested ranges per thread from (thread, depth hint, length) triples."""
    tid, start, end = [], [], []
    cursor = {}
    stack: dict[int, list[tuple[int, int]]] = {}
    for t, up, length in draw_ints:
        s = cursor.get(t, 0)
        st_ = stack.setdefault(t, [])
        for _ in range(up):
            if st_:
                s = max(s, st_.pop()[1])
        while st_ and s > st_[-1][1]:
            st_.pop()
        limit = st_[-1][1] if st_ else 10**9
        e = min(s + length, limit)
        tid.append(t)
        start.append(s)
        end.append(e)
        st_.append((s, e))
        cursor[t] = s + (length % 3)
    return (np.array(tid, np.int64), np.array(start, np.int64), np.array(end, np.int64))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3), st.integers(0, 40)),
                min_size=1, max_size=40))  # fmt: skip
def test_parents_match_brute_force(items) -> None:
    tid, start, end = _nested(items)
    row_id = np.arange(1, len(tid) + 1, dtype=np.int64)[::-1].copy()
    got = range_parents(tid, start, end, row_id)
    want = _brute_parents(tid.tolist(), start.tolist(), end.tolist(), row_id.tolist())
    # A tie between equally tight parents is only defined up to nsys's lowest rowid rule.
    assert got.tolist() == want


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 6), st.integers(0, 4)),
                min_size=1, max_size=12))  # fmt: skip
def test_crossing_and_twin_ranges_match_brute_force(items) -> None:
    tid = np.array([i[0] for i in items], np.int64)
    start = np.array([i[1] for i in items], np.int64)
    end = start + np.array([i[2] for i in items], np.int64)
    row_id = np.arange(1, len(tid) + 1, dtype=np.int64)
    got = range_parents(tid, start, end, row_id)
    assert got.tolist() == _brute_parents(tid.tolist(), start.tolist(), end.tolist(),
                                          row_id.tolist())  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 1), st.integers(0, 100), st.integers(0, 60)),
             min_size=1, max_size=25),
    st.lists(st.tuples(st.integers(0, 1), st.integers(0, 10), st.integers(0, 1000)),
             min_size=1, max_size=25),
)  # fmt: skip
def test_projection_matches_brute_force(ranges, calls) -> None:
    r_tid = np.array([r[0] for r in ranges], np.int64)
    r_start = np.array([r[1] for r in ranges], np.int64)
    r_end = r_start + np.array([r[2] for r in ranges], np.int64)
    # Calls on a thread do not overlap (sequential API calls): lay them end to end.
    l_tid = np.array([c[0] for c in calls], np.int64)
    gaps = np.array([c[1] for c in calls], np.int64)
    l_start = np.zeros(len(calls), np.int64)
    l_end = np.zeros(len(calls), np.int64)
    cursor = {0: 0, 1: 0}
    for i, t in enumerate(l_tid.tolist()):
        l_start[i] = cursor[t] + gaps[i]
        l_end[i] = l_start[i] + gaps[i] // 2
        cursor[t] = int(l_end[i])
    gpu_start = np.array([c[2] for c in calls], np.int64)
    launches = {"tid": l_tid, "start": l_start, "end": l_end, "gpu_start": gpu_start,
                "gpu_end": gpu_start + 7, "corr_key": np.arange(len(calls))}  # fmt: skip
    ranges_d = {"tid": r_tid, "start": r_start, "end": r_end}
    per_range, covered = _project(ranges_d, launches)
    for i in range(len(r_tid)):
        inside = [j for j in range(len(l_tid)) if l_tid[j] == r_tid[i]
                  and r_start[i] <= l_start[j] and l_end[j] <= r_end[i]]  # fmt: skip
        assert per_range["count"][i] == len(inside)
        if inside:
            assert per_range["start"][i] == gpu_start[inside].min()
            assert per_range["end"][i] == (gpu_start[inside] + 7).max()
    for j in range(len(l_tid)):
        held = any(l_tid[j] == r_tid[i] and r_start[i] <= l_start[j] and l_end[j] <= r_end[i]
                   for i in range(len(r_tid)))  # fmt: skip
        assert covered[j] == held
