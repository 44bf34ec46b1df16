"""Progressive open: time to the first partial report and to the first drawn frame, against the
whole open measured in the same run.

Each phase runs in its own process with an empty private cache (a cold first open):

* **whole open** (the peer): ``open_report`` with no ``on_partial``, what the window waited
  for before the progressive open (read, build, cache entry written);
* **progressive**: ``open_report(on_partial=...)``: seconds to the first partial report, to
  the first one with kernels (the lead chunk: the first rows of the kernel table), to the
  first one holding the whole kernel table (the CUDA HW rows), and to the complete report;
* **window** (``--gui``): an offscreen main window; seconds from ``open_paths`` (the drop) to
  the first painted frame whose kernel rows have events, and to the loaded report.

Phases alternate over ``--runs`` rounds and medians are printed, with the ratio of each
progressive time to the whole open of the same run, and the CPU time (all threads) of the
progressive open against the whole open's: what the partial reports cost. The machine is
shared: compare ratios, not seconds, and repeat.

Usage::

    python benchmarks/bench_progressive.py --report /tmp/hostile/big2m.sqlite --gui
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, cpu_seconds, print_phase_result, run_phase, timed


def _phase_whole(path: Path) -> dict:
    from strata.analysis import open_report

    cpu = cpu_seconds()
    report, seconds = timed(lambda: open_report(path, use_cache=True))
    return {"complete": seconds, "cpu": cpu_seconds() - cpu, "events": report.event_count}


def _phase_progressive(path: Path) -> dict:
    from strata.analysis import open_report

    seen: dict[str, float] = {}
    cpu = cpu_seconds()
    t0 = time.perf_counter()

    def on_partial(part) -> None:
        now = time.perf_counter() - t0
        seen.setdefault("first", now)
        if len(part.tables["kernels"]):
            seen.setdefault("some_kernels", now)
        if "kernels" not in part.pending:
            seen.setdefault("kernels", now)

    report = open_report(path, use_cache=True, on_partial=on_partial)
    complete = time.perf_counter() - t0
    first = seen.get("first", complete)
    return {
        "first": first,
        "some_kernels": seen.get("some_kernels", complete),
        "kernels": seen.get("kernels", complete),
        "complete": complete,
        "cpu": cpu_seconds() - cpu,
        "events": report.event_count,
    }


def _phase_window(path: Path) -> dict:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from strata.app.main_window import MainWindow
    from strata.app.settings import Settings

    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        window = MainWindow(Settings(Path(tmp) / "settings.ini"))
        window.resize(1600, 1000)
        window.show()
        app.processEvents()
        t0 = time.perf_counter()
        (entry,) = window.open_paths([path])
        first = None
        while entry.state != "loaded":
            app.processEvents()
            if first is None and _kernel_rows_have_events(window):
                window.timeline.grab()  # paints one frame of what has arrived
                first = time.perf_counter() - t0
            time.sleep(0.002)
        complete = time.perf_counter() - t0
        window.runner.wait_for_done(60_000)
        window.close()
    return {"first_frame": first or complete, "complete": complete}


def _kernel_rows_have_events(window) -> bool:
    shown = window.binding.shown_set()
    for track in window.binding.tracks():
        if track.kind == "gpu_stream":
            for name, track_id in track.parts:
                offsets = shown.slice_tables(track.report_index)[name].track_offsets
                if offsets[track_id + 1] > offsets[track_id]:
                    return True
    return False


_PHASES = {"whole": _phase_whole, "progressive": _phase_progressive, "window": _phase_window}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Progressive open vs the whole open.")
    parser.add_argument("--report", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--gui", action="store_true", help="also time the window's first frame")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "strata")
    parser.add_argument("--phase", choices=tuple(_PHASES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.phase:
        print_phase_result(_PHASES[args.phase](args.report))
        return 0
    args.workdir.mkdir(parents=True, exist_ok=True)
    script = Path(__file__).resolve()
    phases = ["whole", "progressive"] + (["window"] if args.gui else [])
    results: dict[str, list[dict]] = {p: [] for p in phases}
    for _ in range(args.runs):
        for phase in phases:
            with tempfile.TemporaryDirectory(prefix="bench-cache-", dir=args.workdir) as cache:
                env = {"STRATA_CACHE_DIR": cache, "PYTHONPATH": str(REPO)}
                results[phase].append(
                    run_phase(script, ["--phase", phase, "--report", str(args.report)], env)
                )
    _report(args.report, results)
    return 0


def _report(path: Path, results: dict[str, list[dict]]) -> None:
    def med(phase: str, key: str) -> float:
        return statistics.median(r[key] for r in results[phase])

    whole = med("whole", "complete")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"report          {path.name}: {results['whole'][0]['events']:,} events")  # noqa: T201
    runs = len(results["whole"])
    print(f"machine         {os.cpu_count()} cores, load {load}; medians of {runs} runs")  # noqa: T201
    spread = ", ".join(f"{r['complete']:.2f}" for r in results["whole"])
    peer = "peer: the open the window waited for before"
    print(f"whole open      {whole:6.2f} s  ({peer}; {spread})")  # noqa: T201
    # CPU seconds (all threads) are what the partial reports cost, and less sensitive than
    # wall time to what else runs on a shared machine.
    cpu = med("whole", "cpu")
    print(f"whole open CPU  {cpu:6.2f} s")  # noqa: T201
    value = med("progressive", "cpu")
    print(f"progr. CPU      {value:6.2f} s  = {value / cpu:.2f} x whole open CPU")  # noqa: T201
    rows = [("first partial", "progressive", "first"),
            ("first kernels", "progressive", "some_kernels"),
            ("all kernels", "progressive", "kernels"),
            ("progr. complete", "progressive", "complete")]  # fmt: skip
    if "window" in results:
        rows += [("window frame", "window", "first_frame"), ("window loaded", "window", "complete")]
    for label, phase, key in rows:
        value = med(phase, key)
        spread = ", ".join(f"{r[key]:.2f}" for r in results[phase])
        print(f"{label:15s} {value:6.2f} s  = {value / whole:.2f} x whole open  ({spread})")  # noqa: T201


if __name__ == "__main__":
    sys.exit(main())
