"""Values computed once per key, lazily and thread-safely: the memo behind every derived value.

A :class:`~analysis.reportset.ReportSet` keeps what it derives from its reports in memos, and a
:class:`~analysis.slices.SliceTable` keeps its own lazily computed columns (prefix sums, extents)
in one: two threads asking for the same value wait for one computation; different values are
computed in parallel.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

__all__ = ["Memo"]


class Memo:
    """Values computed once per key: a thread asking for a value being computed waits for it.

    ``keep()`` (asked under the lock after computing) says whether the value may still be
    stored: a report removed meanwhile must not come back through a late result.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[Hashable, object] = {}
        self._gates: dict[Hashable, threading.Lock] = {}

    def get(self, key: Hashable, compute: Callable[[], object], keep=lambda: True) -> object:
        """Return the value of ``key``, ``compute()`` once (by the first thread asking)."""
        with self._lock:
            if key in self._values:
                return self._values[key]
            gate = self._gates.setdefault(key, threading.Lock())
        with gate:
            with self._lock:
                if key in self._values:
                    return self._values[key]
            try:
                value = compute()
            finally:
                with self._lock:
                    if self._gates.get(key) is gate:
                        del self._gates[key]
            with self._lock:
                if keep():
                    self._values[key] = value
        return value

    def peek(self, key: Hashable, default: object = None) -> object:
        """Return the value of ``key`` if computed already, else ``default``."""
        with self._lock:
            return self._values.get(key, default)

    def discard(self, match: Callable[[Hashable], bool]) -> None:
        """Forget the values whose key ``match`` accepts."""
        with self._lock:
            for key in [k for k in self._values if match(k)]:
                del self._values[key]

    def keep_latest(self, match: Callable[[Hashable], bool], n: int) -> None:
        """Forget all but the ``n`` values stored last among those whose key ``match``
        accepts (a bound on answers asked once each, such as a moving window's)."""
        with self._lock:
            keys = [k for k in self._values if match(k)]
            for key in keys[: max(len(keys) - n, 0)]:
                del self._values[key]
