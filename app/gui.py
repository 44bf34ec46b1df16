"""GUI entry point: ``python main.py [REPORT|DIR ...]``; with no argument, the demo reports.

The demo builder comes from the start-up (:mod:`strata.launch`), which knows both the
application and its resources: app/ never imports resources/.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import traceback
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING

from strata.app.argparsing import StrataArgumentParser

if TYPE_CHECKING:
    from strata.app.context import DemoBuilder

__all__ = ["check_display", "install_excepthook", "install_panels", "parse_gui_args", "run_gui"]

log = logging.getLogger(__name__)


def parse_gui_args(argv: list[str]) -> argparse.Namespace:
    """Parse the GUI's command line (report paths and a few options)."""
    parser = StrataArgumentParser(
        prog="strata", description="Timeline viewer for Nsight Systems reports."
    )
    parser.add_argument("reports", nargs="*", metavar="REPORT|DIR", help="reports or folders")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    parser.add_argument(
        "--settings", metavar="FILE.ini", help="keep settings in this INI file (portable use)"
    )
    return parser.parse_args(argv)


def install_excepthook() -> None:
    """Show an uncaught exception in a message box instead of letting Qt abort the process.

    PySide6 prints and swallows exceptions raised in slots, but an exception escaping a
    virtual override (``paintEvent``...) can end the process; this keeps the window and the
    user's open reports alive, and logs the traceback. Each distinct error is shown once, in
    a non-modal box: a bug in a paint method repeats on every frame, and a modal box per
    frame would nest event loops without end.
    """
    previous = sys.excepthook
    seen: set[str] = set()

    def _hook(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            previous(kind, error, tb)
            return
        summary = f"{kind.__name__}: {error}"
        if summary in seen:
            log.debug("uncaught exception again: %s", summary)
            return
        seen.add(summary)
        text = "".join(traceback.format_exception(kind, error, tb))
        log.error("uncaught exception:\n%s", text)
        _show_error_box(summary, text)

    sys.excepthook = _hook


_open_boxes: list = []  # error boxes on screen (kept alive by this reference)


def _show_error_box(summary: str, details: str) -> None:
    try:
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QApplication, QMessageBox

        if QApplication.instance() is None:
            return
        box = QMessageBox(QMessageBox.Icon.Critical, "Strata: unexpected error", summary)
        box.setInformativeText(
            "Strata keeps running and your reports stay open. Please report this bug."
        )
        box.setDetailedText(details)
        box.setWindowModality(Qt.WindowModality.NonModal)
        _open_boxes.append(box)  # a parentless box lives only as long as a Python reference
        box.finished.connect(lambda _result: _open_boxes.remove(box))
        box.show()
    except Exception:  # noqa: BLE001 - the excepthook itself must never raise (style §6)
        log.exception("could not show the error box")


def check_display(environ: Mapping[str, str], platform: str = sys.platform) -> None:
    """Refuse to start Qt where it has no display: Qt would abort the process instead.

    Raises
    ------
    StrataError
        On Linux with neither ``DISPLAY`` nor ``WAYLAND_DISPLAY`` nor ``QT_QPA_PLATFORM``.
    """
    from strata.analysis.errors import StrataError
    from strata.app.commands import SUBCOMMANDS

    if not platform.startswith("linux") or environ.get("QT_QPA_PLATFORM"):
        return
    if environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"):
        return
    raise StrataError(
        "no display to open the window on (DISPLAY is not set); connect with 'ssh -X', or "
        f"use the headless commands: {', '.join(SUBCOMMANDS)}"
    )


def _close_on_interrupt(window) -> None:
    """Let Ctrl+C in the terminal close the window (saving settings) instead of being ignored.

    Python runs signal handlers only between bytecodes, and Qt's event loop is C++; a timer
    that wakes the interpreter a few times a second lets the handler run.
    """
    from PySide6.QtCore import QTimer

    signal.signal(signal.SIGINT, lambda _sig, _frame: window.close())
    timer = QTimer(window)
    timer.timeout.connect(lambda: None)
    timer.start(250)


def install_panels(window) -> None:
    """Dock the panels on ``window`` (a :class:`~app.main_window.MainWindow`): statistics,
    call tree, search and the Events view, each controller kept in ``window.context``; then
    put back their saved places."""
    from strata.app.calltree_controller import install_call_tree
    from strata.app.events_controller import install_events_view
    from strata.app.search_controller import install_search
    from strata.app.stats_controller import install_stats_panel

    context = window.context
    context.stats = install_stats_panel(context)
    context.calltree = install_call_tree(context)
    context.search = install_search(context)
    context.events = install_events_view(context)
    window.restore_dock_state()


def run_gui(argv: list[str], build_demo: DemoBuilder | None = None) -> int:
    """Open the main window on the reports named in ``argv`` (the demo when none); run Qt.

    ``build_demo`` builds the demo reports (None: the window offers none).
    """
    args = parse_gui_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    from PySide6.QtWidgets import QApplication

    from strata.app.fonts import ensure_usable_font
    from strata.app.icon import make_app_icon
    from strata.app.main_window import MainWindow
    from strata.app.settings import Settings
    from strata.app.theme import apply_theme

    if QApplication.instance() is None:
        check_display(os.environ)
    app = QApplication.instance() or QApplication([sys.argv[0], *argv])
    app.setApplicationName("Strata")
    app.setOrganizationName("Strata")
    app.setWindowIcon(make_app_icon())
    ensure_usable_font(app)
    apply_theme(app)
    install_excepthook()
    settings = Settings(args.settings) if args.settings else Settings()
    window = MainWindow(settings, build_demo=build_demo)
    install_panels(window)
    window.theme_switcher.apply()  # the saved or the desktop's scheme, panels included
    window.show()
    previous_handler = signal.getsignal(signal.SIGINT)
    _close_on_interrupt(window)
    if args.reports:
        window.open_paths(args.reports)
    else:
        window.open_demo()
    try:
        return app.exec()
    finally:
        signal.signal(signal.SIGINT, previous_handler)
