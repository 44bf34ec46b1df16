"""No silent wrap in the recipes: sums near 2^63 ns are exact, or refused in one line.

nsys's recipes are pandas code whose int64 sums and running sums wrap without a word; its
``nsys stats`` stops with "integer overflow" on a report whose own total passes int64. Here a
report whose own sum does not fit is skipped and named (the other reports still run), a total
that only passes int64 over all reports ends the run with one line, and every sum that fits is
exact. Reports are planted with durations near 2^62 ns (146 years: only a damaged report has
them); expected values are Python integers over the planted rows.
"""

from __future__ import annotations

import shutil
import statistics
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from strata.analysis import AnalysisError, open_report
from strata.analysis.gpu_idle import find_gaps
from strata.analysis.recipes import RecipeOptions, load_output, run_recipe, write_output
from strata.analysis.recipes._exact import (
    RecipeOverflowError,
    checked_add,
    checked_cumsum,
    checked_subtract,
    group_sums,
    segment_sums,
    sum_fits_int64,
)
from strata.analysis.stats import run_report
from strata.app.cli import main as cli_main
from strata.resources.demo import build_demo_reports
from tests.analysis.test_recipes_data import GLOBAL_TID, K, write_report
from tests.helpers import mutate_sqlite, sql_rows

BIG = 2**62 + 12_345
INT64_MAX = 2**63 - 1
STATS_RECIPES = ("cuda_gpu_kern_sum", "nvtx_sum", "nvtx_gpu_proj_sum")
#: The total column of each stats recipe's tables.
TOTAL = {"cuda_gpu_kern_sum": "Total Time", "nvtx_sum": "Total Time"}
TOTAL["nvtx_gpu_proj_sum"] = "Total Proj Time"


def _overflowing(path: Path) -> Path:
    """A report whose own totals pass int64: two overlapping kernels ``k`` (two streams) and
    two nested ranges ``r`` around their launches, each lasting about 2^62 ns."""
    return write_report(
        path,
        kernels=[K("k", 1_000, 1_000 + BIG, stream=7), K("k", 2_000, 2_000 + BIG, stream=8)],
        ranges=[("r", 100, 100 + BIG + 5_000), ("r", 200, 200 + BIG + 4_000)],
    )


def _small(path: Path) -> Path:
    return write_report(path, kernels=[K("k", 1_000, 1_500)], ranges=[("r", 100, 2_000)])


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


# ------------------------------------------------------------------ the helpers themselves


def test_exact_helpers_agree_with_python_integers() -> None:
    values = np.array([BIG, BIG, -5, 7, BIG, 3], dtype=np.int64)
    sums = segment_sums(values, np.array([0, 2, 4]))
    assert sums.tolist() == [2 * BIG, 2, BIG + 3]
    assert sums.dtype == object  # 2 * BIG does not fit
    fits = segment_sums(values, np.array([0, 1, 2, 5]))
    assert fits.dtype == np.int64
    assert fits.tolist() == [BIG, BIG, -5 + 7 + BIG, 3]
    codes = np.array([1, 0, 1, 1, 0, 2])
    assert group_sums(codes, values, 3).tolist() == [BIG + BIG, BIG - 5 + 7, 3]
    assert group_sums(codes, values.astype(object), 3).tolist() == [2 * BIG, BIG + 2, 3]
    assert checked_cumsum(np.array([BIG, -BIG, BIG]), "x").tolist() == [BIG, 0, BIG]
    with pytest.raises(RecipeOverflowError, match="integer overflow: x passes"):
        checked_cumsum(np.array([BIG, BIG]), "x")
    with pytest.raises(RecipeOverflowError):
        checked_add(np.array([BIG]), BIG, "x")
    assert checked_add(np.array([BIG]), -BIG, "x").tolist() == [0]
    with pytest.raises(RecipeOverflowError):
        checked_subtract(np.array([-BIG]), np.array([BIG]), "x")
    assert checked_subtract(np.array([BIG]), np.array([BIG - 1]), "x").tolist() == [1]
    assert not sum_fits_int64(np.array([BIG, BIG]))
    assert sum_fits_int64(np.array([BIG, BIG, -BIG]))
    assert sum_fits_int64(np.array([2**40] * 1000))


# ------------------------------------------------------------------ the stats recipes


@pytest.mark.parametrize("recipe", STATS_RECIPES)
def test_a_report_whose_own_total_passes_int64_is_skipped_and_named(
    recipe: str, tmp_path: Path
) -> None:
    bad = _overflowing(tmp_path / "bad.sqlite")
    good = _small(tmp_path / "good.sqlite")
    run = run_recipe(recipe, [bad, good])
    assert [f.file for f in run.failures] == ["bad.sqlite"]
    reason = run.failures[0].reason
    assert "integer overflow" in reason
    assert "\n" not in reason
    assert run.output.files == ["good.sqlite"]
    assert run.output.tables["all_stats"][TOTAL[recipe]].min() >= 0


@pytest.mark.parametrize("recipe", STATS_RECIPES)
def test_a_total_past_int64_over_all_reports_is_refused(recipe: str, tmp_path: Path) -> None:
    """Each report fits, their sum does not (nsys's recipe prints the wrapped pandas sum)."""
    paths = [
        write_report(
            tmp_path / f"rank{i}.sqlite",
            kernels=[K("k", 1_000, 1_000 + BIG)],
            ranges=[("r", 100, 100 + BIG + 5_000)],
        )
        for i in range(2)
    ]
    with pytest.raises(AnalysisError, match="integer overflow") as caught:
        run_recipe(recipe, paths)
    message = str(caught.value)
    assert "over all reports" in message
    assert "'k'" in message or "'r'" in message
    assert "\n" not in message


def _planted_exact(tmp_path: Path) -> tuple[list[Path], dict, dict]:
    """Two reports whose totals fit int64 but whose sum of totals does not."""
    a = write_report(
        tmp_path / "a.sqlite",
        kernels=[K("k", 1_000, 1_000 + BIG)],
        ranges=[("r", 100, 100 + BIG + 2_000)],
    )
    b = write_report(
        tmp_path / "b.sqlite",
        kernels=[K("m", 1_000, 1_000 + BIG), K("k", 2_000, 2_100, stream=8)],
        ranges=[("q", 100, 100 + BIG + 2_000), ("r", 1_500, 2_500)],
    )
    kernels = {"k": [BIG, 100], "m": [BIG]}
    ranges = {"r": [BIG + 2_000, 1_000], "q": [BIG + 2_000]}
    return [a, b], kernels, ranges


def _check_stats_columns(table: pd.DataFrame, key: str, durations: dict, total: str) -> None:
    table = table.set_index(key)
    grand = sum(sum(d) for d in durations.values())
    assert grand > INT64_MAX  # the planted case: only the sum of the totals passes int64
    for name, values in durations.items():
        assert int(table.at[name, total]) == sum(values)
        assert int(table.at[name, "Instances"]) == len(values)
        assert int(table.at[name, "Min"]) == min(values)
        assert int(table.at[name, "Max"]) == max(values)
        assert table.at[name, "Avg"] == pytest.approx(sum(values) / len(values), rel=1e-15)
        assert table.at[name, "Med"] == pytest.approx(statistics.median(values), rel=1e-15)
        assert table.at[name, "Time"] == pytest.approx(100 * sum(values) / grand, abs=0.051)


def test_kernel_and_nvtx_sums_are_exact_where_every_total_fits(tmp_path: Path) -> None:
    paths, kernels, ranges = _planted_exact(tmp_path)
    kern = run_recipe("cuda_gpu_kern_sum", paths)
    assert not kern.failures
    _check_stats_columns(kern.output.tables["all_stats"], "Name", kernels, "Total Time")
    nvtx = run_recipe("nvtx_sum", paths)
    assert not nvtx.failures
    _check_stats_columns(nvtx.output.tables["all_stats"], "Range", ranges, "Total Time")


def test_nvtx_gpu_projection_totals_are_exact(tmp_path: Path) -> None:
    """``Total Range Time`` was a float64 sum: 2^62 + 3,000 came out a multiple of 1,024."""
    paths, _, ranges = _planted_exact(tmp_path)
    run = run_recipe("nvtx_gpu_proj_sum", paths)
    assert not run.failures
    table = run.output.tables["all_stats"].set_index("Range")
    expected_proj: dict[str, int] = {}
    for path in paths:  # the stats of each report (exact there), added as Python ints
        frame = run_report(open_report(path, use_cache=False), "nvtx_gpu_proj_sum", xp=np).frame
        for name, value in zip(frame["Range"], frame["Total Proj Time"], strict=True):
            expected_proj[name] = expected_proj.get(name, 0) + int(value)
    for name, values in ranges.items():
        assert int(table.at[name, "Total Range Time"]) == sum(values)
        assert int(table.at[name, "Total Proj Time"]) == expected_proj[name]
    assert int(table.at["r", "Total Range Time"]) == BIG + 3_000


def test_diff_deltas_are_exact_and_an_overflowing_side_is_named(tmp_path: Path) -> None:
    before = write_report(tmp_path / "before.sqlite", kernels=[K("k", 1_000, 1_000 + BIG)])
    after = write_report(tmp_path / "after.sqlite", kernels=[K("k", 1_000, 1_005 + BIG)])
    table = run_recipe("diff", [before, after]).output.tables["cuda_gpu_kern_sum"]
    row = table.set_index("Name").loc["k"]
    assert int(row["Total Before"]) == BIG
    assert int(row["Total After"]) == BIG + 5
    assert int(row["Total Delta"]) == 5
    bad = _overflowing(tmp_path / "bad.sqlite")
    with pytest.raises(AnalysisError) as caught:
        run_recipe("diff", [before, bad])
    assert [f.file for f in caught.value.failures] == ["bad.sqlite"]
    assert "integer overflow" in caught.value.failures[0].reason


# ------------------------------------------------------------------ histogram, pace, GPU rules


def test_histogram_ranks_kernels_by_their_exact_total(tmp_path: Path) -> None:
    """A wrapped (negative) total ranked the longest kernel last."""
    path = write_report(
        tmp_path / "h.sqlite",
        kernels=[
            K("huge", 1_000, 1_000 + BIG, stream=7),
            K("huge", 2_000, 2_000 + BIG, stream=8),
            K("small", 3_000, 3_500, stream=9),
        ],
    )
    other = write_report(tmp_path / "i.sqlite", kernels=[K("small", 1_000, 1_000 + 10**6)])
    table = run_recipe("cuda_gpu_kern_hist", [path, other]).output.tables["histogram"]
    assert table["Name"].drop_duplicates().tolist() == ["huge", "small"]
    counts = table.groupby("Name")["Count"].sum()
    assert counts.to_dict() == {"huge": 2, "small": 2}


def test_pace_running_sums_are_exact_or_the_report_is_skipped(tmp_path: Path) -> None:
    bad = write_report(
        tmp_path / "bad.sqlite",
        kernels=[K("k", 1_000, 1_000 + BIG, stream=7), K("k", 2_000, 2_000 + BIG, stream=8)],
    )
    good = write_report(
        tmp_path / "good.sqlite",
        kernels=[K("k", 1_000, 1_000 + BIG), K("k", BIG + 2_000, BIG + 3_000)],
    )
    run = run_recipe("cuda_gpu_kern_pace", [bad, good], RecipeOptions(kernel_name="k"))
    assert [f.file for f in run.failures] == ["bad.sqlite"]
    assert "integer overflow: the running sum of durations" in run.failures[0].reason
    tables = run.output.tables
    assert tables["pace_duration"]["good.sqlite"].tolist() == [BIG, 1_000]
    assert tables["pace_duration_accum"]["good.sqlite"].tolist() == [BIG, BIG + 1_000]
    assert tables["pace_delta_accum"]["good.sqlite"].tolist() == [1_000, 1_000 + 1_000]
    assert tables["pace_end"]["good.sqlite"].tolist() == [1_000 + BIG, BIG + 3_000]


def test_pace_refuses_a_common_clock_past_int64(tmp_path: Path) -> None:
    """Session starts 2^62 ns apart shift a start near 2^62 past int64: one line, named."""
    early = write_report(
        tmp_path / "early.sqlite", kernels=[K("k", 1_000, 2_000)], session_start_utc_ns=1
    )
    late = write_report(
        tmp_path / "late.sqlite",
        kernels=[K("k", BIG, BIG + 1_000)],
        session_start_utc_ns=BIG,
    )
    with pytest.raises(AnalysisError, match="^late.sqlite: integer overflow: a start shifted"):
        run_recipe("cuda_gpu_kern_pace", [early, late], RecipeOptions(kernel_name="k"))


def test_gpu_time_util_counts_overlapping_huge_operations_exactly(tmp_path: Path) -> None:
    """Three streams busy for ~2^62 ns: 300 % in use (the int64 busy time wrapped)."""
    path = write_report(
        tmp_path / "u.sqlite",
        kernels=[K("k", 1_000, 1_000 + BIG, stream=s) for s in (7, 8, 9)],
    )
    chunks = run_recipe("gpu_time_util", [path], RecipeOptions(chunks=1)).output.tables
    util = chunks["utilization"]
    assert util["In-Use"].tolist() == [300.0]
    assert util["Duration"].tolist() == [int(np.ceil(float(BIG)))]  # nsys's float chunk size
    assert util["Start"].tolist() == [1_000]


def test_gpu_time_util_keeps_every_chunk_of_a_span_near_int64(tmp_path: Path) -> None:
    """A span near 2^63 - 1: the chunk size is float(span) / chunks rounded up, so the last
    chunk's end passed int64 and it was dropped (for one chunk, numpy raised OverflowError)."""
    path = write_report(tmp_path / "s.sqlite", kernels=[K("k", 1, INT64_MAX)])
    for chunks in (1, 2, 3):
        util = run_recipe("gpu_time_util", [path], RecipeOptions(chunks=chunks)).output.tables[
            "utilization"
        ]
        assert util["Chunk"].tolist() == list(range(chunks))
        assert util["In-Use"].tolist() == [100.0] * chunks
        starts, sizes = util["Start"].tolist(), util["Duration"].tolist()
        assert starts[0] == 1
        assert starts[1:] == [s + d for s, d in zip(starts[:-1], sizes[:-1], strict=True)]
        if chunks < 3:  # 3 chunks of float(span) / 3 (rounded down) leave a tail, as in nsys
            assert sum(sizes) == INT64_MAX - 1


def test_gpu_gaps_between_huge_operations_are_exact(tmp_path: Path) -> None:
    path = write_report(
        tmp_path / "g.sqlite",
        kernels=[K("k", 1_000, 2_000), K("k", 2_000 + BIG, 3_000 + BIG)],
    )
    table = run_recipe("gpu_gaps", [path], RecipeOptions(gap_ms=0)).output.tables["analysis"]
    assert table["Duration"].tolist() == [BIG]
    assert table["Start"].tolist() == [2_000]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("start = 'soon'", "not an integer"),
        ("start = 2500.5", "not an integer"),
        ("start = end + 10", "end before they start"),
    ],
)
def test_hostile_profiler_overhead_rows_skip_the_report(
    tmp_path: Path, change: str, reason: str
) -> None:
    path = write_report(
        tmp_path / "o.sqlite",
        kernels=[K("k", 1_000, 2_000), K("k", 10_000, 11_000)],
        overhead=[("CUDA profiling overhead", 2_500, 9_000)],
    )
    good = shutil.copy(path, tmp_path / "p.sqlite")
    mutate_sqlite(path, f"UPDATE PROFILER_OVERHEAD SET {change}")
    run = run_recipe("gpu_gaps", [path, good], RecipeOptions(gap_ms=0))
    assert [f.file for f in run.failures] == ["o.sqlite"]
    assert reason in run.failures[0].reason
    assert run.output.tables["analysis"]["Duration"].tolist() == [1_000, 500]


def test_profiler_overhead_of_no_thread_is_ignored(tmp_path: Path) -> None:
    """nsys's join on the PID drops such a row; before, NumPy raised on the NULL."""
    path = write_report(
        tmp_path / "o.sqlite",
        kernels=[K("k", 1_000, 2_000), K("k", 10_000, 11_000)],
        overhead=[("CUDA profiling overhead", 2_500, 9_000)],
    )
    mutate_sqlite(path, "UPDATE PROFILER_OVERHEAD SET globalTid = NULL")
    assert sql_rows(path, "SELECT count(*) FROM PROFILER_OVERHEAD")[0][0] == 1
    table = run_recipe("gpu_gaps", [path], RecipeOptions(gap_ms=0)).output.tables["analysis"]
    assert table["Duration"].tolist() == [8_000]
    assert GLOBAL_TID > 0


def test_gpu_rules_keep_devices_apart_whatever_their_ids() -> None:
    """(pid, device) was packed into one int64: device ids 2^32 apart merged two devices."""
    ops = pd.DataFrame(
        {
            "start_ns": [1_000, 50_000, 20_000],
            "end_ns": [2_000, 51_000, 21_000],
            "pid": [5, 5, 6],
            "device_id": [0, 0, -(1 << 32)],  # 6 * 2^32 - 2^32 == 5 * 2^32 + 0
            "context_id": [1, 1, 1],
        }
    ).sort_values(["pid", "device_id", "start_ns"], kind="stable")
    table = find_gaps(ops.reset_index(drop=True), 0)
    assert table["Duration"].tolist() == [48_000]  # device 0 of process 5 only
    assert table["PID"].tolist() == [5]


@pytest.mark.parametrize(
    ("recipe", "options"),
    [
        ("cuda_gpu_kern_hist", RecipeOptions()),
        ("cuda_gpu_kern_pace", RecipeOptions(kernel_name="k")),
        ("diff", RecipeOptions()),
    ],
)
def test_a_duration_that_wraps_int64_skips_the_report(
    recipe: str, options: RecipeOptions, tmp_path: Path
) -> None:
    """A kernel from -2^62 to 2^62 lasts 2^63 ns: end - start wrapped to a negative
    duration (the histogram counted it in its zero-length bin). The reader refuses such a
    report now, so each recipe skips it with the reader's reason."""
    bad = write_report(
        tmp_path / "bad.sqlite", kernels=[K("k", -(2**62) - 5, 2**62 + 5), K("k", 10, 20)]
    )
    good = write_report(tmp_path / "good.sqlite", kernels=[K("k", 1_000, 2_000)])
    inputs = [good, bad] if recipe == "diff" else [bad, good]
    try:
        failures = run_recipe(recipe, inputs, options).failures
    except AnalysisError as exc:  # diff: one side only is nothing to compare
        failures = exc.failures
    assert [f.file for f in failures] == ["bad.sqlite"]
    assert "duration does not fit in 64 bits" in failures[0].reason


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda t: t.drop(columns="Avg"), "no 'Avg' column"),
        (lambda t: t.assign(**{"Total Time": ["x"] * len(t)}), "'Total Time' must hold whole"),
        (lambda t: t.assign(**{"Total Time": [1.5] * len(t)}), "'Total Time' must hold whole"),
        (lambda t: t.assign(**{"Total Time": [-(2**63)] * len(t)}), "'Total Time' must hold"),
        (lambda t: t.assign(Instances=pd.array([None] * len(t), "Int64")), "'Instances' must"),
        (lambda t: t.assign(Avg=[float("nan")] * len(t)), "'Avg' must hold finite numbers"),
        (lambda t: t.assign(Avg=[-5.0] * len(t)), "'Avg' must hold finite numbers"),
    ],
)
def test_diff_refuses_an_edited_recipe_output(tmp_path: Path, damage, reason: str) -> None:
    """A KeyError, TypeError or ArrowInvalid escaped; a total of -2^63 wrapped the delta."""
    folders = []
    for side, end in (("before", 2_000), ("after", 2_500)):
        path = write_report(tmp_path / f"{side}.sqlite", kernels=[K("k", 1_000, end)])
        folders.append(tmp_path / f"{side}-out")
        write_output(run_recipe("cuda_gpu_kern_sum", [path]).output, folders[-1])
    table = pd.read_parquet(folders[1] / "all_stats.parquet")
    damage(table).to_parquet(folders[1] / "all_stats.parquet")
    with pytest.raises(AnalysisError, match="diff needs both inputs") as caught:
        run_recipe("diff", folders)
    assert [f.file for f in caught.value.failures] == ["after-out"]
    assert reason in caught.value.failures[0].reason


# ------------------------------------------------------------------ NULL names


def test_kernels_without_a_name_are_counted_in_every_table(tmp_path: Path) -> None:
    """A NULL name is a group of its own (as in nsys stats, printed empty). The per-report
    table dropped it, the summary crashed on it, the histogram lost its kernels."""
    path = write_report(tmp_path / "n.sqlite", kernels=[K("a", 1_000, 2_000), K("b", 3_000, 3_100)])
    # A negative id is the loader's NULL string (the demo schema forbids NULL itself).
    mutate_sqlite(
        path, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = -1 WHERE start = 3000"
    )
    paths = [path, shutil.copy(path, tmp_path / "m.sqlite")]
    kern = run_recipe("cuda_gpu_kern_sum", paths).output
    assert kern.tables["all_stats"]["Instances"].tolist() == [2, 2]
    by_file = kern.tables["by_file"]
    assert len(by_file) == 2
    assert by_file["Fastest"].notna().all()
    assert "nan" not in kern.summary
    hist = run_recipe("cuda_gpu_kern_hist", paths).output
    assert int(hist.tables["histogram"]["Count"].sum()) == 4
    assert hist.tables["histogram"]["Name"].isna().sum() == 1
    for output in (kern, hist):
        write_output(output, tmp_path / output.recipe)
        written = load_output(tmp_path / output.recipe)
        assert len(written["all_stats" if output is kern else "histogram"]) == 2


# ------------------------------------------------------------------ modes and the CLI


def test_processes_mode_skips_and_refuses_the_same_way(tmp_path: Path) -> None:
    bad = _overflowing(tmp_path / "bad.sqlite")
    good = _small(tmp_path / "good.sqlite")
    more = _small(tmp_path / "more.sqlite")
    serial = run_recipe("cuda_gpu_kern_sum", [bad, good, more])
    pool = run_recipe("cuda_gpu_kern_sum", [bad, good, more], mode="processes", workers=2)
    assert pool.mode == "processes"
    assert [(f.file, f.reason) for f in pool.failures] == [
        (f.file, f.reason) for f in serial.failures
    ]
    pd.testing.assert_frame_equal(
        pool.output.tables["all_stats"], serial.output.tables["all_stats"]
    )
    paths = [write_report(tmp_path / f"r{i}.sqlite", kernels=[K("k", 9, 9 + BIG)]) for i in (1, 2)]
    messages = []
    for mode in ("serial", "processes"):
        with pytest.raises(AnalysisError, match="integer overflow") as caught:
            run_recipe("cuda_gpu_kern_sum", paths, mode=mode, workers=2)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


@pytest.fixture(scope="module")
def demo_rank(tmp_path_factory) -> Path:
    return build_demo_reports(tmp_path_factory.mktemp("demo"), ranks=2, steps=2)[0]


def test_cli_refuses_demo_ranks_whose_kernel_total_passes_int64(
    demo_rank: Path, tmp_path: Path, capsys
) -> None:
    """Two copies of a real-shaped demo rank, one kernel each lasting ~2^62 ns: exit 2."""
    paths = []
    for i in range(2):
        path = tmp_path / f"rank{i}.sqlite"
        shutil.copyfile(demo_rank, path)
        mutate_sqlite(
            path,
            f"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + {BIG} "
            "WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL)",
        )
        paths.append(str(path))
    out = tmp_path / "out"
    argv = ["recipe", "cuda_gpu_kern_sum", "--input", *paths, "--output", str(out), "-q"]
    assert cli_main([*argv, "--mode", "serial"]) == 2
    line = _one_line(capsys)
    assert line.startswith("strata: integer overflow: the total of ")
    assert "over all reports" in line
    assert not out.exists()
    # One rank alone fits: it runs, exactly.
    assert cli_main([*argv[:3], paths[0], "--output", str(out), "-q", "--mode", "serial"]) == 0
    capsys.readouterr()
    table = pd.read_parquet(out / "all_stats.parquet")
    durations = [
        int(e) - int(s)
        for s, e in sql_rows(paths[0], "SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL")
    ]
    assert int(table["Total Time"].max()) >= BIG
    assert int(table["Total Time"].sum()) == sum(durations)
