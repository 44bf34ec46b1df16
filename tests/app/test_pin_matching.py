"""Pin by Name in the GUI and ``render --pin`` name the same rows, by one rule."""

from __future__ import annotations

import pytest

import strata.app.cli.render as render_cli
from strata.app.cli import main
from tests.app.conftest import wait_idle
from tests.conftest import REAL_DIR, requires_shared

VECTOR_ADD = sorted(REAL_DIR.glob("*vector_add_profile*.sqlite")) if REAL_DIR.is_dir() else []


def _render_pins(monkeypatch: pytest.MonkeyPatch, tmp_path, paths, pattern: str) -> list[str]:
    """The track keys ``main.py render --pin pattern`` pinned before drawing."""
    seen: list[list[str]] = []

    def _encoded(widget, _size, _format) -> bytes:
        seen.append(widget.state.pinned_keys())
        return b""

    monkeypatch.setattr(render_cli, "_encoded", _encoded)
    args = ["render", *map(str, paths), "-o", str(tmp_path / "out.png"), "--pin", pattern]
    assert main([*args, "--no-cache"]) == 0
    return seen[0]


@requires_shared
@pytest.mark.parametrize("pattern", ["Stream", "stream 7", "All streams|NVTX"])
def test_gui_and_render_pin_the_same_rows(
    qtbot, make_window, monkeypatch, tmp_path, pattern
) -> None:
    if not VECTOR_ADD:
        pytest.skip(f"needs the vector_add reports in {REAL_DIR}")
    window = make_window()
    window.open_paths(VECTOR_ADD)
    wait_idle(qtbot, window)
    assert window.pin_by_name(pattern) > 0
    gui = window.timeline.state.pinned_keys()
    assert sorted(_render_pins(monkeypatch, tmp_path, VECTOR_ADD, pattern)) == sorted(gui)
    # Only rows whose own label matches: no row pinned for its thread's or GPU's name.
    labels = {t.key: t.label for t in window.binding.tracks()}
    regex = pattern.lower().split("|")
    assert all(any(r in labels[k].lower() for r in regex) for k in gui)
