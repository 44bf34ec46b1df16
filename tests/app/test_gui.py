"""The GUI entry point: command line, the window it opens, the last-resort excepthook."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from strata.analysis.errors import StrataError
from strata.app import gui
from strata.app.main_window import MainWindow
from tests.app.conftest import LOAD_TIMEOUT_MS, small_real
from tests.conftest import requires_shared


def test_parse_gui_args_takes_reports_and_options() -> None:
    args = gui.parse_gui_args(["a.sqlite", "runs/", "--settings", "s.ini"])
    assert args.reports == ["a.sqlite", "runs/"]
    assert args.settings == "s.ini"
    with pytest.raises(StrataError):
        gui.parse_gui_args(["--no-such-option"])


def _close_when_loaded(qtbot, seen: list) -> None:
    windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
    if not windows:
        QTimer.singleShot(50, lambda: _close_when_loaded(qtbot, seen))
        return
    window = windows[0]
    if window.report_list.is_loading() or window.runner.active_jobs():
        QTimer.singleShot(50, lambda: _close_when_loaded(qtbot, seen))
        return
    seen.append([r.name for r in window.binding.shown_reports()])
    seen.append(window.messages.messages())
    window.close()
    window.deleteLater()
    QApplication.instance().quit()


@requires_shared
def test_run_gui_opens_the_named_reports(qtbot, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # run_gui installs its own
    monkeypatch.setattr(
        "strata.app.theme.apply_theme", lambda app, scheme="dark": None
    )  # keep the look
    app = QApplication.instance()
    # Closing the last window would post a Quit event that outlives this exec() and ends the
    # next test's event loop at once; this test quits explicitly instead.
    app.setQuitOnLastWindowClosed(False)
    seen: list = []
    QTimer.singleShot(0, lambda: _close_when_loaded(qtbot, seen))
    guard = QTimer()
    guard.setSingleShot(True)
    guard.timeout.connect(app.quit)  # never hang the suite
    guard.start(LOAD_TIMEOUT_MS)
    missing = tmp_path / "missing.sqlite"
    try:
        status = gui.run_gui(
            [str(small_real(0)), str(missing), "--settings", str(tmp_path / "s.ini")]
        )
    finally:
        guard.stop()
        app.setQuitOnLastWindowClosed(True)
    assert status == 0
    assert seen[0] == [small_real(0).name]
    assert seen[1] == ["missing.sqlite: no such file or folder"]


def test_excepthook_shows_the_error_instead_of_dying(monkeypatch) -> None:
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    shown = []
    monkeypatch.setattr(gui, "_show_error_box", lambda summary, details: shown.append(summary))
    gui.install_excepthook()
    for _ in range(3):  # e.g. a bug in a paint method, once per frame
        try:
            raise ValueError("boom")
        except ValueError as exc:
            sys.excepthook(type(exc), exc, exc.__traceback__)
    assert shown == ["ValueError: boom"]


def test_the_error_box_is_not_modal(qtbot, monkeypatch) -> None:
    from PySide6.QtWidgets import QApplication, QMessageBox

    gui._show_error_box("ValueError: boom", "Traceback ...")
    boxes = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox)]
    assert len(boxes) == 1
    assert boxes[0].isVisible()
    assert not boxes[0].isModal()
    boxes[0].close()


def test_the_theme_is_dark_and_restorable(qapp) -> None:
    from PySide6.QtGui import QPalette

    from strata.app.theme import apply_theme

    palette, sheet, style = qapp.palette(), qapp.styleSheet(), qapp.style().name()
    try:
        apply_theme(qapp)
        assert qapp.palette().color(QPalette.ColorRole.Window).lightness() < 64
        assert qapp.palette().color(QPalette.ColorRole.Text).lightness() > 192
        assert "QToolBar" in qapp.styleSheet()
    finally:
        qapp.setStyle(style)
        qapp.setPalette(palette)
        qapp.setStyleSheet(sheet)


def test_no_display_is_a_one_line_error_not_an_abort() -> None:
    with pytest.raises(StrataError, match="no display"):
        gui.check_display({}, platform="linux")
    gui.check_display({"DISPLAY": ":0"}, platform="linux")
    gui.check_display({"QT_QPA_PLATFORM": "offscreen"}, platform="linux")
    gui.check_display({}, platform="darwin")


def test_main_without_a_display_exits_2_with_one_line(tmp_path: Path) -> None:
    import os
    import subprocess

    from tests.conftest import ROOT

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.pop("QT_QPA_PLATFORM", None)
    env["STRATA_CACHE_DIR"] = str(tmp_path)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "--settings", str(tmp_path / "s.ini")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert "no display" in proc.stderr
