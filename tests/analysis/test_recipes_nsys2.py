"""The last nsys 2023.4 recipes (pace of NVTX ranges, the heatmaps, the MPI and NCCL
summaries), each against nsys's own recipe code run offline (:mod:`tests.nsys_recipe`).

These nsys recipes read Parquet exports. Their inputs here: the demo ranks our own builder
writes (NCCL domain ranges and kernels, ``train_step`` ranges), copies of them with planted
MPI tables, and the SQLite exports of two real ayush-os runs (GPU metrics), all staged as
Parquet by :func:`tests.nsys_recipe.stage_parquet`. Every recipe also gives identical files
serially, in a process pool and on Dask.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from strata.analysis.errors import AnalysisError
from strata.analysis.recipes import RecipeOptions, run_recipe
from strata.resources.demo import build_demo_reports
from tests.analysis.test_recipes import AYUSH
from tests.helpers import assert_same_output_in_every_mode
from tests.nsys_recipe import nsys_recipe, stage_parquet

_MPI_TABLES = {
    "MPI_P2P_EVENTS": ("MPI_Send", "MPI_Recv"),
    "MPI_START_WAIT_EVENTS": ("MPI_Wait",),
    "MPI_OTHER_EVENTS": ("MPI_Barrier",),
    "MPI_COLLECTIVES_EVENTS": ("MPI_Allreduce",),
}
_MPI_COLUMNS = ["start", "end", "globalTid", "textId"]


def _plant_mpi(source: Path, path: Path, seed: int) -> Path:
    """A copy of ``source`` with MPI calls planted: 20 per table, the first of 0 ns."""
    shutil.copy(source, path)
    con = sqlite3.connect(path)
    rng = np.random.default_rng(seed)
    next_id = con.execute("SELECT max(id) FROM StringIds").fetchone()[0] + 1
    for table, names in _MPI_TABLES.items():
        con.execute(
            f"CREATE TABLE {table} (start INTEGER NOT NULL, end INTEGER, globalTid INTEGER, "
            "textId INTEGER)"
        )
        ids = []
        for name in names:
            con.execute("INSERT INTO StringIds VALUES (?, ?)", (next_id, name))
            ids.append(next_id)
            next_id += 1
        for k in range(20):
            start = int(rng.integers(1_000_000, 1_000_000_000))
            duration = int(rng.integers(1, 500_000)) if k else 0
            con.execute(
                f"INSERT INTO {table} VALUES (?, ?, 1, ?)",
                (start, start + duration, int(rng.choice(ids))),
            )
    con.commit()
    con.close()
    return path


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    root = tmp_path_factory.mktemp("recipes2")
    demo = build_demo_reports(root / "demo", ranks=2, steps=4)
    (root / "mpi").mkdir()
    mpi = [_plant_mpi(p, root / "mpi" / f"mpi{i}.sqlite", i) for i, p in enumerate(demo)]
    sets = {"demo": demo, "mpi": mpi}
    if len(AYUSH) == 2:
        sets["ayush"] = AYUSH
    return sets


@pytest.fixture(scope="module")
def staged(inputs, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("staged")
    absent = dict.fromkeys(_MPI_TABLES, _MPI_COLUMNS)
    return {k: stage_parquet(v, root / k, absent) for k, v in inputs.items()}


def _need(inputs: dict, key: str) -> list[Path]:
    if key not in inputs:
        pytest.skip("needs the ayush-os reports in ../shared")
    return inputs[key]


def _ours(name: str, reports: list[Path], **options) -> dict[str, pd.DataFrame]:
    tables = run_recipe(name, reports, RecipeOptions(use_cache=False, **options)).output.tables
    for table in tables.values():
        if "File" in table:
            table["File"] = table["File"].map(lambda f: Path(f).stem)
    return tables


def _same(got: pd.Series, want: pd.Series, atol: float = 0.0) -> None:
    a, e = got.to_numpy(np.float64), want.to_numpy(np.float64)
    assert np.allclose(a, e, rtol=0, atol=atol, equal_nan=True), (got.name, a, e)


# -- pace ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("recipe", "key", "range_name"),
    [
        ("nvtx_pace", "demo", "train_step"),
        ("nvtx_pace", "ayush", "Profile_Loop"),
        ("nvtx_gpu_proj_pace", "demo", "train_step"),
        ("nvtx_gpu_proj_pace", "demo", "ncclAllReduce"),
        ("nvtx_gpu_proj_pace", "ayush", "Warmup"),
    ],
)
def test_nvtx_pace_equals_nsys_recipe(recipe, key, range_name, inputs, staged, tmp_path) -> None:
    reports = _need(inputs, key)
    theirs = nsys_recipe(recipe, staged[key], tmp_path / "nsys", "--name", range_name)
    ours = _ours(recipe, reports, kernel_name=range_name)
    for column in ("start", "end", "duration", "duration_accum", "delta", "delta_accum"):
        want = pd.read_parquet(theirs / f"pace_{column}.parquet")
        got = ours[f"pace_{column}"].drop(columns="Iteration")
        assert len(want) > 0
        assert got.to_numpy(np.float64).tolist() == want.to_numpy(np.float64).tolist(), column
    # nsys's stats: exact count, total, extremes and mean over all iterations.
    want = pd.read_parquet(theirs / "stats.parquet").iloc[0]
    got = ours["all_stats"].iloc[0]
    for column in ("Count", "Min", "Max", "Sum"):
        assert float(got[column]) == float(want[column]), column
    assert abs(float(got["Mean"]) - float(want["Mean"])) <= 0.1


def test_nvtx_pace_time_filter_keeps_what_overlaps(inputs) -> None:
    demo = inputs["demo"]
    every = _ours("nvtx_pace", demo, kernel_name="train_step")["pace_start"]
    first = int(every.iloc[1, 1])  # the second iteration of the first rank
    later = _ours("nvtx_pace", demo[:1], kernel_name="train_step", start_ns=first)["pace_start"]
    assert later.iloc[:, 1].tolist() == every.iloc[1:, 1].dropna().astype(int).tolist()


# -- heatmaps ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("recipe", "key", "args"),
    [
        ("cuda_gpu_time_util_map", "demo", []),
        ("cuda_gpu_time_util_map", "demo", ["--cumulative", "--bins", "7"]),
        ("cuda_gpu_time_util_map", "ayush", ["--bins", "50"]),
        ("nccl_gpu_time_util_map", "demo", []),
        ("gpu_metric_util_map", "ayush", ["--bins", "50"]),
    ],
)
def test_heatmap_equals_nsys_recipe(recipe, key, args, inputs, staged, tmp_path) -> None:
    reports = _need(inputs, key)
    theirs = nsys_recipe(recipe, staged[key], tmp_path / "nsys", *args)
    bins = int(args[args.index("--bins") + 1]) if "--bins" in args else 30
    ours = _ours(recipe, reports, bins=bins, cumulative="--cumulative" in args)["analysis"]
    want = pd.read_parquet(theirs / "analysis.parquet").reset_index(drop=True)
    assert len(want) > 0
    assert list(ours.columns) == list(want.columns)
    assert ours["File"].tolist() == want["File"].tolist()
    for column in want.columns.drop("File"):
        _same(ours[column], want[column].astype(np.float64))
    if recipe != "gpu_metric_util_map":
        assert np.nanmax(ours.iloc[:, 1].to_numpy(np.float64)) > 0


def test_nccl_cumulative_counts_nccl_and_compute_kernels(inputs) -> None:
    # nsys 2023.4 fails here (it indexes a filtered frame by position); the parts must add up.
    table = _ours("nccl_gpu_time_util_map", inputs["demo"], cumulative=True)["analysis"]
    parts = table["NCCL"].to_numpy(np.float64) + table["Compute"].to_numpy(np.float64)
    assert np.allclose(parts, table["All"].to_numpy(np.float64), atol=0.11, equal_nan=True)
    assert np.nanmax(table["NCCL"].to_numpy(np.float64)) > 0


# -- MPI and NCCL summaries ----------------------------------------------------------------------


def _mpi_rows(paths: list[Path]) -> pd.DataFrame:
    """Every planted MPI call with a positive duration, straight from SQLite."""
    frames = []
    for path in paths:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        union = " UNION ALL ".join(f"SELECT start, end, textId FROM {t}" for t in _MPI_TABLES)
        frames.append(
            pd.read_sql_query(
                f"SELECT s.value AS Text, e.end - e.start AS d FROM ({union}) AS e "
                "JOIN StringIds AS s ON s.id = e.textId WHERE e.end - e.start > 0",
                con,
            )
        )
        con.close()
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize(
    ("recipe", "key"),
    [("mpi_sum", "mpi"), ("nccl_sum", "demo"), ("nccl_gpu_proj_sum", "demo")],
)
def test_range_sum_equals_nsys_recipe(recipe, key, inputs, staged, tmp_path) -> None:
    theirs = nsys_recipe(recipe, staged[key], tmp_path / "nsys")
    ours = _ours(recipe, inputs[key])
    want = pd.read_parquet(theirs / "rank_stats.parquet").reset_index()
    got = ours["rank_stats"]
    assert len(want) > 0
    assert list(got.columns) == list(want.columns)
    assert (
        got[["Text", "File", "Rank"]].values.tolist()
        == want[["Text", "File", "Rank"]].values.tolist()
    )
    for column in ("Count", "Mean", "Std", "Min", "Q1", "Median", "Q3", "Max", "Sum"):
        _same(got[column], want[column], atol=0.05 + 1e-9)  # ours rounded to 0.1
    want = pd.read_parquet(theirs / "all_stats.parquet").reset_index()
    got = ours["all_stats"]
    assert got["Text"].tolist() == want["Text"].tolist()
    for column in ("Count", "Mean", "Min", "Max", "Sum"):
        _same(got[column], want[column], atol=0.05 + 1e-9)


def test_mpi_sum_all_stats_are_pandas_over_every_call(inputs) -> None:
    rows = _mpi_rows(inputs["mpi"])
    expected = rows.groupby("Text")["d"].describe()
    got = _ours("mpi_sum", inputs["mpi"])["all_stats"].set_index("Text")
    assert got.index.tolist() == expected.index.tolist()
    pairs = {"Count": "count", "Mean": "mean", "Std": "std", "Q1": "25%", "Median": "50%"}
    pairs.update({"Q3": "75%", "Min": "min", "Max": "max"})
    for ours, theirs in pairs.items():
        _same(got[ours], expected[theirs], atol=0.05 + 1e-6)
    _same(got["Sum"], rows.groupby("Text")["d"].sum())


@pytest.mark.parametrize(
    ("recipe", "key"),
    [("mpi_sum", "demo"), ("nccl_sum", "ayush"), ("nccl_gpu_time_util_map", "ayush")],
)
def test_reports_without_the_data_give_none_as_in_nsys(
    recipe, key, inputs, staged, tmp_path
) -> None:
    reports = _need(inputs, key)
    theirs = nsys_recipe(recipe, staged[key], tmp_path / "nsys")
    assert not any(theirs.glob("*.parquet")) if theirs.exists() else True
    with pytest.raises(AnalysisError, match="no report gave data"):
        run_recipe(recipe, reports, RecipeOptions(use_cache=False))


# -- every new recipe: identical output in every mode ---------------------------------------------

MODE_RECIPES = [
    ("nvtx_pace", "demo", RecipeOptions(kernel_name="train_step")),
    ("nvtx_gpu_proj_pace", "demo", RecipeOptions(kernel_name="ncclAllReduce")),
    ("cuda_gpu_time_util_map", "demo", RecipeOptions(bins=12)),
    ("nccl_gpu_time_util_map", "demo", RecipeOptions(cumulative=True)),
    ("gpu_metric_util_map", "ayush", RecipeOptions()),
    ("mpi_sum", "mpi", RecipeOptions()),
    ("nccl_sum", "demo", RecipeOptions()),
    ("nccl_gpu_proj_sum", "demo", RecipeOptions()),
]


def test_serial_processes_and_dask_give_identical_files(inputs, cluster, tmp_path) -> None:
    for name, key, options in MODE_RECIPES:
        if key not in inputs:
            continue
        assert_same_output_in_every_mode(
            name, inputs[key], options, tmp_path, cluster.scheduler_address
        )
