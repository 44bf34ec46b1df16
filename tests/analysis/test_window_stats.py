"""WindowIndex: the live panel's statistics equal the one-shot aggregate and pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.selection import Selection, aggregate
from analysis.window_stats import (
    WINDOW_KINDS,
    build_window_index,
    pivot_by_report,
    robust_threshold,
)
from analysis.xp import cupy_available
from resources.demo import build_demo_reports
from tests.conftest import REAL_DIR, requires_shared

XPS = [
    pytest.param("numpy", id="numpy"),
    # The CuPy-only branches (no reduceat, bincount sums) run on NumPy arrays here.
    pytest.param("device-branch", id="device-branch-on-numpy"),
    pytest.param(
        "cupy",
        id="cupy",
        marks=pytest.mark.skipif(not cupy_available(), reason="needs CuPy and a CUDA GPU"),
    ),
]
_COLUMNS = ["count", "total_ns", "min_ns", "max_ns", "median_ns"]


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    from analysis import open_report

    paths = build_demo_reports(tmp_path_factory.mktemp("demo"))
    return [open_report(p, use_cache=False) for p in paths]


class _OtherModule:
    """NumPy under another identity, so that ``xp is np`` is False (the CuPy code path)."""

    __name__ = "numpy_as_device"

    def __getattr__(self, name: str):
        return getattr(np, name)


def _xp(name: str):
    if name == "numpy":
        return np
    if name == "device-branch":
        return _OtherModule()
    import cupy

    return cupy


def _keyed(frame: pd.DataFrame) -> pd.DataFrame:
    keys = [k for k in ("report", "name", "style") if k in frame]
    return frame.sort_values(keys).reset_index(drop=True)


@pytest.mark.parametrize("xp_name", XPS)
@pytest.mark.parametrize("kind", WINDOW_KINDS)
def test_equals_aggregate_for_every_window_path(reports, kind, xp_name):
    index = build_window_index(reports, kind, xp=_xp(xp_name))
    lo, hi = reports[0].span_ns()
    span = hi - lo
    windows = [
        (None, None),  # every row, slices
        (lo + span // 3, lo + 2 * span // 3),  # large: mask
        (lo + span // 2, lo + span // 2 + span // 400),  # small: binary search in start order
        (lo - span, hi + span),  # covers everything
    ]
    for t0, t1 in windows:
        for by_report in (False, True):
            ours = _keyed(index.stats(t0, t1, by_report=by_report))
            theirs = _keyed(aggregate(reports, kind, Selection(t0, t1), np, by_report=by_report))
            assert len(ours) == len(theirs)
            if not len(ours):
                continue
            assert ours["name"].tolist() == theirs["name"].tolist()
            for column in _COLUMNS:
                np.testing.assert_array_equal(ours[column], theirs[column], err_msg=column)
            np.testing.assert_allclose(ours["std_ns"], theirs["std_ns"], rtol=1e-9, atol=1e-6)


def test_one_report_and_offsets(reports):
    shift = 1_000_000
    index = build_window_index(reports, "kernels", offsets_ns=[0, shift, 0, 0])
    lo, hi = reports[1].span_ns()
    t0, t1 = lo + (hi - lo) // 4, lo + (hi - lo) // 2
    ours = _keyed(index.stats(t0 + shift, t1 + shift, report_index=1))
    theirs = _keyed(aggregate(reports[1], "kernels", Selection(t0, t1)))
    for column in _COLUMNS:
        np.testing.assert_array_equal(ours[column], theirs[column])


def test_instances_are_in_time_order_and_complete(reports):
    index = build_window_index(reports, "kernels")
    name = index.stats()["name"].iloc[0]
    inst = index.instances(index.groups(name))
    expected = sum(int((r.strings.lookup(r.kernels["name_id"]) == name).sum()) for r in reports)
    assert len(inst) == expected
    assert (np.diff(inst["start_ns"].to_numpy()) >= 0).all()
    for report_index, group in inst.groupby("report_index"):
        kernels = reports[int(report_index)].kernels
        rows = group["row"].to_numpy()
        np.testing.assert_array_equal(kernels.start_ns[rows], group["start_ns"])
        np.testing.assert_array_equal(kernels.duration_ns[rows], group["value"])


def test_pivot_by_report_spreads_per_report_columns(reports):
    index = build_window_index(reports, "kernels")
    names = [r.name for r in reports]
    wide = pivot_by_report(index.stats(by_report=True), names).set_index("name")
    long = index.stats(by_report=True)
    row = long.iloc[0]
    assert wide.loc[row["name"], f"{row['report']}|count"] == row["count"]
    medians = wide.loc[row["name"], [f"{n}|median_ns" for n in names]].to_numpy(float)
    assert wide.loc[row["name"], "spread"] == pytest.approx(medians.max() / medians.min())
    assert wide.loc[row["name"], "slowest"] == names[int(np.argmax(medians))]


def test_robust_threshold_matches_the_outlier_score():
    values = np.array([10, 11, 12, 13, 14, 100], dtype=float)
    median, threshold = robust_threshold(values, 3.5)
    mad = np.median(np.abs(values - np.median(values)))
    assert median == np.median(values)
    assert 0.6745 * (threshold - median) / mad == pytest.approx(3.5)


@requires_shared
def test_cuda_api_rows_equal_cuda_api_sum_where_versioned_names_collide() -> None:
    """cudaMalloc and cudaMalloc_v3020 are two rows named cudaMalloc, as in nsys (by name id)."""
    from analysis import open_report
    from analysis.stats import run_report

    path = REAL_DIR / "extra-p__extrap__ex-gpu.s1000.sqlite"
    if not path.is_file():
        pytest.skip(f"needs {path.name} in ../shared")
    report = open_report(path, use_cache=False)
    nsys = run_report(report, "cuda_api_sum", xp=np).frame
    expected = sorted(nsys[["Name", "Num Calls", "Total Time", "Min", "Max"]].itertuples(False))
    assert len(expected) > len(set(nsys["Name"]))  # the report does hold such pairs
    for frame in (
        build_window_index([report], "cuda_api").stats(None, None),
        aggregate(report, "cuda_api"),
    ):
        ours = frame[["name", "count", "total_ns", "min_ns", "max_ns"]].itertuples(False)
        assert [tuple(t) for t in sorted(ours)] == [tuple(t) for t in expected]


@requires_shared
def test_by_report_pivot_keeps_apart_api_names_that_show_alike() -> None:
    from analysis import open_report
    from analysis.stats import run_report

    paths = [REAL_DIR / f"extra-p__extrap__ex-gpu.s{s}.sqlite" for s in (1000, 10000)]
    if not all(p.is_file() for p in paths):
        pytest.skip("needs the extra-p ex-gpu reports in ../shared")
    reports = [open_report(p, use_cache=False) for p in paths]
    index = build_window_index(reports, "cuda_api")
    wide = pivot_by_report(index.stats(None, None, by_report=True), index.report_names)
    for report in reports:
        nsys = run_report(report, "cuda_api_sum", xp=np).frame
        mine = wide[wide[f"{report.name}|count"] > 0]
        ours = mine[["name", f"{report.name}|count", f"{report.name}|total_ns"]]
        expected = nsys[["Name", "Num Calls", "Total Time"]]
        assert sorted(map(tuple, ours.itertuples(False))) == sorted(
            map(tuple, expected.itertuples(False))
        )


def _assert_rows_equal_their_instances(index, windows, report_count: int) -> None:
    """Every row's count is the number of instances of that row's group (the histogram)."""
    for t0, t1 in windows:
        for report_index in [None, *range(report_count)]:
            frame = index.stats(t0, t1, report_index=report_index)
            assert frame["key"].notna().all() or index.kind != "cuda_api"
            for row in frame.itertuples(index=False):
                style = getattr(row, "style", None)
                inst = index.instances(index.groups(row.key, style), t0, t1, report_index)
                assert len(inst) == row.count, (index.kind, row.name, style, t0, t1)
                assert inst["value"].sum() == row.total_ns


@requires_shared
@pytest.mark.parametrize(
    "name",
    [
        # cudaMalloc and cudaMalloc_v3020 (two rows both shown as cudaMalloc): the histogram
        # counted both rows' calls for either row (15 vs 30 calls in the saxpy report).
        "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
        "extra-p__extrap__ex-gpu.s1000.sqlite",
        "MohanadOdema__DLProf__nsys_profile.sqlite",
    ],
)
def test_real_report_rows_equal_their_histograms(name):
    from analysis import open_report

    path = REAL_DIR / name
    if not path.is_file():
        pytest.skip(f"needs {name} in ../shared")
    report = open_report(path, use_cache=False)
    lo, hi = report.span_ns()
    windows = [(None, None), (lo + (hi - lo) // 3, lo + 2 * (hi - lo) // 3)]
    for kind in WINDOW_KINDS:
        _assert_rows_equal_their_instances(build_window_index([report], kind), windows, 1)


def test_generated_rows_equal_their_histograms(reports, tmp_path):
    """Demo reports, one with NVTX ranges of one name in both styles (two rows, one name)."""
    import shutil

    from analysis import open_report
    from tests.helpers import mutate_sqlite

    copy = tmp_path / "styles.sqlite"
    shutil.copy(reports[0].path, copy)
    mutate_sqlite(copy, "UPDATE NVTX_EVENTS SET eventType = 60 WHERE eventType = 59 AND "
                        "rowid % 3 = 0")  # fmt: skip
    mixed = [open_report(copy, use_cache=False), *reports[1:]]
    lo, hi = mixed[0].span_ns()
    span = hi - lo
    windows = [
        (None, None),
        (lo + span // 3, lo + span // 2),
        (lo + span // 2, lo + span // 2 + span // 400),
    ]
    for kind in WINDOW_KINDS:
        index = build_window_index(mixed, kind, offsets_ns=[0, 1000, 0, -1000])
        _assert_rows_equal_their_instances(index, windows, len(mixed))
    nvtx = build_window_index(mixed, "nvtx").stats()
    assert nvtx.duplicated("name").any()  # the same name in both styles: two rows


def test_pivot_over_many_reports_warns_nothing():
    """40 reports (120 per-report columns) once printed pandas' fragmentation warning."""
    import warnings

    names = [f"rank{i:02d}" for i in range(40)]
    frame = pd.DataFrame(
        {
            "report": [n for n in names for _ in range(3)],
            "name": ["a", "b", "c"] * len(names),
            "count": np.ones(3 * len(names), np.int64),
            "total_ns": np.arange(3 * len(names), dtype=np.int64) + 1,
            "median_ns": np.arange(3 * len(names), dtype=np.float64) + 1,
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wide = pivot_by_report(frame, names)
    assert list(wide["name"]) == ["c", "b", "a"]
    assert wide.loc[0, "rank39|total_ns"] == 120
    assert wide.loc[0, "total_ns"] == sum(range(3, 121, 3))
