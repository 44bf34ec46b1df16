"""Fixtures for the application shell's tests: a private settings file, windows that close."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import REAL_DIR

#: Small real reports (a few hundred kB each) that load in well under a second.
SMALL_REAL = (
    "extra-p__extrap__concurrent.s1__profile1.sqlite",
    "extra-p__extrap__concurrent.s2__profile2.sqlite",
    "quasiben__nvtx-examples__cupy.sqlite",
)
LOAD_TIMEOUT_MS = 60_000


def small_real(index: int) -> Path:
    return REAL_DIR / SMALL_REAL[index]


@pytest.fixture
def settings(tmp_path: Path):
    """Settings in an INI file of the test's own, never the user's store."""
    from strata.app.settings import Settings

    return Settings(tmp_path / "settings.ini")


@pytest.fixture
def make_window(qtbot, settings) -> Iterator[Callable[..., object]]:
    """Factory of main windows that are shown, and closed (jobs waited for) at teardown."""
    from strata.app.main_window import MainWindow
    from strata.launch import build_demo

    windows = []

    def _make(settings_override=None) -> MainWindow:
        # As the application starts it: the demo builder handed in (File → Open Demo).
        window = MainWindow(settings_override or settings, build_demo=build_demo)
        qtbot.addWidget(window)
        with qtbot.waitExposed(window):  # a context manager: a bare call waits for nothing
            window.show()
        windows.append(window)
        return window

    yield _make
    for window in windows:
        window.close()


def wait_idle(qtbot, window, timeout_ms: int = LOAD_TIMEOUT_MS) -> None:
    """Wait until every load and layout job of ``window`` has delivered its outcome."""
    qtbot.waitUntil(
        lambda: not window.report_list.is_loading() and not window.runner.active_jobs(),
        timeout=timeout_ms,
    )


@pytest.fixture(scope="module")
def demo_reports(tmp_path_factory) -> list[Path]:
    """The built-in demo reports, built once per test module."""
    from strata.resources.demo import build_demo_reports

    return build_demo_reports(tmp_path_factory.mktemp("demo"))


def open_shown(qtbot, window, paths) -> None:
    """Open ``paths`` in ``window`` and wait until their rows are laid out."""
    window.open_paths(paths)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: bool(window.binding.tracks()), timeout=LOAD_TIMEOUT_MS)
