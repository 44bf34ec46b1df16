"""The shell's look: Qt's Fusion style with a dark palette matching the timeline."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

__all__ = ["apply_theme"]

_STYLE_SHEET = Path(__file__).parent / "resources" / "style.qss"

# Colours of viewer/style.py DARK (background, header) so the window reads as one surface.
_WINDOW = "#24272c"
_BASE = "#1b1d21"
_ALTERNATE = "#202328"
_TEXT = "#d5d8de"
_DIM = "#8d939e"
_HIGHLIGHT = "#2f6fd0"
_BUTTON = "#2c3036"


def apply_theme(app: QApplication) -> None:
    """Give ``app`` the Fusion style, the dark palette and the shell's style sheet."""
    app.setStyle("Fusion")
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: _WINDOW,
        QPalette.ColorRole.WindowText: _TEXT,
        QPalette.ColorRole.Base: _BASE,
        QPalette.ColorRole.AlternateBase: _ALTERNATE,
        QPalette.ColorRole.ToolTipBase: _BASE,
        QPalette.ColorRole.ToolTipText: _TEXT,
        QPalette.ColorRole.PlaceholderText: _DIM,
        QPalette.ColorRole.Text: _TEXT,
        QPalette.ColorRole.Button: _BUTTON,
        QPalette.ColorRole.ButtonText: _TEXT,
        QPalette.ColorRole.BrightText: "#ffffff",
        QPalette.ColorRole.Highlight: _HIGHLIGHT,
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: "#6ea8fe",
        QPalette.ColorRole.Mid: "#3a3f47",
        QPalette.ColorRole.Dark: "#16181b",
        QPalette.ColorRole.Light: "#3a3f47",
    }
    for role, colour in roles.items():
        palette.setColor(role, QColor(colour))
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
        QPalette.ColorRole.WindowText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6b717c"))
    app.setPalette(palette)
    if _STYLE_SHEET.is_file():
        app.setStyleSheet(_STYLE_SHEET.read_text(encoding="utf-8"))
