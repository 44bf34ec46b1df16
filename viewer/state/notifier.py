"""A Qt-free signal: what the timeline's state tells its observers (the widgets, app/)."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Notifier"]


class Notifier:
    """A Qt-free signal: callbacks called in the order connected, with the same arguments."""

    def __init__(self) -> None:
        self._callbacks: list[Callable[..., object]] = []

    def connect(self, callback: Callable[..., object]) -> None:
        """Call ``callback(*args)`` on every :meth:`emit`."""
        self._callbacks.append(callback)

    def disconnect(self, callback: Callable[..., object]) -> None:
        """Stop calling ``callback`` (a callback never connected is ignored)."""
        if callback in self._callbacks:
            self._callbacks.remove(callback)

    def emit(self, *args: object) -> None:
        """Call every connected callback with ``args``."""
        for callback in list(self._callbacks):  # a callback may disconnect itself
            callback(*args)
