"""Recipes on real report sets and planted reports, against oracles computed another way.

Oracles: direct SQL on the report files (the across-report statistics are pandas over the
concatenated per-report rows; quartiles follow the literal definition of nsys's percentile
rule), brute-force sweeps for the GPU gaps and utilisation, ``nsys stats`` itself for the
per-report tables, and facts planted by construction.
"""

from __future__ import annotations

import math
import shutil
import sqlite3
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strata.analysis.errors import AnalysisError
from strata.analysis.recipes import RecipeOptions, load_output, partials, run_recipe, write_output
from strata.analysis.recipes.partials import GroupPartial, merge_partials
from tests.analysis.test_recipes_data import K, write_report
from tests.conftest import REAL_DIR, requires_shared

CONCURRENT = [
    REAL_DIR / f"extra-p__extrap__concurrent.s{s}__profile{s}.sqlite" for s in (1, 2, 4, 8, 16)
]
EX_GPU = [REAL_DIR / f"extra-p__extrap__ex-gpu.s{s}.sqlite" for s in (10, 100, 1000, 10000, 100000)]
AYUSH = sorted(REAL_DIR.glob("ayush-os__*v[34].sqlite"))


# -- oracles -------------------------------------------------------------------------------------


def _sql(path: Path, query: str) -> pd.DataFrame:
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    con.text_factory = lambda b: b.decode("utf-8", errors="replace")
    try:
        return pd.read_sql_query(query, con)
    finally:
        con.close()


def _tables(path: Path) -> set[str]:
    return set(_sql(path, "SELECT name FROM sqlite_master WHERE type = 'table'")["name"])


_KERNEL_ROWS = (
    "SELECT s.value AS Name, k.[end] - k.start AS d FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
    "JOIN StringIds AS s ON s.id = k.demangledName"
)
# spec §3.4, 2023.4 label rule; M = the largest start/end of any NVTX row.
_NVTX_ROWS = """
WITH m AS (SELECT max(coalesce(max(start), 0), coalesce(max([end]), 0)) AS M FROM NVTX_EVENTS),
dom AS (
    SELECT e.domainId, (e.globalTid >> 24) & 16777215 AS pid,
           coalesce(s.value, e.text) AS name, min(e.rowid)
    FROM NVTX_EVENTS AS e LEFT JOIN StringIds AS s ON s.id = e.textId
    WHERE e.eventType = 75 GROUP BY e.domainId, pid
)
SELECT CASE WHEN d.name IS NOT NULL THEN d.name || ':' || coalesce(s.value, e.text)
            ELSE coalesce(s.value, e.text) END AS Range,
       CASE WHEN e.eventType IN (59, 70) THEN 'PushPop' ELSE 'StartEnd' END AS Style,
       coalesce(e.[end], m.M) - e.start AS d
FROM NVTX_EVENTS AS e CROSS JOIN m
LEFT JOIN StringIds AS s ON s.id = e.textId
LEFT JOIN dom AS d ON d.domainId = e.domainId AND d.pid = (e.globalTid >> 24) & 16777215
WHERE e.eventType IN (59, 60, 70, 71)
"""


def nsys_percentile(values: list[int], q: float) -> float:
    """The extension's rule, literally: mean of the distinct v with #(x<=v) >= p, #(x<v) <= p."""
    p = len(values) * q
    hits = sorted(
        {v for v in values if sum(x <= v for x in values) >= p and sum(x < v for x in values) <= p}
    )
    return sum(hits) / len(hits)


def _oracle_stats(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    grouped = rows.groupby(keys, sort=False)["d"]
    out = grouped.agg(total="sum", count="count", mean="mean", lo="min", hi="max")
    out["std"] = grouped.std(ddof=1).fillna(0.0)
    for name, q in (("q1", 0.25), ("med", 0.5), ("q3", 0.75)):
        out[name] = grouped.agg(lambda s, q=q: nsys_percentile(s.tolist(), q))
    return out.reset_index()


def _close(actual: pd.Series, expected: pd.Series) -> None:
    """Our tables round to 0.1 as nsys does; allow that rounding and float noise."""
    a = actual.to_numpy(np.float64)
    e = expected.to_numpy(np.float64)
    assert np.all(np.abs(a - e) <= 0.05 + 1e-9 * np.abs(e)), (a, e)


# -- family (a) stats across reports -------------------------------------------------------------


@requires_shared
@pytest.mark.parametrize(
    ("recipe", "rows_sql", "keys", "reports"),
    [
        ("cuda_gpu_kern_sum", _KERNEL_ROWS, ["Name"], CONCURRENT),
        ("cuda_gpu_kern_sum", _KERNEL_ROWS, ["Name"], EX_GPU + AYUSH),
        ("nvtx_sum", _NVTX_ROWS, ["Style", "Range"], CONCURRENT),
    ],
)
def test_all_stats_equal_pandas_over_all_rows(recipe, rows_sql, keys, reports) -> None:
    run = run_recipe(recipe, reports, RecipeOptions(use_cache=False))
    rows = pd.concat([_sql(p, rows_sql) for p in reports], ignore_index=True)
    expected = _oracle_stats(rows, keys)
    got = run.output.tables["all_stats"].merge(expected, on=keys, how="outer", indicator=True)
    assert (got["_merge"] == "both").all()
    assert got["Total Time"].tolist() == got["total"].tolist()
    assert got["Instances"].tolist() == got["count"].tolist()
    assert got["Min"].tolist() == got["lo"].tolist()
    assert got["Max"].tolist() == got["hi"].tolist()
    for ours, theirs in (
        ("Avg", "mean"),
        ("StdDev", "std"),
        ("Med", "med"),
        ("Q1", "q1"),
        ("Q3", "q3"),
    ):
        _close(got[ours], got[theirs])
    assert got["Time"].sum() == pytest.approx(100.0, abs=0.5)
    # rank_stats (main.py stats numbers) and the exact partials name the same groups.
    rank = run.output.tables["rank_stats"]
    per_name = rank.groupby(keys)[["Total Time", "Instances"]].sum()
    all_stats = run.output.tables["all_stats"].set_index(keys)
    assert per_name.loc[all_stats.index].values.tolist() == (
        all_stats[["Total Time", "Instances"]].values.tolist()
    )
    assert rank["Q1"].notna().all()
    # Min File / Max File name a report that really holds the extreme.
    for row in got.head(5).to_dict("records"):
        for file in row["Max File"].split(", "):
            path = next(p for p in reports if p.name == file)
            per = _sql(path, rows_sql)
            mask = np.logical_and.reduce([per[k] == row[k] for k in keys])
            assert per.loc[mask, "d"].max() == row["Max"]


def _nsys_csv(nsys: str, path: Path, report: str) -> pd.DataFrame:
    import io
    import subprocess

    out = subprocess.run(
        [nsys, "stats", "-r", report, "-f", "csv", str(path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    csv = out[out.index("\n", out.index("Processing [")) + 1 :]
    frame = pd.read_csv(io.StringIO(csv))
    frame.columns = [c.replace(" (ns)", "").replace(" (%)", "") for c in frame.columns]
    return frame


@requires_shared
@pytest.mark.parametrize("recipe", ["cuda_gpu_kern_sum", "nvtx_sum", "nvtx_gpu_proj_sum"])
def test_rank_stats_equal_nsys_stats_per_report(recipe: str, tmp_path: Path) -> None:
    from strata.analysis.open import find_nsys

    nsys = find_nsys()
    if nsys is None:
        pytest.skip("needs nsys (PATH or $NSYS) as the oracle")
    reports = CONCURRENT[:2]
    run = run_recipe(recipe, reports, RecipeOptions(use_cache=False))
    rank = run.output.tables["rank_stats"]
    for path in reports:
        copy = shutil.copy(path, tmp_path / path.name)
        expected = _nsys_csv(nsys, Path(copy), recipe)
        ours = rank[rank["File"] == path.name].drop(columns="File").reset_index(drop=True)
        ours = ours[[c for c in expected.columns]]
        pd.testing.assert_frame_equal(ours, expected, check_dtype=False)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2**40)), min_size=1, max_size=40),
        min_size=1,
        max_size=5,
    )
)
def test_merged_partials_equal_statistics_of_all_values(
    reports: list[list[tuple[int, int]]],
) -> None:
    labels = pd.DataFrame({"Name": ["a", "b", "c", "d"]})
    parts = [GroupPartial.from_codes([c for c, _ in r], labels, [v for _, v in r]) for r in reports]
    every = pd.DataFrame(
        [(labels["Name"][c], v) for r in reports for c, v in r], columns=["Name", "d"]
    )
    # Both layouts of the merged samples: per-group partitions, and one packed sort.
    for max_groups in (partials._MAX_PARTITION_GROUPS, 0):
        with mock.patch.object(partials, "_MAX_PARTITION_GROUPS", max_groups):
            merged = merge_partials(parts, [f"f{i}" for i in range(len(parts))])
        _check_merged(merged, every)


@pytest.mark.parametrize(
    "reports",
    [
        [[(0, 5), (0, 1), (0, 9)], [(0, 2), (0, 7)], [(0, 4)]],  # one group in all
        [[(0, 5), (0, 1)], [(1, 2), (1, 7), (1, 3)], [(2, 4)]],  # no group shared
        [[(1, 5), (0, 1), (1, 8)], [(0, 2), (1, 7), (0, 6)]],  # interleaved groups
    ],
    ids=["one-group", "disjoint", "interleaved"],
)
def test_merged_quantiles_for_each_samples_layout(reports: list[list[tuple[int, int]]]) -> None:
    labels = pd.DataFrame({"Name": ["a", "b", "c", "d"]})
    parts = [GroupPartial.from_codes([c for c, _ in r], labels, [v for _, v in r]) for r in reports]
    every = pd.DataFrame(
        [(labels["Name"][c], v) for r in reports for c, v in r], columns=["Name", "d"]
    )
    _check_merged(merge_partials(parts, [f"f{i}" for i in range(len(parts))]), every)


def _check_merged(merged: partials.MergedGroups, every: pd.DataFrame) -> None:
    for g, name in enumerate(merged.keys["Name"]):
        values = every.loc[every["Name"] == name, "d"]
        assert merged.count[g] == len(values)
        assert merged.total[g] == values.sum()
        assert merged.minimum[g] == values.min()
        assert merged.maximum[g] == values.max()
        expected_std = values.std(ddof=1) if len(values) > 1 else 0.0
        assert merged.std[g] == pytest.approx(expected_std, rel=1e-9, abs=1e-6)
        for q in (0.25, 0.5, 0.75):
            assert merged.quantile(q)[g] == nsys_percentile(values.tolist(), q)
        assert merged.quantile(0.3, rule="linear")[g] == pytest.approx(values.quantile(0.3))


# -- the demo set: a straggler rank planted by construction ----------------------------------------


def test_by_file_names_the_planted_straggler(tmp_path: Path) -> None:
    from strata.resources.demo import build_demo_reports, demo_truth

    paths = build_demo_reports(tmp_path / "demo", ranks=4, steps=6)
    truth = demo_truth(4, 6)
    run = run_recipe("cuda_gpu_kern_sum", paths, RecipeOptions(use_cache=False))
    by_file = run.output.tables["by_file"]
    straggler = truth.file_names[truth.straggler_rank]
    compute = by_file[~by_file["Name"].str.contains("nccl", case=False)]
    assert len(compute) > 3
    assert (compute["Slowest"] == straggler).all()
    assert (compute["Fastest"] != straggler).all()
    assert list(by_file.columns[1:5]) == list(truth.file_names)


# -- GPU gaps and utilisation --------------------------------------------------------------------


def _oracle_ops(path: Path) -> pd.DataFrame:
    """GPU ops + in-span CUDA profiler overheads, by direct SQL (spec §5.4, §1.12)."""
    tables = _tables(path)
    parts = [
        _sql(
            path,
            f"SELECT start, [end], (globalPid >> 24) & 16777215 AS pid, deviceId AS dev "
            f"FROM {t} WHERE start > 0",
        )
        for t in (
            "CUPTI_ACTIVITY_KIND_KERNEL",
            "CUPTI_ACTIVITY_KIND_MEMCPY",
            "CUPTI_ACTIVITY_KIND_MEMSET",
        )
        if t in tables
    ]
    ops = pd.concat(parts, ignore_index=True)
    if "PROFILER_OVERHEAD" in tables:
        over = _sql(
            path,
            "SELECT po.start, po.[end], (po.globalTid >> 24) & 16777215 AS pid "
            "FROM PROFILER_OVERHEAD AS po JOIN StringIds AS s ON s.id = po.nameId "
            "WHERE s.value LIKE 'CUDA profiling%overhead'",
        )
        span = ops.groupby(["pid", "dev"]).agg(lo=("start", "min"), hi=("end", "max")).reset_index()
        over = over.merge(span, on="pid")
        over = over[(over["start"] > over["lo"]) & (over["end"] < over["hi"])]
        ops = pd.concat([ops, over[["start", "end", "pid", "dev"]]], ignore_index=True)
    return ops


def brute_gaps(ops: pd.DataFrame, min_gap_ns: int) -> set[tuple[int, int, int, int]]:
    gaps = set()
    for (pid, dev), group in ops.groupby(["pid", "dev"]):
        busy_until = None
        for start, end in sorted(zip(group["start"], group["end"], strict=True)):
            if busy_until is not None and start - busy_until > min_gap_ns:
                gaps.add((int(busy_until), int(start - busy_until), int(pid), int(dev)))
            busy_until = end if busy_until is None else max(busy_until, end)
    return gaps


def brute_utilization(ops: pd.DataFrame, chunks: int) -> list[tuple[int, int, int, int, float]]:
    out = []
    for (pid, dev), group in ops.groupby(["pid", "dev"]):
        lo, hi = int(group["start"].min()), int(group["end"].max())
        size = math.ceil((hi - lo) / chunks)
        pairs = list(zip(group["start"], group["end"], strict=True))
        for k in range(chunks):
            cs, ce = lo + k * size, min(lo + (k + 1) * size, hi)
            if cs >= ce:
                continue
            busy = sum(max(0, min(e, ce) - max(s, cs)) for s, e in pairs)
            out.append((int(pid), int(dev), cs, ce - cs, 100.0 * busy / (ce - cs)))
    return out


@requires_shared
@pytest.mark.parametrize("reports", [CONCURRENT, EX_GPU[:3]], ids=["concurrent", "ex-gpu"])
def test_gpu_gaps_equal_a_brute_force_sweep(reports: list[Path]) -> None:
    options = RecipeOptions(use_cache=False, gap_ms=0.01)
    table = run_recipe("gpu_gaps", reports, options).output.tables["analysis"]
    for path in reports:
        ours = table[table["File"] == path.name]
        got = set(zip(ours["Start"], ours["Duration"], ours["PID"], ours["Device ID"], strict=True))
        assert got == brute_gaps(_oracle_ops(path), 10_000)
        assert ours["Row#"].tolist() == list(range(1, len(ours) + 1))
        assert ours["Duration"].is_monotonic_decreasing


@requires_shared
def test_gpu_time_util_equals_a_brute_force_sum() -> None:
    reports = CONCURRENT[:3]
    options = RecipeOptions(use_cache=False, chunks=40, threshold_pct=30)
    out = run_recipe("gpu_time_util", reports, options).output.tables
    for path in reports:
        expected = brute_utilization(_oracle_ops(path), 40)
        chunks = out["utilization"][out["utilization"]["File"] == path.name]
        got = list(
            zip(
                chunks["PID"], chunks["Device ID"], chunks["Start"], chunks["Duration"], strict=True
            )
        )
        assert got == [e[:4] for e in expected]
        _close(chunks["In-Use"], pd.Series([e[4] for e in expected]))
        # Low regions: maximal runs of consecutive chunks under the threshold, weighted mean.
        runs, current = [], []
        for e in [*expected, None]:
            if (
                e is not None
                and e[4] < 30
                and (not current or current[-1][2] + current[-1][3] == e[2])
            ):
                current.append(e)
                continue
            if current:
                size = sum(c[3] for c in current)
                runs.append((current[0][2], size, sum(c[3] * c[4] for c in current) / size))
            current = [e] if e is not None and e[4] < 30 else []
        low = out["analysis"][out["analysis"]["File"] == path.name].sort_values("Start")
        assert low["Start"].tolist() == [r[0] for r in runs]
        assert low["Duration"].tolist() == [r[1] for r in runs]
        _close(low["In-Use"], pd.Series([r[2] for r in runs]))


def test_planted_gaps_and_overhead(tmp_path: Path) -> None:
    path = write_report(
        tmp_path / "gaps.sqlite",
        kernels=[
            K("a", 10_000, 12_000),
            K("b", 20_000, 21_000, stream=8),
            K("c", 20_500, 25_000),
            K("d", 1_000_000, 1_001_000),
        ],
        overhead=[("CUDA profiling overhead", 30_000, 900_000), ("other overhead", 1, 2)],
    )
    table = run_recipe("gpu_gaps", [path], RecipeOptions(gap_ms=0.005)).output.tables["analysis"]
    # 12k..20k (8000 ns) and 900k..1000k; 25k..30k is exactly 5000 ns: not strictly longer.
    assert table[["Start", "Duration"]].values.tolist() == [[900_000, 100_000], [12_000, 8_000]]


# -- pace, histogram -----------------------------------------------------------------------------


def test_pace_follows_one_kernel_on_a_common_clock(tmp_path: Path) -> None:
    t0 = 1_700_000_000_000_000_000
    r1 = write_report(
        tmp_path / "r1.sqlite",
        kernels=[
            K("step_kernel<float>", 10_000, 10_500, short="step"),
            K("other", 10_600, 10_700),
            K("step_kernel<float>", 11_000, 11_600, short="step"),
            K("step_kernel<float>", 13_000, 13_100, short="step"),
        ],
        session_start_utc_ns=t0,
    )
    r2 = write_report(
        tmp_path / "r2.sqlite",
        kernels=[
            K("step_kernel<float>", 10_000, 10_400, short="step"),
            K("step_kernel<float>", 12_000, 12_200, short="step"),
        ],
        session_start_utc_ns=t0 + 1_000,
    )
    out = run_recipe("cuda_gpu_kern_pace", [r2, r1], RecipeOptions(kernel_name="step")).output
    t = out.tables
    assert t["pace_duration"]["r1.sqlite"].tolist() == [500, 600, 100]
    assert t["pace_duration"]["r2.sqlite"].tolist()[:2] == [400, 200]
    assert t["pace_duration"]["r2.sqlite"].isna().tolist() == [False, False, True]
    assert t["pace_delta"]["r1.sqlite"].tolist() == [10_000, 500, 1_400]
    assert t["pace_delta_accum"]["r1.sqlite"].tolist() == [10_000, 10_500, 11_900]
    assert t["pace_duration_accum"]["r1.sqlite"].tolist() == [500, 1_100, 1_200]
    assert t["pace_start"]["r2.sqlite"].tolist()[:2] == [11_000, 13_000]  # +1000 ns later
    stats = t["all_stats"].iloc[0]
    assert (stats["Count"], stats["Mean"], stats["Median"]) == (5, 360.0, 400.0)
    assert t["rank_stats"]["File"].tolist() == ["r1.sqlite", "r2.sqlite"]
    assert set(out.plots) == {"pace", "pace_start"}


@requires_shared
def test_pace_plots_durations_in_the_unit_that_suits_them() -> None:
    # test2 runs once per report, 25 to 414 ms (issue 21: the plot read '1e8' over ns ticks).
    out = run_recipe("cuda_gpu_kern_pace", CONCURRENT, RecipeOptions(kernel_name="test2")).output
    durations = out.tables["pace_duration"].set_index("Iteration").astype(float)
    plot = out.plots["pace"]
    assert len(durations) == 1
    assert durations.min().min() >= 1e6  # milliseconds, by the data
    assert plot.ylabel == "duration (ms)"
    assert np.allclose(plot.data.to_numpy() * 1e6, durations.to_numpy())


def test_pace_needs_a_kernel_name() -> None:
    with pytest.raises(AnalysisError, match="--name"):
        run_recipe("cuda_gpu_kern_pace", [])


@requires_shared
def test_histogram_counts_every_kernel_in_its_bin() -> None:
    out = run_recipe("cuda_gpu_kern_hist", CONCURRENT, RecipeOptions(bins_per_decade=8))
    hist = out.output.tables["histogram"]
    rows = pd.concat([_sql(p, _KERNEL_ROWS) for p in CONCURRENT], ignore_index=True)
    for name, group in rows.groupby("Name"):
        bins = hist[hist["Name"] == name]
        for start, end, count in zip(
            bins["Bin Start"], bins["Bin End"], bins["Count"], strict=True
        ):
            inside = ((group["d"] >= start) & (group["d"] < end)).sum()
            assert inside == count
        assert bins["Count"].sum() == len(group)
        assert np.allclose(np.log10(bins["Bin End"] / bins["Bin Start"]), 1 / 8)


# -- diff ----------------------------------------------------------------------------------------


def _diff_pair(tmp_path: Path) -> tuple[Path, Path]:
    before = write_report(
        tmp_path / "before.sqlite",
        kernels=[
            K("same", 10_000, 10_100),
            K("same", 20_000, 20_100),
            *(K("slow", 30_000 + i * 1_000, 30_100 + i * 1_000) for i in range(3)),
            *(K("fast", 40_000 + i * 1_000, 40_400 + i * 1_000) for i in range(3)),
            K("gone", 50_000, 50_050),
        ],
    )
    after = write_report(
        tmp_path / "after.sqlite",
        kernels=[
            K("same", 10_000, 10_100),
            K("same", 20_000, 20_100),
            *(K("slow", 30_000 + i * 1_000, 30_300 + i * 1_000) for i in range(3)),
            *(K("fast", 40_000 + i * 1_000, 40_100 + i * 1_000) for i in range(3)),
            K("new", 60_000, 60_070),
        ],
    )
    return before, after


EXPECTED_STATUS = {
    "same": "noise",
    "slow": "slower",
    "fast": "faster",
    "gone": "vanished",
    "new": "appeared",
}


def test_diff_of_two_reports_by_construction(tmp_path: Path) -> None:
    before, after = _diff_pair(tmp_path)
    out = run_recipe("diff", [before, after]).output
    assert set(out.tables) == {"cuda_gpu_kern_sum", "files"}  # no NVTX ranges planted
    table = out.tables["cuda_gpu_kern_sum"].set_index("Name")
    assert table["Status"].to_dict() == EXPECTED_STATUS
    assert table.loc["slow", "Total Delta"] == 600
    assert table.loc["slow", "Avg Change (%)"] == 200.0
    assert table.loc["fast", "Avg Change (%)"] == -75.0
    assert table.loc["gone", "Total Delta"] == -50
    assert table.loc["new", "Total Delta"] == 70
    assert pd.isna(table.loc["new", "Avg Before"])
    # By impact: changes first, biggest total change first (fast: -900 ns, slow: +600 ns).
    assert table["Status"].tolist() == ["faster", "slower", "appeared", "vanished", "noise"]
    assert table.loc["slow", "Med Change (%)"] == 200.0
    # Equal instances on each side: the interval has zero width.
    assert table.loc["slow", ["Med Delta Low", "Med Delta High"]].tolist() == [200.0, 200.0]
    assert "1 slower, 1 faster, 1 appeared, 1 vanished, 1 noise" in out.summary


@requires_shared
def test_diff_of_two_real_runs_against_sql() -> None:
    before, after = CONCURRENT[0], CONCURRENT[-1]
    out = run_recipe("diff", [before, after], RecipeOptions(tolerance_pct=5)).output
    assert {"cuda_gpu_kern_sum", "nvtx_sum", "nvtx_gpu_proj_sum"} <= set(out.tables)
    means = [_sql(p, _KERNEL_ROWS).groupby("Name")["d"].mean() for p in (before, after)]
    change = 100 * (means[1] - means[0]) / means[0]
    medians = [_sql(p, _KERNEL_ROWS).groupby("Name")["d"].median() for p in (before, after)]
    med_change = 100 * (medians[1] - medians[0]) / medians[0]
    table = out.tables["cuda_gpu_kern_sum"].set_index("Name")
    _close(table.loc[change.index, "Avg Change (%)"], change)
    _close(table.loc[med_change.index, "Med Change (%)"], med_change)
    # The status: the interval excludes 0, the median moved by more than 5 %, 2+ instances.
    low, high = table["Med Delta Low"], table["Med Delta High"]
    moved = ((low > 0) | (high < 0)) & (table["Med Change (%)"].abs() > 5)
    moved &= (table["Instances Before"] >= 2) & (table["Instances After"] >= 2)
    expected = np.where(moved, np.where(table["Med Change (%)"] > 0, "slower", "faster"), "noise")
    # Fewer than 2 instances on a side: never noise; slower / faster by x1.2 and 1 us.
    few = (table["Instances Before"] < 2) | (table["Instances After"] < 2)
    b, a = table["Med Before"], table["Med After"]
    large = (np.maximum(a, b) >= 1.2 * np.minimum(a, b)) & ((a - b).abs() >= 1000)
    expected = np.where(few, np.where(large, np.where(a > b, "slower, few", "faster, few"),
                                      "too few"), expected)  # fmt: skip
    assert table.loc[change.index, "Status"].tolist() == list(
        pd.Series(expected, index=table.index).loc[change.index]
    )


def test_diff_of_two_recipe_outputs(tmp_path: Path) -> None:
    before, after = _diff_pair(tmp_path)
    folders = []
    for path in (before, after):
        run = run_recipe("cuda_gpu_kern_sum", [path])
        folders.append(tmp_path / f"out-{path.stem}")
        write_output(run.output, folders[-1], run)
    table = run_recipe("diff", folders).output.tables["cuda_gpu_kern_sum"]
    assert table.set_index("Name")["Status"].to_dict() == EXPECTED_STATUS
    gaps = run_recipe("gpu_gaps", [before], RecipeOptions(gap_ms=0.001))
    write_output(gaps.output, tmp_path / "gaps", gaps)
    with pytest.raises(AnalysisError, match="needs both inputs"):
        run_recipe("diff", [folders[0], tmp_path / "gaps"])
    with pytest.raises(AnalysisError, match="exactly two"):
        run_recipe("diff", folders[:1])


# -- failures, outputs ---------------------------------------------------------------------------


def _corrupt_set(tmp_path: Path) -> Path:
    folder = tmp_path / "set"
    folder.mkdir()
    good = [
        write_report(folder / f"rank{i}.sqlite", kernels=[K("k", 10_000, 10_000 + 100 * (i + 1))])
        for i in range(2)
    ]
    truncated = folder / "truncated.sqlite"
    truncated.write_bytes(good[0].read_bytes()[:3000])
    (folder / "notes.sqlite").write_text("not a database\n" * 50)
    return folder


def test_a_bad_report_is_named_and_skipped(tmp_path: Path) -> None:
    run = run_recipe("cuda_gpu_kern_sum", [_corrupt_set(tmp_path)])
    assert {f.file for f in run.failures} == {"truncated.sqlite", "notes.sqlite"}
    assert all(f.reason and "\n" not in f.reason for f in run.failures)
    assert run.output.files == ["rank0.sqlite", "rank1.sqlite"]
    assert run.output.tables["all_stats"]["Instances"].tolist() == [2]


def test_folder_limit_takes_the_first_reports(tmp_path: Path) -> None:
    folder = _corrupt_set(tmp_path)
    run = run_recipe("cuda_gpu_kern_sum", [f"{folder}:2"])
    assert [p.name for p in run.inputs] == ["notes.sqlite", "rank0.sqlite"]
    with pytest.raises(AnalysisError, match="no folder"):
        run_recipe("cuda_gpu_kern_sum", [f"{folder / 'rank0.sqlite'}:1"])


def test_reports_without_data_are_listed_not_failed(tmp_path: Path) -> None:
    with_ranges = write_report(
        tmp_path / "a.sqlite", kernels=[K("k", 10_000, 10_100)], ranges=[("step", 9_000, 11_000)]
    )
    without = write_report(tmp_path / "b.sqlite", kernels=[K("k", 10_000, 10_100)])
    run = run_recipe("nvtx_sum", [with_ranges, without])
    assert run.no_data == ["b.sqlite"]
    assert run.failures == []
    assert run.output.tables["all_stats"]["Range"].tolist() == ["step"]
    with pytest.raises(AnalysisError, match="1 had no data"):
        run_recipe("nvtx_sum", [without])


def test_every_report_bad_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "x.sqlite").write_text("nothing\n")
    with pytest.raises(AnalysisError, match="x.sqlite"):
        run_recipe("nvtx_sum", [tmp_path / "x.sqlite"])


@requires_shared
@pytest.mark.parametrize(
    ("recipe", "options", "plots"),
    [
        ("nvtx_gpu_proj_sum", RecipeOptions(), {"heatmap"}),
        ("cuda_gpu_kern_hist", RecipeOptions(), {"histogram"}),
        ("cuda_gpu_kern_pace", RecipeOptions(kernel_name="test4"), {"pace", "pace_start"}),
        ("gpu_time_util", RecipeOptions(), {"heatmap"}),
        ("gpu_gaps", RecipeOptions(gap_ms=1), set()),
    ],
)
def test_every_recipe_writes_its_tables_and_plots(recipe, options, plots, tmp_path: Path) -> None:
    run = run_recipe(recipe, CONCURRENT[:2], options)
    assert set(run.output.plots) == plots
    write_output(run.output, tmp_path, run)
    for name in plots:
        assert (tmp_path / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    for name, table in run.output.tables.items():
        assert len(pd.read_csv(tmp_path / f"{name}.csv")) == len(table)
    assert set(load_output(tmp_path)) == set(run.output.tables)


def test_output_folder_round_trip(tmp_path: Path) -> None:
    folder = _corrupt_set(tmp_path)
    run = run_recipe("cuda_gpu_kern_sum", [folder])
    out = tmp_path / "out"
    write_output(run.output, out, run)
    names = {p.name for p in out.iterdir()}
    for table in ("all_stats", "rank_stats", "by_file", "files"):
        assert {f"{table}.parquet", f"{table}.csv"} <= names
    assert {"summary.txt", "recipe.json", "heatmap.png"} <= names
    assert (out / "heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = (out / "summary.txt").read_text()
    assert "skipped truncated.sqlite" in summary
    assert "cuda_gpu_kern_sum" in summary
    loaded = load_output(out)
    assert set(loaded) == set(run.output.tables)
    for name, table in run.output.tables.items():
        pd.testing.assert_frame_equal(loaded[name], table.reset_index(drop=True), check_dtype=False)
    csv = pd.read_csv(out / "all_stats.csv")
    assert csv["Total Time"].tolist() == run.output.tables["all_stats"]["Total Time"].tolist()
    with pytest.raises(AnalysisError, match="not a recipe output"):
        load_output(folder)


@requires_shared
def test_an_nsys_rep_gives_the_same_profiler_overhead_as_its_sqlite_export() -> None:
    # Overhead rows are read from the SQLite behind the report: for an .nsys-rep, its nsys
    # export in the cache. The .sqlite in ../shared is an export of the same capture.
    from strata.analysis.gpu_idle import _overhead
    from strata.analysis.open import find_nsys, open_report

    if find_nsys() is None:
        pytest.skip("needs nsys ($NSYS or PATH) to export the .nsys-rep")
    name = "MohanadOdema__DLProf__nsys_profile"
    from_sqlite = _overhead(open_report(REAL_DIR / f"{name}.sqlite"))
    from_rep = _overhead(open_report(REAL_DIR / "nsys-rep" / f"{name}.nsys-rep"))
    assert len(from_sqlite) == 1
    pd.testing.assert_frame_equal(from_rep, from_sqlite)


@requires_shared
@pytest.mark.parametrize(
    ("recipe", "options"),
    [
        ("nvtx_sum", RecipeOptions(use_cache=False)),
        ("nvtx_gpu_proj_sum", RecipeOptions(use_cache=False)),
        ("cuda_gpu_kern_hist", RecipeOptions(use_cache=False)),
        ("cuda_gpu_kern_pace", RecipeOptions(use_cache=False, kernel_name="test0")),
        ("gpu_gaps", RecipeOptions(use_cache=False, gap_ms=0.001)),
        ("gpu_time_util", RecipeOptions(use_cache=False, chunks=20)),
        ("diff", RecipeOptions(use_cache=False)),
    ],
)
def test_maps_that_read_only_their_tables_match_full_loads(
    recipe: str, options: RecipeOptions
) -> None:
    """A recipe's map loads only ``Recipe.tables``; its output equals a full load's."""
    import strata.analysis.open

    reports = CONCURRENT[:2] + EX_GPU[:1] if recipe != "diff" else CONCURRENT[:2]
    if not all(p.is_file() for p in reports):
        pytest.skip("needs the extra-p reports in ../shared")
    loaded: list[object] = []
    real = strata.analysis.open.load_sqlite

    def spy(*args, kinds=None, **kwargs):
        loaded.append(kinds)
        return real(*args, **kwargs) if full else real(*args, kinds=kinds, **kwargs)

    with mock.patch.object(strata.analysis.open, "load_sqlite", spy):
        full = True
        expected = run_recipe(recipe, reports, options).output
        full = False
        loaded.clear()
        ours = run_recipe(recipe, reports, options).output
    from strata.analysis.model import EVENT_TABLES

    # Each report was read, for fewer tables than a full load reads.
    assert len(loaded) == len(reports)
    assert all(k is not None and set(k) < set(EVENT_TABLES) for k in loaded)
    assert ours.tables.keys() == expected.tables.keys()
    for name in expected.tables:
        pd.testing.assert_frame_equal(ours.tables[name], expected.tables[name])
    assert ours.summary == expected.summary


@pytest.mark.parametrize("seed", range(5))
def test_pace_describe_equals_pandas_statistics(seed: int) -> None:
    """describe() is NumPy for speed; pandas' own reductions are the oracle (spec §5.3 (b))."""
    from strata.analysis.engine import sqlite_round
    from strata.analysis.recipes.pace import describe

    rng = np.random.default_rng(seed)
    for _ in range(20):
        rows, cols = int(rng.integers(1, 40)), int(rng.integers(1, 9))
        values = rng.integers(0, 10**9, size=(rows, cols)).astype(np.float64)
        values[rng.random((rows, cols)) < 0.35] = np.nan  # ragged reports, empty rows
        frame = pd.DataFrame(
            {f"r{i}": pd.Series(values[:, i]).astype("Int64") for i in range(cols)}
        )
        for axis in (0, 1):
            data = frame.astype(np.float64)
            expected = pd.DataFrame(
                {
                    "Count": data.count(axis=axis).astype(np.int64),
                    "Mean": sqlite_round(data.mean(axis=axis).to_numpy()),
                    "Std": sqlite_round(data.std(axis=axis, ddof=1).to_numpy()),
                    "Min": data.min(axis=axis),
                    "Q1": sqlite_round(data.quantile(0.25, axis=axis).to_numpy()),
                    "Median": sqlite_round(data.quantile(0.5, axis=axis).to_numpy()),
                    "Q3": sqlite_round(data.quantile(0.75, axis=axis).to_numpy()),
                    "Max": data.max(axis=axis),
                    "Sum": data.sum(axis=axis),
                }
            )
            pd.testing.assert_frame_equal(describe(frame, axis), expected, check_exact=True)


@requires_shared
@pytest.mark.parametrize("use_cache", [False, True])
def test_a_report_without_kernels_is_no_data_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, use_cache: bool
) -> None:
    """A folder mixing GPU and CPU-only reports (no kernel table at all): the lean read."""
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    cpu_only = REAL_DIR / "quasiben__nvtx-examples__quickstart.sqlite"
    if not cpu_only.is_file() or not CONCURRENT[0].is_file():
        pytest.skip("needs the quasiben and extra-p reports in ../shared")
    options = RecipeOptions(use_cache=use_cache)
    for _ in range(2):  # the second run reads the partial cache entry when it is on
        run = run_recipe("cuda_gpu_kern_sum", [cpu_only, CONCURRENT[0]], options)
        assert run.no_data == [cpu_only.name]
        assert run.output.files == [CONCURRENT[0].name]
