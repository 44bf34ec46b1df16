"""Write a recipe's output folder and read it back.

A folder holds, per table, ``<table>.parquet`` and ``<table>.csv``; per plot ``<plot>.png``
(matplotlib, Agg backend: no display needed); ``summary.txt``; and ``recipe.json``, a small
manifest in the spirit of nsys's ``.nsys-analysis`` file (spec: nsys-sqlite.md §5.2): recipe
name, inputs, mode, times, failures, options and the list of outputs. :func:`load_output`
reads the tables back for the GUI, which opens a recipe output as a table.
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from analysis.errors import AnalysisError
from analysis.recipes.base import PlotSpec, RecipeOutput

if TYPE_CHECKING:
    from analysis.recipes.runner import RecipeRun

__all__ = ["MANIFEST_NAME", "is_recipe_output", "load_manifest", "load_output", "write_output"]

MANIFEST_NAME = "recipe.json"
MANIFEST_VERSION = "1"
_MAX_LEGEND_LINES = 16
_MAX_TICK_LABELS = 40


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "table"


def write_output(output: RecipeOutput, folder: str | Path, run: RecipeRun | None = None) -> Path:
    """Write ``output`` into ``folder`` (created if needed; existing files are replaced).

    Parameters
    ----------
    output
        What the recipe's reduce step returned.
    folder
        The output folder.
    run
        The run that produced it, for the manifest's inputs, mode, times and failures.

    Returns
    -------
    Path
        The manifest file.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tables = {}
    for name, frame in output.tables.items():
        stem = _safe_name(name)
        frame = frame.reset_index(drop=True)
        frame.columns = [str(c) for c in frame.columns]
        frame.to_parquet(folder / f"{stem}.parquet", index=False)
        frame.to_csv(folder / f"{stem}.csv", index=False)
        tables[name] = {"parquet": f"{stem}.parquet", "csv": f"{stem}.csv", "rows": len(frame)}
    plots = {}
    for name, spec in output.plots.items():
        file = f"{_safe_name(name)}.png"
        draw_plot(spec, folder / file)
        plots[name] = file
    summary = _summary_text(output, run)
    (folder / "summary.txt").write_text(summary + "\n", encoding="utf-8")
    manifest = {
        "StrataRecipeVersion": MANIFEST_VERSION,
        "RecipeName": output.recipe,
        "Files": output.files,
        "Outputs": {"tables": tables, "plots": plots, "summary": "summary.txt"},
    }
    if run is not None:
        manifest.update(
            {
                "Mode": run.mode,
                "Workers": run.workers,
                "StartTime": run.started_utc,
                "EndTime": run.ended_utc,
                "InputFiles": [str(p) for p in run.inputs],
                "Failures": [
                    {"File": f.file, "Path": str(f.path), "Reason": f.reason} for f in run.failures
                ],
                "NoData": run.no_data,
                "Options": asdict(run.options),
            }
        )
    path = folder / MANIFEST_NAME
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return path


def _summary_text(output: RecipeOutput, run: RecipeRun | None) -> str:
    lines = [output.summary.rstrip()]
    if run is not None:
        lines.append(
            f"{len(run.inputs)} report(s), mode {run.mode}, {run.workers} worker(s), "
            f"{run.wall_s:.1f} s"
        )
        if run.no_data:
            lines.append(f"no data in {len(run.no_data)} report(s): {', '.join(run.no_data)}")
        for failure in run.failures:
            lines.append(f"skipped {failure.file}: {failure.reason}")
    return "\n".join(line for line in lines if line)


def is_recipe_output(folder: str | Path) -> bool:
    """Return whether ``folder`` is a recipe output (holds a manifest)."""
    return (Path(folder) / MANIFEST_NAME).is_file()


def load_manifest(folder: str | Path) -> dict:
    """Return the manifest of a recipe output folder.

    Raises
    ------
    AnalysisError
        The folder is not a recipe output, or its manifest is unreadable.
    """
    path = Path(folder) / MANIFEST_NAME
    if not path.is_file():
        raise AnalysisError(f"{folder}: not a recipe output folder (no {MANIFEST_NAME})")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AnalysisError(f"{path}: unreadable recipe manifest ({exc})") from exc


def load_output(folder: str | Path) -> dict[str, pd.DataFrame]:
    """Read every table of a recipe output folder back, by table name.

    Raises
    ------
    AnalysisError
        Not a recipe output folder, or a table file is missing or unreadable.
    """
    folder = Path(folder)
    manifest = load_manifest(folder)
    tables = {}
    for name, entry in manifest.get("Outputs", {}).get("tables", {}).items():
        path = folder / entry["parquet"]
        try:
            tables[name] = pd.read_parquet(path)
        except (OSError, ValueError) as exc:
            raise AnalysisError(f"{path}: cannot read recipe table ({exc})") from exc
    return tables


# -- plots --------------------------------------------------------------------------------------


def draw_plot(spec: PlotSpec, path: Path) -> None:
    """Draw ``spec`` into a PNG at ``path`` (matplotlib's Agg canvas, no display)."""
    build_figure(spec).canvas.print_png(str(path))


def build_figure(spec: PlotSpec):
    """Return ``spec`` drawn on a matplotlib Figure with an Agg canvas (no display, no pyplot)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if spec.kind == "histogram":
        panels = list(dict.fromkeys(spec.data["panel"]))
        rows = max(1, len(panels))
        fig = Figure(figsize=(9, 2.4 * rows + 0.8), layout="constrained")
        _draw_histogram(fig, spec, panels)
    elif spec.kind == "heatmap":
        n_rows, n_cols = spec.data.shape
        fig = Figure(
            figsize=(min(4 + 0.35 * n_cols, 24), min(2 + 0.3 * n_rows, 18)), layout="constrained"
        )
        _draw_heatmap(fig, spec)
    elif spec.kind == "lines":
        fig = Figure(figsize=(9, 5), layout="constrained")
        _draw_lines(fig, spec)
    else:
        raise AnalysisError(f"unknown plot kind {spec.kind!r}")
    FigureCanvasAgg(fig)
    # A heatmap of a few reports is a few inches wide: wrap the title to the figure instead
    # of letting it run off both edges (~7 characters per inch at the default 12 pt).
    width_chars = max(20, int(fig.get_figwidth() * 7))
    fig.suptitle(textwrap.fill(spec.title, width_chars))
    return fig


def _draw_histogram(fig, spec: PlotSpec, panels: list[str]) -> None:
    axes = fig.subplots(max(1, len(panels)), 1, squeeze=False)[:, 0]
    for ax, panel in zip(axes, panels, strict=False):
        rows = spec.data[spec.data["panel"] == panel]
        lo = rows["bin_start"].to_numpy(np.float64)
        hi = rows["bin_end"].to_numpy(np.float64)
        ax.bar(lo, rows["count"].to_numpy(), width=hi - lo, align="edge", edgecolor="none")
        if spec.log_x and (lo > 0).all():
            ax.set_xscale("log")
        ax.set_title(_clip(str(panel), 90), fontsize=9, loc="left")
        ax.set_ylabel(spec.ylabel)
    axes[-1].set_xlabel(spec.xlabel)


def _draw_heatmap(fig, spec: PlotSpec) -> None:
    ax = fig.subplots()
    values = spec.data.to_numpy(dtype=np.float64)
    image = ax.imshow(np.ma.masked_invalid(values), aspect="auto", cmap="viridis")
    fig.colorbar(image, ax=ax)
    _ticks(ax.set_yticks, ax.set_yticklabels, [_clip(str(i), 50) for i in spec.data.index])
    _ticks(ax.set_xticks, ax.set_xticklabels, [_clip(str(c), 30) for c in spec.data.columns], 90)
    ax.set_xlabel(spec.xlabel)
    ax.set_ylabel(spec.ylabel)


def _ticks(set_ticks, set_labels, labels: list[str], rotation: int = 0) -> None:
    step = max(1, len(labels) // _MAX_TICK_LABELS)
    positions = np.arange(0, len(labels), step)
    set_ticks(positions)
    set_labels([labels[i] for i in positions], fontsize=7, rotation=rotation)


def _draw_lines(fig, spec: PlotSpec) -> None:
    ax = fig.subplots()
    many = spec.data.shape[1] > _MAX_LEGEND_LINES
    marker = "o" if len(spec.data) <= 50 else None
    for column in spec.data.columns:
        series = spec.data[column]
        ax.plot(
            spec.data.index.to_numpy(),
            series.to_numpy(dtype=np.float64),
            linewidth=0.8 if many else 1.2,
            alpha=0.5 if many else 1.0,
            marker=marker,
            markersize=3,
            label=_clip(str(column), 30),
        )
    if not many and spec.data.shape[1] > 1:
        ax.legend(fontsize=7)
    ax.set_xlabel(spec.xlabel)
    ax.set_ylabel(spec.ylabel)


def _clip(text: str, width: int) -> str:
    """Shorten ``text`` to ``width`` characters, keeping its start and its end."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]
