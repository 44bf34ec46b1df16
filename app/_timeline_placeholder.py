"""Temporary stand-in for viewer.timeline / analysis.tracks / analysis.alignment (deleted later)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget


@dataclass(frozen=True)
class Track:
    key: str
    label: str
    group: tuple
    report_index: int
    kind: str


def build_tracks(reports):
    tracks = []
    for i, report in enumerate(reports):
        for kind, table in report.tables.items():
            for t in range(len(table.track_keys)):
                tracks.append(
                    Track(f"{report.name}/{kind}/{t}", f"{kind} {t}", (report.name,), i, kind)
                )
    return tracks


def match_tracks(tracks, pattern):
    regex = re.compile(pattern)
    return [t for t in tracks if regex.search(t.label)]


def alignment_offsets(reports, mode="session", nvtx_name=None, manual_ns=None):
    manual = manual_ns or [0] * len(reports)
    return [int(m) for m in manual]


class TimelineWidget(QWidget):
    view_range_changed = Signal(int, int)
    selection_changed = Signal(object)
    event_clicked = Signal(object)
    pins_changed = Signal(list)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._label = QLabel("timeline placeholder", self)
        QVBoxLayout(self).addWidget(self._label)
        self._tracks = []
        self._pins = []
        self._hidden = []
        self._range = (0, 1)

    def set_data(self, reports, tracks, offsets_ns):
        self._tracks = list(tracks)
        self._label.setText(f"{len(reports)} reports, {len(tracks)} tracks, offsets {offsets_ns}")

    def set_offsets(self, offsets_ns):
        self._label.setText(f"offsets {offsets_ns}")

    def view_range(self):
        return self._range

    def set_view_range(self, t0_ns, t1_ns):
        self._range = (int(t0_ns), int(t1_ns))
        self.view_range_changed.emit(*self._range)

    def fit(self):
        self.set_view_range(0, 10**9)

    def pin(self, key):
        if key not in self._pins:
            self._pins.append(key)
            self.pins_changed.emit(list(self._pins))

    def unpin(self, key):
        if key in self._pins:
            self._pins.remove(key)
            self.pins_changed.emit(list(self._pins))

    def pinned_keys(self):
        return list(self._pins)

    def set_pinned_keys(self, keys):
        known = {t.key for t in self._tracks}
        self._pins = [k for k in keys if k in known]
        self.pins_changed.emit(list(self._pins))

    def pin_matching(self, regex):
        pattern = re.compile(regex)
        n = 0
        for t in self._tracks:
            if pattern.search(t.label) and t.key not in self._pins:
                self._pins.append(t.key)
                n += 1
        if n:
            self.pins_changed.emit(list(self._pins))
        return n

    def set_hidden_keys(self, keys):
        self._hidden = list(keys)

    def hidden_keys(self):
        return list(self._hidden)

    def set_highlights(self, *args, **kwargs):
        pass
