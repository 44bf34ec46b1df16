"""analysis.diff: exact count/total/median deltas, the interval, noise, determinism, the demo."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from strata.analysis import open_report
from strata.analysis.diff import UNCHANGED, DiffOptions, diff_sets, median_bootstrap
from strata.resources.demo import build_demo_reports
from tests.analysis.test_recipes_data import K, write_report
from tests.conftest import REAL_DIR
from tests.helpers import mutate_sqlite

PLANTED = "softmax_warp_forward"


def _kernels(path: Path, durations: dict[str, list[int]]) -> Path:
    planted, t = [], 10_000
    for name, values in durations.items():
        for d in values:
            planted.append(K(name, t, t + d))
            t += d + 1_000
    return write_report(path, kernels=planted)


def _synthetic(tmp_path: Path) -> pd.DataFrame:
    before = _kernels(tmp_path / "b.sqlite", {
        "steady": [100, 101, 102, 103, 104, 105, 106, 107],
        "slow": [1_000] * 9 + [1_010],
        "gone": [50, 60],
    })  # fmt: skip
    after = _kernels(tmp_path / "a.sqlite", {
        "steady": [101, 102, 103, 104, 105, 106, 100, 107],
        "slow": [1_500] * 11 + [1_490],
        "new": [70, 80, 90],
    })  # fmt: skip
    return diff_sets([open_report(before, use_cache=False)], [open_report(after, use_cache=False)],
                     kinds=("kernels",))  # fmt: skip


def test_known_durations_give_exact_deltas(tmp_path: Path) -> None:
    table = _synthetic(tmp_path).set_index("Name")
    slow = table.loc["slow"]
    assert slow["Status"] == "slower"
    assert (slow["Instances Before"], slow["Instances After"], slow["Instances Delta"]) == (
        10, 12, 2)  # fmt: skip
    assert (slow["Total Before"], slow["Total After"]) == (10_010, 17_990)
    assert slow["Total Delta"] == 7_980
    assert (slow["Med Before"], slow["Med After"], slow["Med Delta"]) == (1_000, 1_500, 500)
    assert slow["Med Change (%)"] == 50.0
    assert 490 <= slow["Med Delta Low"] <= 500 <= slow["Med Delta High"] <= 510
    steady = table.loc["steady"]
    assert steady["Status"] == "noise"
    assert steady["Total Delta"] == 0
    assert steady["Med Delta"] == 0
    assert steady["Med Delta Low"] <= 0 <= steady["Med Delta High"]
    assert table.loc["gone", "Status"] == "vanished"
    assert table.loc["gone", "Total Delta"] == -110
    assert table.loc["new", "Status"] == "appeared"
    assert table.loc["new", "Total Delta"] == 240
    assert np.isnan(table.loc["new", "Med Delta Low"])
    # By impact: changes first, biggest total change first; noise last.
    assert _synthetic(tmp_path)["Name"].tolist() == ["slow", "new", "gone", "steady"]


def test_same_seed_same_interval_and_bounds_hold(tmp_path: Path) -> None:
    first, second = _synthetic(tmp_path), _synthetic(tmp_path)
    pd.testing.assert_frame_equal(first, second)
    with pytest.raises(Exception, match="confidence"):
        DiffOptions(confidence=1.5).check()


def test_bootstrap_median_matches_resampling_the_instances() -> None:
    """The order-statistic draw has the distribution of a resampled median."""
    rng = np.random.default_rng(1)
    for n in (1, 2, 7, 40):
        values = np.sort(rng.integers(0, 1_000, n))
        fast = median_bootstrap(values, np.array([0, n]), 20_000, np.random.default_rng(2))[0]
        picks = rng.integers(0, n, (20_000, n))
        slow = np.median(values[picks], axis=1)
        assert fast.min() >= values.min()
        assert fast.max() <= values.max()
        assert abs(np.quantile(fast, 0.1) - np.quantile(slow, 0.1)) <= np.ptp(values) * 0.05
        assert abs(np.quantile(fast, 0.9) - np.quantile(slow, 0.9)) <= np.ptp(values) * 0.05


def test_a_million_instances_per_name_take_no_longer_than_ten() -> None:
    """The draw is O(1) per resample: a big group costs its sort, not n per draw."""
    values = np.arange(1_000_000, dtype=np.int64)
    out = median_bootstrap(values, np.array([0, 1_000_000]), 2000, np.random.default_rng(0))
    assert out.shape == (1, 2000)
    assert abs(np.median(out) - 500_000) < 5_000


@pytest.fixture(scope="module")
def demo_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two demo runs (seeds 0 and 1); in the second, one kernel made 30 % slower."""
    root = tmp_path_factory.mktemp("demo-diff")
    before = build_demo_reports(root / "s0", ranks=1, steps=40, seed=0)[0]
    after = root / "after.sqlite"
    shutil.copy(build_demo_reports(root / "s1", ranks=1, steps=40, seed=1)[0], after)
    mutate_sqlite(
        after,
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + CAST(ROUND((end - start) * 1.3) "
        f"AS INTEGER) WHERE shortName = (SELECT id FROM StringIds WHERE value = '{PLANTED}')",
    )
    return before, after


def test_demo_regression_comes_first_and_the_rest_is_noise(demo_pair, tmp_path: Path) -> None:
    before, after = (open_report(p, use_cache=False) for p in demo_pair)
    table = diff_sets([before], [after])
    first = table.iloc[0]
    assert first["Kind"] == "kernels"
    assert PLANTED in first["Name"]
    assert first["Status"] == "slower"
    assert 29 < first["Med Change (%)"] < 31
    rest = table["Status"].iloc[1:]
    assert rest.isin(UNCHANGED).all(), table[~table["Status"].isin(UNCHANGED)]


def test_keys_name_the_groups_the_window_index_finds(demo_pair) -> None:
    """with_keys: each row's Key finds its instances again (the GUI's click on a row)."""
    from strata.analysis.diff import diff_kind
    from strata.analysis.reportset import ReportSet

    before, after = (ReportSet([open_report(p, use_cache=False)]) for p in demo_pair)
    keyed = diff_kind(before, after, "cuda_api", with_keys=True)
    plain = diff_kind(before, after, "cuda_api")
    assert list(keyed.columns) == [plain.columns[0], "Key", *plain.columns[1:]]
    pd.testing.assert_frame_equal(keyed.drop(columns="Key"), plain)
    index = after.window_index("cuda_api")
    stats = index.stats().set_index("group")
    for key, count in zip(keyed["Key"], keyed["Instances After"], strict=True):
        assert int(stats.loc[index.groups(key), "count"].sum()) == count


def test_one_instance_is_never_noise() -> None:
    from strata.analysis.diff import classify

    before = np.array([25_021_861.0, 10_000.0, 10_000.0, 1_000.0, 10_000.0])
    after = np.array([414_204_754.0, 10_500.0, 5_000.0, 1_500.0, 11_000.0])
    nan = np.full(5, np.nan)  # one instance: no interval
    counts = (np.array([1, 1, 1, 1, 50]), np.array([1, 1, 1, 1, 50]))
    status, _ = classify(before, after, nan, nan, 5.0, counts)
    # 16x slower, 5 % (too small), 2x faster, 500 ns (too small), 50 instances: 10 % > 5 %.
    assert status.tolist() == ["slower, few", "too few", "faster, few", "too few", "slower"]


@pytest.mark.skipif(
    not (REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite").exists(),
    reason=f"needs the extra-p concurrent reports in {REAL_DIR}",
)
def test_a_sixteen_fold_kernel_on_one_instance_is_slower_on_the_real_pair() -> None:
    s1 = open_report(REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite")
    s16 = open_report(REAL_DIR / "extra-p__extrap__concurrent.s16__profile16.sqlite")
    table = diff_sets([s1], [s16])
    single = table[(table["Instances Before"] == 1) | (table["Instances After"] == 1)]
    assert len(single)
    assert not (single["Status"] == "noise").any()
    test2 = table[(table["Kind"] == "kernels") & table["Name"].str.startswith("test2(")].iloc[0]
    assert test2["Med After"] > 10 * test2["Med Before"]
    assert test2["Status"] == "slower, few"
