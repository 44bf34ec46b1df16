"""A recipe output's manifest that names files outside its folder, or is malformed, is refused."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from strata.analysis.errors import AnalysisError
from strata.analysis.recipes.output import MANIFEST_NAME, load_manifest, load_output
from strata.app.cli import main
from tests.cli.conftest import plant
from tests.helpers import run_cli, run_python


@pytest.fixture
def output(tmp_path: Path) -> Path:
    """A real nvtx_sum output folder of two planted reports."""
    for i in range(2):
        plant(tmp_path / f"r{i}.sqlite", slow=10 * i)
    out = tmp_path / "out"
    argv = ["recipe", "nvtx_sum", "-q", "--mode", "serial", "--input"]
    assert (
        main(
            [*argv, str(tmp_path / "r0.sqlite"), str(tmp_path / "r1.sqlite"), "--output", str(out)]
        )
        == 0
    )
    return out


def _edit(change: Callable[[dict], object]) -> Callable[[Path], None]:
    """A case that rewrites the manifest as JSON after ``change(manifest)``."""

    def apply(folder: Path) -> None:
        manifest = json.loads((folder / MANIFEST_NAME).read_text())
        result = change(manifest)
        (folder / MANIFEST_NAME).write_text(json.dumps(manifest if result is None else result))

    return apply


def _raw(data: bytes) -> Callable[[Path], None]:
    return lambda folder: (folder / MANIFEST_NAME).write_bytes(data)


def _table(key: str, value: object) -> Callable[[Path], None]:
    return _edit(lambda m: m["Outputs"]["tables"]["all_stats"].__setitem__(key, value))


def _huge(folder: Path) -> None:
    with open(folder / MANIFEST_NAME, "r+b") as fh:
        fh.truncate(65 << 20)  # sparse: no 65 MB written


def _symlinked_table(folder: Path) -> None:
    outside = folder.parent / "elsewhere.parquet"
    (folder / "all_stats.parquet").rename(outside)
    (folder / "all_stats.parquet").symlink_to(outside)


def _symlinked_manifest(folder: Path) -> None:
    outside = folder.parent / "elsewhere.json"
    (folder / MANIFEST_NAME).rename(outside)
    (folder / MANIFEST_NAME).symlink_to(outside)


CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "not JSON": (_raw(b"{not json"), "unreadable recipe manifest"),
    "not UTF-8": (_raw(b'\xff\xfe{"a": 1}'), "unreadable recipe manifest"),
    "nested without end": (_raw(b"[" * 200_000 + b"]" * 200_000), "unreadable recipe manifest"),
    "a list": (_raw(b"[1, 2]"), "not an object"),
    "a string": (_raw(b'"recipe"'), "not an object"),
    "null": (_raw(b"null"), "not an object"),
    "an empty object": (_raw(b"{}"), "StrataRecipeVersion"),
    "a number as version": (_edit(lambda m: m.__setitem__("StrataRecipeVersion", 1)), "Version"),
    "a number as name": (_edit(lambda m: m.__setitem__("RecipeName", 5)), "RecipeName is a int"),
    "outputs as a list": (_edit(lambda m: m.__setitem__("Outputs", [])), "Outputs is a list"),
    "tables as a list": (
        _edit(lambda m: m["Outputs"].__setitem__("tables", ["x"])),
        "tables is a list",
    ),
    "an absolute table path": (_table("parquet", "/etc/passwd"), "outside its folder"),
    "a table path with ..": (_table("parquet", "../r0.sqlite"), "outside its folder"),
    "a table in a subfolder": (_table("csv", "sub/all_stats.csv"), "outside its folder"),
    "a table path of a number": (_table("parquet", 7), "not a file name"),
    "rows as text": (_table("rows", "many"), "not {parquet, csv, rows}"),
    "a plot path with ..": (
        _edit(lambda m: m["Outputs"]["plots"].__setitem__("heatmap", "../../x.png")),
        "outside its folder",
    ),
    "an absolute summary path": (
        _edit(lambda m: m["Outputs"].__setitem__("summary", "/etc/shadow")),
        "outside its folder",
    ),
    "failures of the wrong shape": (_edit(lambda m: m.__setitem__("Failures", [1])), "Failures"),
    "input files as text": (
        _edit(lambda m: m.__setitem__("InputFiles", "a.sqlite")),
        "InputFiles is a str",
    ),
    "workers as a boolean": (_edit(lambda m: m.__setitem__("Workers", True)), "Workers is a bool"),
    "a table symlinked out": (_symlinked_table, "leads outside its folder"),
    "the manifest symlinked out": (_symlinked_manifest, "leads outside its folder"),
    "huge": (_huge, "more than a manifest holds"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_manifest_is_refused_with_one_line(case: str, output: Path) -> None:
    make, needle = CASES[case]
    make(output)
    for read in (load_manifest, load_output):
        with pytest.raises(AnalysisError) as caught:
            read(output)
        message = str(caught.value)
        assert "\n" not in message
        assert needle in message
        assert len(message) < 400


def test_a_good_manifest_reads_back(output: Path) -> None:
    assert load_manifest(output)["RecipeName"] == "nvtx_sum"
    assert set(load_output(output)) == {"all_stats", "rank_stats", "by_file", "files"}


def test_diff_names_the_bad_side_and_exits_2(output: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / MANIFEST_NAME).write_text(
        json.dumps(
            {
                "StrataRecipeVersion": "1",
                "RecipeName": "nvtx_sum",
                "Outputs": {"tables": {"all_stats": {"parquet": "/etc/passwd", "csv": "x"}}},
            }
        )
    )
    proc = run_cli(
        "recipe", "diff", "-q", "--input", str(output), str(bad), "--output", str(tmp_path / "d")
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr
    assert lines[0].startswith(f"strata: {bad}: ")
    assert "outside its folder" in lines[0]
    assert lines[-1].startswith("strata: diff needs both inputs")
    assert not (tmp_path / "d").exists()


def test_fifos_are_refused_without_blocking(output: Path) -> None:
    """A FIFO named like a manifest or a table would block a reader forever."""
    table = output / "all_stats.parquet"
    table.unlink()
    os.mkfifo(table)
    code = (
        "import sys; from strata.analysis.recipes.output import load_output\n"
        "from strata.analysis.errors import AnalysisError\n"
        "try:\n    load_output(sys.argv[1])\nexcept AnalysisError as e:\n    print(e)\n"
    )
    proc = run_python("-c", code, str(output), timeout_s=60)
    assert "not a regular file" in proc.stdout, proc.stderr
    (output / MANIFEST_NAME).unlink()
    os.mkfifo(output / MANIFEST_NAME)
    proc = run_python("-c", code, str(output), timeout_s=60)
    assert "not a recipe output folder" in proc.stdout, proc.stderr


def test_the_gui_reader_gets_the_same_refusal(output: Path) -> None:
    """The GUI's recipe window reads through load_manifest: it never opens /etc/shadow."""
    from strata.app.recipe_window import read_recipe_output

    CASES["an absolute summary path"][0](output)
    with pytest.raises(AnalysisError, match="outside its folder"):
        read_recipe_output(output)
