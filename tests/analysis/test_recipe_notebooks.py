"""The Jupyter notebook every recipe writes beside its tables (nsys's recipes write one too).

Each notebook is run as Jupyter runs it (its code cells in order, one namespace, the output
folder as working directory, matplotlib's Agg backend) on the demo ranks our own builder
writes: it must load every table the recipe wrote, equal to what :func:`load_output` reads,
and draw every plot the folder holds as a PNG.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from strata.analysis.recipes import RECIPES, RecipeOptions, load_output, run_recipe, write_output
from strata.resources.demo import build_demo_reports
from tests.helpers import run_notebook


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return build_demo_reports(tmp_path_factory.mktemp("demo"), ranks=2, steps=3)


@pytest.mark.parametrize(
    ("recipe", "options", "notebook"),
    [
        ("cuda_gpu_kern_sum", RecipeOptions(), "stats.ipynb"),
        ("nvtx_sum", RecipeOptions(), "stats.ipynb"),
        ("cuda_gpu_kern_hist", RecipeOptions(), "histogram.ipynb"),
        ("nvtx_pace", RecipeOptions(kernel_name="train_step"), "pace.ipynb"),
        ("cuda_gpu_time_util_map", RecipeOptions(bins=12), "heatmap.ipynb"),
        ("gpu_time_util", RecipeOptions(threshold_pct=100), "analysis.ipynb"),
        ("nvtx_gpu_proj_trace", RecipeOptions(), "trace.ipynb"),
        ("nccl_sum", RecipeOptions(), "stats.ipynb"),
    ],
)
def test_the_notebook_loads_every_table_and_draws_every_plot(
    recipe: str, options: RecipeOptions, notebook: str, demo: list[Path], tmp_path: Path
) -> None:
    run = run_recipe(recipe, demo, options)
    out = tmp_path / "out"
    write_output(run.output, out, run)
    manifest = json.loads((out / "recipe.json").read_text())
    assert manifest["Outputs"]["notebook"] == notebook
    namespace = run_notebook(out / notebook)
    tables = load_output(out)
    assert set(namespace["tables"]) == set(tables) == set(run.output.tables)
    for name, table in tables.items():
        pd.testing.assert_frame_equal(namespace["tables"][name], table)
    assert len(manifest["Outputs"]["plots"]) == len(run.output.plots)
    assert namespace["_figures"] == len(run.output.plots)


def test_a_notebook_draws_from_its_own_folder_only(demo: list[Path], tmp_path: Path) -> None:
    # Runnable offline and elsewhere: it imports no Strata module, and a copied folder works.
    run = run_recipe("cuda_gpu_kern_sum", demo, RecipeOptions())
    write_output(run.output, tmp_path / "out", run)
    text = (tmp_path / "out" / "stats.ipynb").read_text()
    cells = json.loads(text)["cells"]
    code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert "analysis" not in {line.split()[1] for line in code.splitlines()
                              if line.startswith(("import ", "from "))}  # fmt: skip
    moved = tmp_path / "elsewhere"
    (tmp_path / "out").rename(moved)
    namespace = run_notebook(moved / "stats.ipynb")
    assert namespace["_figures"] == 1
    heatmap = namespace["plot_data"]("heatmap")
    assert list(heatmap.columns) == [Path(p).name for p in demo]


def test_the_notebook_is_valid_nbformat(demo: list[Path], tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat", reason="needs nbformat to validate the schema")
    run = run_recipe("cuda_gpu_kern_hist", demo, RecipeOptions())
    write_output(run.output, tmp_path, run)
    nbformat.validate(nbformat.read(tmp_path / "histogram.ipynb", as_version=4))


def test_every_recipe_names_nsys_notebook() -> None:
    # nsys 2023.4's file names, by kind of recipe (nsys_recipe/recipes/*/*.ipynb).
    nsys = {"stats.ipynb", "analysis.ipynb", "heatmap.ipynb", "pace.ipynb", "trace.ipynb",
            "diff.ipynb", "histogram.ipynb"}  # fmt: skip
    assert {r.notebook for r in RECIPES.values()} <= nsys
    assert RECIPES["cuda_gpu_kern_sum"].notebook == "stats.ipynb"
    assert RECIPES["gpu_gaps"].notebook == "analysis.ipynb"
    assert RECIPES["nvtx_gpu_proj_trace"].notebook == "trace.ipynb"
