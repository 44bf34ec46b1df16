"""The kernels table at the window's usual size: rows stay told apart where names are cut."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.app.conftest import open_shown
from tests.conftest import REAL_DIR, requires_shared

CLOVER = REAL_DIR / "hpcgroup__pipit__perlmutter-cloverleaf-cuda.sqlite"


def _shown_names(panel) -> list[str]:
    """Each row's name as drawn: cut at its end to the column's width less the cell margins."""
    table = panel.table
    column = panel.model.column_of("name")
    style = table.style()
    margin = 2 * (style.pixelMetric(style.PixelMetric.PM_FocusFrameHMargin, None, table) + 1)
    width = table.horizontalHeader().sectionSize(column) - margin
    texts = [panel.proxy.index(row, column).data() for row in range(panel.proxy.rowCount())]
    return [table.fontMetrics().elidedText(t, Qt.TextElideMode.ElideRight, width) for t in texts]


@requires_shared
def test_cloverleaf_kernel_rows_read_apart_in_a_1280_by_800_window(qtbot, make_window) -> None:
    # ~100 lambdas of three templates: cut, a dozen rows read 'par_ranged2d_kernel ·
    # advec_mom_kernel instanc…' (issue 21).
    from strata.app.gui import install_panels

    window = make_window()
    install_panels(window)
    window.resize(1280, 800)
    open_shown(qtbot, window, [CLOVER])
    panel = window.stats_controller.panel
    panel.set_kind("kernels")
    qtbot.waitUntil(lambda: panel.model.rowCount() > 90 and not window.runner.active_jobs())
    names = _shown_names(panel)
    assert len(set(names)) == len(names), sorted(n for n in names if names.count(n) > 1)
