"""The Outliers tab follows the panel's scope: its report, the visible range, the selection;
outliers are scored over the whole run and filtered to the scope."""

from __future__ import annotations

import numpy as np
import pytest

from strata.resources.demo import STRAGGLER_RANK
from strata.viewer.state import Scope
from tests.app.test_panel import _open, demo_paths  # noqa: F401 (a fixture)

WAIT_MS = 10_000


@pytest.fixture
def outliers_tab(qtbot, make_window, demo_paths):  # noqa: F811 (the fixture imported)
    window, controller = _open(qtbot, make_window, demo_paths)
    controller.panel.set_kind("outliers")
    return window, controller


def _listed(controller):
    return controller.panel.current_frame()


def _shared_spans(window, frame) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.asarray(window.binding.offsets_ns(), dtype=np.int64)
    start = frame["start_ns"].to_numpy(np.int64) + offsets[frame["report_index"].to_numpy(int)]
    return start, start + frame["duration_ns"].to_numpy(np.int64)


def test_the_report_filter_lists_that_report_only(qtbot, outliers_tab) -> None:
    window, controller = outliers_tab
    everything = controller.outliers().instances
    assert len(_listed(controller)) == len(everything)
    controller.panel.set_scope(Scope("all", STRAGGLER_RANK))
    qtbot.waitUntil(lambda: len(_listed(controller)) < len(everything), timeout=WAIT_MS)
    listed = _listed(controller)
    assert set(listed["report"]) == {f"rank{STRAGGLER_RANK}.sqlite"}
    assert len(listed) == int((everything["report_index"] == STRAGGLER_RANK).sum())
    assert f"of rank{STRAGGLER_RANK}.sqlite" in controller.panel.status_label.text()
    marked = {m.report_index for m in window.timeline.state.marks()}
    assert marked == {STRAGGLER_RANK}
    # The scores are those of the whole run: a row keeps its score under any filter.
    row = listed.iloc[0]
    same = everything[(everything["start_ns"] == row["start_ns"])
                      & (everything["report_index"] == STRAGGLER_RANK)]  # fmt: skip
    assert same["robust_z"].iloc[0] == row["robust_z"]


def test_the_visible_range_lists_what_is_in_view_and_follows_it(qtbot, outliers_tab) -> None:
    window, controller = outliers_tab
    total = len(controller.outliers().instances)
    lo, hi = window.timeline.state.full_range()
    window.timeline.state.set_view_range(lo, lo + (hi - lo) // 3)
    controller.panel.set_scope(Scope("visible"))
    qtbot.waitUntil(lambda: 0 < len(_listed(controller)) < total, timeout=WAIT_MS)
    first = _listed(controller)
    start, end = _shared_spans(window, first)
    t0, t1 = window.timeline.state.view_range()
    assert np.all((start < t1) & (end > t0))
    late = hi - (hi - lo) // 3
    window.timeline.state.set_view_range(late, hi)  # the list follows the view
    qtbot.waitUntil(
        lambda: bool(np.all(_shared_spans(window, _listed(controller))[1] > late)),
        timeout=WAIT_MS,
    )
    assert not _listed(controller).equals(first)
    assert "in the visible range" in controller.panel.status_label.text()


def test_the_selection_lists_what_is_selected(qtbot, outliers_tab) -> None:
    window, controller = outliers_tab
    controller.panel.set_scope(Scope("selection"))
    qtbot.waitUntil(lambda: len(_listed(controller)) == 0, timeout=WAIT_MS)
    assert "Shift-drag" in controller.panel.status_label.text()
    everything = _listed_all = controller.outliers().instances
    start, end = _shared_spans(window, _listed_all)
    worst = int(np.argmax(np.abs(everything["robust_z"].to_numpy())))
    t0, t1 = int(start[worst]) - 10, int(end[worst]) + 10
    window.timeline.state.select(t0, t1)
    qtbot.waitUntil(lambda: len(_listed(controller)) > 0, timeout=WAIT_MS)
    s, e = _shared_spans(window, _listed(controller))
    assert np.all((s < t1) & (e > t0))
    assert len(_listed(controller)) == int(np.sum((start < t1) & (end > t0)))
