"""ReportSet's analysis methods (the notebook facade): each answers as its command does.

On the demo ranks our own builder writes (no ../shared needed): ``stats`` with the CLI's
filters, ``analyze``, ``diff``, ``collectives`` and ``recipe`` give the tables that
``main.py stats|analyze|diff|collectives -f csv`` print and ``main.py recipe`` writes, and
the filters keep what overlaps their window, counted from the events themselves.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from strata.analysis import open_reports
from strata.analysis.errors import AnalysisError
from strata.app.cli import main
from strata.resources.demo import build_demo_reports


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return build_demo_reports(tmp_path_factory.mktemp("demo"), ranks=2, steps=3)


@pytest.fixture(scope="module")
def rs(paths: list[Path]):
    return open_reports(paths, use_cache=False)


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    assert main(["-q", *argv]) == 0
    return capsys.readouterr().out


def _sections(text: str) -> list[pd.DataFrame]:
    """The CSV tables of a command's output: blocks after each "Processing ..." line."""
    blocks = [b for b in text.split("\n\n") if b.strip()]
    frames = []
    for block in blocks:
        lines = [line for line in block.splitlines() if not line.startswith("Processing [")]
        if lines:
            frames.append(pd.read_csv(io.StringIO("\n".join(lines))))
    return frames


# -- stats: the CLI's filters -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "kwargs", "flags"),
    [
        ("cuda_gpu_kern_sum:base", {}, []),
        ("nvtx_sum", {"filter_nvtx": "train_step/1"}, ["--filter-nvtx", "train_step/1"]),
        ("cuda_gpu_kern_sum", {"filter_time": "100ms/300ms"}, ["--filter-time", "100ms/300ms"]),
        ("cuda_api_sum:start=0:end=200000000", {}, []),
    ],
)
def test_stats_with_filters_equals_the_cli(spec, kwargs, flags, paths, rs, capsys) -> None:
    out = _cli(capsys, "stats", "--no-cache", "-f", "csv", "-r", spec, *flags, str(paths[0]))
    want = _sections(out)[0]
    got = open_reports(paths[0], use_cache=False).stats(spec, **kwargs)
    assert len(got) > 0
    pd.testing.assert_frame_equal(got, want, check_dtype=False)


def test_the_time_filter_keeps_the_kernels_overlapping_it(rs) -> None:
    kernels = rs.events("kernels")
    kernels = kernels[kernels["report"] == rs.labels[0]]
    start, end = 100_000_000, 300_000_000
    overlapping = (
        ((kernels["start"] >= start) & (kernels["start"] < end))
        | ((kernels["end"] >= start) & (kernels["end"] < end))
        | ((kernels["start"] < start) & (kernels["end"] >= end))
    )
    frame = rs.stats("cuda_gpu_kern_sum", filter_time="100ms/300ms")
    mine = frame[frame["report"] == rs.labels[0]]
    assert 0 < int(overlapping.sum()) < len(kernels)
    assert mine["Instances"].sum() == int(overlapping.sum())


def test_the_nvtx_filter_wins_over_the_time_filter(rs) -> None:
    by_range = rs.stats("nvtx_sum", filter_nvtx="train_step")
    both = rs.stats("nvtx_sum", filter_time="0/1", filter_nvtx="train_step")
    pd.testing.assert_frame_equal(both, by_range)
    with pytest.raises(AnalysisError, match="--filter-nvtx"):
        rs.stats("nvtx_sum", filter_nvtx=" ")


# -- analyze, diff, collectives -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "options", "spec"),
    [
        ("gpu_gaps", {"gap": 0}, "gpu_gaps:gap=0:rows=-1"),
        ("gpu_time_util", {"threshold": 90, "rows": 3}, "gpu_time_util:threshold=90:rows=3"),
        ("cuda_api_sync", {}, "cuda_api_sync:rows=-1"),
    ],
)
def test_analyze_equals_the_cli(rule, options, spec, paths, capsys) -> None:
    out = _cli(capsys, "analyze", "--no-cache", "-f", "csv", "-r", spec, str(paths[0]))
    want = _sections(out)
    got = open_reports(paths[0], use_cache=False).analyze(rule, **options)
    if not want:  # nsys prints no table where the rule finds nothing
        assert got.empty
        return
    pd.testing.assert_frame_equal(got, want[0], check_dtype=False)


def test_analyze_of_several_reports_names_them(rs) -> None:
    frame = rs.analyze("gpu_gaps", gap=0, filter_time="/400ms")
    assert frame.columns[0] == "report"
    assert set(frame["report"]) <= set(rs.labels)
    assert (frame["Start (ns)"] < 400_000_000).all()


def test_diff_equals_the_cli(paths, rs, capsys) -> None:
    out = _cli(capsys, "diff", "--no-cache", "-f", "csv", str(paths[0]), str(paths[1]))
    want = pd.read_csv(io.StringIO(out))
    want.columns = [c.removesuffix(" (ns)") for c in want.columns]  # native ns in the frame
    got = rs.diff(0, 1)
    assert len(got) > 0
    assert list(got.columns) == list(want.columns)
    for column in ("Kind", "Name", "Status"):
        assert got[column].tolist() == want[column].tolist(), column
    for column in ("Total Delta", "Instances Delta", "Med Delta Low", "Med Delta High"):
        a, e = got[column].to_numpy(np.float64), want[column].to_numpy(np.float64)
        assert np.allclose(a, e, rtol=1e-9, equal_nan=True), column
    by_label = rs.diff(before=rs.labels[0], after=[rs.labels[1]], kinds=["kernels"])
    assert set(by_label["Kind"]) == {"kernels"}
    with pytest.raises(AnalysisError, match="no report labelled"):
        rs.diff("nope", 1)


def test_collectives_equal_the_cli(paths, rs, capsys) -> None:
    out = _cli(capsys, "collectives", "--no-cache", "-f", "csv", *map(str, paths))
    instances, summary, waits = _sections(out)
    got = rs.collectives()
    assert len(got) > 0
    for column in instances.columns:
        a, e = got[column].astype(str).tolist(), instances[column].astype(str).tolist()
        assert a == e, column
    assert rs.collectives("summary")["count"].tolist() == summary["count"].tolist()
    assert rs.collectives("rank_waits")["wait_ns"].tolist() == waits["wait_ns"].tolist()
    with pytest.raises(AnalysisError, match="unknown collectives table"):
        rs.collectives("nope")


# -- recipes ----------------------------------------------------------------------------------


def test_recipe_equals_the_cli_output(paths, rs, tmp_path, capsys) -> None:
    out = tmp_path / "out"
    argv = ["recipe", "cuda_gpu_kern_sum", "--input", *map(str, paths), "--output", str(out)]
    _cli(capsys, *argv, "--mode", "none", "--base")
    got = rs.recipe("cuda_gpu_kern_sum", base=True)
    pd.testing.assert_frame_equal(got, pd.read_parquet(out / "all_stats.parquet"))
    tables = rs.recipe_tables("cuda_gpu_kern_sum", base=True)
    assert set(tables) == {p.stem for p in out.glob("*.parquet") if not p.stem.startswith("plot_")}
    ranks = rs.recipe("cuda_gpu_kern_sum", "rank_stats", base=True)
    written = pd.read_parquet(out / "rank_stats.parquet")
    pd.testing.assert_frame_equal(ranks, written, check_dtype=False)


def test_recipe_options_and_tables_are_checked(rs) -> None:
    with pytest.raises(AnalysisError, match="unknown recipe option 'colour'"):
        rs.recipe("nvtx_sum", colour="red")
    with pytest.raises(AnalysisError, match="has no table 'nope'"):
        rs.recipe("nvtx_sum", "nope")
    with pytest.raises(AnalysisError, match="does not take --rows"):
        rs.recipe("nvtx_sum", rows=3)
    pace = rs.recipe("nvtx_pace", kernel_name="train_step", mode="concurrent", workers=2)
    assert list(pace.columns) == ["Iteration", *rs.labels]
