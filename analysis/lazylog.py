"""Loggers that import :mod:`logging` only once a record may be printed.

Importing :mod:`logging` (with the ``traceback``, ``tokenize``, ``string`` and ``threading``
it brings) is a tenth of the instructions of a ``stats`` answered from its stored answer
(benchmarks/bench_startup.py), which logs nothing. A module on such a light path takes its
logger from :func:`get_logger` instead of ``logging.getLogger``: a debug or info record
asked for while :mod:`logging` has not been imported is dropped, as it would be (nothing
imported it, so nothing configured it, and an unconfigured root logger drops what is below
WARNING); anything else imports :mod:`logging` and goes to the real logger.

:func:`when_imported` runs a set-up (the command line's handler and level) at the moment
something first imports :mod:`logging`, whoever it is: Strata's loggers and the libraries'
alike find it configured.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

__all__ = ["LazyLogger", "get_logger", "when_imported"]

#: Records that an unconfigured root logger drops (below its WARNING level).
_DROPPED_UNCONFIGURED = frozenset({"debug", "info"})


def _drop(*_args: object, **_kwargs: object) -> None:
    """A debug or info record while nothing has imported :mod:`logging`: dropped."""


class LazyLogger:
    """``logging.getLogger(name)``, looked up when used (see the module's docstring).

    Every attribute is the real logger's, fetched on each use (its methods then see their
    caller's frame, as ``%(lineno)d`` needs), except ``debug`` and ``info`` before anything
    imported :mod:`logging`, which drop their record.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, attr: str) -> object:
        if attr in _DROPPED_UNCONFIGURED and "logging" not in sys.modules:
            return _drop
        import logging

        return getattr(logging.getLogger(self.name), attr)

    def __repr__(self) -> str:
        return f"<LazyLogger {self.name}>"


def get_logger(name: str) -> LazyLogger:
    """The logger ``name`` (a module's ``__name__``), importing :mod:`logging` when used."""
    return LazyLogger(name)


class _AfterImport:
    """A meta path finder that runs ``action`` right after :mod:`logging` is imported."""

    def __init__(self, action: Callable[[], None]) -> None:
        self.action = action

    def find_spec(self, name: str, path: object, target: object = None) -> object:
        if name != "logging":
            return None
        sys.meta_path.remove(self)  # once: the finders after this one find the real module
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                spec.loader = _ThenRun(spec.loader, self.action)
                return spec
        return None


class _ThenRun:
    """A loader that executes the module with ``loader``, then runs ``action``."""

    def __init__(self, loader: object, action: Callable[[], None]) -> None:
        self.loader = loader
        self.action = action

    def __getattr__(self, attr: str) -> object:  # get_source, is_package...: the real loader's
        return getattr(self.loader, attr)

    def create_module(self, spec: object) -> object:
        return self.loader.create_module(spec)

    def exec_module(self, module: object) -> None:
        module.__spec__.loader = module.__loader__ = self.loader  # the module as usual
        self.loader.exec_module(module)
        self.action()  # the module is in sys.modules already: its own import finds it


def when_imported(action: Callable[[], None]) -> None:
    """Run ``action`` once :mod:`logging` is imported: now if it is, else right after the
    first import of it (by anyone: a library's logger is configured alike)."""
    if "logging" in sys.modules:
        action()
        return
    sys.meta_path.insert(0, _AfterImport(action))
