"""The progress-callback types that long analysis calls take (Qt-free; app/jobs forwards them)."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["ItemProgress", "Progress"]

#: ``progress(fraction, text)``: ``fraction`` in [0, 1] of one long call (load, export, demo).
Progress = Callable[[float, str], None]

#: ``progress(done, total, label)``: after each of ``total`` items (a recipe's reports), so a
#: display can count them.
ItemProgress = Callable[[int, int, str], None]
