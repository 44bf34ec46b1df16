"""The View ▸ Kernel Names choice: which of a kernel's names the tables show.

nsys's own convention: the base (short) name by default, what ``nsys stats`` prints with
``:base``; the full (demangled) or the mangled name on request. The tables keep grouping by
the full name (their numbers do not change); only the text shown changes, and the tooltip
always says the full name. The choice is kept in :class:`app.settings.Settings`.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu

from strata.app.settings import Settings

__all__ = ["KERNEL_NAME_CHOICES", "KernelNameChoice"]

#: (variant of :data:`analysis.names.KERNEL_NAME_VARIANTS`, menu text).
KERNEL_NAME_CHOICES = (
    ("base", "&Base Names (short)"),
    ("demangled", "&Full Names (demangled)"),
    ("mangled", "&Mangled Names"),
)


class KernelNameChoice(QObject):
    """The exclusive Kernel Names actions, backed by ``settings``.

    Signals
    -------
    variant_changed(str)
        The user chose another variant ('base', 'demangled' or 'mangled').
    """

    variant_changed = Signal(str)

    def __init__(self, settings: Settings, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._settings = settings
        self._group = QActionGroup(self)
        self._group.setExclusive(True)
        self.actions: dict[str, QAction] = {}
        for variant, text in KERNEL_NAME_CHOICES:
            action = QAction(text, self)
            action.setCheckable(True)
            action.triggered.connect(lambda _checked=False, v=variant: self.set_variant(v))
            self._group.addAction(action)
            self.actions[variant] = action
        self.actions[self.variant()].setChecked(True)

    def add_menu(self, menu: QMenu) -> QMenu:
        """Add the Kernel Names submenu to ``menu``; return it."""
        submenu = menu.addMenu("&Kernel Names")
        submenu.addActions(self._group.actions())
        return submenu

    def variant(self) -> str:
        return self._settings.kernel_names()

    def set_variant(self, variant: str) -> None:
        """Show kernels by ``variant`` now and at the next start."""
        changed = variant != self.variant()
        self._settings.set_kernel_names(variant)
        self.actions[variant].setChecked(True)
        if changed:
            self.variant_changed.emit(variant)
