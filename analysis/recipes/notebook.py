"""The Jupyter notebook a recipe writes beside its tables, as nsys's recipes write theirs.

nsys 2023.4 copies a notebook per recipe into its output (``stats.ipynb`` for the summaries,
``analysis.ipynb`` for the rule tables, ``heatmap.ipynb``, ``pace.ipynb``, ``trace.ipynb``,
``diff.ipynb``) that loads the recipe's Parquet files and plots them. Strata's notebook keeps
those names (:attr:`analysis.recipes.base.Recipe.notebook`) and needs only pandas, pyarrow
and matplotlib, offline: run from the output folder, it reads ``recipe.json``, loads every
table the manifest lists, shows each, and draws each plot from the Parquet file of its data
(``plot_<name>.parquet``) with plain matplotlib that the user can edit.

The file is nbformat 4.5 JSON written directly (no ``nbformat`` dependency); its cells carry
no outputs and no run times, so every mode of a run writes the same bytes.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping

from strata.analysis.recipes.base import PlotSpec, RecipeOutput

__all__ = ["notebook_cells", "notebook_text"]

_LOAD = """\
import json
from pathlib import Path

import pandas as pd

# Run from the recipe's output folder (Jupyter starts a notebook in its own folder).
folder = Path.cwd()
manifest = json.loads((folder / "recipe.json").read_text(encoding="utf-8"))
outputs = manifest["Outputs"]
tables = {
    name: pd.read_parquet(folder / entry["parquet"])
    for name, entry in outputs["tables"].items()
}
for name, table in tables.items():
    print(name, table.shape, list(table.columns))  # (rows, columns), the columns"""

# What write_output draws into the PNGs, in a few lines of matplotlib each.
_DRAW = '''\
import matplotlib.pyplot as plt
import numpy as np


def plot_data(name):
    """The data of plot `name`: its rows labelled by the `_index` column, if it has one."""
    data = pd.read_parquet(folder / outputs["plot_data"][name])
    return data.set_index("_index") if "_index" in data else data


def draw_heatmap(data, title, xlabel, ylabel, log_x=False):
    fig, ax = plt.subplots(figsize=(min(4 + 0.35 * data.shape[1], 24),
                                    min(3.8 + 0.3 * data.shape[0], 20)), layout="constrained")
    values = np.ma.masked_invalid(data.to_numpy(dtype=np.float64))
    image = ax.imshow(values, aspect="auto", cmap="viridis")
    fig.colorbar(image, ax=ax)
    step_y, step_x = max(1, len(data.index) // 40), max(1, len(data.columns) // 40)
    ax.set_yticks(np.arange(0, len(data.index), step_y))
    ax.set_yticklabels([str(v)[:50] for v in data.index[::step_y]], fontsize=7)
    ax.set_xticks(np.arange(0, len(data.columns), step_x))
    ax.set_xticklabels([str(v)[:30] for v in data.columns[::step_x]], fontsize=7, rotation=90)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    return fig


def draw_lines(data, title, xlabel, ylabel, log_x=False):
    fig, ax = plt.subplots(figsize=(9, 5), layout="constrained")
    for column in data.columns:
        ax.plot(data.index.to_numpy(), data[column].to_numpy(dtype=np.float64),
                marker="o" if len(data) <= 50 else None, markersize=3, label=str(column)[:30])
    if 1 < data.shape[1] <= 16:
        ax.legend(fontsize=7)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    return fig


def draw_histogram(data, title, xlabel, ylabel, log_x=False):
    panels = list(dict.fromkeys(data["panel"]))
    fig, axes = plt.subplots(max(1, len(panels)), 1, squeeze=False,
                             figsize=(9, 2.4 * max(1, len(panels)) + 0.8), layout="constrained")
    for ax, panel in zip(axes[:, 0], panels):
        rows = data[data["panel"] == panel]
        lo, hi = rows["bin_start"].to_numpy(np.float64), rows["bin_end"].to_numpy(np.float64)
        ax.bar(lo, rows["count"].to_numpy(), width=hi - lo, align="edge")
        if log_x and (lo > 0).all():
            ax.set_xscale("log")
        ax.set_title(str(panel)[:90], fontsize=9, loc="left")
        ax.set_ylabel(ylabel)
    axes[-1, 0].set_xlabel(xlabel)
    fig.suptitle(title)
    return fig'''


def _markdown(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": _lines(text)}


def _code(text: str) -> dict:
    return {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": _lines(text),
    }


def _lines(text: str) -> list[str]:
    """A cell's source as nbformat stores it: lines, each but the last with its newline."""
    return text.splitlines(keepends=True)


def notebook_cells(
    output: RecipeOutput, description: str, plot_files: Mapping[str, str]
) -> list[dict]:
    """Return the cells of ``output``'s notebook (nbformat 4 cell dicts, without ids).

    Parameters
    ----------
    output
        The recipe's tables, plots and summary.
    description
        The recipe's one-line description.
    plot_files
        Plot name -> the Parquet file of its data, for the plots the notebook draws.
    """
    summary = textwrap.indent(output.summary.rstrip(), "    ")
    cells = [
        _markdown(
            f"# Recipe `{output.recipe}`\n\n{description}.\n\n"
            "Written by Strata's `recipe` command beside the recipe's tables; it runs "
            "offline with pandas, pyarrow and matplotlib, from this folder. The summary of "
            f"the run:\n\n{summary}"
        ),
        _code(_LOAD),
    ]
    for name in output.tables:
        cells.append(_markdown(f"## Table `{name}`"))
        cells.append(_code(f"tables[{name!r}].head(20)"))
    if plot_files:
        cells.append(_markdown("## Plots\n\nThe plots of the PNG files, drawn from their data."))
        cells.append(_code(_DRAW))
    for name, spec in output.plots.items():
        if name in plot_files:
            cells.append(_code(_draw_call(name, spec)))
    return cells


def _draw_call(name: str, spec: PlotSpec) -> str:
    return (
        f"draw_{spec.kind}(\n"
        f"    plot_data({name!r}),\n"
        f"    title={spec.title!r},\n"
        f"    xlabel={spec.xlabel!r},\n"
        f"    ylabel={spec.ylabel!r},\n"
        f"    log_x={spec.log_x!r},\n"
        ")"
    )


def notebook_text(cells: list[dict]) -> str:
    """Return the ``.ipynb`` JSON (nbformat 4.5) of ``cells``, each given a stable id."""
    numbered = [{"id": f"cell-{i}", **cell} for i, cell in enumerate(cells)]
    notebook = {
        "cells": numbered,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    # ensure_ascii: a name from a report that is not UTF-8 (held as surrogates) stays writable.
    return json.dumps(notebook, indent=1, ensure_ascii=True) + "\n"
