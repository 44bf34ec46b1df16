"""The stats panel's tab protocol (issue #23): a tab registered by this test alone appears in
the panel, computes on the demo reports, lists its rows, follows its own option and reacts
to a row click — no other file knows it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from PySide6.QtCore import Qt

from strata.analysis.reportset import ReportSet
from strata.app.stats_tabs import register_tab, stats_tabs, unregister_tab
from strata.viewer.stats_tabs import StatsTab, TabOption, TabScope
from strata.viewer.table_model import Column
from tests.app.conftest import LOAD_TIMEOUT_MS, wait_idle
from tests.helpers import sql_rows

_COLUMNS = (
    Column("name", "Name", "text"), Column("duration_ns", "Duration (ns)"),
    Column("report", "Report", "text"),
)  # fmt: skip
_OPTION = TabOption(
    "Toy extreme", "Each report's longest or shortest kernel",
    (("longest", "Longest"), ("shortest", "Shortest")),
)  # fmt: skip


def _extreme_kernels(reports: ReportSet, _scope: TabScope) -> pd.DataFrame:
    """Per report, its longest and its shortest kernel (on a worker)."""
    rows = []
    for i, report in enumerate(reports):
        kernels = report.tables["kernels"]
        duration = kernels["end_ns"] - kernels["start_ns"]
        for extreme, row in (("longest", np.argmax(duration)), ("shortest", np.argmin(duration))):
            name = report.strings.lookup(kernels["name_id"][[row]])[0]
            rows.append({"extreme": extreme, "name": name, "report": reports.labels[i],
                         "report_index": i, "row": int(row),
                         "start_ns": int(kernels["start_ns"][row]),
                         "end_ns": int(kernels["end_ns"][row]),
                         "duration_ns": int(duration[row])})  # fmt: skip
    return pd.DataFrame(rows)


def _rows(found: pd.DataFrame, scope: TabScope) -> tuple[pd.DataFrame, str]:
    rows = found[found["extreme"] == scope.option].reset_index(drop=True)
    return rows, f"{len(rows)} {scope.option} kernels"


def _show_kernel(tab, record: dict) -> None:
    tab.focus_row(int(record["report_index"]), "kernels", int(record["row"]),
                  int(record["start_ns"]), int(record["end_ns"]), str(record["name"]))  # fmt: skip


@pytest.fixture
def toy():
    """A tab of the test's own, registered for this test only."""
    tab = register_tab(
        StatsTab(
            "toy",
            "Toy kernels",
            _COLUMNS,
            option=_OPTION,
            time_scoped=False,
            compute=_extreme_kernels,
            rows=_rows,
            on_row=_show_kernel,
            follows=frozenset({"option"}),
            loading="Finding the extreme kernels…",
        )
    )
    yield tab
    unregister_tab(tab.id)


@pytest.fixture
def window(qtbot, make_window, demo_reports, toy):
    from strata.app.stats_controller import install_stats_panel

    window = make_window()
    window.stats_controller = controller = install_stats_panel(window.context)
    with qtbot.waitSignal(controller.lists["toy"].ready, timeout=LOAD_TIMEOUT_MS):
        window.open_paths(demo_reports)
    wait_idle(qtbot, window)
    return window


def _sql_durations(window, aggregate: str) -> list[int]:
    """Per shown report, its longest or shortest kernel, as SQLite reads the file."""
    return [
        sql_rows(r.path, f"SELECT {aggregate}(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0][0]
        for r in window.binding.shown_reports()
    ]


def test_the_toy_tab_is_listed_after_the_built_in_ones(toy, window) -> None:
    panel = window.stats_controller.panel
    assert stats_tabs()[-1] is toy
    assert panel.stats_tabs()[-1] is toy
    assert panel.tabs.tabText(panel.tabs.count() - 1) == "Toy kernels"
    assert [panel.tabs.tabText(i) for i in range(panel.tabs.count() - 1)] == [
        tab.title for tab in stats_tabs()[:-1]
    ]


def test_the_toy_tab_lists_its_rows_and_follows_its_option(qtbot, window) -> None:
    panel = window.stats_controller.panel
    panel.set_kind("toy")
    assert panel.option_combo("toy").isVisible()
    assert not panel.range_combo.isVisible()  # not time-scoped
    listed = panel.current_frame()
    assert listed["duration_ns"].tolist() == _sql_durations(window, "max")
    assert listed["report_index"].tolist() == list(range(len(window.binding.shown_reports())))
    assert panel.status_label.text() == f"{len(listed)} longest kernels"
    assert [c.header for c in panel.model.columns()] == ["Name", "Duration (ns)", "Report"]
    panel.option_combo("toy").setCurrentIndex(1)  # Shortest
    assert panel.current_frame()["duration_ns"].tolist() == _sql_durations(window, "min")
    panel.set_kind("kernels")  # another tab's own option is not shown
    assert not panel.option_combo("toy").isVisible()


def test_clicking_a_toy_row_shows_its_kernel(qtbot, window) -> None:
    panel = window.stats_controller.panel
    panel.set_kind("toy")
    record = panel.current_frame().iloc[1]
    rect = panel.table.visualRect(panel.proxy.index(1, 0))
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    picked = window.timeline.state.selected_event()
    assert picked is not None
    assert (picked.report_index, picked.table) == (1, "kernels")
    assert (picked.start_ns, picked.end_ns) == (record["start_ns"], record["end_ns"])
    offset = window.binding.offsets_ns()[1]
    t0, t1 = window.timeline.state.view_range()
    assert t0 <= record["start_ns"] + offset
    assert record["end_ns"] + offset <= t1


def test_an_unregistered_tab_is_gone_from_the_next_panel(qtbot, make_window, toy) -> None:
    from strata.app.stats_controller import install_stats_panel

    unregister_tab(toy.id)
    controller = install_stats_panel(make_window().context)
    titles = [controller.panel.tabs.tabText(i) for i in range(controller.panel.tabs.count())]
    assert "Toy kernels" not in titles
    assert "toy" not in controller.lists
