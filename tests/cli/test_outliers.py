"""``main.py outliers``: the demo's planted slow kernels and straggler rank come out on top."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from strata.analysis.stats import StatsResult
from strata.analysis.stats.text import format_table
from strata.app.cli.outliers import format_outliers
from strata.resources import demo
from tests.helpers import run_cli


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("demo")
    demo.build_demo_reports(folder)
    return folder


def _csv_tables(text: str) -> tuple[list[dict], list[dict]]:
    first, second = text.split("\n\n", 1)
    return list(csv.DictReader(io.StringIO(first))), list(csv.DictReader(io.StringIO(second)))


def test_csv_puts_planted_kernels_and_straggler_first(demo_dir: Path) -> None:
    truth = demo.demo_truth()
    n = len(truth.slow_instances)
    proc = run_cli("outliers", str(demo_dir), "--top", str(n), "-f", "csv", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    instances, reports = _csv_tables(proc.stdout)
    found = {(r["report"], int(r["start_ns"]), int(r["duration_ns"])) for r in instances}
    planted = {(f"rank{p.rank}.sqlite", p.start_ns, p.duration_ns) for p in truth.slow_instances}
    assert found == planted
    assert {r["name"] for r in instances} == {truth.slow_kernel_name}
    assert len(reports) == n
    assert {r["report"] for r in reports} == {f"rank{truth.straggler_rank}.sqlite"}


def test_column_output_lists_both_tables(demo_dir: Path) -> None:
    proc = run_cli("outliers", *sorted(map(str, demo_dir.glob("*.sqlite"))), "--top", "3")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(
        " ** Outlying instances (|robust z| > 3.5, x1.2 and 1,000 ns from the median; 3 of "
    )
    header = lines[2].split()
    assert header[:4] == ["robust_z", "duration_ns", "median_ns", "start_ns"]
    assert "vectorized_layer_norm_kernel" in lines[4]
    second = next(i for i, line in enumerate(lines) if line.startswith(" ** Reports"))
    assert "rank2.sqlite" in lines[second + 4]


def test_json_threshold_and_output_file(demo_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "outliers.json"
    proc = run_cli("outliers", str(demo_dir), "-f", "json", "--threshold", "1000", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data == {"instances": [], "reports": []}
    proc = run_cli("outliers", str(demo_dir), "-f", "json", "--threshold", "100", "--top", "50")
    data = json.loads(proc.stdout)
    assert len(data["instances"]) == len(demo.demo_truth().slow_instances)
    assert all(abs(row["robust_z"]) > 100 for row in data["instances"] + data["reports"])


def test_kinds_restrict_the_output(demo_dir: Path) -> None:
    proc = run_cli("outliers", str(demo_dir), "--kinds", "nvtx", "-f", "csv", "--top", "100")
    assert proc.returncode == 0, proc.stderr
    instances, reports = _csv_tables(proc.stdout)
    assert {r["kind"] for r in instances + reports} <= {"nvtx"}


@pytest.mark.parametrize(
    "args",
    [
        ("--kinds", "frames"),
        ("--top", "-1"),
        ("--threshold", "x"),
        ("-f", "xml"),
        ("--min-ratio", "0.5"),
        ("--min-delta", "fast"),
        ("--min-delta", "-2us"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(demo_dir: Path, args: tuple[str, ...]) -> None:
    proc = run_cli("outliers", str(demo_dir), *args)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("strata: ")


def test_missing_and_infinite_values_print_as_stats_prints_them() -> None:
    """One printer: a missing ratio is an empty cell (null in JSON), never "nan"."""
    reports = pd.DataFrame(
        {"robust_z": [math.inf, 2.25], "ratio": [math.nan, 1.5], "name": ["a", "b,c"]}
    )
    result = StatsResult(name="outliers", title="t", frame=reports)
    csv_text = format_outliers(reports.iloc[:0], reports, "csv")
    assert csv_text == "robust_z,ratio,name\n\n" + format_table(result, "csv") + "\n"
    assert csv_text.splitlines()[-2:] == ["inf,,a", '2.25,1.5,"b,c"']
    column = format_outliers(reports.iloc[:0], reports, "column").splitlines()
    assert "nan" not in "\n".join(column)
    assert column[2] == "(none)"
    assert column[-2].split() == ["inf", "a"]
    assert column[-1].split() == ["2.2", "1.5", "b,c"]  # on screen: robust z to 1 decimal
    data = json.loads(format_outliers(reports, reports.iloc[:0], "json"))
    assert data["instances"][0] == {"robust_z": "inf", "ratio": None, "name": "a"}
    assert data["reports"] == []


def test_min_ratio_and_min_delta_options(demo_dir: Path) -> None:
    truth = demo.demo_truth()
    n = len(truth.slow_instances)
    base = run_cli("outliers", str(demo_dir), "--top", "1000", "-f", "json", "--no-cache")
    assert base.returncode == 0, base.stderr
    found = json.loads(base.stdout)["instances"]
    assert len(found) >= n
    # A minimum difference above every planted slowdown leaves no instance.
    worst_ns = max(abs(r["duration_ns"] - r["median_ns"]) for r in found)
    strict = run_cli("outliers", str(demo_dir), "-f", "json", "--no-cache",
                     "--min-delta", f"{(worst_ns + 1000) / 1000:g}us")  # fmt: skip
    assert strict.returncode == 0, strict.stderr
    assert json.loads(strict.stdout)["instances"] == []
    # The column header says which minimum effect it used.
    shown = run_cli("outliers", str(demo_dir), "--min-ratio", "1.5", "--min-delta", "2us")
    assert "x1.5 and 2,000 ns from the median" in shown.stdout
