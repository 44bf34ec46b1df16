"""Nothing lost: no output onto, into or around an input; atomic writes; one line on failure."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import strata.analysis.outputs
import strata.analysis.recipes.output
from strata.analysis.cache import cache_root
from strata.app.cli import main
from tests.cli.conftest import one_line, snapshot
from tests.conftest import ROOT
from tests.helpers import run_cli

COMMANDS = ("stats", "outliers", "render", "recipe")


def _argv(command: str, inputs: list[Path], out: Path | str) -> list[str]:
    reports = [str(p) for p in inputs]
    if command == "stats":
        return ["stats", "-r", "cuda_gpu_kern_sum", *reports, "-o", str(out)]
    if command == "outliers":
        return ["outliers", *reports, "-o", str(out)]
    if command == "render":
        return ["render", *reports, "-o", str(out)]
    return [
        "recipe", "cuda_gpu_kern_sum", "-q", "--mode", "serial", "--input", *reports,
        "--output", str(out), "--force-overwrite",
    ]  # fmt: skip


def _overlaps(tmp_path: Path, folder: Path) -> dict[str, tuple[list[Path], Path]]:
    """Relation -> (inputs given, output path) for every way an output can hit an input."""
    report = folder / "r1.sqlite"
    (tmp_path / "link.sqlite").symlink_to(report)
    os.link(report, tmp_path / "hard.sqlite")
    (tmp_path / "dirlink").symlink_to(folder)
    return {
        "the same file": ([report], report),
        "a symlink to the input": ([report], tmp_path / "link.sqlite"),
        "the input by ..": ([report], folder / ".." / folder.name / "r1.sqlite"),
        "a hard link to the input": ([report], tmp_path / "hard.sqlite"),
        "inside an input folder": ([folder], folder / "out.csv"),
        "inside it through a symlink": ([folder], tmp_path / "dirlink" / "out"),
        "the input folder": ([folder], folder),
        "a folder holding the input": ([report], tmp_path),
        "the cache folder": ([report], cache_root()),
        "inside the cache folder": ([report], cache_root() / "out"),
    }


RELATIONS = [
    "the same file",
    "a symlink to the input",
    "the input by ..",
    "a hard link to the input",
    "inside an input folder",
    "inside it through a symlink",
    "the input folder",
    "a folder holding the input",
    "the cache folder",
    "inside the cache folder",
]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("relation", RELATIONS)
def test_an_output_overlapping_an_input_is_refused_before_anything(
    command: str, relation: str, inputs: Path, tmp_path: Path, capsys
) -> None:
    cache_root().mkdir(parents=True, exist_ok=True)
    given, out = _overlaps(tmp_path, inputs)[relation]
    before = snapshot(inputs)
    cache_before = sorted(os.listdir(cache_root()))
    assert main(_argv(command, given, out)) == 2
    line = one_line(capsys.readouterr().err)
    assert " the input " in line or " the cache folder " in line
    assert snapshot(inputs) == before
    assert sorted(os.listdir(cache_root())) == cache_before


def test_force_overwrite_never_deletes_an_input_folder(inputs: Path) -> None:
    """The issue's case, as a user runs it: the input folder named as the output."""
    # Even when the input folder looks like a recipe output.
    (inputs / "recipe.json").write_text(json.dumps({"StrataRecipeVersion": "1"}))
    before = snapshot(inputs)
    proc = run_cli(
        "recipe", "nvtx_sum", "--input", str(inputs), "--output", str(inputs),
        "--force-overwrite", "--mode", "serial",
    )  # fmt: skip
    assert proc.returncode == 2
    assert "is the input" in one_line(proc.stderr)
    assert snapshot(inputs) == before


def test_stats_onto_its_own_report_is_refused(inputs: Path) -> None:
    report = inputs / "r1.sqlite"
    before = snapshot(inputs)
    proc = run_cli("stats", "-r", "nvtx_sum", str(report), "-o", str(report))
    assert proc.returncode == 2
    assert "is the input" in one_line(proc.stderr)
    assert snapshot(inputs) == before


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda t: t / "missing" / "x.csv", "does not exist"),
        (lambda t: t, "is a folder"),
    ],
    ids=["missing folder", "a folder"],
)
def test_an_output_that_cannot_be_written_is_one_line(
    make, needle: str, inputs: Path, tmp_path: Path, capsys
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = make(out_dir)
    assert main(["stats", "-r", "nvtx_sum", str(inputs / "r1.sqlite"), "-o", str(out)]) == 2
    assert needle in one_line(capsys.readouterr().err)
    assert sorted(os.listdir(out_dir)) == []


def test_a_read_only_folder_is_refused_before_the_work(
    inputs: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tests may run as root, for whom every folder is writable: the check is faked.
    monkeypatch.setattr(strata.analysis.outputs.os, "access", lambda *_a, **_k: False)
    out = tmp_path / "x.csv"
    assert main(["stats", "-r", "nvtx_sum", str(inputs / "r1.sqlite"), "-o", str(out)]) == 2
    assert "cannot write into" in one_line(capsys.readouterr().err)
    assert not out.exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_dev_full_is_one_line(inputs: Path, capsys) -> None:
    assert main(["stats", "-r", "nvtx_sum", str(inputs / "r1.sqlite"), "-o", "/dev/full"]) == 2
    assert "No space left on device" in one_line(capsys.readouterr().err)


class _FailingFile:
    """A file whose writes fail with ``error`` (disk full, quota, Ctrl-C)."""

    def __init__(self, real, error: BaseException) -> None:
        self._real = real
        self._error = error

    def write(self, _data) -> int:
        raise self._error

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._real.close()

    def __getattr__(self, name: str):
        return getattr(self._real, name)


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), 2),
        (OSError(errno.EDQUOT, os.strerror(errno.EDQUOT)), 2),
        (PermissionError(errno.EACCES, os.strerror(errno.EACCES)), 2),
        (KeyboardInterrupt(), 130),
    ],
    ids=["disk full", "quota", "denied", "ctrl-c"],
)
def test_a_failed_write_keeps_the_old_file_and_leaves_no_part(
    error: BaseException, status: int, inputs: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "stats.csv"
    out.write_text("the old, good file\n")
    real_fdopen = os.fdopen
    monkeypatch.setattr(
        strata.analysis.outputs.os,
        "fdopen",
        lambda *a, **k: _FailingFile(real_fdopen(*a, **k), error),
    )
    argv = ["stats", "-f", "csv", "-r", "nvtx_sum", str(inputs / "r1.sqlite"), "-o", str(out)]
    assert main(argv) == status
    one_line(capsys.readouterr().err)
    assert out.read_text() == "the old, good file\n"
    assert os.listdir(out_dir) == ["stats.csv"]


def test_a_new_file_follows_the_umask_and_an_old_one_keeps_its_mode(
    inputs: Path, tmp_path: Path
) -> None:
    umask = os.umask(0o022)
    try:
        new, old = tmp_path / "new.csv", tmp_path / "old.csv"
        old.write_text("old\n")
        old.chmod(0o640)
        for out in (new, old):
            argv = ["stats", "-f", "csv", "-r", "nvtx_sum", str(inputs / "r1.sqlite")]
            assert main([*argv, "-o", str(out)]) == 0
        assert new.stat().st_mode & 0o777 == 0o644
        assert old.stat().st_mode & 0o777 == 0o640
        assert "nvtx_sum" in old.read_text()
    finally:
        os.umask(umask)


def test_dash_means_stdout(inputs: Path, tmp_path: Path, capsys) -> None:
    argv = ["stats", "-f", "csv", "-r", "nvtx_sum", str(inputs / "r1.sqlite"), "-o", "-"]
    assert main(argv) == 0
    assert "Processing [r1.sqlite] with [nvtx_sum.py]" in capsys.readouterr().out
    assert not (ROOT / "-").exists()


def test_render_to_stdout_is_a_png(inputs: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "render", str(inputs / "r1.sqlite"), "-o", "-"],
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        check=False,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout[:8] == b"\x89PNG\r\n\x1a\n"


# -- recipe output folders ----------------------------------------------------------------------


def _recipe(inputs: Path, out: Path, *more: str) -> list[str]:
    return [
        "recipe", "nvtx_sum", "-q", "--mode", "serial", "--input", str(inputs / "r1.sqlite"),
        str(inputs / "r2.sqlite"), "--output", str(out), *more,
    ]  # fmt: skip


def _strata_leftovers(folder: Path) -> list[str]:
    return [n for n in os.listdir(folder) if ".strata-" in n]


@pytest.mark.parametrize(
    ("error", "status"),
    [(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), 2), (KeyboardInterrupt(), 130)],
    ids=["disk full", "ctrl-c"],
)
def test_a_failed_recipe_write_keeps_the_old_output_folder(
    error: BaseException, status: int, inputs: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    out = tmp_path / "out"
    assert main(_recipe(inputs, out)) == 0
    before = snapshot(out)

    def fail(*_args) -> None:
        raise error

    monkeypatch.setattr(strata.analysis.recipes.output, "draw_plot", fail)
    assert main(_recipe(inputs, out, "--force-overwrite")) == status
    one_line(capsys.readouterr().err)
    assert snapshot(out) == before
    assert _strata_leftovers(tmp_path) == []


def test_force_overwrite_replaces_only_a_recipe_output_strata_wrote(
    inputs: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "out"
    assert main(_recipe(inputs, out)) == 0
    # Not without --force-overwrite.
    assert main(_recipe(inputs, out)) == 2
    assert "--force-overwrite" in one_line(capsys.readouterr().err)
    # A file of the user's in it: kept, and so is the folder.
    (out / "notes.txt").write_text("mine\n")
    before = snapshot(out)
    assert main(_recipe(inputs, out, "--force-overwrite")) == 2
    assert "did not write (notes.txt)" in one_line(capsys.readouterr().err)
    assert snapshot(out) == before
    (out / "notes.txt").unlink()
    assert main(_recipe(inputs, out, "--force-overwrite")) == 0
    assert _strata_leftovers(tmp_path) == []


@pytest.mark.parametrize(
    "manifest",
    [
        None,
        "{}",
        '{"StrataRecipeVersion": "1", "RecipeName": "x", "Outputs": {}}\n',
        "not json",
    ],
    ids=["no manifest", "empty object", "a valid manifest", "not json"],
)
def test_force_overwrite_never_removes_an_arbitrary_folder(
    manifest: str | None, inputs: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work\n")
    if manifest is not None:
        (out / "recipe.json").write_text(manifest)
    before = snapshot(out)
    assert main(_recipe(inputs, out, "--force-overwrite")) == 2
    assert "refusing to replace it" in one_line(capsys.readouterr().err)
    assert snapshot(out) == before


def test_an_empty_existing_folder_is_used(inputs: Path, tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    assert main(_recipe(inputs, out)) == 0
    assert (out / "recipe.json").is_file()


def test_recipe_output_dash_is_refused(inputs: Path, capsys) -> None:
    assert main(_recipe(inputs, Path("-"))) == 2
    assert "not a stream" in one_line(capsys.readouterr().err)


def test_a_recipe_output_in_a_read_only_folder_is_refused_before_the_run(
    inputs: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(strata.analysis.outputs.os, "access", lambda *_a, **_k: False)
    assert main(_recipe(inputs, tmp_path / "new" / "out")) == 2
    assert "cannot write into" in one_line(capsys.readouterr().err)
    assert not (tmp_path / "new").exists()


def test_a_recipe_output_that_is_a_file_is_refused(inputs: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out.txt"
    out.write_text("mine\n")
    assert main(_recipe(inputs, out, "--force-overwrite")) == 2
    assert "not a folder" in one_line(capsys.readouterr().err)
    assert out.read_text() == "mine\n"
