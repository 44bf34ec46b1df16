"""A readable font on a machine with none: the bundled DejaVu Sans when Qt finds no real font."""

from __future__ import annotations

import logging
from importlib import resources

from PySide6.QtCore import QByteArray
from PySide6.QtGui import QFont, QFontDatabase, QFontInfo
from PySide6.QtWidgets import QApplication

__all__ = ["FALLBACK_FONT_FILE", "ensure_usable_font", "has_usable_font"]

log = logging.getLogger(__name__)

#: The fallback: DejaVu Sans, subset (resources/fonts/README.md says how and under which licence).
#: No required dependency ships a TTF (PySide6-Essentials and pyqtgraph have none; matplotlib,
#: which has DejaVu, is optional).
FALLBACK_FONT_FILE = "fonts/DejaVuSans.ttf"

# fontconfig answers these generic aliases even with no font installed; they name no glyphs.
_GENERIC_FAMILIES = frozenset(
    {"sans serif", "sans-serif", "sans", "serif", "monospace", "mono", "fixed", "system-ui"}
)


def has_usable_font(app: QApplication) -> bool:
    """Return whether Qt can draw ``app``'s default font with real glyphs.

    On a bare headless Debian (no fonts-* package), fontconfig still lists 'Sans Serif',
    'Serif' and 'Monospace', but they resolve to no file: every label draws as empty boxes.
    """
    real = [f for f in QFontDatabase.families() if f.lower() not in _GENERIC_FAMILIES]
    return bool(real) and bool(QFontInfo(app.font()).family())


def ensure_usable_font(app: QApplication) -> str | None:
    """Register the bundled font and make it ``app``'s font when the system has none.

    Returns
    -------
    str or None
        The family now used ('DejaVu Sans'), or None when the system's fonts are kept (or the
        bundled file could not be registered, which is logged).
    """
    if has_usable_font(app):
        return None
    data = resources.files("strata.resources").joinpath(FALLBACK_FONT_FILE).read_bytes()
    font_id = QFontDatabase.addApplicationFontFromData(QByteArray(data))
    families = QFontDatabase.applicationFontFamilies(font_id) if font_id >= 0 else []
    if not families:
        log.warning("no usable system font, and the bundled %s did not load", FALLBACK_FONT_FILE)
        return None
    family = families[0]
    # Style sheets and widgets that ask for a generic family ('monospace') get it too.
    for generic in ("Sans Serif", "Serif", "Monospace", "monospace", "sans-serif"):
        QFont.insertSubstitution(generic, family)
    font = QFont(app.font())
    font.setFamilies([family])
    app.setFont(font)
    log.info("no usable system font: using the bundled %s", family)
    return family
