"""Dragging files over the window: the window lights up and says what a drop would open."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDragLeaveEvent, QDragMoveEvent
from PySide6.QtWidgets import QApplication

from strata.analysis._sqlite import SQLITE_MAGIC
from strata.analysis.dropped import preview_paths


def _sqlite_like(path: Path) -> Path:
    """A file with SQLite's magic: enough for the preview, which never opens it."""
    path.write_bytes(SQLITE_MAGIC + b"\0" * 84)
    return path


@pytest.fixture
def dropped(tmp_path: Path) -> list[Path]:
    """Three reports (one inside a folder) and one text file."""
    folder = tmp_path / "ranks"
    folder.mkdir()
    reports = [_sqlite_like(tmp_path / "a.sqlite"), _sqlite_like(tmp_path / "b.sqlite")]
    _sqlite_like(folder / "c.sqlite")
    notes = tmp_path / "notes.txt"
    notes.write_text("not a report")
    return [*reports, folder, notes]


def _mime(paths: list[Path]) -> QMimeData:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    return mime


def _send(window, event_type, mime: QMimeData):
    args = (Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.NoModifier)  # fmt: skip
    event = event_type(QPoint(window.width() // 2, window.height() // 2), *args)
    QApplication.sendEvent(window, event)
    return event


def test_a_drag_lights_the_window_and_counts_what_would_open(make_window, dropped) -> None:
    window = make_window()
    mime = _mime(dropped)
    assert not window.drop_overlay.isVisible()
    assert _send(window, QDragEnterEvent, mime).isAccepted()
    assert window.drop_overlay.isVisible()
    assert window.drop_overlay.geometry().width() > window.centralWidget().width() // 2
    text = "3 reports, 1 skipped: not a report"
    assert text in window.drop_overlay.text()
    assert text in window.statusBar().currentMessage()
    assert _send(window, QDragMoveEvent, mime).isAccepted()
    QApplication.sendEvent(window, QDragLeaveEvent())
    assert not window.drop_overlay.isVisible()
    assert window.report_list.entries() == []  # nothing was opened by looking


def test_a_drag_of_nothing_openable_is_refused_and_says_why(make_window, tmp_path) -> None:
    window = make_window()
    notes = tmp_path / "notes.txt"
    notes.write_text("x")
    fake = tmp_path / "fake.sqlite"
    fake.write_text("SELECT 1;")
    mime = _mime([notes, fake])
    _send(window, QDragEnterEvent, mime)
    assert window.drop_overlay.isVisible()
    assert window.drop_overlay.text() == (
        "Nothing to open: 2 skipped: not a report; not a SQLite file"
    )
    assert not _send(window, QDragMoveEvent, mime).isAccepted()  # the "no" cursor
    QApplication.sendEvent(window, QDragLeaveEvent())
    assert not window.drop_overlay.isVisible()


def test_the_preview_never_waits_on_a_fifo_and_skips_what_is_open(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.sqlite"
    os.mkfifo(fifo)
    report = _sqlite_like(tmp_path / "r.sqlite")
    shutil.copy(report, tmp_path / "s.sqlite")
    empty = tmp_path / "empty"
    empty.mkdir()
    preview = preview_paths([fifo, report, tmp_path / "s.sqlite", empty], already_open=[report])
    assert preview.reports == (tmp_path / "s.sqlite",)
    reasons = dict(preview.skipped)
    assert reasons[report] == "already open"
    assert "named pipe" in reasons[fifo]
    assert "no Nsight Systems reports" in reasons[empty]
    assert preview.summary().startswith("1 report, 3 skipped: ")


def test_the_preview_takes_a_pytorch_trace_and_not_other_json(tmp_path: Path) -> None:
    """A Kineto trace opens, so a drag counts it; other JSON and a FIFO named like a trace
    are skipped with their reason, the FIFO without waiting on it."""
    trace = tmp_path / "rank0.pt.trace.json"
    trace.write_text('{"schemaVersion": 1, "traceEvents": []}')
    config = tmp_path / "config.json"
    config.write_text('{"lr": 0.1}')
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    preview = preview_paths([trace, config, fifo])
    assert preview.reports == (trace,)
    reasons = dict(preview.skipped)
    assert reasons[config] == "JSON, not a PyTorch profiler trace"
    assert "named pipe" in reasons[fifo]
