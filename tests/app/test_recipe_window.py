"""Opening a recipe output folder from the main window: menu, drop, and what is not one."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog

from tests.app.conftest import LOAD_TIMEOUT_MS, wait_idle
from tests.app.test_main_window import _drop
from tests.conftest import requires_shared
from tests.viewer.test_recipe_view import SWEEP, assert_table_shows, write_recipe_output


@pytest.fixture(scope="module")
def recipe_folder(tmp_path_factory) -> Path:
    if not all(p.is_file() for p in SWEEP):
        pytest.skip("needs the extra-p concurrent sweep in ../shared/reports/real")
    return write_recipe_output(tmp_path_factory.mktemp("recipe") / "kern_sum")


def _open_through_menu(qtbot, window, folder: Path, monkeypatch):
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_a, **_k: str(folder))
    with qtbot.waitSignal(window.recipe_outputs.opened, timeout=LOAD_TIMEOUT_MS) as blocker:
        window.actions_by_name["open_recipe"].trigger()
    return blocker.args[0]


@requires_shared
def test_the_menu_opens_a_recipe_output_as_tables(
    qtbot, make_window, recipe_folder: Path, monkeypatch
) -> None:
    from strata.analysis.recipes import load_output

    window = make_window()
    menu_texts = [a.text() for a in window.menuBar().actions()[0].menu().actions()]
    assert "Open Recipe O&utput…" in menu_texts
    recipe = _open_through_menu(qtbot, window, recipe_folder, monkeypatch)
    assert recipe.isWindow()
    assert recipe.isVisible()
    assert recipe.windowTitle() == f"Recipe: cuda_gpu_kern_sum — {recipe_folder.resolve()}"
    view = recipe.view
    assert view.title_label.text() == "<b>cuda_gpu_kern_sum · 3 reports · mode serial</b>"
    tables = load_output(recipe_folder)
    assert view.table_names() == list(tables)
    for name, frame in tables.items():
        assert view.table_view(name).model().rowCount() == len(frame) > 0
        assert_table_shows(view, name, frame)
    summary = (recipe_folder / "summary.txt").read_text(encoding="utf-8")
    assert view.summary_text() == summary.rstrip("\n")
    assert "cuda_gpu_kern_sum:" in view.summary_text()
    pixmaps = view.plot_pixmaps()
    assert pixmaps
    assert not pixmaps[0].isNull()
    assert window.report_list.entries() == []  # not mistaken for reports
    assert window.messages.messages() == []
    recipe.resize(1200, 800)
    view.tabs.setCurrentIndex(0)
    view.grab().save("/tmp/recipe_view.png")
    view.tabs.setCurrentIndex(view.tabs.count() - 1)
    view.grab().save("/tmp/recipe_view_plots.png")


@requires_shared
def test_dropping_a_recipe_output_folder_opens_it_instead_of_reports(
    qtbot, make_window, recipe_folder: Path
) -> None:
    window = make_window()
    with qtbot.waitSignal(window.recipe_outputs.opened, timeout=LOAD_TIMEOUT_MS) as blocker:
        assert _drop(window, [recipe_folder]).isAccepted()
    assert blocker.args[0].view.table_names() == ["all_stats", "rank_stats", "by_file", "files"]
    assert window.messages.messages() == []
    assert window.report_list.entries() == []
    # Opening it again replaces its window rather than stacking a second one.
    with qtbot.waitSignal(window.recipe_outputs.opened, timeout=LOAD_TIMEOUT_MS):
        window.open_paths([recipe_folder])
    assert len(window.recipe_outputs.windows()) == 1
    window.close()
    assert window.recipe_outputs.windows() == []


def test_a_folder_of_neither_reports_nor_recipe_output_gives_one_line(
    qtbot, make_window, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("nothing to open")
    window = make_window()
    window.open_paths([tmp_path])
    wait_idle(qtbot, window)
    assert window.messages.messages() == [
        f"{tmp_path.name}: folder holds no Nsight Systems reports (.sqlite, .nsys-rep, .qdrep, "
        "or an arrowdir/parquetdir export folder) or PyTorch profiler traces (.json, .json.gz)"
    ]
    assert window.recipe_outputs.windows() == []


def test_a_broken_recipe_output_gives_one_line(qtbot, make_window, tmp_path: Path) -> None:
    (tmp_path / "recipe.json").write_text("{not json")
    window = make_window()
    window.open_recipe_output(tmp_path)
    qtbot.waitUntil(lambda: bool(window.messages.messages()), timeout=LOAD_TIMEOUT_MS)
    (line,) = window.messages.messages()
    assert line.startswith(f"{tmp_path.name}: ")
    assert "unreadable recipe manifest" in line
    assert "\n" not in line
    assert window.recipe_outputs.windows() == []
