"""The recipe output widget: every table as written, numbers as numbers, summary and plots."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage

from strata.viewer.recipe_view import (
    PLOTS_TAB,
    SUMMARY_TAB,
    RecipeOutputContent,
    RecipeOutputWidget,
)
from strata.viewer.table_model import SORT_ROLE
from tests.conftest import REAL_DIR, requires_shared

#: The extra-p strong-scaling sweep: small reports, the same kernels at 1, 2 and 4 ranks.
SWEEP = [REAL_DIR / f"extra-p__extrap__concurrent.s{s}__profile{s}.sqlite" for s in (1, 2, 4)]


def write_recipe_output(folder: Path, recipe: str = "cuda_gpu_kern_sum") -> Path:
    """Run ``recipe`` serially on the sweep and write its output folder; return the folder."""
    from strata.analysis.recipes import RecipeOptions, run_recipe, write_output

    run = run_recipe(recipe, SWEEP, RecipeOptions(use_cache=False), mode="serial")
    write_output(run.output, folder, run)
    return folder


@pytest.fixture(scope="module")
def recipe_folder(tmp_path_factory) -> Path:
    if not all(p.is_file() for p in SWEEP):
        pytest.skip(f"needs the extra-p concurrent sweep in {REAL_DIR} (../shared)")
    return write_recipe_output(tmp_path_factory.mktemp("recipe") / "kern_sum")


@pytest.fixture
def make_widget(qtbot):
    def _make(content: RecipeOutputContent) -> RecipeOutputWidget:
        widget = RecipeOutputWidget()
        qtbot.addWidget(widget)
        widget.set_content(content)
        widget.resize(1100, 700)
        widget.show()
        return widget

    return _make


def shown_cells(widget: RecipeOutputWidget, name: str, role=Qt.ItemDataRole.DisplayRole):
    """Return the cells of table ``name`` as the view shows them (proxy order), by column."""
    proxy = widget.table_view(name).model()
    return {
        proxy.headerData(c, Qt.Orientation.Horizontal): [
            proxy.data(proxy.index(r, c), role) for r in range(proxy.rowCount())
        ]
        for c in range(proxy.columnCount())
    }


def assert_table_shows(widget: RecipeOutputWidget, name: str, frame: pd.DataFrame) -> None:
    """Every cell of ``frame`` is shown: the raw value sorts, the text reads as the value."""
    frame = frame.reset_index(drop=True)
    display = shown_cells(widget, name)
    raw = shown_cells(widget, name, SORT_ROLE)
    assert list(display) == [str(c) for c in frame.columns]
    for column in frame.columns:
        values = frame[column]
        if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            expected = ["" if v is None else str(v) for v in values]
            assert display[str(column)] == expected, column
            continue
        numbers = values.to_numpy(np.float64)
        shown = np.array([math.nan if t == "" else float(t.replace(",", "")) for t in display[
            str(column)]])  # fmt: skip
        assert np.array_equal(np.isnan(numbers), np.isnan(shown)), column
        np.testing.assert_allclose(shown, numbers, rtol=0, atol=6e-7, err_msg=str(column))
        sorted_on = np.array(raw[str(column)], dtype=np.float64)
        np.testing.assert_array_equal(sorted_on, np.where(np.isnan(numbers), -np.inf, numbers))


def test_planted_table_sorts_numbers_as_numbers_filters_and_copies(make_widget) -> None:
    frame = pd.DataFrame(
        {
            "Name": ["alpha", "beta", "gamma", "delta"],
            "Instances": np.array([999, 1000, 7, 1_234_567], dtype=np.int64),
            "Spread": [1.31, 2.5, np.nan, 12.0],
            "Avg (ns)": [1.5, 2.0, 3.0, 4.0],
        }
    )
    widget = make_widget(RecipeOutputContent("planted", "/x", 2, "serial", {"t": frame}))
    assert widget.title_label.text() == "<b>planted · 2 reports · mode serial</b>"
    assert_table_shows(widget, "t", frame)
    assert shown_cells(widget, "t")["Spread"] == ["1.31", "2.50", "", "12.00"]
    assert shown_cells(widget, "t")["Instances"][3] == "1,234,567"
    view = widget.table_view("t")
    view.sortByColumn(1, Qt.SortOrder.AscendingOrder)
    assert shown_cells(widget, "t")["Name"] == ["gamma", "alpha", "beta", "delta"]
    widget.set_filter("t", "ETA")  # beta; case-insensitive, any column
    assert shown_cells(widget, "t")["Name"] == ["beta"]
    widget.set_filter("t", "1,234")  # numbers match as shown
    assert shown_cells(widget, "t")["Name"] == ["delta"]
    widget.set_filter("t", "")
    view.selectRow(0)
    widget.copy_table("t")
    assert (
        QGuiApplication.clipboard().text() == "Name\tInstances\tSpread\tAvg (ns)\ngamma\t7\t\t3.0\n"
    )
    tabs = [widget.tabs.tabText(i) for i in range(widget.tabs.count())]
    assert tabs == ["t", SUMMARY_TAB, PLOTS_TAB]
    assert not widget.tabs.isTabEnabled(2)  # no plots


def test_plots_are_scaled_to_the_width_never_up(make_widget) -> None:
    wide, small = (
        QImage(3000, 600, QImage.Format.Format_RGB32),
        QImage(200, 100, QImage.Format.Format_RGB32),
    )
    wide.fill(QColor("red"))
    small.fill(QColor("blue"))
    widget = make_widget(RecipeOutputContent("p", "/x", 1, plots={"wide": wide, "small": small}))
    widget.tabs.setCurrentIndex(widget.tabs.count() - 1)
    pixmaps = widget.plot_pixmaps()
    assert pixmaps[0].width() < widget.width()
    assert pixmaps[0].height() < 600
    assert (pixmaps[1].width(), pixmaps[1].height()) == (200, 100)
    assert pixmaps[0].toImage().pixelColor(10, 10) == QColor("red")


@requires_shared
def test_a_real_recipe_output_shows_every_table_summary_and_plot(
    make_widget, recipe_folder: Path
) -> None:
    from strata.analysis.recipes import load_manifest, load_output

    tables = load_output(recipe_folder)
    manifest = load_manifest(recipe_folder)
    summary = (recipe_folder / "summary.txt").read_text(encoding="utf-8")
    plots = {n: QImage(str(recipe_folder / f)) for n, f in manifest["Outputs"]["plots"].items()}
    content = RecipeOutputContent(
        "cuda_gpu_kern_sum", str(recipe_folder), 3, "serial", tables, summary, plots
    )
    widget = make_widget(content)
    assert widget.table_names() == list(tables) == ["all_stats", "rank_stats", "by_file", "files"]
    for name, frame in tables.items():
        assert widget.table_view(name).model().rowCount() == len(frame) > 0
        assert_table_shows(widget, name, frame)
    assert widget.summary_text() == summary
    assert [not p.isNull() for p in widget.plot_pixmaps()] == [True]
