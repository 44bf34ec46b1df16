"""The call-tree panel: the selection's CPU samples as a tree and a flame graph (real report)."""

from __future__ import annotations

from collections import Counter

import pytest

from strata.analysis.schema import tid_of
from tests.app.conftest import LOAD_TIMEOUT_MS, wait_idle
from tests.conftest import REAL_DIR, requires_shared
from tests.helpers import sql_rows

SAXPY = REAL_DIR / "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite"


@pytest.fixture
def saxpy(qtbot, make_window):
    from strata.app.calltree_controller import install_call_tree

    window = make_window()
    controller = install_call_tree(window.context)
    window.open_paths([SAXPY])
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: controller.panel.tree_view.topLevelItemCount() > 0,
                    timeout=LOAD_TIMEOUT_MS)  # fmt: skip
    return window, controller


def _leaf_counts(where: str = "", *params) -> Counter:
    rows = sql_rows(
        SAXPY, "SELECT s.value FROM SAMPLING_CALLCHAINS c JOIN COMPOSITE_EVENTS e ON e.id = c.id "
        f"JOIN StringIds s ON s.id = c.symbol WHERE c.stackDepth = 0 {where}", *params,
    )  # fmt: skip
    return Counter(v for (v,) in rows)


@requires_shared
def test_whole_run_then_a_selection_drive_the_tree(qtbot, saxpy) -> None:
    window, controller = saxpy
    panel = controller.panel
    (total,) = sql_rows(SAXPY, "SELECT count(*) FROM COMPOSITE_EVENTS")[0]
    assert panel.tree.samples == total
    # Bottom-up: the roots are where the samples stopped.
    with qtbot.waitSignal(controller.tree_ready, timeout=LOAD_TIMEOUT_MS):
        panel.mode.setCurrentIndex(1)
    roots = {}
    for i in range(panel.tree_view.topLevelItemCount()):
        item = panel.tree_view.topLevelItem(i)
        roots[item.text(0)] = int(item.text(2).replace(",", ""))
    assert Counter(roots) == _leaf_counts()
    # A selection of one thread's sample row over the middle half of the run.
    track = next(t for t in window.binding.tracks() if t.kind == "samples")
    ((_table, track_id),) = track.parts
    report = window.binding.shown_reports()[0]
    gtid = int(report.tables["samples"].track_keys["global_tid"].iloc[track_id])
    lo, hi = sql_rows(SAXPY, "SELECT min(start), max(start) FROM COMPOSITE_EVENTS")[0]
    t0, t1 = lo + (hi - lo) // 4, hi - (hi - lo) // 4
    offset = window.binding.offsets_ns()[0]
    with qtbot.waitSignal(controller.tree_ready, timeout=LOAD_TIMEOUT_MS):
        window.timeline.state.select(t0 + offset, t1 + offset, rows=(track.key,))
    expected = _leaf_counts("AND e.globalTid = ? AND e.start >= ? AND e.start < ?", gtid, t0, t1)
    (n,) = sql_rows(
        SAXPY, "SELECT count(*) FROM COMPOSITE_EVENTS WHERE globalTid = ? AND start >= ? "
        "AND start < ?", gtid, t0, t1,
    )[0]  # fmt: skip
    assert 0 < n < total
    assert tid_of(gtid) > 0
    assert panel.tree.samples == n
    roots = Counter({
        panel.tree_view.topLevelItem(i).text(0):
        int(panel.tree_view.topLevelItem(i).text(2).replace(",", ""))
        for i in range(panel.tree_view.topLevelItemCount())
    })  # fmt: skip
    assert roots == expected
    # The flame graph draws the top-down tree: its roots span the width by their totals.
    flame = panel.flame
    assert not flame.tree.bottom_up
    boxes = flame.boxes(1000.0, 400.0)
    bottom = [r for r, node in boxes if flame.tree.level[node] == 0]
    assert bottom
    assert abs(sum(r.width() for r in bottom) - 1000.0) < len(bottom) + 1


ICON_CPU = REAL_DIR / "NTHU-SC__ISC25-ICON-C__cpu.sqlite"


@requires_shared
def test_a_report_selector_scopes_the_tree_to_one_report(qtbot, make_window) -> None:
    from strata.app.calltree_controller import install_call_tree

    window = make_window()
    controller = install_call_tree(window.context)
    window.open_paths([SAXPY, ICON_CPU])
    wait_idle(qtbot, window)
    panel = controller.panel
    qtbot.waitUntil(lambda: panel.tree is not None and panel.tree.samples > 0,
                    timeout=LOAD_TIMEOUT_MS)  # fmt: skip
    combo = panel.report_combo
    assert not combo.isHidden()
    assert combo.count() == 3  # All reports + one per report
    counts = {}
    for path in (SAXPY, ICON_CPU):
        (counts[path],) = sql_rows(path, "SELECT count(*) FROM COMPOSITE_EVENTS")[0]
    assert panel.tree.samples == sum(counts.values())  # all of them, said so in the status
    assert "2 reports together" in panel.status.text()
    labels = window.binding.shown_set().labels
    for i, path in enumerate(window.binding.shown_set().reports):
        with qtbot.waitSignal(controller.tree_ready, timeout=LOAD_TIMEOUT_MS):
            combo.setCurrentIndex(i + 1)
        assert combo.currentText() == labels[i]
        assert panel.tree.samples == counts[path.path]
    # The names get the room: the Function column is the widest.
    header = panel.tree_view.header()
    assert header.sectionSize(0) == max(header.sectionSize(c) for c in range(header.count()))


@requires_shared
def test_the_deepest_frames_keep_room_for_their_names(qtbot, make_window) -> None:
    # ICON's OpenMP threads: chains ~30 frames deep; at the style's 20 px a level, the
    # Function column of a docked panel had no room left for their names.
    from strata.app.calltree_controller import install_call_tree

    window = make_window()
    controller = install_call_tree(window.context)
    window.open_paths([ICON_CPU])
    wait_idle(qtbot, window)
    panel = controller.panel
    qtbot.waitUntil(lambda: panel.tree is not None and panel.tree.samples > 0,
                    timeout=LOAD_TIMEOUT_MS)  # fmt: skip
    panel.resize(640, 500)
    view = panel.tree_view
    depth, stack = 0, [(view.topLevelItem(i), 0) for i in range(view.topLevelItemCount())]
    blank = 0
    while stack:  # the deepest frame listed
        item, level = stack.pop()
        depth = max(depth, level)
        blank += not item.text(0).strip()
        stack += [(item.child(i), level + 1) for i in range(item.childCount())]
    assert depth >= 15
    assert blank == 0  # a frame without a symbol says so, not a blank row
    room = view.header().sectionSize(0) - depth * view.indentation()
    assert room >= view.fontMetrics().horizontalAdvance("x" * 12)
