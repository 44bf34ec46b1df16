"""One natural order of reports (s1, s2, s4, s8, s16): folders, stats DIR, ReportSet, recipes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from strata.analysis.discover import find_reports, natural_key
from strata.analysis.reportset import open_reports
from strata.app.cli import main
from tests.cli.conftest import plant

NATURAL = ["s1.sqlite", "s2.sqlite", "s4.sqlite", "s8.sqlite", "s16.sqlite"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """A folder of five reports whose string order (s1, s16, s2, s4, s8) is not natural."""
    folder = tmp_path_factory.mktemp("runs")
    for name in reversed(NATURAL):
        plant(folder / name)
    assert sorted(NATURAL) != NATURAL
    return folder


def test_the_key_orders_numbers_as_numbers() -> None:
    names = ["rank10", "rank2", "rank1", "p16", "p1", "p2", "s01", "s1"]
    assert sorted(names, key=natural_key) == [
        "p1", "p2", "p16", "rank1", "rank2", "rank10", "s01", "s1",
    ]  # fmt: skip


def test_a_folder_lists_its_reports_in_natural_order(runs) -> None:
    assert [p.name for p in find_reports([runs])] == NATURAL
    assert open_reports(runs).labels == NATURAL


def test_reports_named_one_by_one_keep_the_order_given(runs) -> None:
    given = [runs / "s16.sqlite", runs / "s2.sqlite"]
    assert find_reports(given) == given


def test_stats_of_a_folder_runs_in_natural_order(runs, capsys) -> None:
    assert main(["stats", str(runs), "-r", "cuda_gpu_kern_sum", "-f", "csv"]) == 0
    seen = re.findall(r"Processing \[(s\d+\.sqlite)\]", capsys.readouterr().out)
    assert seen == NATURAL


def test_info_of_a_folder_lists_in_natural_order(runs, capsys) -> None:
    assert main(["info", str(runs)]) == 0
    heads = [line for line in capsys.readouterr().out.splitlines() if line in NATURAL]
    assert heads == NATURAL


def test_a_recipe_takes_the_first_reports_in_natural_order(runs, tmp_path, capsys) -> None:
    out = tmp_path / "out"
    argv = ["recipe", "nvtx_sum", "--mode", "serial", "--input", f"{runs}:3", "--output", str(out)]
    assert main(argv) == 0
    assert json.loads((out / "recipe.json").read_text())["Files"] == NATURAL[:3]
