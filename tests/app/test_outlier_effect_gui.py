"""The window's outliers use the minimum effect too: the vector_add v3/v4 pair's vectorAdd
kernels, 2 ns apart, are no outliers on the timeline."""

from __future__ import annotations

import pytest

from strata.analysis.outliers import DEFAULT_MIN_DELTA_NS, DEFAULT_MIN_RATIO
from tests.app.conftest import LOAD_TIMEOUT_MS, wait_idle
from tests.conftest import REAL_DIR

PAIR = [REAL_DIR / f"ayush-os__nsight-systems-deep-dive__vector_add_profile_{v}.sqlite"
        for v in ("v3", "v4")]  # fmt: skip


@pytest.mark.skipif(not all(p.exists() for p in PAIR), reason=f"needs the v3/v4 pair in {REAL_DIR}")
def test_the_window_flags_no_vector_add_instance_for_a_two_ns_spread(qtbot, make_window) -> None:
    from strata.app.stats_controller import install_stats_panel

    window = make_window()
    controller = install_stats_panel(window.context)
    with qtbot.waitSignal(controller.outliers_ready, timeout=LOAD_TIMEOUT_MS):
        window.open_paths(PAIR)
    wait_idle(qtbot, window)
    found = controller.outliers()
    assert (found.min_ratio, found.min_delta_ns) == (DEFAULT_MIN_RATIO, DEFAULT_MIN_DELTA_NS)
    vector = found.instances[found.instances["name"].str.startswith("vectorAdd")]
    assert len(vector) <= 2  # a warm-up launch at most, not hundreds 31 ns from the median
    assert ((vector["duration_ns"] - vector["median_ns"]).abs() >= DEFAULT_MIN_DELTA_NS).all()
    assert not found.reports["name"].str.startswith("vectorAdd").any()
