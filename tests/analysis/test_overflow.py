"""No silent wrap: sums of durations near 2^62 ns are exact, or refused where nsys refuses them.

nsys's SQL ``sum()`` stops with "integer overflow" when a total passes int64 and prints no
table; where the sums fit, its numbers are exact integers. The reports here are a generated
demo rank, copied to ``tmp_path`` and given a few durations near 2^62 ns with sqlite3;
expected values come from Python integers over the rows read with SQL, and from nsys itself
where it is installed.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
from pathlib import Path

import numpy as np
import pytest

from strata.analysis import AnalysisError, open_report
from strata.analysis.open import find_nsys
from strata.analysis.outliers import find_outliers
from strata.analysis.selection import aggregate
from strata.analysis.stats import run_report, time_percent
from strata.analysis.window_stats import build_window_index, pivot_by_report
from strata.app.cli import main as cli_main
from strata.resources.demo import build_demo_reports
from tests.analysis.test_stats_fixtures import parse_sections
from tests.helpers import mutate_sqlite, sql_rows

#: 146 years: two of them pass 2^63 - 1; one fits.
BIG = 2**62 + 12_345
NSYS = find_nsys()
requires_nsys = pytest.mark.skipif(NSYS is None, reason="needs nsys (PATH or $NSYS)")
_KERNEL_NAME = (
    "(SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY demangledName "
    "ORDER BY count(*) DESC, demangledName LIMIT 1)"
)


@pytest.fixture(scope="module")
def demo_rank(tmp_path_factory) -> Path:
    return build_demo_reports(tmp_path_factory.mktemp("demo"), ranks=2, steps=2)[0]


def _with_huge_kernels(demo_rank: Path, folder: Path, how_many: int) -> Path:
    """A copy whose most frequent kernel has ``how_many`` instances lasting BIG ns."""
    path = folder / f"huge{how_many}.sqlite"
    shutil.copyfile(demo_rank, path)
    mutate_sqlite(
        path,
        f"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + {BIG} WHERE rowid IN (SELECT "
        f"rowid FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE demangledName = {_KERNEL_NAME} "
        f"ORDER BY rowid LIMIT {how_many})",
    )
    return path


def _kernel_durations(path: Path) -> dict[str, list[int]]:
    """Per kernel name, its durations as Python ints (no int64 anywhere)."""
    out: dict[str, list[int]] = {}
    for name, start, end in sql_rows(
        path,
        "SELECT s.value, k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.demangledName",
    ):
        out.setdefault(name, []).append(int(end) - int(start))
    return out


def _huge_name(path: Path) -> str:
    return next(n for n, d in _kernel_durations(path).items() if max(d) >= BIG)


def _nsys_stats(path: Path, reports: str) -> str:
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8")
    proc = subprocess.run(
        [NSYS, "stats", "-f", "csv", "-r", reports, path.name],
        cwd=path.parent, capture_output=True, text=True, timeout=600, env=env, check=False,
    )  # fmt: skip
    return proc.stdout + proc.stderr


# ------------------------------------------------------------------ the stats tables


def test_summary_refuses_a_total_past_int64_naming_it(demo_rank, tmp_path, capsys) -> None:
    path = _with_huge_kernels(demo_rank, tmp_path, 2)
    report = open_report(path, use_cache=False)
    name = _huge_name(path)
    with pytest.raises(AnalysisError, match="integer overflow") as caught:
        run_report(report, "cuda_gpu_kern_sum", xp=np)
    assert name in str(caught.value)
    assert path.name in str(caught.value)
    # The other summaries of that report are unaffected.
    assert run_report(report, "cuda_api_sum", xp=np).frame["Total Time"].min() >= 0
    assert cli_main(["stats", str(path), "-r", "cuda_gpu_kern_sum", "--no-cache"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "integer overflow" in err[0]


@requires_nsys
def test_nsys_refuses_the_same_total(demo_rank, tmp_path) -> None:
    path = _with_huge_kernels(demo_rank, tmp_path, 2)
    assert "integer overflow" in _nsys_stats(path, "cuda_gpu_kern_sum")


def test_summary_is_exact_where_the_sums_fit(demo_rank, tmp_path) -> None:
    path = _with_huge_kernels(demo_rank, tmp_path, 1)
    report = open_report(path, use_cache=False)
    frame = run_report(report, "cuda_gpu_kern_sum", xp=np).frame.set_index("Name")
    for name, durations in _kernel_durations(path).items():
        assert int(frame.at[name, "Total Time"]) == sum(durations)  # (a row Series is float)
        assert int(frame.at[name, "Min"]) == min(durations)
        assert int(frame.at[name, "Max"]) == max(durations)
        assert frame.at[name, "Med"] == float(statistics.median(durations))
    name = _huge_name(path)
    total = sum(sum(d) for d in _kernel_durations(path).values())
    assert frame.loc[name, "Time"] == 100.0
    assert frame["Time"].sum() == pytest.approx(100.0)
    assert frame.loc[name, "Avg"] == float(sum(_kernel_durations(path)[name])) / len(
        _kernel_durations(path)[name]
    )
    assert total < 2**63


@requires_nsys
def test_same_table_as_nsys_where_the_sums_fit(demo_rank, tmp_path, capsys) -> None:
    path = _with_huge_kernels(demo_rank, tmp_path, 1)
    specs = "cuda_gpu_kern_sum,cuda_gpu_kern_gb_sum,cuda_gpu_sum,cuda_kern_exec_sum"
    expected = parse_sections(_nsys_stats(path, specs))
    assert cli_main(["stats", str(path), "-r", specs, "-f", "csv", "--no-cache"]) == 0
    ours = parse_sections(capsys.readouterr().out)
    assert [s.spec for s in ours] == [s.spec for s in expected]
    for mine, theirs in zip(ours, expected, strict=True):
        _assert_same_csv(mine.body, theirs.body)


def _assert_same_csv(mine: tuple[str, ...], theirs: tuple[str, ...]) -> None:
    """Every cell equal as printed, except doubles past 2^53: nsys's avg and stdev there
    depend on the order SQLite reads the rows in (a running double sum), so only the first
    15 digits are compared. Totals, counts, min, max and medians stay exact."""
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs, strict=True):
        cells_a, cells_b = a.split(","), b.split(",")
        assert len(cells_a) == len(cells_b), (a, b)
        for x, y in zip(cells_a, cells_b, strict=True):
            if x != y and "e+" in x and "e+" in y:
                assert float(x) == pytest.approx(float(y), rel=1e-14), (a, b)
            else:
                assert x == y, (a, b)


def _with_huge_copy(demo_rank: Path, folder: Path) -> Path:
    """A memcpy of 2^40 bytes in 1 ns: bytes * (1e9 // duration) passes int64."""
    path = folder / "huge_copy.sqlite"
    shutil.copyfile(demo_rank, path)
    mutate_sqlite(
        path,
        "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = 1099511627776, end = start + 1 "
        "WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_MEMCPY)",
    )
    return path


def test_trace_throughput_turns_real_where_the_product_overflows(demo_rank, tmp_path) -> None:
    report = open_report(_with_huge_copy(demo_rank, tmp_path), use_cache=False)
    frame = run_report(report, "cuda_gpu_trace", xp=np).frame
    huge = frame[frame["Bytes"] == 2**40]
    assert len(huge) == 1
    # SQLite computes an overflowing integer product in floating point (no wrap).
    assert huge["Throughput"].iloc[0] == float(2**40) * 1e9


@requires_nsys
def test_trace_throughput_same_as_nsys(demo_rank, tmp_path, capsys) -> None:
    path = _with_huge_copy(demo_rank, tmp_path)
    expected = parse_sections(_nsys_stats(path, "cuda_gpu_trace"))
    assert cli_main(["stats", str(path), "-r", "cuda_gpu_trace", "-f", "csv", "--no-cache"]) == 0
    assert [s.body for s in parse_sections(capsys.readouterr().out)] == [s.body for s in expected]


# ------------------------------------------------------------------ the live panel, outliers


def test_panel_totals_are_exact_past_int64(demo_rank, tmp_path) -> None:
    from strata.app.stats_jobs import StatsRequest, stats_frame
    from strata.viewer.state import Scope

    path = _with_huge_kernels(demo_rank, tmp_path, 3)
    report = open_report(path, use_cache=False)
    expected = {n: d for n, d in _kernel_durations(path).items()}
    name = _huge_name(path)
    assert sum(expected[name]) > 2**63  # the case that wrapped
    index = build_window_index([report], "kernels")
    for frame in (index.stats(), aggregate(report, "kernels", xp=np)):
        rows = frame.set_index("name")
        for kernel, durations in expected.items():
            assert int(rows.at[kernel, "total_ns"]) == sum(durations)
            assert rows.at[kernel, "count"] == len(durations)
            assert rows.at[kernel, "mean_ns"] == float(sum(durations)) / len(durations)
            assert rows.at[kernel, "median_ns"] == float(statistics.median(durations))
        assert rows.index[0] == name  # the largest total first
    table = stats_frame(index, StatsRequest("kernels", Scope(), None, None, ()), 1)
    assert table["time_pct"].sum() == pytest.approx(100.0, abs=0.5)
    inst = index.instances(index.groups(name))
    assert len(inst) == len(expected[name])
    # By report: the huge copy beside the original rank.
    both = build_window_index([report, open_report(demo_rank, use_cache=False)], "kernels")
    wide = pivot_by_report(both.stats(by_report=True), both.report_names).set_index("name")
    original = _kernel_durations(demo_rank)[name]
    assert int(wide.at[name, f"{report.name}|total_ns"]) == sum(expected[name])
    assert int(wide.at[name, "total_ns"]) == sum(expected[name]) + sum(original)
    assert wide.index[0] == name


def test_outliers_score_durations_near_2_62(demo_rank, tmp_path) -> None:
    path = _with_huge_kernels(demo_rank, tmp_path, 3)
    report = open_report(path, use_cache=False)
    found = find_outliers([report], kinds=("kernels",)).instances
    name = _huge_name(path)
    top = found.head(3)
    assert set(top["name"]) == {name}
    assert (top["duration_ns"] == BIG).all()
    durations = _kernel_durations(path)[name]
    median = statistics.median(durations)
    mad = statistics.median(abs(d - median) for d in durations)  # Python numbers: no wrap
    assert top["median_ns"].iloc[0] == float(median)
    assert top["mad_ns"].iloc[0] == float(mad)
    np.testing.assert_allclose(top["robust_z"], 0.6745 * (BIG - median) / mad, rtol=1e-12)


def test_time_percent_sum_is_exact() -> None:
    totals = np.array([2**62, 2**62 - 1, 1], dtype=np.int64)  # the sum is exactly 2^63
    with pytest.raises(AnalysisError, match="integer overflow"):
        time_percent(totals)
    assert time_percent(totals, strict=False).tolist() == [50.0, 50.0, 0.0]
    # Above 2^53 a float sum of the totals drifts; nsys divides by the exact integer sum.
    totals = np.array([2**53 + 1, 2**53 + 1, 2**53 + 1], dtype=np.int64)
    assert time_percent(totals).tolist() == [33.3, 33.3, 33.3]


def test_outliers_mean_deviation_fallback_near_2_62(demo_rank, tmp_path) -> None:
    """Most instances equal (MAD 0): the score falls back to the mean absolute deviation,
    whose sum of two near-2^63 deviations wrapped negative and scored the outliers 0."""
    path = tmp_path / "flat.sqlite"
    shutil.copyfile(demo_rank, path)
    mutate_sqlite(
        path,
        f"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + 1000 WHERE demangledName = "
        f"{_KERNEL_NAME}",
        f"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + {BIG} WHERE rowid IN (SELECT "
        f"rowid FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE demangledName = {_KERNEL_NAME} "
        f"ORDER BY rowid LIMIT 2)",
    )
    found = find_outliers([open_report(path, use_cache=False)], kinds=("kernels",)).instances
    durations = _kernel_durations(path)[_huge_name(path)]
    mean_ad = sum(abs(d - 1000) for d in durations) / len(durations)
    top = found.head(2)
    assert (top["duration_ns"] == BIG).all()
    np.testing.assert_allclose(top["robust_z"], (BIG - 1000) / (1.253314 * mean_ad), rtol=1e-12)
