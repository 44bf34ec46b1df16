"""WindowIndex: the live panel's statistics equal the one-shot aggregate and pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from strata.analysis.selection import Selection, aggregate
from strata.analysis.window_stats import (
    WINDOW_KINDS,
    build_window_index,
    pivot_by_report,
    robust_threshold,
)
from strata.analysis.xp import cupy_available
from strata.resources.demo import build_demo_reports
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
    from strata.analysis import open_report

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
    from strata.analysis import open_report
    from strata.analysis.stats import run_report

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
    from strata.analysis import open_report
    from strata.analysis.stats import run_report

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
    from strata.analysis import open_report

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

    from strata.analysis import open_report
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


def test_wavelet_kth_smallest_equals_a_sort() -> None:
    """k-th smallest of unions of ranges of matrices of different widths, plus loose values."""
    from strata.analysis.wavelet import WaveletMatrix, kth_smallest

    rng = np.random.default_rng(7)
    for _ in range(100):
        widths = rng.integers(1, 9, size=3)
        values = [rng.integers(0, 2**w, size=rng.integers(0, 140)).astype(np.int32)
                  for w in widths]  # fmt: skip
        matrices = [WaveletMatrix(v, int(w)) for v, w in zip(values, widths, strict=True)]
        cuts = [np.sort(rng.integers(0, len(v) + 1, size=(2, 6)), axis=0) for v in values]
        loose_query = rng.integers(0, 6, size=rng.integers(0, 8))
        loose_values = rng.integers(0, 600, size=len(loose_query))
        pooled = [np.sort(np.concatenate([v[c[0, q] : c[1, q]] for v, c in zip(values, cuts,
                  strict=True)] + [loose_values[loose_query == q]])) for q in range(6)]  # fmt: skip
        queries = [q for q in range(6) if len(pooled[q])]
        if not queries:
            continue
        k = np.array([rng.integers(0, len(pooled[q])) for q in queries])
        renumber = np.full(6, -1)
        renumber[queries] = np.arange(len(queries))
        kept = renumber[loose_query] >= 0
        found = kth_smallest(matrices, [c[0, queries] for c in cuts],
                             [c[1, queries] for c in cuts], k, renumber[loose_query][kept],
                             loose_values[kept])  # fmt: skip
        assert found.tolist() == [int(pooled[q][j]) for q, j in zip(queries, k, strict=True)]


def _assert_same(ours: pd.DataFrame, theirs: pd.DataFrame, what) -> None:
    ours, theirs = _keyed(ours), _keyed(theirs)
    assert ours["name"].tolist() == theirs["name"].tolist(), what
    for column in _COLUMNS:
        np.testing.assert_array_equal(ours[column], theirs[column], f"{column} {what}")
    np.testing.assert_allclose(ours["std_ns"], theirs["std_ns"], rtol=1e-9, atol=1e-6)


def test_random_windows_equal_aggregate(reports) -> None:
    """Windows cut at events' own bounds (events reaching into a window, zero-length ones at
    its start), pooled, by report, and per report with offsets: the ranked index equals
    aggregate."""
    offsets = [0, 1000, -1000, 7]
    rng = np.random.default_rng(3)
    for kind in WINDOW_KINDS:
        index = build_window_index(reports, kind)
        shifted = build_window_index(reports, kind, offsets_ns=offsets)
        assert index.is_ranked  # NVTX ranges of the demo last seconds: past 2^31 ns
        cuts = np.concatenate([np.concatenate([r.kernels.start_ns, r.kernels.end_ns])
                               for r in reports])  # fmt: skip
        for _ in range(2):
            t0, t1 = (int(t) for t in np.sort(rng.choice(cuts, size=2)))
            for by_report in (False, True):
                theirs = aggregate(reports, kind, Selection(t0, t1), np, by_report=by_report)
                _assert_same(index.stats(t0, t1, by_report=by_report), theirs, (kind, t0, t1))
            i = int(rng.integers(len(reports)))
            theirs = aggregate(reports[i], kind, Selection(t0, t1), np)
            ours = shifted.stats(t0 + offsets[i], t1 + offsets[i], report_index=i)
            _assert_same(ours, theirs, (kind, i, t0, t1))


def test_sorted_values_path_equals_the_ranked_one(reports, monkeypatch) -> None:
    """Values outside [0, 2^31) keep the sorted-values index: same tables, same instances."""
    import strata.analysis.window_stats as window_stats

    ranked = build_window_index(reports, "kernels", offsets_ns=[0, 1000, 0, -1000])
    monkeypatch.setattr(window_stats, "fits_ranked", lambda _values: False)
    plain = build_window_index(reports, "kernels", offsets_ns=[0, 1000, 0, -1000])
    assert ranked.is_ranked
    assert not plain.is_ranked
    lo, hi = reports[0].span_ns()
    for t0, t1 in [(None, None), (lo + (hi - lo) // 3, lo + (hi - lo) // 2)]:
        for by_report in (False, True):
            _assert_same(ranked.stats(t0, t1, by_report=by_report),
                         plain.stats(t0, t1, by_report=by_report), (t0, t1))  # fmt: skip
        group = ranked.groups(ranked.stats(t0, t1)["key"].iloc[0])
        a, b = ranked.instances(group, t0, t1), plain.instances(group, t0, t1)
        order = ["report_index", "row"]
        pd.testing.assert_frame_equal(a.sort_values(order).reset_index(drop=True),
                                      b.sort_values(order).reset_index(drop=True))  # fmt: skip
    for mine, theirs in zip(ranked.sorted_values(), plain.sorted_values(), strict=True):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("top", [2**31, 2**48])
def test_std_of_nearly_equal_large_values_is_exact(top) -> None:
    """Sums of squares are exact integers: no cancellation for values near 2^31 or 2^48 that
    differ by a few ns (float64 sums of squares would lose every digit)."""
    from strata.analysis.kinds import PanelRows
    from strata.analysis.window_ranked import RankedReport, ranked_stats

    rng = np.random.default_rng(5)
    n = 1000
    values = (top - 8) + rng.integers(0, 3, size=n)
    codes = rng.integers(0, 3, size=n)
    values[codes == 2] = top - 1  # one group of equal values: std exactly 0
    start = np.arange(n, dtype=np.int64) * 10
    part = PanelRows(np.array(["a", "b", "c"], object), np.array(["a", "b", "c"], object), None,
                     codes, values, start, start + 5, ("kernels",), np.zeros(n, np.int8),
                     np.arange(n))  # fmt: skip
    ranked = RankedReport.build(part, codes, 3)
    for t0, t1 in [(None, None), (3333, 7777)]:
        found = ranked_stats([ranked], [0], 3, t0, t1, pooled=True)
        inside = (start < (t1 or 2**62)) & (start + 5 > (t0 or -1))
        for g, std in zip(found.keys, found.std, strict=True):
            mine = values[inside & (codes == g)]
            expected = np.std((mine - top).astype(float), ddof=1)
            assert std == pytest.approx(expected, rel=1e-12, abs=0)
            assert found.total[found.keys == g][0] == int(mine.sum())
