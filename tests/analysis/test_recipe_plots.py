"""Recipe plots: what a person reads in the PNG is all there."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from strata.analysis.recipes.base import PlotSpec
from strata.analysis.recipes.output import build_figure


@pytest.mark.parametrize("n_columns", [1, 3, 40])
def test_heatmap_title_fits_inside_the_figure(n_columns: int) -> None:
    data = pd.DataFrame(
        np.arange(4 * n_columns, dtype=float).reshape(4, n_columns),
        columns=[f"profile{i}.sqlite" for i in range(n_columns)],
    )
    title = "cuda_gpu_kern_sum: mean kernel time per report (ns), one column per report"
    fig = build_figure(PlotSpec("heatmap", title, "report", "kernel", data))
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    box = fig._suptitle.get_window_extent(renderer)
    width = fig.get_figwidth() * fig.dpi
    assert box.x0 >= 0
    assert box.x1 <= width
    assert fig._suptitle.get_text().replace("\n", " ") == title


@pytest.mark.parametrize("n_rows", [1, 2])
def test_heatmap_of_few_rows_and_long_report_names_keeps_its_cells(n_rows: int) -> None:
    """Two memcpy kinds over reports named like real ones: the cells must still show."""
    import warnings

    data = pd.DataFrame(
        np.ones((n_rows, 2)),
        columns=[
            f"ayush-os__nsight-systems-deep-dive__vector_add_profile_v{i}.sqlite" for i in (3, 4)
        ],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "constrained_layout not applied … collapsed to zero"
        fig = build_figure(PlotSpec("heatmap", "t", "report", "Operation", data))
        fig.draw(fig.canvas.get_renderer())
    cells = fig.axes[0].get_window_extent()
    assert cells.height > 20
    assert cells.width > 20


def _pace_spec(n_instances: int) -> PlotSpec:
    """The pace recipe's duration plot over four sweep reports, as it builds it."""
    files = [f"extra-p__extrap__concurrent.s{s}__profile{s}.sqlite" for s in (1, 2, 4, 16)]
    rng = np.random.default_rng(0)
    durations_ns = rng.uniform(25e6, 415e6, size=(n_instances, len(files)))
    frame = pd.DataFrame(durations_ns, columns=files)
    frame.index = pd.Index(np.arange(n_instances, dtype=np.int64), name="Iteration")
    return PlotSpec("lines", "test2: duration per instance", "instance", "duration (ms)",
                    frame / 1e6)  # fmt: skip


@pytest.mark.parametrize("n_instances", [1, 3, 200])
def test_line_plots_of_instances_have_whole_number_ticks(n_instances: int) -> None:
    fig = build_figure(_pace_spec(n_instances))
    fig.draw(fig.canvas.get_renderer())
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    ticks = [t for t in ax.get_xticks() if lo <= t <= hi]
    assert ticks
    assert all(float(t).is_integer() for t in ticks)
    if n_instances <= 3:
        assert ticks == list(range(n_instances))  # each instance, and nothing between
    # Plain numbers on the duration axis (no '1e8' above it).
    assert not ax.yaxis.get_offset_text().get_text()


def test_line_plot_legend_tells_reports_apart_in_colour_blind_safe_colours() -> None:
    from tests.app.test_colour_vision import seen_distance

    fig = build_figure(_pace_spec(3))
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert len(set(labels)) == 4
    assert all(f"profile{s}" in label for s, label in zip((1, 2, 4, 16), labels, strict=True))
    colors = [line.get_color() for line in fig.axes[0].get_lines()]
    for a, b in zip(colors, colors[1:], strict=False):
        for vision in ("deuteranopia", "protanopia"):
            assert seen_distance(a, b, vision) >= 15, (a, b, vision)
