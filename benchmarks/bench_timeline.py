"""Frame times of the timeline on a large scaled report, against peers measured in the same run.

For each zoom level (a fraction of the report's span) the view is centred on the middle of
the run, then panned (5 % of the view per frame, back and forth) and zoomed (×1.1 in and out
about the centre); every frame is a synchronous ``repaint()`` of a 2000×1000 widget
(offscreen raster painter), timed from the view change to the end of the paint. Also timed:
loaded report → tracks → first painted frame.

Peers, same process and view:
- ``blit``: filling and drawing one opaque 2000×1000 ``QImage`` (the floor of any frame);
- ``naive``: what a straightforward painter does — one Python ``QRectF`` per visible
  interval and one ``drawRects`` list per colour — measured where ≤ 200 k intervals are
  visible, else extrapolated from its measured per-rectangle cost (marked ``~``).

Usage::

    python benchmarks/bench_timeline.py                       # builds a 10 M-event report
    python benchmarks/bench_timeline.py --report /tmp/big.sqlite --frames 60
    python benchmarks/bench_timeline.py --kernels 200000      # quick look
    python benchmarks/bench_timeline.py --report /tmp/r10m.sqlite --reports 10   # 100 M events

``--reports N`` opens N reports together (the report and N - 1 hard links to it under other
names, each its own cache entry, prepared first in separate processes) and prints, after the
frames, peak and resident bytes per event of the whole set.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from _common import (  # noqa: E402
    AnonPeak,
    memory_line,
    memory_status,
    open_together,
    report_copies,
)
from PySide6.QtCore import QRectF, Qt  # noqa: E402
from PySide6.QtGui import QColor, QImage, QPainter  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from strata.analysis import open_report  # noqa: E402
from strata.analysis.reportset import ReportSet  # noqa: E402
from strata.analysis.tracks import alignment_offsets  # noqa: E402
from strata.viewer.timeline import TimelineWidget  # noqa: E402

LEVELS = (1.0, 0.1, 0.01, 0.001, 0.00001)
SOURCE = (
    Path(__file__).resolve().parents[2]
    / "shared/reports/real/ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite"
)


def _report_path(args: argparse.Namespace) -> Path:
    if args.report:
        return Path(args.report)
    from benchmarks.scale_report import scale_report

    dst = Path(f"/tmp/strata_bench_timeline_{args.kernels}.sqlite")
    if not dst.exists():
        t = time.perf_counter()
        scale_report(SOURCE, dst, args.kernels)
        print(f"built {dst} in {time.perf_counter() - t:.1f} s")
    return dst


def _visible_events(widget: TimelineWidget) -> int:
    count = 0
    t0, t1 = widget.state.view_range()
    for track in widget.state.tracks():
        if track.kind == "gpu_all":
            continue
        tables = widget.state.tables()[track.report_index]
        for name, track_id in track.parts:
            lo, hi = tables[name].window(track_id, t0, t1)
            count += hi - lo
    return count


def _blit_ms(width: int, height: int, repeats: int = 20) -> float:
    buffer = np.empty((height, width), dtype=np.uint32)
    target = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        buffer[:] = 0xFF202020
        painter = QPainter(target)
        painter.drawImage(
            0, 0, QImage(buffer.data, width, height, width * 4, QImage.Format.Format_RGB32)
        )
        painter.end()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def _naive_ms_per_rect(width: int, height: int, n: int = 50_000) -> float:
    rng = np.random.default_rng(0)
    x = rng.uniform(0, width, n).tolist()
    y = rng.uniform(0, height, n).tolist()
    w = rng.uniform(0.2, 3.0, n).tolist()
    target = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
    t = time.perf_counter()
    rects = [QRectF(a, b, c, 14.0) for a, b, c in zip(x, y, w, strict=True)]
    painter = QPainter(target)
    painter.setPen(Qt.PenStyle.NoPen)
    for k in range(8):  # a handful of colours, as a per-colour batching painter would
        painter.setBrush(QColor.fromHsv(k * 40, 160, 200))
        painter.drawRects(rects[k::8])
    painter.end()
    return (time.perf_counter() - t) * 1e3 / n


def _frames(widget: TimelineWidget, level: float, frames: int, mode: str) -> list[float]:
    lo, hi = widget.state.full_range()
    span = max(int((hi - lo) * level), 100)
    mid = (lo + hi) // 2
    widget.state.set_view_range(mid - span // 2, mid + span // 2)
    widget.repaint()
    times = []
    for i in range(frames):
        t0, t1 = widget.state.view_range()
        t = time.perf_counter()
        if mode == "pan":
            step = int((t1 - t0) * 0.05) * (1 if (i // 10) % 2 == 0 else -1)
            widget.state.set_view_range(t0 + step, t1 + step)
        else:
            widget.zoom(1.1 if (i // 10) % 2 == 0 else 1 / 1.1)
        widget.repaint()
        times.append((time.perf_counter() - t) * 1e3)
    return times


def _open(path: Path, n: int) -> tuple[list, dict, float]:
    """Open the report (cold, here) or ``n`` copies of it together (from their cache
    entries, prepared in separate processes); return (reports, memory info, seconds)."""
    if n > 1:
        reports, mem = open_together(report_copies(path, n))
        return reports, mem, mem["seconds"]
    before = memory_status()
    t = time.perf_counter()
    report = open_report(path)
    load_s = time.perf_counter() - t
    print(f"report: {path.name}, {report.event_count:,} events, loaded in {load_s:.1f} s")
    info = {"before": before["rss"], "before_anon": before["anon"], "events": report.event_count}
    return [report], info, load_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", help="an existing large report (default: build one)")
    parser.add_argument(
        "--kernels",
        type=int,
        default=5_000_000,
        help="kernels in the built report (each comes with its API call: 5 M ≈ 10 M events)",
    )
    parser.add_argument("--frames", type=int, default=60, help="frames per zoom level and mode")
    parser.add_argument("--size", default="2000x1000", help="widget size WxH")
    parser.add_argument("--reports", type=int, default=1, help="reports open together")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.lower().split("x"))
    app = QApplication.instance() or QApplication([])

    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    path = _report_path(args)
    # Anonymous memory is sampled through the open, the first frame and the projection
    # (not while frames are timed: the sampler takes the GIL).
    sampler = AnonPeak().__enter__()
    reports, mem, load_s = _open(path, args.reports)

    widget = TimelineWidget()
    widget.resize(width, height)
    widget.show()
    app.processEvents()
    t = time.perf_counter()
    # One set for both: the projected NVTX slices it derives are the ones the widget draws.
    report_set = ReportSet(reports)
    widget.state.set_data(report_set, report_set.tracks(include_projection=False), [0])
    widget.repaint()
    first_s = time.perf_counter() - t
    t = time.perf_counter()
    tracks = report_set.tracks()
    projection_s = time.perf_counter() - t
    widget.state.set_data(report_set, tracks, alignment_offsets(reports))
    widget.repaint()
    sampler.__exit__()
    mem["peak_anon"] = sampler.peak
    print(
        f"loaded data -> first frame: {first_s:.2f} s  (target <= 1.5 s; "
        f"load itself {load_s:.1f} s)"
    )

    blit = _blit_ms(width, height)
    per_rect = _naive_ms_per_rect(width, height)
    print(
        f"NVTX -> GPU projection rows (analysis.projection, computed after the first frame): "
        f"{projection_s:.2f} s"
    )
    print(f"peers: blit {blit:.2f} ms/frame; naive painter {per_rect * 1e3:.2f} µs/rect")
    header = (
        f"{'view':>9} {'visible':>11} {'mode':>5} {'median ms':>10} {'worst ms':>9}"
        f" {'x blit':>7} {'naive ms':>10} {'naive/ours':>10}"
    )
    print(header)
    worst_all, ok = 0.0, True
    for level in LEVELS:
        for mode in ("pan", "zoom"):
            times = _frames(widget, level, args.frames, mode)
            visible = _visible_events(widget)
            median, worst = statistics.median(times), max(times)
            naive = per_rect * visible + blit
            mark = "~" if visible > 200_000 else " "
            ok &= median <= 16 and worst <= 25
            worst_all = max(worst_all, worst)
            print(
                f"{level * 100:>8.3g}% {visible:>11,} {mode:>5} {median:>10.2f} {worst:>9.2f}"
                f" {median / blit:>7.1f} {mark}{naive:>9.1f} {naive / median:>10.1f}"
            )
    print(memory_line(mem, f"({len(reports)} report(s), after the frames)"))
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(f"targets (median <= 16 ms, worst <= 25 ms at every level): {'met' if ok else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
