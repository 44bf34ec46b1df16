"""Write a recipe's output folder and read it back.

A folder holds, per table, ``<table>.parquet`` and ``<table>.csv``; per plot ``<plot>.png``
(matplotlib, Agg backend: no display needed) and ``plot_<plot>.parquet``, the numbers it
draws; a Jupyter notebook that loads the tables and draws the plots again
(:mod:`analysis.recipes.notebook`; nsys's name for the recipe, e.g. ``stats.ipynb``);
``summary.txt``; and ``recipe.json``, a small manifest in the spirit of nsys's
``.nsys-analysis`` file (spec: nsys-sqlite.md §5.2): recipe name, inputs, mode, times,
failures, options and the list of outputs. :func:`load_output` reads the tables back for the
GUI, which opens a recipe output as a table.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import stat
import textwrap
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from strata.analysis.errors import AnalysisError
from strata.analysis.escape import escape_frame, escape_text
from strata.analysis.outputs import real_path, staged_folder
from strata.analysis.recipes.base import RECIPES, PlotSpec, RecipeOutput
from strata.analysis.recipes.notebook import notebook_cells, notebook_text
from strata.analysis.shortnames import distinct_short_labels
from strata.analysis.timefmt import pluralize

if TYPE_CHECKING:
    from strata.analysis.recipes.runner import RecipeRun

__all__ = [
    "has_plotting",
    "MANIFEST_NAME",
    "plot_frame",
    "check_replaceable",
    "is_recipe_output",
    "load_manifest",
    "load_output",
    "write_output",
]

log = logging.getLogger(__name__)

MANIFEST_NAME = "recipe.json"
MANIFEST_VERSION = "1"
#: A manifest lists a few names per report; 10^5 reports take ~30 MB. Larger is not ours.
_MAX_MANIFEST_BYTES = 64 << 20
_MAX_LEGEND_LINES = 16
#: Okabe & Ito's palette (black left out), the window's report colours (viewer.style):
#: told apart with every common colour-vision deficiency.
LINE_COLORS = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")
_MAX_TICK_LABELS = 40


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_.") or "table"


def write_output(
    output: RecipeOutput,
    folder: str | Path,
    run: RecipeRun | None = None,
    replace: bool = False,
) -> Path:
    """Write ``output`` into ``folder``, all at once: a failure leaves no half-written folder.

    The files are written into a new folder beside ``folder`` and swapped in at the end
    (see :func:`analysis.outputs.staged_folder`).

    Parameters
    ----------
    output
        What the recipe's reduce step returned.
    folder
        The output folder; created with its parents if needed. An existing empty folder is
        replaced; an existing recipe output folder only with ``replace`` (see
        :func:`check_replaceable`); anything else is kept and refused.
    run
        The run that produced it, for the manifest's inputs, mode, times and failures.
    replace
        Replace an existing recipe output folder (``--force-overwrite``).

    Returns
    -------
    Path
        The manifest file.

    Raises
    ------
    AnalysisError
        The folder exists and may not be replaced, or cannot be written.
    """

    def may_replace(existing: Path) -> None:
        if existing.is_dir() and not any(existing.iterdir()):
            return
        if not replace:
            raise AnalysisError(
                f"{escape_text(str(folder))} exists and is not empty; pass --force-overwrite"
            )
        check_replaceable(existing)

    with staged_folder(folder, may_replace) as tmp:
        _write_files(output, tmp, run)
    return Path(folder) / MANIFEST_NAME


def _write_files(output: RecipeOutput, folder: Path, run: RecipeRun | None) -> None:
    tables = {}
    used: set[str] = {MANIFEST_NAME, "summary.txt"}
    for name, frame in output.tables.items():
        stem = _unique(_safe_name(name), used, (".parquet", ".csv"))
        frame = frame.reset_index(drop=True)
        frame.columns = [str(c) for c in frame.columns]
        frame.to_parquet(folder / f"{stem}.parquet", index=False)
        # The CSV is for people and shells: names from reports lose their control characters
        # (the Parquet file keeps them as they are).
        escape_frame(frame).to_csv(folder / f"{stem}.csv", index=False)
        tables[name] = {"parquet": f"{stem}.parquet", "csv": f"{stem}.csv", "rows": len(frame)}
    plots = {}
    if output.plots and not has_plotting():
        # matplotlib is the optional "plots" extra: the tables are the recipe's result.
        log.warning("recipe plots skipped: matplotlib is not installed (pip install strata[plots])")
    for name, spec in output.plots.items() if has_plotting() else ():
        file = _unique(_safe_name(name), used, (".png",)) + ".png"
        draw_plot(spec, folder / file)
        plots[name] = file
    plot_data = {}
    for name, spec in output.plots.items():
        file = _unique(f"plot_{_safe_name(name)}", used, (".parquet",)) + ".parquet"
        plot_frame(spec).to_parquet(folder / file, index=False)
        plot_data[name] = file
    recipe = RECIPES.get(output.recipe)
    notebook = _unique(
        _safe_name((recipe.notebook if recipe else "analysis.ipynb").removesuffix(".ipynb")),
        used,
        (".ipynb",),
    )
    cells = notebook_cells(output, recipe.description if recipe else output.recipe, plot_data)
    (folder / f"{notebook}.ipynb").write_text(notebook_text(cells), encoding="utf-8")
    summary = _summary_text(output, run)
    (folder / "summary.txt").write_text(summary + "\n", encoding="utf-8")
    manifest = {
        "StrataRecipeVersion": MANIFEST_VERSION,
        "RecipeName": output.recipe,
        "Files": output.files,
        "Outputs": {
            "tables": tables,
            "plots": plots,
            "plot_data": plot_data,
            "notebook": f"{notebook}.ipynb",
            "summary": "summary.txt",
        },
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
    # ensure_ascii: a file name that is not valid UTF-8 (held as surrogates) stays writable.
    text = json.dumps(manifest, indent=2, ensure_ascii=True) + "\n"
    (folder / MANIFEST_NAME).write_text(text, encoding="utf-8")


def plot_frame(spec: PlotSpec) -> pd.DataFrame:
    """Return the numbers of a plot as a table Parquet can hold (``plot_<name>.parquet``).

    A histogram's rows as they are; a heatmap's or lines' row labels (x values) as a first
    column ``_index`` and its column names as text.
    """
    data = spec.data.reset_index(drop=True)
    if spec.kind == "histogram":
        return data
    data.columns = [str(c) for c in spec.data.columns]
    data.insert(0, "_index", spec.data.index.to_numpy())
    return data


def _unique(stem: str, used: set[str], suffixes: tuple[str, ...]) -> str:
    """``stem``, or ``stem_2``, ``stem_3``... so that no two outputs share a file name."""
    candidate, n = stem, 1
    while any(candidate + s in used for s in suffixes):
        n += 1
        candidate = f"{stem}_{n}"
    used.update(candidate + s for s in suffixes)
    return candidate


def _summary_text(output: RecipeOutput, run: RecipeRun | None) -> str:
    lines = [output.summary.rstrip()]
    if run is not None:
        lines.append(
            f"{pluralize(len(run.inputs), 'report')}, mode {run.mode}, "
            f"{pluralize(run.workers, 'worker')}, "
            f"{run.wall_s:.1f} s"
        )
        if run.no_data:
            lines.append(
                f"no data in {pluralize(len(run.no_data), 'report')}: {', '.join(run.no_data)}"
            )
        for failure in run.failures:
            lines.append(f"skipped {failure.file}: {failure.reason}")
    # Names from reports: no control characters in a file people cat to a terminal.
    return "\n".join(escape_text(line) for text in lines if text for line in text.split("\n"))


def is_recipe_output(folder: str | Path) -> bool:
    """Return whether ``folder`` looks like a recipe output (holds a manifest file).

    This is the quick test of a dropped path; :func:`load_manifest` checks the manifest.
    """
    return (Path(folder) / MANIFEST_NAME).is_file()


def _member(folder: Path, name: object, what: str) -> Path:
    """The file ``name`` of a manifest: a plain name whose real path lies inside ``folder``."""
    if not isinstance(name, str) or not name or name in (".", ".."):
        raise AnalysisError(f"{_shown(folder)}: recipe manifest: {what} is not a file name")
    if "/" in name or "\\" in name or "\x00" in name or os.path.isabs(name):
        raise AnalysisError(
            f"{_shown(folder)}: recipe manifest names {escape_text(name)!r} outside its folder"
        )
    path = folder / name
    root = real_path(folder)
    if root not in real_path(path).parents:
        raise AnalysisError(
            f"{_shown(folder)}: recipe manifest: {escape_text(name)} leads outside its folder"
        )
    return path


def _shown(path: Path) -> str:
    return escape_text(str(path))


def _read_regular(path: Path, limit: int) -> bytes:
    """Read a regular file of at most ``limit`` bytes (a FIFO would block, a device never end)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise AnalysisError(f"{_shown(path)}: cannot read ({exc.strerror or exc})") from exc
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise AnalysisError(f"{_shown(path)}: not a regular file")
        if st.st_size > limit:
            raise AnalysisError(f"{_shown(path)}: {st.st_size} bytes, more than a manifest holds")
        try:
            return fh.read(limit + 1)
        except OSError as exc:
            raise AnalysisError(f"{_shown(path)}: cannot read ({exc.strerror or exc})") from exc


def load_manifest(folder: str | Path) -> dict:
    """Return the manifest of a recipe output folder, checked.

    The manifest must be a JSON object of at most 64 MiB with the types Strata writes, and
    every file it names must be a plain file name inside ``folder`` (no absolute path, no
    ``..``, no symlink leading out): a manifest from elsewhere cannot make a reader open
    another file.

    Raises
    ------
    AnalysisError
        The folder is not a recipe output, or its manifest is unreadable or malformed.
    """
    folder = Path(folder)
    path = folder / MANIFEST_NAME
    if not path.is_file():
        raise AnalysisError(f"{_shown(folder)}: not a recipe output folder (no {MANIFEST_NAME})")
    _member(folder, MANIFEST_NAME, "the manifest")
    data = _read_regular(path, _MAX_MANIFEST_BYTES)
    if len(data) > _MAX_MANIFEST_BYTES:
        raise AnalysisError(f"{_shown(path)}: larger than a recipe manifest can be")
    try:
        manifest = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise AnalysisError(f"{_shown(path)}: unreadable recipe manifest ({reason})") from exc
    _check_manifest(folder, manifest)
    return manifest


def _bad(folder: Path, what: str) -> AnalysisError:
    return AnalysisError(f"{_shown(folder / MANIFEST_NAME)}: malformed recipe manifest ({what})")


def _check_manifest(folder: Path, manifest: Any) -> None:
    """Check the types and file names of a manifest (see :func:`load_manifest`)."""
    if not isinstance(manifest, dict):
        raise _bad(folder, f"a JSON {type(manifest).__name__}, not an object")
    if manifest.get("StrataRecipeVersion") != MANIFEST_VERSION:
        raise _bad(folder, f"StrataRecipeVersion is not {MANIFEST_VERSION!r}")
    _typed(folder, manifest, "RecipeName", str, required=True)
    for key in ("Mode", "StartTime", "EndTime"):
        _typed(folder, manifest, key, str)
    _typed(folder, manifest, "Workers", int)
    _typed(folder, manifest, "Options", dict)
    for key in ("Files", "InputFiles", "NoData"):
        if not all(isinstance(v, str) for v in _typed(folder, manifest, key, list)):
            raise _bad(folder, f"{key} holds a non-text entry")
    for failure in _typed(folder, manifest, "Failures", list):
        if not isinstance(failure, dict) or not all(
            isinstance(failure.get(k), str) for k in ("File", "Path", "Reason")
        ):
            raise _bad(folder, "a Failures entry is not {File, Path, Reason}")
    outputs = _typed(folder, manifest, "Outputs", dict, required=True)
    for name, entry in _typed(folder, outputs, "tables", dict).items():
        if not isinstance(entry, dict) or not isinstance(entry.get("rows", 0), int):
            raise _bad(folder, f"table {escape_text(str(name))!r} is not {{parquet, csv, rows}}")
        _member(folder, entry.get("parquet"), f"table {escape_text(str(name))!r}")
        _member(folder, entry.get("csv"), f"table {escape_text(str(name))!r}")
    for key in ("plots", "plot_data"):
        for name, file in _typed(folder, outputs, key, dict).items():
            _member(folder, file, f"plot {escape_text(str(name))!r}")
    if "notebook" in outputs:
        _member(folder, outputs["notebook"], "notebook")
    _member(folder, outputs.get("summary", "summary.txt"), "summary")


def _typed(folder: Path, mapping: Mapping, key: str, kind: type, required: bool = False) -> Any:
    """``mapping[key]`` when it has type ``kind`` (an empty one when absent and optional)."""
    if key not in mapping:
        if required:
            raise _bad(folder, f"no {key}")
        return kind()
    value = mapping[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _bad(folder, f"{key} is a {type(value).__name__}, not a {kind.__name__}")
    return value


def _listed_files(manifest: dict) -> set[str]:
    outputs = manifest["Outputs"]
    files = {MANIFEST_NAME, outputs.get("summary", "summary.txt")}
    for entry in outputs.get("tables", {}).values():
        files.update((entry["parquet"], entry["csv"]))
    files.update(outputs.get("plots", {}).values())
    files.update(outputs.get("plot_data", {}).values())
    if "notebook" in outputs:
        files.add(outputs["notebook"])
    return files


def check_replaceable(folder: str | Path) -> None:
    """Refuse to replace ``folder`` unless it is a recipe output folder Strata wrote.

    That is: a valid manifest (see :func:`load_manifest`), and nothing in the folder but the
    plain files that manifest lists, so that no file of the user's is ever deleted.

    Raises
    ------
    AnalysisError
        The folder is something else; it is left as it is.
    """
    folder = Path(folder)
    shown = _shown(folder)
    if not real_path(folder).is_dir():
        raise AnalysisError(f"{shown} exists and is not a folder; refusing to replace it")
    try:
        manifest = load_manifest(folder)
    except AnalysisError as exc:
        raise AnalysisError(
            f"{shown} is not a recipe output folder Strata wrote; refusing to replace it ({exc})"
        ) from exc
    listed = _listed_files(manifest)
    try:
        entries = list(os.scandir(folder))
    except OSError as exc:
        raise AnalysisError(f"{shown}: cannot list ({exc.strerror or exc})") from exc
    foreign = sorted(
        e.name for e in entries if e.name not in listed or not e.is_file(follow_symlinks=False)
    )
    if foreign:
        names = ", ".join(escape_text(n) for n in foreign[:3]) + (
            " ..." if len(foreign) > 3 else ""
        )
        raise AnalysisError(
            f"{shown} holds files Strata did not write ({names}); refusing to replace it"
        )


def load_output(folder: str | Path) -> dict[str, pd.DataFrame]:
    """Read every table of a recipe output folder back, by table name.

    Raises
    ------
    AnalysisError
        Not a recipe output folder, its manifest is malformed, or a table file is missing
        or unreadable.
    """
    folder = Path(folder)
    manifest = load_manifest(folder)
    tables = {}
    for name, entry in manifest["Outputs"].get("tables", {}).items():
        path = _member(folder, entry["parquet"], f"table {escape_text(str(name))!r}")
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                raise AnalysisError(f"{_shown(path)}: not a regular file")
            tables[name] = pd.read_parquet(path)
        except (OSError, ValueError, pa.ArrowException) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise AnalysisError(f"{_shown(path)}: cannot read recipe table ({reason})") from exc
    return tables


# -- plots --------------------------------------------------------------------------------------


def has_plotting() -> bool:
    """Return whether matplotlib (the optional ``plots`` extra) can be imported."""
    return importlib.util.find_spec("matplotlib") is not None


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
        # ~1.8 in below the cells for the report names (30 characters at 7 pt, turned 90°):
        # two rows of a 2 in figure left the cells no room (matplotlib collapsed them).
        fig = Figure(
            figsize=(min(4 + 0.35 * n_cols, 24), min(3.8 + 0.3 * n_rows, 20)),
            layout="constrained",
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
    from matplotlib.ticker import MaxNLocator

    ax = fig.subplots()
    # One line per report in the window's report colours (matplotlib's own put a red and a
    # green line side by side, which deuteranopes cannot tell apart).
    ax.set_prop_cycle(color=LINE_COLORS)
    many = spec.data.shape[1] > _MAX_LEGEND_LINES
    marker = "o" if len(spec.data) <= 50 else None
    x = spec.data.index.to_numpy()
    # File names that share a long prefix: cut around the part that differs (profile1 vs
    # profile16), as the window's report labels are.
    labels = [_clip(label, 30) for label in distinct_short_labels([str(c) for c in spec.data])]
    for column, label in zip(spec.data.columns, labels, strict=True):
        series = spec.data[column]
        ax.plot(
            x,
            series.to_numpy(dtype=np.float64),
            linewidth=0.8 if many else 1.2,
            alpha=0.5 if many else 1.0,
            marker=marker,
            markersize=3,
            label=label,
        )
    if np.issubdtype(x.dtype, np.integer):
        # Whole instances: a tick at each of a few, else whole-number ticks (one instance
        # per report had ticks at -0.04, -0.02, 0.00, ...).
        if 0 < len(x) <= 12:
            ax.set_xticks(x)
            ax.set_xlim(float(x.min()) - 0.5, float(x.max()) + 0.5)
        else:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.ticklabel_format(axis="y", style="plain", useOffset=False)
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
