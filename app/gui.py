"""GUI entry point (filled in by the desktop-app issue)."""

from __future__ import annotations

__all__ = ["run_gui"]


def run_gui(argv: list[str]) -> int:
    from analysis.errors import StrataError

    raise StrataError("the GUI is not built yet")
