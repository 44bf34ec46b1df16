"""Take docs/gui.md's screenshots from the real window: ``python resources/screenshots.py docs/``.

Opens the main window as ``main.py`` does (every panel docked, dark theme, settings in a
temporary file so the user's layout plays no part), on the built-in demo, drives it as a user
would (the overview: ranks aligned on ``train_step``, a stream pinned per rank, a kernel's
histogram; search, a selection, a click on an event, the Expert tab, the collectives overlay, a
diff, the Ops tab) and saves the whole window, 1280×800, as PNG: ``screenshot.png`` (the
README's), ``search.png``,
``events.png``, ``details.png``, ``area.png``, ``expert.png``, ``collectives.png``,
``diff.png``, ``ops.png`` and, when the real reports of ``--real-dir`` are there,
``counters.png`` (GPU metric and memory rows), ``calltree.png`` and ``kernels.png`` (the
kernels table of a report whose kernels share three base names). Offscreen by default
(``QT_QPA_PLATFORM=offscreen``); under Xvfb or a desktop, set ``QT_QPA_PLATFORM`` yourself.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere: import the project beside it
    sys.path.insert(0, str(ROOT))

__all__ = ["SHOTS", "main", "take_screenshots"]

#: The pictures, in the order they are taken.
SHOTS = ("screenshot", "search", "events", "details", "area", "expert", "collectives", "diff",
         "ops", "counters", "calltree", "kernels")  # fmt: skip
SIZE = (1280, 800)
#: The overview's stream (the NCCL and GEMM stream of every demo rank) and its kernel.
OVERVIEW_STREAM = "Stream 7"
OVERVIEW_KERNEL = "ampere_sgemm_128x64_nt"
#: A real report with GPU metric rows (vector_add on an A100), and the rows pinned.
COUNTER_REPORT = "ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite"
COUNTER_ROWS = ("SM Active", "SM Issue", "DRAM Read Throughput", "DRAM Write Throughput",
                "PCIe RX Throughput", "GR Active")  # fmt: skip
#: A real report with CPU samples and call chains (a CPU build, OpenMP threads).
CALLTREE_REPORT = "NTHU-SC__ISC25-ICON-C__cpu.sqlite"
#: A real report whose ~100 kernels are lambdas of three templates: one base name each.
KERNELS_REPORT = "hpcgroup__pipit__perlmutter-cloverleaf-cuda.sqlite"
_TIMEOUT_S = 120.0


def _wait(app, done: Callable[[], bool], what: str, timeout_s: float = _TIMEOUT_S) -> None:
    """Run Qt's events until ``done()``; a shot of a half-drawn window is worse than none."""
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what} after {timeout_s:.0f} s")
        app.processEvents()
        time.sleep(0.01)
    for _ in range(5):  # let the last results paint
        app.processEvents()


def _idle(window) -> bool:
    return not window.report_list.is_loading() and not window.runner.active_jobs()


def _open(app, window, paths: list[Path]) -> None:
    window.close_all_reports()
    _wait(app, lambda: _idle(window), "closing reports")
    window.open_paths(paths)
    _wait(app, lambda: _idle(window) and bool(window.binding.tracks()), "the reports")
    window.fit()
    _wait(app, lambda: _idle(window), "the panels")


def _save(app, window, out: Path, name: str) -> Path:
    from PySide6.QtGui import QImage

    _wait(app, lambda: _idle(window), f"the {name} view")
    path = out / f"{name}.png"
    # 15-bit colour looks the same and halves the file; quality 0: zlib's level 9.
    image = window.grab().toImage().convertToFormat(QImage.Format.Format_RGB555)
    image.convertToFormat(QImage.Format.Format_RGB888).save(str(path), "PNG", 0)
    return path


def _make_window(settings_path: Path):
    from PySide6.QtCore import Qt

    from strata.app.fonts import ensure_usable_font
    from strata.app.gui import install_panels
    from strata.app.main_window import MainWindow
    from strata.app.settings import Settings
    from strata.app.theme import apply_theme
    from strata.resources.demo import build_demo_reports

    app = _application()
    ensure_usable_font(app)
    apply_theme(app)
    settings = Settings(settings_path)
    settings.set_theme_choice("dark")  # the docs show the default look, whatever the desktop
    window = MainWindow(settings, build_demo=build_demo_reports)
    install_panels(window)
    window.theme_switcher.apply()
    window.resize(*SIZE)
    window.show()
    # More room for the timeline and the docks under it than a first start gives.
    window.resizeDocks([window.stats_controller.dock], [460], Qt.Orientation.Horizontal)
    window.resizeDocks([window.events_controller.dock], [300], Qt.Orientation.Vertical)
    return app, window


def _application():
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setApplicationName("Strata")
    return app


def _shoot_overview(app, window, out: Path) -> Path:
    """screenshot.png (the README's): every rank aligned on its first ``train_step``, each
    rank's Stream 7 pinned above the rest, the kernels table and one GEMM's histogram in
    which the straggler rank stands apart."""
    from strata.viewer.state import Scope

    stats, state = window.stats_controller, window.timeline.state
    window.alignment_bar.set_alignment("nvtx", "train_step")
    _wait(app, lambda: _idle(window), "the alignment")
    for track in state.tracks():
        if track.kind == "gpu_stream" and track.label == OVERVIEW_STREAM:
            state.pin(track.key)
    state.set_view_range(*_middle_window(window, 0.1))
    stats.panel.set_scope(Scope("all"))
    stats.panel.set_kind("kernels")
    _wait(app, lambda: stats.panel.model.rowCount() > 0 and _idle(window), "the kernels table")
    stats.panel.select_name(OVERVIEW_KERNEL)
    _wait(app, lambda: _idle(window), "the histogram")
    window.event_actions.show_details(None)
    window.reports_dock.raise_()
    path = _save(app, window, out, "screenshot")
    state.set_pinned_keys([])
    window.alignment_bar.set_alignment("session")
    _wait(app, lambda: _idle(window), "the session alignment")
    return path


def _shoot_search(app, window, out: Path):
    """search.png; returns the match it selected (details.png shows it)."""
    from strata.resources.demo import SLOW_KERNEL_SHORT_NAME

    search = window.search_controller
    search.open_search()
    search.bar.field.blockSignals(True)  # typed text waits for a pause; say it at once
    search.bar.field.setText(SLOW_KERNEL_SHORT_NAME)
    search.bar.field.blockSignals(False)
    search.search(SLOW_KERNEL_SHORT_NAME)
    _wait(app, lambda: search.matches() is not None, "the search")
    ref = search.step(1)
    _save(app, window, out, "search")
    _end_search(window)
    return ref


def _end_search(window) -> None:
    from PySide6.QtWidgets import QToolBar

    window.search_controller.close()
    window.findChild(QToolBar, "searchToolBar").hide()


def _gpu_row_keys(window, per_report: int = 1) -> list[str]:
    """The first stream rows of each report (what an area drag across them would take)."""
    keys, seen = [], {}
    for track in window.timeline.state.tracks():
        if track.kind == "gpu_stream" and seen.get(track.report_index, 0) < per_report:
            seen[track.report_index] = seen.get(track.report_index, 0) + 1
            keys.append(track.key)
    return keys


def _middle_window(window, fraction: float) -> tuple[int, int]:
    lo, hi = window.timeline.state.activity_range()
    width = int((hi - lo) * fraction)
    middle = (lo + hi) // 2
    return middle - width // 2, middle + width // 2


def _shoot_events(app, window, out: Path) -> Path:
    t0, t1 = _middle_window(window, 0.02)
    state = window.timeline.state
    state.set_view_range(*_middle_window(window, 0.06))
    state.select(t0, t1)
    window.events_controller.dock.raise_()
    return _save(app, window, out, "events")


def _shoot_details(app, window, out: Path, ref) -> Path:
    from PySide6.QtCore import Qt

    from strata.app.event_lookup import focus_event

    window.timeline.state.select(None)
    binding = window.binding
    focus_event(window.timeline, binding.shown_set(), binding.offsets_ns(), ref, zoom=False)
    details = window.event_actions.dock
    details.show()
    details.raise_()
    # The Events view's minimum width leaves the details a sliver: the bottom is theirs here.
    bottom = (window.reports_dock, window.events_controller.dock)
    for dock in bottom:
        dock.hide()
    window.timeline.state.select_event(ref)
    window.event_actions.show_details(ref)
    path = _save(app, window, out, "details")
    for dock in bottom:
        dock.show()
    window.tabifyDockWidget(window.reports_dock, window.events_controller.dock)
    window.resizeDocks([window.events_controller.dock], [300], Qt.Orientation.Vertical)
    return path


def _shoot_area(app, window, out: Path) -> Path:
    from strata.viewer.state import Scope

    rows = _gpu_row_keys(window, per_report=2)
    t0, t1 = _middle_window(window, 0.1)
    state = window.timeline.state
    state.set_view_range(*_middle_window(window, 0.3))
    state.select(t0, t1, rows)
    window.stats_controller.panel.set_kind("kernels")
    window.stats_controller.panel.set_scope(Scope("selection"))
    window.events_controller.dock.raise_()
    return _save(app, window, out, "area")


def _shoot_expert(app, window, out: Path) -> Path:
    from strata.viewer.state import Scope

    stats = window.stats_controller
    stats.panel.set_scope(Scope("all"))
    window.timeline.state.select(None)
    stats.panel.set_kind("expert")
    _wait(app, lambda: stats.expert_list.result() is not None, "the expert rules")
    frame = stats.panel.current_frame()
    rows = frame.index[frame["rule"] == "cuda_api_sync"]
    if len(rows):
        index = stats.panel.proxy.mapFromSource(stats.panel.model.index(int(rows[0]), 0))
        stats.panel.table.selectRow(index.row())
        stats.expert_list.choose(frame.iloc[int(rows[0])].to_dict())
    return _save(app, window, out, "expert")


def _shoot_collectives(app, window, out: Path) -> Path:
    """collectives.png: the Collectives tab and, over each rank's NCCL row (pinned), the
    planted late all-reduce: the other ranks' waits shaded, the ranks joined."""
    from strata.resources.demo import demo_truth
    from strata.viewer.state import Scope

    stats, state = window.stats_controller, window.timeline.state
    stats.panel.set_scope(Scope("all"))
    stats.panel.set_kind("collectives")  # turns the overlay on
    _wait(app, lambda: stats.collective_list.found() is not None, "the collectives")
    found = stats.collective_list.found()
    late = demo_truth(len(window.binding.shown_reports())).late_arrivals[0]
    ranks = found.ranks[found.ranks["instance_row"] == late.step]
    rows = set(stats.collective_list._rows_of(ranks))
    for track in state.tracks():  # each rank's NCCL stream (not its "All streams" row)
        if track.key in rows and track.kind == "gpu_stream":
            state.pin(track.key)
    index = stats.panel.proxy.mapFromSource(stats.panel.model.index(late.step, 0))
    stats.panel.table.selectRow(index.row())
    stats.panel.table.scrollTo(index)
    state.select(None)  # the row's span: the overlay shows it well enough
    # The late step's all-reduce and the one before it, at the timeline's own alignment.
    end = int(ranks["end_ns"].max())
    before = found.instances.iloc[late.step - 1]
    state.set_view_range(int(before["first_start_ns"]) - 2_000_000, end + 3_000_000)
    window.timeline.state.select_event(None)
    window.event_actions.show_details(None)
    window.statusBar().clearMessage()
    path = _save(app, window, out, "collectives")
    state.set_collectives_shown(False)
    state.set_pinned_keys([])
    return path


def _shoot_diff(app, window, out: Path) -> Path:
    """diff.png: rank 0 as the baseline, the straggler rank compared, changes coloured."""
    from strata.resources.demo import STRAGGLER_RANK

    stats, state = window.stats_controller, window.timeline.state
    paths = [e.path for e in window.report_list.entries()]
    window.reports_panel.select_paths(paths[:1])
    window.set_diff_baseline()
    window.reports_panel.select_paths([paths[STRAGGLER_RANK]])
    window.compare_with_baseline()
    _wait(app, lambda: stats.diff_list.frame() is not None, "the diff")
    window.toggle_diff_colors()
    _wait(app, lambda: bool(window.timeline.state.tints()), "the diff colours")
    for track in state.tracks():  # the two runs' GPU rows, one above the other
        if track.kind == "gpu_stream" and track.report_index in (0, STRAGGLER_RANK):
            state.pin(track.key)
    state.set_view_range(*_middle_window(window, 0.04))
    window.statusBar().clearMessage()
    window.event_actions.show_details(None)
    return _save(app, window, out, "diff")


def _shoot_ops(app, window, out: Path) -> Path:
    """ops.png: rank 0's ops (its NVTX layers, as DLProf aggregates them), the costliest
    backward one chosen: its ranges and kernels stand out over a few iterations."""
    from strata.viewer.state import Scope

    stats, state = window.stats_controller, window.timeline.state
    window.clear_diff()
    # rank 0's streams, where its kernels run
    state.set_pinned_keys(_gpu_row_keys(window, per_report=3)[:3])
    stats.panel.set_scope(Scope("all", 0))
    stats.panel.set_kind("ops")
    _wait(app, lambda: stats.ops_list.results() is not None, "the ops")
    frame = stats.panel.current_frame()
    rows = frame.index[frame["direction"] == "bprop"]
    row = int(rows[0]) if len(rows) else 0
    state.set_view_range(*_middle_window(window, 0.03))
    stats.panel.table.selectRow(
        stats.panel.proxy.mapFromSource(stats.panel.model.index(row, 0)).row()
    )
    stats.ops_list.focus_op(frame.iloc[row].to_dict())
    _wait(app, lambda: len(stats.highlighter.instances()) > 0, "the op's events")
    window.event_actions.show_details(None)
    return _save(app, window, out, "ops")


def _shoot_counters(app, window, out: Path, real_dir: Path) -> Path | None:
    from PySide6.QtCore import Qt

    path = real_dir / COUNTER_REPORT
    if not path.is_file():
        return None
    _open(app, window, [path])
    window.event_actions.show_details(None)
    window.stats_controller.panel.set_kind("kernels")
    window.resizeDocks([window.events_controller.dock], [140], Qt.Orientation.Vertical)
    state = window.timeline.state
    for track in state.tracks():
        if track.kind == "gpu_metric" and track.label in COUNTER_ROWS:
            state.pin(track.key)
    # Zoomed to the kernels (3.6 ms of a 0.5 s run) with a margin of idle GPU each side.
    kernels = window.binding.shown_reports()[0].kernels
    offset = window.binding.offsets_ns()[0]
    lo, hi = int(kernels.start_ns.min()) + offset, int(kernels.end_ns.max()) + offset
    state.set_view_range(lo - (hi - lo) // 4, hi + (hi - lo) // 4)
    return _save(app, window, out, "counters")


def _shoot_calltree(app, window, out: Path, real_dir: Path) -> Path | None:
    path = real_dir / CALLTREE_REPORT
    if not path.is_file():
        return None
    _open(app, window, [path])
    window.event_actions.show_details(None)
    controller = window.calltree_controller
    dock = window.findChild(type(window.stats_controller.dock), "callTreeDock")
    if dock is not None:
        dock.show()
        dock.raise_()
    state = window.timeline.state
    # The main thread's rows, half of the run: the tree and flame graph follow the selection.
    track = next(t for t in state.tracks() if t.kind == "thread_state")
    lo, hi = state.full_range()
    state.select(lo + (hi - lo) // 4, hi - (hi - lo) // 4, rows=(track.key,))
    state.pin(track.key)
    _wait(app, lambda: controller.panel.tree is not None and controller.panel.tree.samples > 0
          and not window.runner.active_jobs(), "the call tree")  # fmt: skip
    tree = controller.panel.tree_view
    for i in range(min(tree.topLevelItemCount(), 1)):
        item = tree.topLevelItem(i)
        while item is not None and item.childCount():
            item.setExpanded(True)
            item = item.child(0)
    return _save(app, window, out, "calltree")


def _shoot_kernels(app, window, out: Path, real_dir: Path) -> Path | None:
    path = real_dir / KERNELS_REPORT
    if not path.is_file():
        return None
    _open(app, window, [path])
    window.event_actions.show_details(None)
    window.timeline.state.select(None)  # the whole run, not the call tree's selection
    dock = window.findChild(type(window.stats_controller.dock), "callTreeDock")
    if dock is not None:
        dock.hide()
    stats = window.stats_controller
    stats.dock.show()
    stats.dock.raise_()
    stats.panel.set_kind("kernels")
    _wait(app, lambda: stats.panel.model.rowCount() > 10 and not window.runner.active_jobs(),
          "the kernels table")  # fmt: skip
    return _save(app, window, out, "kernels")


def take_screenshots(out: Path, real_dir: Path | None) -> list[Path]:
    """Save the window's pictures into ``out``; return the files written."""
    from strata.resources.demo import build_demo_reports

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="strata-shots-") as tmp:
        app, window = _make_window(Path(tmp) / "settings.ini")
        try:
            _open(app, window, build_demo_reports(Path(tmp) / "demo"))
            overview = _shoot_overview(app, window, out)
            found = _shoot_search(app, window, out)
            written = [
                overview,
                out / "search.png",
                _shoot_events(app, window, out),
                _shoot_details(app, window, out, found),
                _shoot_area(app, window, out),
                _shoot_expert(app, window, out),
                _shoot_collectives(app, window, out),
                _shoot_diff(app, window, out),
                _shoot_ops(app, window, out),
            ]
            if real_dir is not None:
                counters = _shoot_counters(app, window, out, real_dir)
                written += [counters] if counters is not None else []
                calltree = _shoot_calltree(app, window, out, real_dir)
                written += [calltree] if calltree is not None else []
                kernels = _shoot_kernels(app, window, out, real_dir)
                written += [kernels] if kernels is not None else []
        finally:
            window.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder for the PNG files (e.g. docs/)")
    parser.add_argument(
        "--real-dir",
        type=Path,
        default=ROOT.parent / "shared" / "reports" / "real",
        help="folder of the real reports for counters.png (skipped when they are absent)",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    for path in take_screenshots(args.out, args.real_dir):
        print(path)  # noqa: T201 - a script's output
    return 0


if __name__ == "__main__":
    sys.exit(main())
