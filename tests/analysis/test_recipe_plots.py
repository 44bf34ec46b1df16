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
