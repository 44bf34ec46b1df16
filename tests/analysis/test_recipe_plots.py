"""Recipe plots: what a person reads in the PNG is all there."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.recipes.base import PlotSpec
from analysis.recipes.output import build_figure


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
