"""The one stats entry (analysis.summary, ReportSet.summary): its strategies and its memo."""

from __future__ import annotations

import pandas as pd
import pytest

from strata.analysis import ReportSet, area
from strata.analysis.errors import AnalysisError
from strata.analysis.memo import Memo
from strata.analysis.summary import (
    AREA,
    COLUMNS,
    INDEX,
    ONE_SHOT,
    STORED,
    choose_strategy,
    is_summary_name,
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from strata.analysis import open_report
    from strata.resources.demo import build_demo_reports

    paths = build_demo_reports(tmp_path_factory.mktemp("demo"), ranks=2, steps=2)
    return [open_report(p, use_cache=False) for p in paths]


def test_choose_strategy_reasons() -> None:
    assert is_summary_name("cuda_gpu_kern_sum:base")
    assert not is_summary_name("kernels")
    assert choose_strategy("kernels", (0, 10), ("row",)) == AREA
    assert choose_strategy("kernels", (0, 10), index_built=True, build=False) == INDEX
    assert choose_strategy("kernels", (0, 10), build=True) == INDEX
    assert choose_strategy("kernels", (0, 10), build=False) == ONE_SHOT
    assert choose_strategy("cuda_gpu_kern_sum") == COLUMNS  # a loaded set
    assert choose_strategy(["cuda_gpu_kern_sum"], path="r.sqlite") == STORED
    with pytest.raises(AnalysisError, match="not rows"):
        choose_strategy("cuda_gpu_kern_sum", rows=("row",))


def test_one_shot_and_index_agree_and_are_memoised(demo, monkeypatch) -> None:
    reports = ReportSet(demo)
    calls = []
    real = area.aggregate_window
    monkeypatch.setattr(area, "aggregate_window", lambda *a, **k: calls.append(a) or real(*a, **k))
    window = (None, 2_000_000)
    first = reports.summary("kernels", window, build=False)
    assert first.attrs["strategy"] == ONE_SHOT
    first["count"] = -1  # the caller's own copy
    again = reports.summary("kernel", window, build=False)
    assert len(calls) == 1
    assert (again["count"] > 0).all()
    indexed = reports.summary("kernels", window)
    assert indexed.attrs["strategy"] == INDEX
    columns = ["name", "count", "total_ns", "min_ns", "max_ns", "median_ns"]
    one_shot = again[columns].sort_values("name").reset_index(drop=True)
    assert indexed[columns].sort_values("name").reset_index(drop=True).equals(one_shot)
    # Once the index is built, the panel's request (never waiting) is the index's too.
    assert reports.summary("kernels", window, build=False).attrs["strategy"] == INDEX
    assert len(calls) == 1


def test_summary_window_is_nsys_time_filter(demo) -> None:
    reports = ReportSet(demo[:1])
    assert reports.offsets_ns() == [0]
    kernels = reports.events("kernels")
    lo, hi = int(kernels["start"].min()), int(kernels["end"].max())
    t0, t1 = lo + (hi - lo) // 3, lo + (hi - lo) // 2
    windowed = reports.summary("cuda_gpu_kern_sum", (t0, t1))
    filtered = reports.stats("cuda_gpu_kern_sum", filter_time=f"{t0}/{t1}")
    pd.testing.assert_frame_equal(windowed, filtered)
    whole = reports.summary("cuda_gpu_kern_sum")
    assert whole["Instances"].sum() > windowed["Instances"].sum() > 0
    with pytest.raises(AnalysisError):
        reports.summary("cuda_gpu_kern_sum", rows=("row",))


def test_memo_keeps_the_latest_values() -> None:
    memo = Memo()
    for i in range(10):
        memo.get(("w", i), lambda i=i: i)
    memo.get("other", lambda: 0)
    memo.keep_latest(lambda k: k[0] == "w", 3)
    assert [memo.peek(("w", i)) for i in range(10)] == [None] * 7 + [7, 8, 9]
    assert memo.peek("other") == 0
