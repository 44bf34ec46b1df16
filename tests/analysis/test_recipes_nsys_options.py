"""nsys's recipe options as nsys 2023.4 takes them: ``--mode`` names, ``--output``'s ``%``
substitutions, ``--base``/``--mangled``, ``--start``/``--end``, ``--nvtx``, ``--rows`` and
``--csv``, each against nsys's own recipe code run offline (:mod:`tests.nsys_recipe`) where
it runs, and by their definition where it does not.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pandas as pd
import pytest

from strata.analysis.errors import AnalysisError
from strata.analysis.recipes import RecipeOptions, mode_name, run_recipe, write_output
from strata.analysis.recipes.output_name import expand_output_name
from strata.analysis.stats import run_report
from tests.conftest import REAL_DIR, requires_shared
from tests.nsys_recipe import nsys_output_names, nsys_recipe, stage_reports

#: Kernels whose base, mangled and demangled names differ (cuDNN templates, a C++ kernel),
#: and a report of plain C kernels with NVTX ranges (extra-p).
KERNEL_REPORTS = [
    REAL_DIR / "MohanadOdema__DLProf__nsys_profile.sqlite",
    REAL_DIR / "0x822a5b87__test-cuda__report1.sqlite",
    REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite",
]
#: Two extra-p runs (synchronising calls, GPU gaps, NVTX push/pop ranges in a domain) and an
#: ayush-os run (a synchronous memcpy, no such NVTX range: the filter SKIPs it).
RULE_REPORTS = [
    REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite",
    REAL_DIR / "extra-p__extrap__concurrent.s2__profile2.sqlite",
    REAL_DIR / "ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite",
]
#: An NVTX push/pop range of the extra-p runs, as nsys's --nvtx names it (text@domain).
RANGE = "main->test_copies@de.tu-darmstadt.parallel.extra_prof"


def _staged(reports: list[Path], folder: Path) -> Path:
    if not all(p.is_file() for p in reports):
        pytest.skip("needs the real reports in ../shared")
    return stage_reports(reports, folder)


# Staged for each test: where a report is SKIPPED, nsys's recipe exports its (empty)
# .nsys-rep again, which fails and deletes the SQLite copy beside it.
@pytest.fixture
def kernel_input(tmp_path: Path) -> Path:
    return _staged(KERNEL_REPORTS, tmp_path / "in")


@pytest.fixture
def rule_input(tmp_path: Path) -> Path:
    return _staged(RULE_REPORTS, tmp_path / "in")


def _ours(name: str, reports: list[Path], **options) -> dict[str, pd.DataFrame]:
    tables = run_recipe(name, reports, RecipeOptions(use_cache=False, **options)).output.tables
    for table in tables.values():
        if "File" in table:
            table["File"] = table["File"].map(lambda f: Path(f).stem)
    return tables


def _comparable(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows as plain Python values (NULL: None), the index dropped."""
    frame = frame.reset_index(drop=True).astype(object)
    return frame.where(frame.notna(), None)


# -- cuda_gpu_kern_sum: --base, --mangled, --start/--end ---------------------------------------


@requires_shared
@pytest.mark.parametrize(
    ("args", "options"),
    [
        (["--base"], {"base": True}),
        (["--mangled"], {"mangled": True}),
        (
            ["--start", "553335461", "--end", "580000000"],
            {"start_ns": 553335461, "end_ns": 580000000},
        ),
        (["--base", "--end", "557000000"], {"base": True, "end_ns": 557000000}),
        (["--base", "--mangled"], {"base": True, "mangled": True}),
    ],
)
def test_kernel_sum_options_equal_nsys_recipe(args, options, kernel_input, tmp_path) -> None:
    theirs = nsys_recipe(
        "cuda_gpu_kern_sum", kernel_input, tmp_path / "nsys", *args, "--mode", "none"
    )
    ours = _ours("cuda_gpu_kern_sum", KERNEL_REPORTS, **options)
    key = ["File", "Name"]
    want = pd.read_parquet(theirs / "rank_stats.parquet").reset_index().sort_values(key)
    got = ours["rank_stats"].sort_values(key)
    assert len(want) > 0
    assert got[key].to_numpy().tolist() == want[key].to_numpy().tolist()
    for column in ("Total Time", "Instances", "Min", "Max"):
        assert got[column].tolist() == want[column].tolist(), column
    # Across reports: the same names and their exact totals.
    want = pd.read_parquet(theirs / "all_stats.parquet").reset_index().sort_values("Name")
    got = ours["all_stats"].sort_values("Name")
    assert got["Name"].tolist() == want["Name"].tolist()
    assert got["Total Time"].tolist() == want["Total Time"].tolist()


@requires_shared
def test_the_names_each_option_gives_are_those_of_stats() -> None:
    # Not a tautology of the test above: the option must reach the names at all.
    report = KERNEL_REPORTS[0]
    for option, arg in (("base", "base"), ("mangled", "mangled")):
        got = _ours("cuda_gpu_kern_sum", [report], **{option: True})["all_stats"]
        from strata.analysis import open_report

        want = run_report(open_report(report), f"cuda_gpu_kern_sum:{arg}").frame
        assert sorted(got["Name"]) == sorted(want["Name"])
    plain = _ours("cuda_gpu_kern_sum", [report])["all_stats"]
    base = _ours("cuda_gpu_kern_sum", [report], base=True)["all_stats"]
    assert set(plain["Name"]) != set(base["Name"])


# -- the rule recipes: --nvtx, --rows, --start/--end -------------------------------------------


@requires_shared
@pytest.mark.parametrize(
    ("recipe", "args", "options"),
    [
        ("cuda_api_sync", ["--nvtx", RANGE, "--rows", "3"], {"nvtx": RANGE, "rows": 3}),
        ("gpu_gaps", ["--gap", "1", "--rows", "1"], {"gap_ms": 1, "rows": 1}),
        (
            "gpu_gaps",
            ["--gap", "1", "--start", "560000000"],
            {"gap_ms": 1, "start_ns": 560_000_000},
        ),
        (
            "gpu_time_util",
            ["--rows", "3", "--start", "342000000"],
            {"rows": 3, "start_ns": 342000000},
        ),
        ("nvtx_gpu_proj_trace", ["--nvtx", RANGE], {"nvtx": RANGE}),
        ("cuda_memcpy_sync", ["--end", "346000000"], {"end_ns": 346000000}),
    ],
)
def test_rule_recipe_options_equal_nsys_recipe(recipe, args, options, rule_input, tmp_path) -> None:
    theirs = nsys_recipe(recipe, rule_input, tmp_path / "nsys", *args, "--mode", "none")
    table = "trace" if recipe == "nvtx_gpu_proj_trace" else "analysis"
    want = pd.read_parquet(theirs / f"{table}.parquet")
    got = _ours(recipe, RULE_REPORTS, **options)[table]
    assert len(want) > 0
    assert list(got.columns) == list(want.columns)
    pd.testing.assert_frame_equal(_comparable(got), _comparable(want))


@requires_shared
def test_rows_and_nvtx_change_what_a_rule_recipe_keeps() -> None:
    every = _ours("cuda_api_sync", RULE_REPORTS[:1])["analysis"]
    three = _ours("cuda_api_sync", RULE_REPORTS[:1], rows=3)["analysis"]
    assert len(every) > 3
    assert three.to_numpy().tolist() == every.head(3).to_numpy().tolist()
    inside = _ours("cuda_api_sync", RULE_REPORTS[:1], nvtx=RANGE)["analysis"]
    assert 0 < len(inside) < len(every)
    # A report without the range gives no data, as nsys's recipe gets none from it.
    with pytest.raises(AnalysisError, match="no report gave data"):
        run_recipe("cuda_api_sync", RULE_REPORTS[2:], RecipeOptions(nvtx=RANGE))


# -- the summaries' --start/--end: the overlapping events, as stats start=/end= -----------------


@requires_shared
@pytest.mark.parametrize("recipe", ["nvtx_sum", "cuda_api_sum", "cuda_gpu_kern_hist"])
def test_a_time_window_keeps_what_overlaps_it(recipe) -> None:
    from strata.analysis import open_report

    report = RULE_REPORTS[0]
    start, end = 553_335_461, 580_000_000
    tables = _ours(recipe, [report], start_ns=start, end_ns=end)
    stats = "cuda_gpu_kern_sum" if recipe == "cuda_gpu_kern_hist" else recipe
    want = run_report(open_report(report), f"{stats}:start={start}:end={end}").frame
    whole = run_report(open_report(report), stats).frame
    count = "Num Calls" if recipe == "cuda_api_sum" else "Instances"
    assert 0 < want[count].sum() < whole[count].sum()
    if recipe == "cuda_gpu_kern_hist":
        assert tables["histogram"]["Count"].sum() == want[count].sum()
    else:
        assert tables["rank_stats"][count].sum() == want[count].sum()
        assert tables["all_stats"]["Total Time"].sum() == want["Total Time"].sum()


# -- --csv -----------------------------------------------------------------------------------


@requires_shared
def test_csv_files_nsys_writes_are_in_our_output(kernel_input, tmp_path) -> None:
    theirs = nsys_recipe("cuda_gpu_kern_sum", kernel_input, tmp_path / "nsys", "--csv")
    run = run_recipe("cuda_gpu_kern_sum", KERNEL_REPORTS, RecipeOptions(csv=True))
    write_output(run.output, tmp_path / "ours", run)
    csvs = {p.name for p in theirs.glob("*.csv")}
    assert csvs == {"all_stats.csv", "rank_stats.csv"}
    assert csvs <= {p.name for p in (tmp_path / "ours").iterdir()}
    want = pd.read_csv(theirs / "all_stats.csv").sort_values("Name")
    got = pd.read_csv(tmp_path / "ours" / "all_stats.csv").sort_values("Name")
    assert got["Name"].tolist() == want["Name"].tolist()
    assert got["Total Time"].tolist() == want["Total Time"].tolist()


# -- options a recipe does not take, as nsys refuses them ---------------------------------------


@pytest.mark.parametrize(
    ("recipe", "options", "option"),
    [
        ("nvtx_sum", {"rows": 5}, "--rows"),
        ("nvtx_sum", {"nvtx": "x"}, "--nvtx"),
        ("cuda_api_sum", {"base": True}, "--base"),
        ("nvtx_gpu_proj_trace", {"rows": 1}, "--rows"),
        ("diff", {"start_ns": 0}, "--start"),
    ],
)
def test_an_option_the_recipe_does_not_take_is_refused(recipe, options, option) -> None:
    with pytest.raises(AnalysisError, match=f"recipe {recipe} does not take {option}"):
        run_recipe(recipe, ["unused"], RecipeOptions(**options))


def test_an_empty_nvtx_range_is_refused() -> None:
    with pytest.raises(AnalysisError, match="--nvtx"):
        run_recipe("gpu_gaps", ["unused"], RecipeOptions(nvtx=" "))


# -- --mode: nsys's names ----------------------------------------------------------------------


def test_nsys_mode_names_are_strata_modes() -> None:
    # nsys's recipe.Mode: NONE runs in the process, CONCURRENT on a ProcessPoolExecutor,
    # DASK_FUTURES on a distributed Client.
    assert mode_name("none") == "serial"
    assert mode_name("concurrent") == "processes"
    assert mode_name("dask-futures") == "dask"
    for own in ("serial", "processes", "dask"):
        assert mode_name(own) == own
    with pytest.raises(AnalysisError, match="unknown mode 'threads'"):
        mode_name("threads")


# -- --output: nsys's substitutions --------------------------------------------------------------

_PATTERNS = [
    "out_%q{STRATA_TEST_USER}_%h",
    "a%%b",
    "%%q{STRATA_TEST_USER}",
    "x_%q{STRATA_TEST_UNSET}_%n",
    "taken_%n",
    "taken_%n_%n_%h",
    "a%zb",
    "a%q",
    "a%q{STRATA_TEST_USER",
    "plain",
    "%q{STRATA_TEST_USER}%q{STRATA_TEST_USER}",
    "100%%_%n",
]


def test_output_names_equal_nsys_process_output(tmp_path: Path) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    for taken in ("taken_1", "taken_2", "taken_1_1_" + socket.gethostname()):
        (cwd / taken).mkdir()
    env = {"STRATA_TEST_USER": "ada"}
    want, log = nsys_output_names(_PATTERNS, cwd, env)
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        got = [expand_output_name(p, environ=env) for p in _PATTERNS]
    finally:
        os.chdir(previous)
    assert [name for name, _ in got] == want
    # Every warning nsys logs, in its words.
    for _, warnings in got:
        for line in warnings:
            assert line in log


def test_output_name_rules_without_nsys(tmp_path: Path) -> None:
    env = {"USER": "ada"}
    name, warnings = expand_output_name("out_%q{USER}_%h_%p", env, lambda: "node7", 42)
    assert (name, warnings) == ("out_ada_node7_42", [])
    assert expand_output_name("x%q{NOPE}", env)[0] == "x%q{NOPE}"
    assert expand_output_name("x%q{NOPE}", env)[1] == ["Environment variable 'NOPE' is not set."]
    assert expand_output_name("50%%", env) == ("50%", [])
    (tmp_path / "run_1").mkdir()
    taken = (tmp_path / "run_1").exists
    got = expand_output_name(str(tmp_path / "run_%n"), env, exists=lambda p: Path(p).exists())
    assert taken()
    assert got[0] == str(tmp_path / "run_2")
    with pytest.raises(AnalysisError, match="lone '%'"):
        expand_output_name("out%", env)


def test_a_name_without_percent_signs_is_left_alone() -> None:
    for text in ("out", "a b/c", "q{x}", "é"):
        assert expand_output_name(text, {}) == (text, [])
    assert expand_output_name("%n", {}, exists=lambda p: False) == ("1", [])
