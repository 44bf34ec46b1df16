"""The recipes added after the first eight, each checked against nsys 2023.4's own recipe.

nsys's ``nsys recipe`` runs offline on copies of real reports (:mod:`tests.nsys_recipe`);
our tables must hold its numbers. Where ours are exact and nsys's approximate (medians and
quartiles across reports: nsys takes the median of medians, min of Q1s, max of Q3s), the
per-report rows are compared instead, which nsys takes from ``nsys stats``. Every new
recipe also gives identical output serially, in a process pool and on Dask.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from strata.analysis.errors import AnalysisError
from strata.analysis.recipes import RecipeOptions, run_recipe
from tests.analysis.test_recipes import AYUSH, CONCURRENT
from tests.conftest import requires_shared
from tests.helpers import assert_same_output_in_every_mode
from tests.nsys_recipe import nsys_recipe, stage_reports

#: Small real reports: two of the extra-p sweep (CUDA, NVTX, old memcpy enum) and two
#: ayush-os vector_add runs (CUDA, OSRT, NVTX, 2023 memcpy enum, GPU metrics).
REPORTS = [*CONCURRENT[:2], *AYUSH]


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not all(p.is_file() for p in REPORTS) or len(AYUSH) != 2:
        pytest.skip("needs the extra-p and ayush-os reports in ../shared")
    return stage_reports(REPORTS, tmp_path_factory.mktemp("nsys-input") / "in")


def _stem(file: str) -> str:
    return Path(file).stem


def _close(ours: pd.Series, theirs: pd.Series) -> None:
    """Both sides round to 0.1 (nsys half to even, ours half away from zero)."""
    a, e = ours.to_numpy(np.float64), theirs.to_numpy(np.float64)
    assert np.allclose(a, e, rtol=1e-9, atol=0.1001, equal_nan=True), (a, e)


# -- family (a): stats across reports ------------------------------------------------------------

_STATS = {
    # recipe: (key column, total, count)
    "cuda_api_sum": ("Name", "Total Time", "Num Calls"),
    "osrt_sum": ("Name", "Total Time", "Num Calls"),
    "cuda_gpu_mem_time_sum": ("Operation", "Total Time", "Count"),
    "cuda_gpu_mem_size_sum": ("Operation", "Total", "Count"),
}


@requires_shared
@pytest.mark.parametrize("recipe", sorted(_STATS))
def test_stats_recipe_equals_nsys_recipe(recipe: str, staged: Path, tmp_path: Path) -> None:
    key, total, count = _STATS[recipe]
    theirs = nsys_recipe(recipe, staged, tmp_path / "nsys")
    ours = run_recipe(recipe, REPORTS, RecipeOptions(use_cache=False)).output.tables

    # rank_stats: nsys stats per report, every column, rows in the same order.
    want = pd.read_parquet(theirs / "rank_stats.parquet").reset_index()
    got = ours["rank_stats"].assign(File=lambda f: f["File"].map(_stem))
    assert got["File"].tolist() == want["File"].tolist()
    assert got[key].tolist() == want[key].tolist()
    for column in want.columns.drop([key, "File"]):
        _close(got[column], want[column])

    # all_stats: the exact columns are nsys's; the pooled StdDev is the same formula.
    want = pd.read_parquet(theirs / "all_stats.parquet").reset_index()
    got = ours["all_stats"]
    assert len(want) > 0
    assert sorted(got[key]) == sorted(want[key])
    merged = got.merge(want, on=key, suffixes=("", "_nsys"))
    for column in (total, count, "Min", "Max"):
        assert merged[column].tolist() == merged[f"{column}_nsys"].tolist(), column
    for column in ["Avg", "StdDev", *(["Time"] if "Time" in want else [])]:
        _close(merged[column], merged[f"{column}_nsys"])
    for column in ("Min File", "Max File"):
        mine = [", ".join(map(_stem, f.split(", "))) for f in merged[column]]
        assert mine == merged[f"{column}_nsys"].tolist()
    # Totals sort both tables; ties are broken by name in ours.
    assert got[total].is_monotonic_decreasing


# -- every new recipe: identical output in every mode ---------------------------------------------

MODE_RECIPES = [
    (name, RecipeOptions()) for name in [*sorted(_STATS), "cuda_api_sync", "cuda_memcpy_sync"]
]


@requires_shared
def test_serial_processes_and_dask_give_identical_files(
    staged: Path, cluster, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    for path in REPORTS:
        shutil.copy(path, folder / path.name)
    for name, options in MODE_RECIPES:
        assert_same_output_in_every_mode(
            name, [folder], options, tmp_path, cluster.scheduler_address
        )


# -- expert rules as recipes ---------------------------------------------------------------------

NTHU_GPU = REPORTS[0].parent / "NTHU-SC__ISC25-ICON-C__gpu.sqlite"


def _comparable(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows as plain Python values (NULL: None), the index dropped."""
    frame = frame.reset_index(drop=True).astype(object)
    return frame.where(frame.notna(), None)


@requires_shared
@pytest.mark.parametrize(
    ("recipe", "extra"),
    [
        ("cuda_api_sync", []),
        ("cuda_memcpy_sync", []),
        ("cuda_memcpy_async", [NTHU_GPU]),
        ("cuda_memset_sync", [NTHU_GPU]),
        ("nvtx_gpu_proj_trace", []),
    ],
)
def test_table_recipe_equals_nsys_recipe(recipe: str, extra: list[Path], tmp_path: Path) -> None:
    reports = [*REPORTS, *extra]
    if not all(p.is_file() for p in reports):
        pytest.skip("needs the real reports in ../shared")
    theirs = nsys_recipe(recipe, stage_reports(reports, tmp_path / "in"), tmp_path / "nsys")
    table = "trace" if recipe == "nvtx_gpu_proj_trace" else "analysis"
    if not (theirs / f"{table}.parquet").exists():
        # No report has a finding (cuda_memset_sync: no report uses memset synchronously):
        # nsys writes no table; we stop with one line that names why.
        with pytest.raises(AnalysisError, match="no report gave data"):
            run_recipe(recipe, reports, RecipeOptions(use_cache=False))
        return
    want = pd.read_parquet(theirs / f"{table}.parquet")
    got = run_recipe(recipe, reports, RecipeOptions(use_cache=False)).output.tables[table]
    got = got.assign(File=got["File"].map(_stem))
    assert len(want) > 0
    assert list(got.columns) == list(want.columns)
    pd.testing.assert_frame_equal(_comparable(got), _comparable(want))
