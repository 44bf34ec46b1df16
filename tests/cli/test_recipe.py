"""``main.py recipe``: output folder, console summary, progress bar, skipped reports, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from strata.app.cli import main
from tests.analysis.test_recipes_data import K, write_report
from tests.conftest import ROOT
from tests.helpers import run_cli


@pytest.fixture
def ranks(tmp_path: Path) -> Path:
    """Three planted ranks (kernel k lasts 100, 200, 300 ns) and a truncated fourth file."""
    folder = tmp_path / "ranks"
    folder.mkdir()
    for i in range(3):
        write_report(
            folder / f"rank{i}.sqlite",
            kernels=[K("k", 10_000, 10_100 + 100 * i), K("j", 20_000, 20_050)],
            ranges=[("step", 9_000, 30_000)],
        )
    (folder / "rank3.sqlite").write_bytes((folder / "rank0.sqlite").read_bytes()[:4096])
    return folder


def test_recipe_writes_tables_plots_summary_and_names_the_skipped_file(
    ranks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = ["recipe", "cuda_gpu_kern_sum", "--input", str(ranks), "--output", str(out)]
    assert main([*argv, "--mode", "serial"]) == 1  # done, but a report was skipped
    captured = capsys.readouterr()
    assert "cuda_gpu_kern_sum: 2 names over 3 reports" in captured.out
    assert f"output in {out}" in captured.out
    assert "\r" not in captured.err  # not a terminal: no progress bar
    assert f"strata: {ranks / 'rank3.sqlite'}: truncated" in captured.err
    all_stats = pd.read_parquet(out / "all_stats.parquet").set_index("Name")
    assert all_stats.loc["k", "Total Time"] == 100 + 200 + 300
    assert all_stats.loc["k", "Max File"] == "rank2.sqlite"
    assert pd.read_csv(out / "by_file.csv").set_index("Name").loc["k", "Slowest"] == "rank2.sqlite"
    manifest = json.loads((out / "recipe.json").read_text())
    assert manifest["RecipeName"] == "cuda_gpu_kern_sum"
    assert manifest["Mode"] == "serial"
    assert [f["File"] for f in manifest["Failures"]] == ["rank3.sqlite"]
    assert (out / "heatmap.png").stat().st_size > 1000
    assert "skipped rank3.sqlite: truncated" in (out / "summary.txt").read_text()
    # An existing output folder is kept unless --force-overwrite.
    assert main([*argv, "--mode", "serial", "--quiet"]) == 2
    assert "--force-overwrite" in capsys.readouterr().err
    assert main([*argv, "--mode", "processes", "--workers", "2", "--force-overwrite"]) == 1
    assert json.loads((out / "recipe.json").read_text())["Mode"] == "processes"


def test_recipe_diff_of_two_outputs(
    ranks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    base = ["recipe", "nvtx_sum", "--mode", "serial", "--quiet", "--input"]
    assert main([*base, str(ranks / "rank0.sqlite"), "--output", str(a)]) == 0
    assert main([*base, str(ranks / "rank2.sqlite"), "--output", str(b)]) == 0
    out = tmp_path / "d"
    assert main(["recipe", "diff", "--input", str(a), str(b), "--output", str(out)]) == 0
    assert "nvtx_sum (tolerance 1%): 0 slower, 0 faster" in capsys.readouterr().out
    assert pd.read_parquet(out / "nvtx_sum.parquet")["Status"].tolist() == ["too few"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["cuda_gpu_kern_pace"], "--name"),
        (["gpu_time_util", "--chunks", "0"], "--chunks"),
        (["no_such_recipe"], "invalid choice"),
        (["nvtx_sum", "--mode", "threads"], "invalid choice"),
    ],
)
def test_bad_recipe_arguments_exit_2(
    args: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name, *rest = args
    assert main(["recipe", name, "--input", str(tmp_path), "--quiet", *rest]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert needle in err[0]


def test_every_input_bad_exits_2_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not a report\n")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "recipe", "nvtx_sum", "--input", str(bad)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("strata: no report gave data")
    assert "bad.sqlite" in last
    assert "Traceback" not in proc.stderr
    assert not list(tmp_path.glob("nvtx_sum-*"))


def test_dask_mode_from_the_cli_matches_serial_and_keeps_dask_quiet(
    ranks: Path, tmp_path: Path
) -> None:
    """The CLI's own case: a fresh single-threaded driver, workers forked, Dask's INFO silent."""
    pytest.importorskip("distributed", reason="needs dask.distributed")
    outs = {}
    for mode in ("serial", "dask-futures"):  # nsys's name of the Dask mode
        outs[mode] = tmp_path / mode
        proc = run_cli(
            "recipe", "cuda_gpu_kern_sum", "--input", str(ranks), "--output", str(outs[mode]),
            "--mode", mode, "--workers", "2", "--quiet",
        )  # fmt: skip
        assert proc.returncode == 1, proc.stderr  # done, one report skipped
        # Only the skipped file: no "INFO:distributed.scheduler:..." lines.
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, lines
        assert lines[0].startswith(f"strata: {ranks / 'rank3.sqlite'}: ")
    pd.testing.assert_frame_equal(
        pd.read_parquet(outs["dask-futures"] / "all_stats.parquet"),
        pd.read_parquet(outs["serial"] / "all_stats.parquet"),
    )


@pytest.mark.parametrize("recipe", ["cuda_gpu_kern_sum", "nvtx_sum", "cuda_gpu_kern_hist"])
def test_file_names_that_are_not_utf8_reach_every_output_escaped(tmp_path, recipe) -> None:
    import os

    folder = tmp_path / "in"
    folder.mkdir()
    raw = os.fsencode(folder) + b"/r\xff\xfe.sqlite"
    write_report(Path(os.fsdecode(raw)), [K("k", 0, 1_000, 2_000), K("k", 0, 3_000, 5_000)],
                 ranges=[("step", 0, 6_000)])  # fmt: skip
    (Path(os.fsdecode(os.fsencode(folder) + b"/bad\xfe.sqlite"))).write_bytes(b"not a report")
    out = tmp_path / "out"
    proc = run_cli("recipe", recipe, "--input", str(folder), "--output", str(out))
    assert "Traceback" not in proc.stderr
    assert proc.returncode in (0, 1), proc.stderr  # 1: one input failed to load
    assert "bad\\xfe.sqlite" in proc.stderr
    for path in out.iterdir():
        text = path.read_bytes()
        if path.suffix == ".parquet":
            for column in pd.read_parquet(path).select_dtypes(exclude="number"):
                assert all("\udcff" not in str(v) for v in pd.read_parquet(path)[column])
            continue
        if path.suffix in (".csv", ".json", ".txt"):
            text.decode("utf-8")  # every text output is valid UTF-8
    manifest = json.loads((out / "recipe.json").read_text(encoding="utf-8"))
    assert manifest["Files"] == ["r\\xff\\xfe.sqlite"]
    files = pd.read_parquet(out / "files.parquet")
    assert files["File"].tolist() == ["r\\xff\\xfe.sqlite"]


# -- nsys's spellings ------------------------------------------------------------------------------


def test_nsys_mode_names_run_as_strata_modes(
    ranks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = {}
    for mode, own in (("none", "serial"), ("concurrent", "processes")):
        out = tmp_path / mode
        argv = ["recipe", "cuda_gpu_kern_sum", "--input", str(ranks), "--output", str(out)]
        assert main([*argv, "--mode", mode, "--workers", "2", "--quiet"]) == 1
        assert json.loads((out / "recipe.json").read_text())["Mode"] == own
        done[mode] = pd.read_parquet(out / "all_stats.parquet")
    pd.testing.assert_frame_equal(done["none"], done["concurrent"])
    capsys.readouterr()


def test_nsys_concurrent_environment_sets_the_workers(
    ranks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # nsys passes NSYS_CONCURRENT_* to its ProcessPoolExecutor (max_workers); --workers wins.
    monkeypatch.setenv("NSYS_CONCURRENT_MAX_WORKERS", "2")
    base = ["recipe", "nvtx_sum", "--input", str(ranks), "--quiet", "--mode", "concurrent"]
    assert main([*base, "--output", str(tmp_path / "env")]) == 1
    assert json.loads((tmp_path / "env" / "recipe.json").read_text())["Workers"] == 2
    assert main([*base, "--output", str(tmp_path / "opt"), "--workers", "3"]) == 1
    assert json.loads((tmp_path / "opt" / "recipe.json").read_text())["Workers"] == 3
    monkeypatch.setenv("NSYS_CONCURRENT_MAX_WORKERS", "zero")
    assert main([*base, "--output", str(tmp_path / "bad")]) == 2


def test_nsys_dask_environment_names_the_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from strata.app.cli.recipe import _mode_settings

    def settings(**given):
        args = {"mode": "dask-futures", "workers": None, "scheduler": None}
        return _mode_settings(argparse.Namespace(**{**args, "scheduler_file": None, **given}))

    monkeypatch.setenv("NSYS_DASK_ADDRESS", "tcp://head:8786")
    monkeypatch.setenv("NSYS_DASK_N_WORKERS", "3")
    monkeypatch.setenv("NSYS_CONCURRENT_MAX_WORKERS", "5")  # another mode's: not read
    got = settings()
    assert (got["mode"], got["scheduler"], got["workers"]) == ("dask", "tcp://head:8786", 3)
    # An option wins, and a scheduler file given leaves the address out.
    assert settings(scheduler_file="s.json")["scheduler"] is None
    assert settings(workers=1)["workers"] == 1
    monkeypatch.delenv("NSYS_DASK_ADDRESS")
    monkeypatch.setenv("NSYS_DASK_SCHEDULER_FILE", "/tmp/sched.json")
    assert settings()["scheduler_file"] == "/tmp/sched.json"
    assert settings(mode="none")["workers"] is None


def test_output_name_substitutions(
    ranks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    import socket

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STRATA_TEST_USER", "ada")
    monkeypatch.delenv("STRATA_TEST_UNSET", raising=False)
    base = ["recipe", "nvtx_sum", "--input", str(ranks / "rank0.sqlite"), "--mode", "none"]
    assert main([*base, "--output", "out_%q{STRATA_TEST_USER}_%h"]) == 0
    assert (tmp_path / f"out_ada_{socket.gethostname()}" / "recipe.json").is_file()
    capsys.readouterr()
    for _ in range(2):  # %n: the first free number
        assert main([*base, "--output", "run_%n_%q{STRATA_TEST_UNSET}", "--quiet"]) == 0
    assert (tmp_path / "run_1_%q{STRATA_TEST_UNSET}").is_dir()
    assert (tmp_path / "run_2_%q{STRATA_TEST_UNSET}").is_dir()
    assert main([*base, "--output", "x_%q{STRATA_TEST_UNSET}"]) == 0
    err = capsys.readouterr().err
    assert "WARNING: Environment variable 'STRATA_TEST_UNSET' is not set." in err
    assert main([*base, "--output", "100%"]) == 2
    assert "lone '%'" in capsys.readouterr().err
    assert not (tmp_path / "100%").exists()


def test_nsys_recipe_options_are_taken_or_refused_in_one_line(
    ranks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--input", str(ranks / "rank0.sqlite"), "--mode", "none", "--quiet"]
    out = tmp_path / "kern"
    argv = ["recipe", "cuda_gpu_kern_sum", *base, "--csv", "--base", "--start", "0"]
    assert main([*argv, "--end", "15000", "--output", str(out)]) == 0
    assert (out / "all_stats.csv").is_file()
    assert (out / "stats.ipynb").is_file()
    capsys.readouterr()
    for args, option in (
        (["nvtx_sum", "--rows", "5"], "--rows"),
        (["nvtx_sum", "--nvtx", "step"], "--nvtx"),
        (["cuda_api_sum", "--mangled"], "--mangled"),
    ):
        assert main(["recipe", args[0], *base, *args[1:], "--output", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1
        assert f"does not take {option}" in err[0]
    assert not (tmp_path / "x").exists()
