"""How Strata is started: main.py, ``python -m app``, the ``strata`` commands, ``--version``."""

from __future__ import annotations

import importlib

import pytest

from strata.analysis import __version__
from tests.conftest import ROOT
from tests.helpers import run_cli, run_python


def test_version_from_main_and_module() -> None:
    for result in (run_cli("--version", fresh=True), run_python("-m", "strata", "--version")):
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == f"strata {__version__}"


def test_python_m_app_runs_a_subcommand() -> None:
    result = run_python("-m", "strata", "stats", "--help")
    assert result.returncode == 0, result.stderr
    assert "cuda_gpu_kern_sum" in result.stdout


def test_entry_points_name_callables_and_version_is_single_sourced() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" in project["dynamic"]
    scripts = {**project["scripts"], **project["gui-scripts"]}
    assert set(scripts) == {"strata", "strata-gui"}
    for target in scripts.values():
        module, _, attr = target.partition(":")
        assert callable(getattr(importlib.import_module(module), attr))
    # matplotlib is an extra, not a requirement of the core package.
    assert not any(dep.startswith("matplotlib") for dep in project["dependencies"])
    assert any(dep.startswith("matplotlib") for dep in project["optional-dependencies"]["plots"])


def test_recipe_without_matplotlib_writes_tables_and_no_plots(tmp_path, monkeypatch) -> None:
    import pandas as pd

    from strata.analysis.recipes import output
    from strata.analysis.recipes.base import PlotSpec, RecipeOutput

    plot = PlotSpec("lines", "t", "x", "y", pd.DataFrame({"a": [1.0, 2.0]}))
    result = RecipeOutput("demo", {"table": pd.DataFrame({"a": [1, 2]})}, {"plot": plot})
    monkeypatch.setattr(output, "has_plotting", lambda: False)
    manifest = output.write_output(result, tmp_path / "out")
    written = {p.name for p in manifest.parent.iterdir()}
    assert {"recipe.json", "summary.txt", "table.csv", "table.parquet"} <= written
    assert not {name for name in written if name.endswith(".png")}
    monkeypatch.undo()
    manifest = output.write_output(result, tmp_path / "with-plots")
    assert (manifest.parent / "plot.png").is_file()
