"""One bad report never ends a multi-report command; the exit status says what was skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import strata.app.gui
from strata.app.cli import main
from tests.cli.conftest import plant, snapshot
from tests.conftest import FIXTURES_DIR, requires_fixtures
from tests.helpers import mutate_sqlite, run_cli

SKIPPED = ("bad.sqlite", "trunc.sqlite")


def _skip_lines(err: str, folder: Path, names=SKIPPED) -> list[str]:
    """The ``strata: <path>: <reason>`` lines of ``err``; one per skipped report, in order."""
    lines = [line for line in err.splitlines() if line.startswith("strata: ")]
    assert "Traceback" not in err
    assert len(lines) == len(names), err
    for line, name in zip(lines, names, strict=True):
        assert line.startswith(f"strata: {folder / name}: "), line
    return lines


def test_info_prints_the_good_report_and_names_the_bad_one(tmp_path: Path, inputs: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "not a profiler trace"}')  # JSON, but no traceEvents
    proc = run_cli("info", str(bad), str(inputs / "r1.sqlite"))
    assert proc.returncode == 1
    assert proc.stdout.startswith("r1.sqlite\n")
    _skip_lines(proc.stderr, tmp_path, ["bad.json"])


def test_info_over_a_folder_and_a_missing_path(inputs: Path, capsys) -> None:
    missing = inputs / "gone.sqlite"
    assert main(["info", str(inputs), str(missing)]) == 1
    out, err = capsys.readouterr()
    assert out.count("  nsys version:") == 2
    _skip_lines(err, inputs, ["gone.sqlite", *SKIPPED])  # found missing before any is read


def test_info_with_nothing_good_exits_2_one_line_each(inputs: Path, capsys) -> None:
    assert main(["info", *(str(inputs / n) for n in SKIPPED)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    _skip_lines(err, inputs)


@pytest.mark.parametrize("fmt", ["column", "csv", "strata-json"])
def test_stats_over_a_folder_prints_the_good_reports(fmt: str, inputs: Path, capsys) -> None:
    before = snapshot(inputs)
    assert main(["stats", "-f", fmt, "-r", "cuda_gpu_kern_sum", str(inputs)]) == 1
    out, err = capsys.readouterr()
    _skip_lines(err, inputs)
    if fmt == "strata-json":
        assert [t["report"] for t in json.loads(out)] == ["r1.sqlite", "r2.sqlite"]
    else:
        assert "Processing [r1.sqlite]" in out
        assert "Processing [r2.sqlite]" in out
    assert snapshot(inputs) == before


def test_stats_to_a_file_with_bad_reports(inputs: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "stats.csv"
    argv = ["stats", "-f", "csv", "-r", "nvtx_sum", str(inputs), "-o", str(out)]
    assert main(argv) == 1
    assert "Processing [r2.sqlite]" in out.read_text()
    # Nothing good: exit 2, and no file.
    out.unlink()
    argv = ["stats", "-r", "nvtx_sum", *(str(inputs / n) for n in SKIPPED), "-o", str(out)]
    assert main(argv) == 2
    assert not out.exists()
    capsys.readouterr()


@requires_fixtures
def test_stats_goes_through_the_same_validation_as_info(tmp_path: Path, capsys) -> None:
    """A report that info refuses (a newer schema) is refused by stats, with the same reason."""
    from tests.cli.test_bad_input import _make_newer_schema

    path = _make_newer_schema(tmp_path)
    assert main(["info", "--no-cache", str(path)]) == 2
    info_err = capsys.readouterr().err
    assert main(["stats", "--no-cache", "-r", "nvtx_sum", str(path)]) == 2
    assert capsys.readouterr().err == info_err
    assert main(["stats", "--no-cache", "-r", "nvtx_sum", str(path), str(FIXTURES_DIR)]) == 1


def test_outliers_over_a_folder(inputs: Path, capsys) -> None:
    assert main(["outliers", "-f", "csv", str(inputs)]) == 1
    out, err = capsys.readouterr()
    _skip_lines(err, inputs)
    assert out.startswith("robust_z,")


def test_render_over_a_folder(inputs: Path, tmp_path: Path, capsys, qapp) -> None:
    out = tmp_path / "all.png"
    assert main(["render", str(inputs), "-o", str(out)]) == 1
    _skip_lines(capsys.readouterr().err, inputs)
    assert out.read_bytes()[:4] == b"\x89PNG"


def _check_recipe_output(out: Path, inputs: Path, missing: Path) -> None:
    manifest = json.loads((out / "recipe.json").read_text())
    failures = {f["Path"]: f["Reason"] for f in manifest["Failures"]}
    assert set(failures) == {str(missing), *(str(inputs / n) for n in SKIPPED)}
    assert failures[str(missing)] == "no such file or folder"
    summary = (out / "summary.txt").read_text()
    assert all(f"skipped {n}: " in summary for n in SKIPPED)
    stats = pd.read_parquet(out / "all_stats.parquet").set_index("Name")
    assert stats.loc["k", "Instances"] == 2  # r1 and r2


@pytest.mark.parametrize("mode", ["serial", "processes", "dask"])
def test_recipe_skips_bad_reports_in_every_mode(mode: str, inputs: Path, tmp_path: Path) -> None:
    if mode == "dask":
        pytest.importorskip("distributed", reason="needs dask.distributed")
    out, missing = tmp_path / "out", tmp_path / "missing"
    proc = run_cli(
        "recipe", "cuda_gpu_kern_sum", "-q", "--mode", mode, "--workers", "2",
        "--input", str(missing), str(inputs), "--output", str(out),
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines[0] == f"strata: {missing}: no such file or folder"
    _skip_lines("\n".join(lines[1:]), inputs)
    _check_recipe_output(out, inputs, missing)


def test_a_recipe_with_nothing_good_names_each_and_exits_2(inputs: Path, tmp_path: Path, capsys):
    out = tmp_path / "out"
    argv = ["recipe", "nvtx_sum", "-q", "--mode", "serial", "--output", str(out), "--input"]
    assert main([*argv, *(str(inputs / n) for n in SKIPPED)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    _skip_lines("\n".join(lines[:2]), inputs)
    assert lines[2].startswith("strata: no report gave data for recipe 'nvtx_sum'")
    assert not out.exists()


# -- -v and -q ----------------------------------------------------------------------------------


def test_verbose_before_a_sub_command_runs_it(inputs: Path) -> None:
    """It opened the GUI on the files 'info' and the report; the timeout bounds that case."""
    proc = run_cli("-v", "info", str(inputs / "r1.sqlite"), timeout_s=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("r1.sqlite\n")


@pytest.mark.parametrize(
    ("argv", "gui_argv"),
    [
        (["-v"], ["-v"]),
        (["-v", "x.sqlite"], ["-v", "x.sqlite"]),
        (["-q", "x.sqlite"], ["x.sqlite"]),
    ],
)
def test_verbosity_before_report_paths_opens_the_gui(argv, gui_argv, monkeypatch) -> None:
    seen = []
    monkeypatch.setattr(strata.app.gui, "run_gui", lambda args, **_options: seen.append(args) or 0)
    assert main(argv) == 0
    assert seen == [gui_argv]


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_silences_the_progress_bar(where: str, inputs: Path, tmp_path: Path, capsys) -> None:
    argv = ["recipe", "nvtx_sum", "--mode", "serial", "--input", str(inputs / "r1.sqlite")]
    argv += ["--output", str(tmp_path / "out")]
    argv = ["-q", *argv] if where == "before" else [*argv, "-q"]
    assert main(argv) == 0
    assert capsys.readouterr().err == ""


# -- one validation for every command -----------------------------------------------------------


@pytest.mark.parametrize(
    ("damage", "argv"),
    [
        # The NVTX table is damaged; these commands read only the kernels.
        ("UPDATE NVTX_EVENTS SET start = 'soon'", ["stats", "-r", "cuda_gpu_kern_sum"]),
        ("UPDATE NVTX_EVENTS SET start = 'soon'", ["recipe", "cuda_gpu_kern_sum"]),
        # The kernel table is damaged; these read only the NVTX ranges.
        ('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start - 5', ["stats", "-r", "nvtx_sum"]),
        ('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start - 5', ["recipe", "nvtx_sum"]),
    ],
)
def test_a_table_a_command_does_not_read_is_still_validated_as_info_does(
    damage: str, argv: list[str], tmp_path: Path, capsys
) -> None:
    """stats and recipe refuse what info refuses, with info's words, whatever they read."""
    report = plant(tmp_path / "r.sqlite")
    mutate_sqlite(report, damage)
    assert main(["info", "--no-cache", str(report)]) == 2
    want = capsys.readouterr().err.strip()
    assert want.startswith(f"strata: {report}: "), want
    if argv[0] == "recipe":
        argv = [*argv, "-q", "--mode", "serial", "--output", str(tmp_path / "out"), "--input"]
    assert main([*argv, str(report)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == want
