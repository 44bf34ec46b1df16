"""What Strata remembers between runs, on top of ``QSettings``.

Recent files, row pins, hidden rows, collapsed groups and the time alignment per *set of
reports* (keyed by the sorted report file names, so reopening the same reports in any
order, from any folder, restores them; an alignment is never applied to other reports),
and the window geometry. The storage location is Qt's native one for
organisation/application "Strata", or an INI file when a path is given (tests, portable use).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

__all__ = ["ALIGNMENT_MODES", "MAX_RECENT", "Settings", "report_set_key"]

MAX_RECENT = 10
ALIGNMENT_MODES = ("session", "wallclock", "nvtx")
ORGANIZATION = "Strata"
APPLICATION = "Strata"


def report_set_key(paths: Iterable[str | Path]) -> str:
    """Return the settings key of a set of reports: a hash of their sorted file names."""
    names = sorted(Path(p).name for p in paths)
    return hashlib.sha1("\n".join(names).encode()).hexdigest()[:20]


class Settings:
    """Typed access to the application's ``QSettings``.

    Parameters
    ----------
    path
        An INI file to use instead of the platform's settings store.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        if path is None:
            self._qsettings = QSettings(ORGANIZATION, APPLICATION)
        else:
            self._qsettings = QSettings(str(path), QSettings.Format.IniFormat)

    @property
    def qsettings(self) -> QSettings:
        return self._qsettings

    def sync(self) -> None:
        """Write pending changes to storage."""
        self._qsettings.sync()

    # Lists are stored as JSON text: QSettings turns a one-element list into a plain string
    # and an empty list into None on some back ends (INI), which would lose information.
    def _get_list(self, key: str) -> list[str]:
        raw = self._qsettings.value(key, "")
        if not isinstance(raw, str) or not raw:
            return []
        try:
            value = json.loads(raw)
        except ValueError:
            return []
        return [str(v) for v in value] if isinstance(value, list) else []

    def _set_list(self, key: str, values: Sequence[str]) -> None:
        self._qsettings.setValue(key, json.dumps(list(values)))

    def pinned_fraction(self) -> float | None:
        """Return the share of the timeline's row area the user gave the pinned rows."""
        try:
            return float(self._qsettings.value("timeline/pinned_fraction"))
        except (TypeError, ValueError):
            return None

    def set_pinned_fraction(self, fraction: float) -> None:
        self._qsettings.setValue("timeline/pinned_fraction", float(fraction))

    def recent_files(self) -> list[str]:
        """Return recently opened report paths, newest first."""
        return self._get_list("recent/files")

    def add_recent_files(self, paths: Iterable[str | Path]) -> None:
        """Put ``paths`` at the front of the recent list (deduplicated, at most MAX_RECENT)."""
        new = [str(Path(p).resolve()) for p in paths]
        merged = list(dict.fromkeys(list(reversed(new)) + self.recent_files()))
        self._set_list("recent/files", merged[:MAX_RECENT])

    def remove_recent_file(self, path: str | Path) -> None:
        """Forget one recent path (e.g. it no longer exists)."""
        self._set_list("recent/files", [p for p in self.recent_files() if p != str(path)])

    def clear_recent_files(self) -> None:
        self._set_list("recent/files", [])

    def has_pins(self, report_paths: Iterable[str | Path]) -> bool:
        """Return whether pins were ever saved for this set of reports (even none)."""
        return self._qsettings.contains(f"pins/{report_set_key(report_paths)}")

    def has_hidden(self, report_paths: Iterable[str | Path]) -> bool:
        """Return whether hidden rows were ever saved for this set of reports (even none)."""
        return self._qsettings.contains(f"hidden/{report_set_key(report_paths)}")

    def last_session(self) -> list[str]:
        """Return the reports that were open when the window last closed."""
        return self._get_list("session/last")

    def set_last_session(self, paths: Iterable[str | Path]) -> None:
        self._set_list("session/last", [str(p) for p in paths])

    def pinned_keys(self, report_paths: Iterable[str | Path]) -> list[str]:
        """Return the pinned track keys saved for this set of reports."""
        return self._get_list(f"pins/{report_set_key(report_paths)}")

    def set_pinned_keys(self, report_paths: Iterable[str | Path], keys: Sequence[str]) -> None:
        self._set_list(f"pins/{report_set_key(report_paths)}", keys)

    def hidden_keys(self, report_paths: Iterable[str | Path]) -> list[str]:
        """Return the hidden track keys saved for this set of reports."""
        return self._get_list(f"hidden/{report_set_key(report_paths)}")

    def set_hidden_keys(self, report_paths: Iterable[str | Path], keys: Sequence[str]) -> None:
        self._set_list(f"hidden/{report_set_key(report_paths)}", keys)

    def has_collapsed(self, report_paths: Iterable[str | Path]) -> bool:
        """Return whether collapsed groups were ever saved for this set of reports."""
        return self._qsettings.contains(f"collapsed/{report_set_key(report_paths)}")

    def collapsed_groups(self, report_paths: Iterable[str | Path]) -> list[tuple[str, ...]]:
        """Return the collapsed group paths saved for this set of reports."""
        raw = self._qsettings.value(f"collapsed/{report_set_key(report_paths)}", "")
        try:
            value = json.loads(raw) if isinstance(raw, str) and raw else []
        except ValueError:
            return []
        if not isinstance(value, list):
            return []
        return [tuple(str(p) for p in path) for path in value if isinstance(path, list)]

    def set_collapsed_groups(
        self, report_paths: Iterable[str | Path], paths: Sequence[Sequence[str]]
    ) -> None:
        key = f"collapsed/{report_set_key(report_paths)}"
        self._qsettings.setValue(key, json.dumps([list(p) for p in paths]))

    def alignment(self, report_paths: Iterable[str | Path]) -> tuple[str, str] | None:
        """Return the alignment ``(mode, nvtx_name)`` chosen for this set of reports, or
        None when none was (the mode is 'session', 'wallclock' or 'nvtx')."""
        raw = self._qsettings.value(f"alignment/{report_set_key(report_paths)}", "")
        try:
            value = json.loads(raw) if isinstance(raw, str) and raw else None
        except ValueError:
            return None
        if not isinstance(value, list) or len(value) != 2 or value[0] not in ALIGNMENT_MODES:
            return None
        return str(value[0]), str(value[1] or "")

    def set_alignment(
        self, report_paths: Iterable[str | Path], mode: str, nvtx_name: str = ""
    ) -> None:
        """Remember the alignment of this set of reports (not of others opened later)."""
        key = f"alignment/{report_set_key(report_paths)}"
        self._qsettings.setValue(key, json.dumps([mode, nvtx_name]))

    def alignment_nvtx_name(self) -> str:
        """Return the NVTX range name typed last (offered again in the field)."""
        value = self._qsettings.value("alignment/nvtx_name", "")
        return value if isinstance(value, str) else ""

    def set_alignment_nvtx_name(self, name: str) -> None:
        self._qsettings.setValue("alignment/nvtx_name", name)

    def theme_choice(self) -> str:
        """Return the saved colour scheme: 'auto' (follow the desktop), 'light' or 'dark'."""
        choice = self._qsettings.value("view/theme", "auto")
        return choice if choice in ("auto", "light", "dark") else "auto"

    def set_theme_choice(self, choice: str) -> None:
        self._qsettings.setValue("view/theme", choice)

    def kernel_names(self) -> str:
        """Return how tables name kernels: 'base' (the short name, nsys's ``:base``, the
        default), 'demangled' (the full name) or 'mangled'."""
        choice = self._qsettings.value("view/kernel_names", "base")
        return choice if choice in ("base", "demangled", "mangled") else "base"

    def set_kernel_names(self, choice: str) -> None:
        self._qsettings.setValue("view/kernel_names", choice)

    def label_width_px(self) -> int | None:
        """Return the width the user dragged the timeline's label column to."""
        try:
            return int(self._qsettings.value("timeline/label_width_px"))
        except (TypeError, ValueError):
            return None

    def set_label_width_px(self, width_px: int) -> None:
        self._qsettings.setValue("timeline/label_width_px", int(width_px))

    def window_geometry(self) -> QByteArray | None:
        value = self._qsettings.value("window/geometry")
        return value if isinstance(value, QByteArray) else None

    def window_state(self) -> QByteArray | None:
        value = self._qsettings.value("window/state")
        return value if isinstance(value, QByteArray) else None

    def set_window_layout(self, geometry: QByteArray, state: QByteArray) -> None:
        self._qsettings.setValue("window/geometry", geometry)
        self._qsettings.setValue("window/state", state)
