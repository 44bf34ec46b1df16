"""Frame times of counter rows (GPU metrics, memory usage), against peers in the same run.

Opens the real report with the most GPU metric samples (ayush-os vector_add serial: 660 k
samples, 14 metrics) and one with CUDA memory usage (extra-p concurrent.s1), expands every
"GPU metrics" group and pins every counter row, then times pan and zoom frames (as
bench_timeline.py: synchronous ``repaint()`` of a 2000×1000 widget) at several zoom
levels. Peers, same process, same views, interleaved per level:

- ``hidden``: the same frames with every counter row hidden (the timeline without them);
- ``blit``: filling and drawing one opaque 2000×1000 ``QImage``.

Usage::

    python benchmarks/bench_counters.py [--frames 40] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_timeline import _blit_ms, _frames  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from strata.analysis import open_report  # noqa: E402
from strata.analysis.reportset import ReportSet  # noqa: E402
from strata.analysis.tracks import alignment_offsets  # noqa: E402
from strata.viewer.timeline import TimelineWidget  # noqa: E402

REAL = Path(__file__).resolve().parents[2] / "shared/reports/real"
REPORTS = (
    REAL / "ayush-os__nsight-systems-deep-dive__vector_add_profile_serial.sqlite",
    REAL / "extra-p__extrap__concurrent.s1__profile1.sqlite",
)
LEVELS = (1.0, 0.1, 0.01, 0.001)
COUNTERS = ("gpu_metric", "memory_usage")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=40, help="frames per level and mode")
    parser.add_argument("--repeats", type=int, default=3, help="ours/peer alternations")
    args = parser.parse_args(argv)
    app = QApplication.instance() or QApplication([])
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    reports = [open_report(p) for p in REPORTS]
    report_set = ReportSet(reports)
    tracks = report_set.tracks()
    counters = [t.key for t in tracks if t.kind in COUNTERS]
    samples = sum(len(r.tables["gpu_metrics"]) + len(r.tables["memory_usage"]) for r in reports)
    print(f"{len(counters)} counter rows, {samples:,} samples")
    widget = TimelineWidget()
    widget.resize(2000, 1000)
    widget.show()
    app.processEvents()
    widget.state.set_data(report_set, tracks, alignment_offsets(reports))
    widget.state.set_collapsed_groups([])
    widget.state.set_pinned_keys(counters)
    widget.set_pinned_fraction(0.85)
    print(f"peer: blit {_blit_ms(2000, 1000):.2f} ms/frame")
    print(f"{'view':>7} {'mode':>5} {'ours ms':>8} {'worst':>7} {'hidden ms':>10} {'ratio':>6}")
    for level in LEVELS:
        for mode in ("pan", "zoom"):
            ours, peer = [], []
            for _ in range(args.repeats):
                widget.state.set_hidden_keys([])
                ours += _frames(widget, level, args.frames, mode)
                widget.state.set_hidden_keys(counters)
                peer += _frames(widget, level, args.frames, mode)
            ours_ms, peer_ms = statistics.median(ours), statistics.median(peer)
            print(
                f"{level:>7g} {mode:>5} {ours_ms:8.2f} {max(ours):7.2f} {peer_ms:10.2f}"
                f" {ours_ms / peer_ms:6.2f}"
            )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
