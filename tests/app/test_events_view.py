"""The Events view: the selected area's events, sortable, filterable, linked with the timeline."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from PySide6.QtCore import Qt

from tests.app.conftest import open_shown

JOB_TIMEOUT_MS = 60_000


@pytest.fixture
def listing(qtbot, make_window, demo_reports):
    from strata.app.events_controller import install_events_view

    window = make_window()
    open_shown(qtbot, window, demo_reports[:2])
    controller = install_events_view(window.context)
    controller.dock.show()
    return window, controller


def _select_stream(qtbot, window, controller):
    """Select one GPU stream row over the middle third of the run; return its track."""
    track = next(t for t in window.binding.tracks() if t.kind == "gpu_stream")
    lo, hi = window.timeline.state.full_range()
    t0, t1 = lo + (hi - lo) // 3, lo + (hi - lo) * 2 // 3
    with qtbot.waitSignal(controller.events_ready, timeout=JOB_TIMEOUT_MS):
        window.timeline.state.select(t0, t1, [track.key])
    return track, t0, t1


def test_the_view_lists_the_area_and_a_click_centres_the_event(qtbot, listing) -> None:
    window, controller = listing
    track, t0, t1 = _select_stream(qtbot, window, controller)
    off = window.binding.offsets_ns()[track.report_index]
    expected = 0
    for table_name, track_id in track.parts:  # kernels, memcpy, memset of the stream
        sliced = window.binding.shown_set().slice_tables(track.report_index).get(table_name)
        if sliced is None:
            continue
        lo, hi = sliced.bounds(track_id)
        start, end = sliced.start_ns[lo:hi] + off, sliced.end_ns[lo:hi] + off
        expected += int(((start < t1) & (end > t0)).sum())
    view = controller.view
    assert view.model.rowCount() == expected > 10
    assert view.count_label.text() == f"{expected:,} events"

    row = 5
    rect = view.table.visualRect(view.model.index(row, 0))
    view.table.scrollTo(view.model.index(row, 0))
    rect = view.table.visualRect(view.model.index(row, 0))
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    selected = window.timeline.state.selected_event()
    position = int(view.model.positions()[row])
    events = view.model.events()
    assert selected.index == int(events.index[position])
    assert selected.table == events.tables[int(events.table_codes[position])]
    middle = (selected.start_ns + selected.end_ns) // 2 + off
    v0, v1 = window.timeline.state.view_range()
    assert abs((v0 + v1) // 2 - middle) <= 1


def test_a_pick_on_the_timeline_selects_its_row(qtbot, listing) -> None:
    window, controller = listing
    _select_stream(qtbot, window, controller)
    events = controller.view.model.events()
    position = len(events) // 2
    ref = controller._ref(events, position)
    window.timeline.state.select_event(ref)
    window.timeline.event_clicked.emit(ref)
    current = controller.view.table.currentIndex()
    assert int(controller.view.model.positions()[current.row()]) == position


def test_sort_filter_and_export(qtbot, listing, tmp_path) -> None:
    window, controller = listing
    _select_stream(qtbot, window, controller)
    view, model = controller.view, controller.view.model
    events = model.events()
    view.table.sortByColumn(2, Qt.SortOrder.DescendingOrder)  # duration, longest first
    durations = (events.end_ns - events.start_ns)[model.positions()]
    assert np.all(np.diff(durations) <= 0)
    name = model.cell(int(model.positions()[0]), 0)
    view.filter_field.setText(name[: max(3, len(name) // 2)].upper())
    shown = [model.cell(int(p), 0) for p in model.positions()]
    assert shown
    assert all(name[: max(3, len(name) // 2)].lower() in s.lower() for s in shown)
    assert "of" in view.count_label.text() or len(shown) == len(events)
    path = controller.export_csv(tmp_path / "events.csv")
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == model.rowCount()
    assert [r["name"] for r in rows] == shown
    assert list(rows[0]) == ["name", "start_ns", "duration_ns", "row", "report", "table"]


def test_a_million_rows_are_arrays_not_objects() -> None:
    from strata.analysis.area import AreaEvents
    from strata.viewer.events_view import EventsModel

    n = 1_000_000
    rng = np.random.default_rng(0)
    start = np.sort(rng.integers(0, 10**12, n))
    events = AreaEvents(("kernels",), np.zeros(n, np.int32), np.zeros(n, np.int16),
                        np.arange(n, dtype=np.int64), np.zeros(n, np.int32), start,
                        start + rng.integers(1, 10**6, n), rng.integers(0, 50, n),
                        np.array([f"k{i}" for i in range(50)] + [""], dtype=object),
                        ("r/gpu0/s7",), ("r / GPU 0 / Stream 7",))  # fmt: skip
    model = EventsModel()
    model.set_events(events, ("r",))
    model.sort(0, Qt.SortOrder.AscendingOrder)
    assert model.rowCount() == n
    assert model.cell(int(model.positions()[0]), 0) == "k0"
    model.set_filter("k4")
    assert model.rowCount() == int(np.isin(events.name_codes, [4, *range(40, 50)]).sum())
