"""The shell's look: Qt's Fusion style with a light or dark palette matching the timeline,
chosen in View → Theme (Auto follows the desktop's colour scheme, Qt 6.5+)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QActionGroup, QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QMainWindow, QMenu

from strata.viewer.histogram import DurationHistogramWidget
from strata.viewer.style import THEMES

__all__ = [
    "DIFF_COLORS",
    "THEME_CHOICES",
    "ThemeSwitcher",
    "apply_theme",
    "diff_colors",
    "system_scheme",
]

_STYLE_SHEET = Path(__file__).parent / "resources" / "style.qss"

#: (setting, menu text) of View → Theme.
THEME_CHOICES = (("auto", "&Auto (Follow the Desktop)"), ("light", "&Light"), ("dark", "&Dark"))

# Colours of viewer/style.py DARK / LIGHT (background, header) so the window reads as one
# surface: window, base, alternate base, text, dim text, button, mid, dark, disabled text.
_COLOURS = {
    "dark": ("#24272c", "#1b1d21", "#202328", "#d5d8de", "#8d939e", "#2c3036", "#3a3f47",
             "#16181b", "#6b717c"),
    "light": ("#f0f1f3", "#ffffff", "#f5f6f8", "#1f2328", "#656d76", "#e8eaed", "#c9ced6",
              "#a0a7b1", "#9aa1ab"),
}  # fmt: skip

#: What a diff's changes look like (the Diff tab's text, the timeline's events): slower in
#: Okabe & Ito's vermillion, faster in their bluish green, told apart with every common
#: colour-vision deficiency (they differ in lightness and in blue, not in red-green alone);
#: the Change column says it in words too (▲ slower, ▼ faster).
DIFF_COLORS = {"slower": "#D55E00", "faster": "#009E73", "slower, few": "#D55E00",
               "faster, few": "#009E73"}  # fmt: skip


def diff_colors(scheme: str) -> dict[str, str]:
    """Return the Diff tab's text colour per status in ``scheme`` ('light' or 'dark'):
    :data:`DIFF_COLORS` (a change on one instance in the same hue: the Change text says
    "n=1"), and noise and too few instances greyed (the palette's dim text); appeared /
    vanished keep the usual text colour."""
    return {**DIFF_COLORS, "noise": _COLOURS[scheme][4], "too few": _COLOURS[scheme][4]}


def system_scheme() -> str:
    """Return the desktop's colour scheme, 'light' or 'dark' (dark when it does not say)."""
    app = QGuiApplication.instance()
    hints = app.styleHints() if app is not None else None
    scheme = hints.colorScheme() if hints is not None else Qt.ColorScheme.Unknown
    return "light" if scheme == Qt.ColorScheme.Light else "dark"


def apply_theme(app: QApplication, scheme: str = "dark") -> None:
    """Give ``app`` the Fusion style and the ``scheme`` palette ('light' or 'dark'); the
    dark scheme also gets the shell's style sheet (its colours are dark ones)."""
    app.setStyle("Fusion")
    window, base, alternate, text, dim, button, mid, dark, disabled = _COLOURS[scheme]
    role = QPalette.ColorRole
    roles = {
        role.Window: window, role.WindowText: text, role.Base: base,
        role.AlternateBase: alternate, role.ToolTipBase: base, role.ToolTipText: text,
        role.PlaceholderText: dim, role.Text: text, role.Button: button,
        role.ButtonText: text, role.BrightText: "#ffffff", role.Highlight: "#2f6fd0",
        role.HighlightedText: "#ffffff", role.Link: "#6ea8fe" if scheme == "dark" else "#0b5cd5",
        role.Mid: mid, role.Dark: dark, role.Light: mid,
    }  # fmt: skip
    palette = QPalette()
    for name, colour in roles.items():
        palette.setColor(name, QColor(colour))
    for name in (role.Text, role.ButtonText, role.WindowText):
        palette.setColor(QPalette.ColorGroup.Disabled, name, QColor(disabled))
    app.setPalette(palette)
    sheet = _STYLE_SHEET.read_text(encoding="utf-8") if _STYLE_SHEET.is_file() else ""
    app.setStyleSheet(sheet if scheme == "dark" else "")


class ThemeSwitcher(QObject):
    """View → Theme: Auto / Light / Dark, saved in the settings; Auto follows the desktop.

    ``window`` is a :class:`~app.main_window.MainWindow` (``settings``, ``timeline``).
    """

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self._window = window
        self._group = QActionGroup(self)
        self.actions: dict[str, QAction] = {}
        for choice, text in THEME_CHOICES:
            action = QAction(text, self._group, checkable=True)
            action.setObjectName(f"theme_{choice}")
            action.triggered.connect(lambda _checked=False, c=choice: self.set_choice(c))
            self.actions[choice] = action
        self.actions[window.settings.theme_choice()].setChecked(True)
        app = QGuiApplication.instance()
        if app is not None:
            app.styleHints().colorSchemeChanged.connect(self._on_desktop_changed)
        window.timeline.set_theme(THEMES[self.scheme()])

    def add_menu(self, menu: QMenu) -> QMenu:
        """Add the Theme submenu to ``menu``; return it."""
        submenu = menu.addMenu("&Theme")
        submenu.addActions(self._group.actions())
        return submenu

    def choice(self) -> str:
        return self._window.settings.theme_choice()

    def scheme(self) -> str:
        """Return the scheme in effect: the choice, or the desktop's for 'auto'."""
        choice = self.choice()
        return system_scheme() if choice == "auto" else choice

    def set_choice(self, choice: str) -> None:
        """Use ``choice`` ('auto', 'light' or 'dark') now and at the next start."""
        self._window.settings.set_theme_choice(choice)
        self.actions[choice].setChecked(True)
        self.apply()

    def apply(self) -> None:
        """Give the application, the timeline and the histograms the scheme in effect."""
        scheme = self.scheme()
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, scheme)
        self._window.timeline.set_theme(THEMES[scheme])
        for histogram in self._window.findChildren(DurationHistogramWidget):
            histogram.set_dark(scheme == "dark")

    def _on_desktop_changed(self, _scheme) -> None:
        if self.choice() == "auto":
            self.apply()
