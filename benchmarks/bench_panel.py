"""Live stats-panel updates: per-name kernel statistics of a moving time window.

For each report size, a window of a fixed fraction of the run slides across it in
``--updates`` steps (as a Shift-drag selection or a pan does), and every step asks for the
full per-name table (count, total, mean, exact median, min, max, sample std). Timed per
update, same rows, same process:

- ``panel``: :meth:`analysis.window_stats.WindowIndex.stats` (what the panel runs; the
  index is built once per report set, its build time is printed apart);
- ``aggregate``: :func:`analysis.selection.aggregate` with the same window (the one-shot
  path: mask, remap, sort on every call);
- ``pandas``: boolean mask + ``groupby(name).agg([...])`` over a prepared DataFrame of the
  same columns (the peer).

Usage::

    python benchmarks/bench_panel.py                               # 1 M and 10 M kernels
    python benchmarks/bench_panel.py --kernels 1000000 --updates 10
    python benchmarks/bench_panel.py --report /tmp/big.sqlite --backend cupy
    python benchmarks/bench_panel.py --report /tmp/r10m.sqlite --reports 10 --no-aggregate

``--reports N`` opens N reports together (the report and N - 1 hard links to it, each its
own cache entry, prepared first in separate processes), indexes the kernels of all of them
on the shared axis (aligned as the GUI aligns them), times the panel over the set (pandas on
at most 3 updates there: one pandas update of 50 M rows takes seconds) and prints peak and
resident bytes per event of the whole set.

Reports are built with ``benchmarks/scale_report.py`` under /tmp when missing (10 M kernels:
~35 s, 1.2 GB) and opened through the cache (``$STRATA_CACHE_DIR``, default under /tmp).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("STRATA_CACHE_DIR", "/tmp/strata_bench_panel_cache")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _common import memory_line, open_together, report_copies, rss_bytes  # noqa: E402

from strata.analysis import open_report  # noqa: E402
from strata.analysis.selection import Selection, aggregate  # noqa: E402
from strata.analysis.tracks import alignment_offsets  # noqa: E402
from strata.analysis.window_stats import build_window_index  # noqa: E402
from strata.analysis.xp import backend_name, get_xp  # noqa: E402

SOURCE = (
    Path(__file__).resolve().parents[2]
    / "shared/reports/real/ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite"
)


def _report_path(n_kernels: int) -> Path:
    dst = Path(f"/tmp/strata_bench_panel_{n_kernels}.sqlite")
    if not dst.exists():
        from benchmarks.scale_report import scale_report

        started = time.perf_counter()
        scale_report(SOURCE, dst, n_kernels)
        print(f"built {dst} in {time.perf_counter() - started:.1f} s")
    return dst


def _windows(lo: int, hi: int, fraction: float, updates: int) -> list[tuple[int, int]]:
    width = int((hi - lo) * fraction)
    starts = np.linspace(lo, hi - width, updates).astype(np.int64)
    return [(int(s), int(s) + width) for s in starts]


def _pandas_frame(reports, offsets) -> pd.DataFrame:
    """The peer's columns, filled in place (int32 name codes: no string column, no concat
    copy; at 100 M kernels a string column and a concat ran this 24 GiB machine out)."""
    n = sum(len(r.kernels) for r in reports)
    columns = {"name": np.empty(n, np.int32), "start_ns": np.empty(n, np.int64),
               "end_ns": np.empty(n, np.int64), "duration_ns": np.empty(n, np.int64)}  # fmt: skip
    codes: dict[str, int] = {}
    at = 0
    for report, off in zip(reports, offsets, strict=True):
        kernels = report.kernels
        ids, inverse = np.unique(np.asarray(kernels["name_id"]), return_inverse=True)
        local = [codes.setdefault(str(t), len(codes)) for t in report.strings.lookup(ids)]
        part = slice(at, at + len(kernels))
        columns["name"][part] = np.asarray(local, dtype=np.int32)[inverse]
        np.add(kernels.start_ns, off, out=columns["start_ns"][part])
        np.add(kernels.end_ns, off, out=columns["end_ns"][part])
        columns["duration_ns"][part] = kernels.duration_ns
        at += len(kernels)
    return pd.DataFrame(columns, copy=False)


def _time(fn, windows) -> list[float]:
    out = []
    for t0, t1 in windows:
        started = time.perf_counter()
        fn(t0, t1)
        out.append((time.perf_counter() - started) * 1e3)
    return out


def _summary(label: str, ms: list[float], peer: list[float] | None) -> str:
    median, worst = statistics.median(ms), max(ms)
    ratio = f"  ({statistics.median(peer) / median:5.1f}× faster than pandas)" if peer else ""
    return f"    {label:10s} median {median:8.1f} ms   worst {worst:8.1f} ms{ratio}"


def _open(report_path: Path, n_reports: int) -> tuple[list, dict]:
    if n_reports > 1:
        return open_together(report_copies(report_path, n_reports))
    before, started = rss_bytes(), time.perf_counter()
    report = open_report(report_path)
    n = len(report.kernels)
    print(f"{report_path.name}: {n:,} kernels, opened in {time.perf_counter() - started:.1f} s")
    return [report], {"before": before, "events": report.event_count}


def bench(report_path: Path, fractions: list[float], updates: int, xp, with_aggregate: bool,
          n_reports: int = 1, threads: list[int] | None = None):  # fmt: skip
    reports, mem = _open(report_path, n_reports)
    report = reports[0]
    offsets = alignment_offsets(reports) if len(reports) > 1 else [0]
    for count in threads or []:  # the build on 1, 2... threads, same process
        started = time.perf_counter()
        build_window_index(reports, "kernels", offsets, xp=xp, threads=count)
        print(f"  index build on {count} thread(s): {time.perf_counter() - started:.2f} s",
              flush=True)  # fmt: skip
    started = time.perf_counter()
    index = build_window_index(reports, "kernels", offsets, xp=xp)
    index.stats(0, 1)  # builds the (group, value) order and the start order
    kind = "ranked" if index.is_ranked else "sorted values"
    print(f"  index build ({backend_name(xp)}, {kind}): {time.perf_counter() - started:.2f} s "
          f"(once); the index holds {index.nbytes / mem['events']:.1f} B/event "
          f"({index.nbytes / max(len(index), 1):.1f} B per indexed event)")  # fmt: skip
    print("  " + memory_line(mem, "after the index build"), flush=True)
    frame = _pandas_frame(reports, offsets)
    lo, hi = int(frame["start_ns"].min()), int(frame["end_ns"].max())
    peer_updates = updates if len(reports) == 1 else min(updates, 3)
    aggs = ["count", "sum", "mean", "median", "min", "max", "std"]

    def pandas_stats(t0, t1):
        inside = frame[(frame["start_ns"] < t1) & (frame["end_ns"] > t0)]
        return inside.groupby("name")["duration_ns"].agg(aggs)

    for fraction in fractions:
        windows = _windows(lo, hi, fraction, updates)
        rows = int(((frame["start_ns"] < windows[0][1]) & (frame["end_ns"] > windows[0][0])).sum())
        print(f"  window = {fraction:g} of the run (~{rows:,} kernels per update), "
              f"{updates} updates")  # fmt: skip
        # Same rows: check once that the panel and pandas agree on the counts.
        t0, t1 = windows[len(windows) // 2]
        ours = index.stats(t0, t1)
        theirs = pandas_stats(t0, t1).rename(
            columns={"sum": "total_ns", "min": "min_ns", "max": "max_ns", "median": "median_ns"}
        )
        same = ["count", "total_ns", "min_ns", "max_ns", "median_ns"]
        assert sorted(map(tuple, ours[same].to_numpy().tolist())) == sorted(
            map(tuple, theirs[same].to_numpy().tolist())
        ), "the panel and pandas disagree"
        peer = _time(pandas_stats, windows[:: max(len(windows) // peer_updates, 1)])
        panel = _time(lambda a, b: index.stats(a, b), windows)
        print(_summary("panel", panel, peer), flush=True)
        if with_aggregate and len(reports) == 1:
            one_shot = _time(
                lambda a, b: aggregate(report, "kernels", Selection(a, b), xp), windows
            )
            print(_summary("aggregate", one_shot, peer))
        print(_summary("pandas", peer, None), flush=True)
    print("  " + memory_line(mem, "at the end (pandas peer frame included)"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--report", type=Path, help="use this report instead of building one")
    parser.add_argument("--fractions", type=float, nargs="+", default=[1.0, 0.5, 0.05])
    parser.add_argument("--updates", type=int, default=20)
    parser.add_argument("--backend", choices=["numpy", "cupy"], default="numpy")
    parser.add_argument("--reports", type=int, default=1, help="reports open together")
    parser.add_argument("--no-aggregate", action="store_true", help="skip the one-shot path")
    parser.add_argument("--threads", type=int, nargs="*", default=[],
                        help="also time the index build on these thread counts")  # fmt: skip
    args = parser.parse_args(argv)
    xp = get_xp(args.backend)
    paths = [args.report] if args.report else [_report_path(n) for n in args.kernels]
    for path in paths:
        bench(path, args.fractions, args.updates, xp, not args.no_aggregate, args.reports,
              args.threads)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
