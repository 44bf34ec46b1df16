"""NVTX labels (spec §3.4, 2023.4 naming) and containment (spec §4.1 step 2)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from strata.analysis.nvtx import contained_pairs, range_labels, range_rows, range_styles
from tests.conftest import FIXTURES_DIR, requires_fixtures


@requires_fixtures
def test_labels_follow_2023_4(load_report) -> None:
    # spec §6.4: a registered string in domain MyDomain; default-domain ranges stay plain
    # (nsys 2024+ would print ':outer').
    report = load_report(FIXTURES_DIR / "real-2023.4-nvtx.sqlite")
    rows = range_rows(report)
    labels = dict(zip(range_labels(report, rows).tolist(), range_styles(
        report.nvtx["event_type"][rows]).tolist(), strict=True))  # fmt: skip
    assert labels["outer"] == "PushPop"
    assert labels["MyDomain:reg_range"] == "PushPop"
    assert labels["se_cross"] == "StartEnd"
    assert ":outer" not in labels


@requires_fixtures
def test_cross_thread_ranges_leave_projection_only(load_report) -> None:
    report = load_report(FIXTURES_DIR / "real-2023.4-nvtx.sqlite")
    every = set(range_labels(report, range_rows(report)).tolist())
    same = set(range_labels(report, range_rows(report, same_thread_only=True)).tolist())
    assert every - same == {"se_cross"}


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2), st.integers(-50, 50), st.integers(0, 40)),
             max_size=20),
    st.lists(st.tuples(st.integers(0, 2), st.integers(-50, 50), st.integers(0, 10)),
             max_size=20),
)  # fmt: skip
def test_contained_pairs_match_brute_force(ranges, items) -> None:
    r = np.array(ranges, dtype=np.int64).reshape(-1, 3)
    i = np.array(items, dtype=np.int64).reshape(-1, 3)
    got = contained_pairs(r[:, 0], r[:, 1], r[:, 1] + r[:, 2], i[:, 0], i[:, 1], i[:, 1] + i[:, 2])
    want = {
        (a, b)
        for a in range(len(r))
        for b in range(len(i))
        if r[a, 0] == i[b, 0] and r[a, 1] <= i[b, 1] and i[b, 1] + i[b, 2] <= r[a, 1] + r[a, 2]
    }
    assert set(zip(got[0].tolist(), got[1].tolist(), strict=True)) == want
    assert len(got[0]) == len(want)
