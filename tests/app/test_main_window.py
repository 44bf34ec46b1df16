"""The main window on real reports: open, drop a folder, bad files, pins that persist, keys."""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox

from tests.app.conftest import small_real, wait_idle
from tests.conftest import FIXTURES_DIR, REAL_DIR, fingerprint, requires_fixtures, requires_shared


def _names(window) -> list[str]:
    return [r.name for r in window.binding.shown_reports()]


@requires_shared
def test_real_reports_open_as_rows_of_the_timeline(qtbot, make_window) -> None:
    window = make_window()
    paths = [small_real(0), small_real(2)]
    before = [fingerprint(p) for p in paths]
    window.open_paths(paths)
    wait_idle(qtbot, window)
    assert _names(window) == [p.name for p in paths]
    tracks = window.binding.tracks()
    assert {t.report_index for t in tracks} == {0, 1}
    assert len({t.key for t in tracks}) == len(tracks)
    assert window.reports_panel.row_count() == 2
    assert window.windowTitle().startswith("2 reports")
    assert window.messages.messages() == []
    assert [fingerprint(p) for p in paths] == before


def _drop(window, paths: list[Path]) -> QDropEvent:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    center = QPoint(window.width() // 2, window.height() // 2)
    enter = QDragEnterEvent(
        center,
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted()
    drop = QDropEvent(
        QPointF(center),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(window, drop)
    return drop


@requires_shared
def test_dropping_a_folder_opens_every_report_in_it(qtbot, make_window, tmp_path: Path) -> None:
    folder = tmp_path / "sweep"
    folder.mkdir()
    for i in (0, 1):
        shutil.copy(small_real(i), folder)
    window = make_window()
    # A drop over the timeline must reach the window (the timeline refuses it, Qt goes up).
    assert not window.timeline.acceptDrops()
    drop = _drop(window, [folder])
    assert drop.isAccepted()
    wait_idle(qtbot, window)
    assert sorted(_names(window)) == sorted(small_real(i).name for i in (0, 1))


def test_a_drop_without_files_is_refused(make_window) -> None:
    window = make_window()
    mime = QMimeData()
    mime.setText("hello")
    enter = QDragEnterEvent(
        QPoint(5, 5),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(window, enter)
    assert not enter.isAccepted()


def _truncated(tmp_path: Path) -> Path:
    path = tmp_path / "truncated.sqlite"
    data = (FIXTURES_DIR / "syn.sqlite").read_bytes()
    path.write_bytes(data[: len(data) // 3])
    return path


def _foreign(tmp_path: Path) -> Path:
    path = tmp_path / "foreign.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE test(a, b)")
    con.commit()
    con.close()
    return path


def _newer(tmp_path: Path) -> Path:
    path = tmp_path / "future.sqlite"
    shutil.copy(FIXTURES_DIR / "syn.sqlite", path)
    con = sqlite3.connect(path)
    con.execute("UPDATE META_DATA_EXPORT SET value = '9.0.0' WHERE name = 'EXPORT_SCHEMA_VERSION'")
    con.commit()
    con.close()
    return path


def _text(tmp_path: Path) -> Path:
    path = tmp_path / "notes.sqlite"
    path.write_text("not a database\n" * 40)
    return path


@requires_shared
@requires_fixtures
def test_bad_files_are_explained_while_the_good_ones_load(qtbot, make_window, tmp_path) -> None:
    bad = {
        _truncated(tmp_path): "truncated",
        _foreign(tmp_path): "without Nsight Systems tables",
        _newer(tmp_path): "newer than Strata reads",
        _text(tmp_path): "not an SQLite database",
    }
    before = {p: fingerprint(p) for p in bad}
    window = make_window()
    window.open_paths([small_real(0), *bad, small_real(1)])
    wait_idle(qtbot, window)
    assert _names(window) == [small_real(0).name, small_real(1).name]
    messages = window.messages.messages()
    assert len(messages) == len(bad)
    for path, needle in bad.items():
        line = next(m for m in messages if m.startswith(path.name + ":"))
        assert needle in line
        assert "\n" not in line
        assert fingerprint(path) == before[path]
    assert window.messages.isVisible()
    window.messages.clear()
    assert not window.messages.isVisible()


@requires_shared
def test_pins_hidden_rows_and_collapsed_groups_survive_reopening_the_same_reports(
    qtbot, make_window, settings, tmp_path: Path
) -> None:
    first = make_window()
    first.open_paths([small_real(0), small_real(1)])
    wait_idle(qtbot, first)
    keys = [t.key for t in first.binding.tracks() if t.report_index == 1][:2]
    for key in keys:
        first.timeline.state.pin(key)
    assert set(first.timeline.state.pinned_keys()) >= set(keys)
    hidden = next(t.key for t in first.binding.tracks() if t.report_index == 0)
    first.timeline.state.set_hidden_keys([hidden])
    group = next(t.group[:2] for t in first.binding.tracks() if t.report_index == 1)
    first.timeline.state.set_collapsed(group, True)
    first.close()

    # The same file names from another folder, in the other order: the same set of reports.
    copies = tmp_path / "copies"
    copies.mkdir()
    for i in (1, 0):
        shutil.copy(small_real(i), copies)
    second = make_window()
    second.open_paths([copies / small_real(1).name, copies / small_real(0).name])
    wait_idle(qtbot, second)
    assert _names(second) == [small_real(1).name, small_real(0).name]
    shown_keys = {t.key for t in second.binding.tracks()}
    restored = set(second.timeline.state.pinned_keys())
    assert restored, "pins were not restored"
    assert restored <= shown_keys
    assert len(restored) == len(keys)
    assert len(second.timeline.state.hidden_keys()) == 1
    assert second.timeline.state.hidden_keys()[0] in shown_keys
    assert second.timeline.state.collapsed_groups() == [group]


@requires_shared
def test_pin_by_name_pins_matching_rows_across_reports(qtbot, make_window) -> None:
    window = make_window()
    window.open_paths([small_real(0), small_real(1)])
    wait_idle(qtbot, window)
    # A label that both reports have (same program, two runs): pinned in each of them.
    label = window.binding.tracks()[-1].label
    expected = [t.key for t in window.binding.tracks() if t.label == label]
    assert len(expected) >= 2
    assert window.pin_by_name(re.escape(label)) == len(expected)
    assert sorted(window.timeline.state.pinned_keys()) == sorted(expected)


@requires_shared
def test_shortcuts_fit_zoom_and_close(qtbot, make_window) -> None:
    window = make_window()
    window.open_paths([small_real(0), small_real(1)])
    wait_idle(qtbot, window)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5000)
    window.timeline.setFocus()
    window.timeline.zoom(3.0)  # moved: F fits the activity (a second F would fit everything)
    qtbot.keyClick(window.timeline, Qt.Key.Key_F)
    t0, t1 = window.timeline.state.view_range()
    qtbot.keyClick(window.timeline, Qt.Key.Key_Plus)
    z0, z1 = window.timeline.state.view_range()
    assert (z1 - z0) == pytest.approx((t1 - t0) / 2, rel=0.01)
    qtbot.keyClick(window.timeline, Qt.Key.Key_Minus)
    z0, z1 = window.timeline.state.view_range()
    assert (z1 - z0) == pytest.approx(t1 - t0, rel=0.01)
    qtbot.keyClick(window.timeline, Qt.Key.Key_F)
    assert window.timeline.state.view_range() == (t0, t1)
    qtbot.keyClick(window.timeline, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    wait_idle(qtbot, window)
    assert _names(window) == [small_real(0).name]


def test_every_menu_action_with_a_shortcut_is_listed_in_help(make_window) -> None:
    from strata.app.dialogs import ShortcutsDialog

    window = make_window()
    dialog = ShortcutsDialog(list(window.actions_by_name.values()), window)
    shown = {dialog.table.item(r, 0).text() for r in range(dialog.table.rowCount())}
    assert {"Open", "Fit", "Pin by Name", "Close Report", "Quit"} <= shown
    dialog.close()


@requires_shared
def test_opened_reports_become_recent_files_and_reopen_from_the_menu(qtbot, make_window) -> None:
    window = make_window()
    window.open_paths([small_real(0)])
    wait_idle(qtbot, window)
    assert window.settings.recent_files() == [str(small_real(0).resolve())]
    window.report_list.clear()
    wait_idle(qtbot, window)
    window._recent_menu.aboutToShow.emit()
    action = next(a for a in window._recent_menu.actions() if a.text() == small_real(0).name)
    action.trigger()
    wait_idle(qtbot, window)
    assert _names(window) == [small_real(0).name]


@requires_shared
def test_collapse_all_folds_each_report_to_its_sections(qtbot, make_window) -> None:
    window = make_window()
    window.open_paths([small_real(0)])
    wait_idle(qtbot, window)
    window.actions_by_name["collapse_all"].trigger()
    collapsed = window.timeline.state.collapsed_groups()
    assert collapsed
    assert all(len(path) == 2 for path in collapsed)
    window.actions_by_name["expand_all"].trigger()
    assert window.timeline.state.collapsed_groups() == []


@requires_shared
def test_clicking_an_event_describes_it_in_the_status_bar(qtbot, make_window) -> None:
    from strata.viewer.events import EventRef

    window = make_window()
    window.open_paths([small_real(0)])
    wait_idle(qtbot, window)
    track = window.binding.tracks()[0]
    event = EventRef(0, "x", 0, "", -1, track.key, "my_kernel", 1_000, 3_500)
    window.timeline.event_clicked.emit(event)
    text = window.statusBar().currentMessage()
    assert "my_kernel" in text
    assert track.label in text
    window.timeline.event_clicked.emit(None)
    assert window.statusBar().currentMessage() == ""


def test_the_pin_dialog_previews_and_refuses_a_bad_pattern(qtbot) -> None:
    from PySide6.QtWidgets import QDialogButtonBox

    from strata.app.dialogs import PinByNameDialog

    labels = ["Stream 7", "Stream 70", "CUDA API"]
    dialog = PinByNameDialog(
        lambda p: sum(1 for x in labels if re.search(p, x, re.IGNORECASE)), "stream", None
    )
    qtbot.addWidget(dialog)
    ok = dialog._buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert ok.isEnabled()
    assert "2 rows match" in dialog._hint.text()
    dialog.set_pattern_text("([")
    assert not ok.isEnabled()
    assert "Invalid pattern" in dialog._hint.text()


def test_many_messages_are_all_kept_and_scroll(make_window) -> None:
    window = make_window()
    for i in range(10):
        window.messages.add_message(f"r{i}.sqlite: not an SQLite database")
    assert len(window.messages.messages()) == 10
    assert window.messages._count_label.isVisible()
    window.messages._on_row_dismissed(window.messages._rows[0])
    assert window.messages.messages()[0].startswith("r1.sqlite")


@requires_shared
def test_an_nsys_rep_is_exported_and_opened_when_nsys_is_present(qtbot, make_window) -> None:
    from strata.analysis.open import find_nsys

    if find_nsys() is None:
        pytest.skip("needs nsys ($NSYS or PATH) to export .nsys-rep files")
    rep = REAL_DIR / "nsys-rep" / "MohanadOdema__DLProf__nsys_profile.nsys-rep"
    window = make_window()
    window.open_paths([rep])
    wait_idle(qtbot, window, timeout_ms=300_000)
    assert window.messages.messages() == []
    assert _names(window) == [rep.name]
    assert window.binding.tracks()


@requires_shared
def test_projected_nvtx_rows_arrive_later_and_their_pins_persist(qtbot, make_window) -> None:
    first = make_window()
    first.open_paths([small_real(0)])
    wait_idle(qtbot, first)
    projected = [t.key for t in first.binding.tracks() if t.kind == "nvtx_gpu"]
    assert projected, "the NVTX → GPU rows were not added"
    assert {t.key for t in first.timeline.state.tracks()} >= set(projected)
    first.timeline.state.pin(projected[0])
    first.close()
    second = make_window()
    second.open_paths([small_real(0)])
    wait_idle(qtbot, second)
    assert second.timeline.state.pinned_keys() == [projected[0]]


@requires_shared
def test_pins_persist_when_a_file_of_the_set_failed(qtbot, make_window, tmp_path) -> None:
    bad = _text(tmp_path)
    first = make_window()
    first.open_paths([small_real(0), bad])
    wait_idle(qtbot, first)
    key = first.binding.tracks()[0].key
    first.timeline.state.pin(key)
    first.close()
    second = make_window()
    second.open_paths([small_real(0)])
    wait_idle(qtbot, second)
    assert second.timeline.state.pinned_keys() == [key]


@requires_shared
def test_a_bug_while_laying_out_rows_is_reported_and_the_shown_reports_stay(
    qtbot, make_window, monkeypatch
) -> None:
    window = make_window()
    window.open_paths([small_real(0)])
    wait_idle(qtbot, window)

    def broken(self, include_projection=True):
        raise ValueError("synthetic bug")

    monkeypatch.setattr("strata.analysis.reportset.ReportSet.tracks", broken)
    window.open_paths([small_real(1)])
    wait_idle(qtbot, window)
    assert _names(window) == [small_real(0).name]
    assert window.messages.messages() == ["internal error (ValueError: synthetic bug)"]
    monkeypatch.undo()
    window.report_list.remove(small_real(1))
    wait_idle(qtbot, window)
    assert _names(window) == [small_real(0).name]


@requires_shared
def test_the_last_session_reopens_from_the_recent_menu(qtbot, make_window) -> None:
    first = make_window()
    first.open_paths([small_real(0), small_real(1)])
    wait_idle(qtbot, first)
    first.close()
    second = make_window()
    second._recent_menu.aboutToShow.emit()
    action = second._recent_menu.actions()[0]
    assert action.text() == "Last Session (2 reports)"
    action.trigger()
    wait_idle(qtbot, second)
    assert _names(second) == [small_real(0).name, small_real(1).name]


@requires_shared
def test_the_pinned_area_size_the_user_dragged_is_remembered(qtbot, make_window) -> None:
    first = make_window()
    first.open_paths([small_real(0)])
    wait_idle(qtbot, first)
    timeline = first.timeline
    for track in first.binding.tracks()[:3]:
        timeline.state.pin(track.key)
    ruler = timeline.theme.ruler_height_px
    pinned_h = timeline.row_rect(timeline.state.pinned_keys()[-1])
    assert pinned_h is not None
    y = pinned_h[0] + pinned_h[1] + 1  # the divider right below the last pinned row
    x = timeline.theme.header_width_px + 50
    target = ruler + int((timeline.height() - ruler) * 0.6)
    with qtbot.waitSignal(timeline.pinned_fraction_changed):
        qtbot.mousePress(timeline, Qt.MouseButton.LeftButton, pos=QPoint(x, y))
        qtbot.mouseMove(timeline, QPoint(x, target))
        qtbot.mouseRelease(timeline, Qt.MouseButton.LeftButton, pos=QPoint(x, target))
    dragged = timeline.pinned_fraction()
    assert dragged == pytest.approx(0.6, abs=0.01)
    first.close()
    second = make_window()
    assert second.timeline.pinned_fraction() == pytest.approx(dragged)


def test_an_oversized_saved_window_is_restored_within_the_screen(qtbot, make_window) -> None:
    """A window once saved 3,896 px wide (a long name had widened its dock) came back so."""
    from PySide6.QtWidgets import QDockWidget

    from strata.app.stats_controller import install_stats_panel

    first = make_window()
    install_stats_panel(first.context)
    first.resize(3896, 2400)
    first.resizeDocks(
        [first.findChild(QDockWidget, "statsDock")], [3400], Qt.Orientation.Horizontal
    )
    QApplication.processEvents()
    first.close()
    second = make_window()
    install_stats_panel(second.context)
    QApplication.processEvents()
    screen = second.screen().availableGeometry()
    smallest = second.minimumSizeHint()  # the offscreen screen (800 px) is narrower than it
    assert second.width() <= max(screen.width(), smallest.width())
    assert second.height() <= max(screen.height(), smallest.height())
    assert screen.contains(second.geometry().topLeft())
    assert second.findChild(QDockWidget, "statsDock").width() <= second.width() // 2


def test_fit_into_clamps_size_then_position() -> None:
    from PySide6.QtCore import QRect

    from strata.app.main_window import fit_into

    screen = QRect(0, 0, 1920, 1080)
    assert fit_into(QRect(100, 50, 3896, 1000), screen) == QRect(0, 50, 1920, 1000)
    assert fit_into(QRect(1800, 900, 800, 600), screen) == QRect(1120, 480, 800, 600)
    assert fit_into(QRect(-500, -20, 800, 600), screen) == QRect(0, 0, 800, 600)
    inside = QRect(10, 10, 800, 600)
    assert fit_into(inside, screen) == inside


def test_an_instruction_is_shown_whole_on_wrapped_lines(qtbot, make_window) -> None:
    window = make_window()
    window.resize(900, 600)
    text = (
        "r.nsys-rep: nsys is not installed, so this report cannot be exported to SQLite;"
        " install Nsight Systems (or set $NSYS to its nsys), or run `nsys export --type sqlite"
        " r.nsys-rep` where it is installed and open the .sqlite file it writes"
    )
    window.messages.add_message(text, "error")
    window.show()
    qtbot.waitExposed(window)
    QApplication.processEvents()
    row = window.messages._rows[0]
    assert QLabel.text(row.label) == text  # drawn whole, not elided
    assert row.label.height() >= row.label.heightForWidth(row.label.width())
    assert window.messages._scroll.height() >= row.height()


def test_a_long_message_is_elided_with_the_whole_text_on_hover_and_in_details(
    qtbot, make_window
) -> None:
    window = make_window()
    text = "big.sqlite: " + "the report's CUPTI_ACTIVITY_KIND_KERNEL table is damaged " * 20
    window.messages.add_message(text, "error", "details: page 1234 of 9999")
    QApplication.processEvents()
    row = window.messages._rows[0]
    assert row.label.text() == text
    shown = QLabel.text(row.label)  # what is drawn
    assert shown != text
    assert shown.endswith("…")  # cut at its end, past three wrapped lines
    assert text.startswith(shown[:-1])
    assert text in row.label.toolTip()
    assert "page 1234" in row.label.toolTip()
    row._show_details()
    box = row.findChild(QMessageBox)
    assert box.text() == text
    assert "page 1234" in box.detailedText()
    box.close()
