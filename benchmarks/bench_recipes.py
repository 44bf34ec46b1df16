"""Recipe wall time per mode on many scaled copies of a real report, and worker memory.

Builds one report of about ``--events`` events by replicating a real export
(:mod:`scale_report`; default source: the ayush-os ``vector_add_profile_v3`` export), copies
it ``--reports`` times under distinct names (so cache keys never collide), then runs the
recipe in each mode, each in its own interpreter:

* **serial**: the peer — every report mapped in one process (the loader itself reads a
  report's tables on one thread per core, so this already uses more than one core);
* **serial-1thread** (with ``--modes``): serial with the loader's reader threads cut to one,
  i.e. a one-core peer;
* **processes**: a process pool of ``--workers`` workers;
* **dask**: a Dask ``LocalCluster`` of ``--workers`` single-threaded worker processes,
  started inside the timing (as are the driver's import of ``distributed`` and the cluster's
  shutdown: what a ``--mode dask`` run costs more than a serial one).

Each driver is single-threaded, as the CLI is, so its workers are forked from it (see
``analysis/recipes/_procs.py``); worker memory and CPU are sampled from this process.

It prints wall time per mode, the speed-up of processes/dask over serial (target >= 1.7x on
the 2-core reference machine), and peak RSS: of the driver process (which holds every
report's small partial) and of the largest worker, next to the peak of a process that only
loads one report — a worker holds one report at a time, so its peak stays near that figure
whatever the number of reports. The output tables of all modes are checked to be identical.

Usage::

    python benchmarks/bench_recipes.py                       # 64 reports, ~200 k events each
    python benchmarks/bench_recipes.py --reports 8 --recipe nvtx_sum
    python benchmarks/bench_recipes.py --recipe all --repeat 2  # a speed-up table per recipe
    python benchmarks/bench_recipes.py --modes serial,serial-1thread,processes,dask --repeat 2
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sqlite3
import sys
import tempfile
import threading
from pathlib import Path

from _common import REPO, peak_rss_bytes, print_phase_result, run_phase, timed

SCRIPT = Path(__file__).resolve()
_MODES = ("serial", "processes", "dask")
#: Extra peer: serial with the loader's reader threads cut to one (a one-core serial run).
_SERIAL_ONE_THREAD = "serial-1thread"


class _WorkerPeak:
    """Samples the peak RSS (``VmHWM``) and CPU of every descendant of a driver process.

    It runs in the benchmark's parent process, not in the driver: a thread in the driver
    would make it multi-threaded, and a multi-threaded driver no longer forks its workers
    (it starts them from a fork server), which is not what the CLI does. Workers forked from
    a fork server or by a Dask nanny are not the driver's children, so ``RUSAGE_CHILDREN``
    would miss them; ``VmHWM`` is each process's own high-water mark, so sampling every
    0.25 s misses no peak of a live worker (its CPU is the last value seen).
    """

    def __init__(self, root_pid: int) -> None:
        self.root_pid = root_pid
        self.peak_bytes = 0
        self.cpu_s: dict[int, float] = {}  # pid -> last seen user + system seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> _WorkerPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        import psutil

        try:
            root = psutil.Process(self.root_pid)
        except psutil.Error:
            return
        while not self._stop.wait(0.25):
            try:
                children = root.children(recursive=True)
            except psutil.Error:
                return
            for child in children:
                self.peak_bytes = max(self.peak_bytes, _hwm_bytes(child.pid))
                try:
                    times = child.cpu_times()
                    self.cpu_s[child.pid] = times.user + times.system
                except psutil.Error:
                    pass


def _hwm_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _event_count(path: Path) -> int:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        from strata.analysis.loader import _SPECS

        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        return sum(
            con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
            for t, _ in _SPECS.values()
            if t in tables
        )
    finally:
        con.close()


def build_reports(source: Path, folder: Path, events: int, reports: int) -> list[Path]:
    """Write ``reports`` copies of one scaled report of about ``events`` events."""
    sys.path.insert(0, str(SCRIPT.parent))
    from scale_report import scale_report

    folder.mkdir(parents=True, exist_ok=True)
    one = folder / "scaled.sqlite"
    if not one.is_file() or abs(_event_count(one) - events) > events // 10:
        base = _event_count(source)
        per_copy = _event_count(scale_report(source, folder / "two.sqlite", 0, copies=2)) - base
        copies = max(1, math.ceil((events - base) / per_copy) + 1)
        scale_report(source, one, 0, copies=copies)
        (folder / "two.sqlite").unlink()
    paths = []
    for i in range(reports):
        dst = folder / f"rank{i:03d}.sqlite"
        if not dst.is_file() or dst.stat().st_size != one.stat().st_size:
            shutil.copyfile(one, dst)
        paths.append(dst)
    for stale in folder.glob("rank*.sqlite"):
        if stale not in paths:
            stale.unlink()
    return paths


def _phase_run(args: argparse.Namespace) -> None:
    from strata.analysis.recipes import RecipeOptions, run_recipe

    paths = sorted(Path(args.folder).glob("rank*.sqlite"))
    options = RecipeOptions(use_cache=args.cache, kernel_name=args.kernel)
    mode = args.mode
    if mode == _SERIAL_ONE_THREAD:
        import strata.analysis._sqlite

        # The loader reads tables on one thread per core; this peer uses one core only.
        strata.analysis._sqlite.limit_read_threads(1)
        mode = "serial"
    run, wall_s = timed(
        lambda: run_recipe(args.recipe, paths, options, mode=mode, workers=args.workers)
    )
    table = next(iter(run.output.tables))
    run.output.tables[table].to_parquet(Path(args.dump))
    print_phase_result(
        {
            "wall_s": wall_s,
            "driver_peak_bytes": peak_rss_bytes(),
            "driver_cpu_s": sum(os.times()[:2]),
            "failures": len(run.failures),
            "table": table,
        }
    )


def _run_watched(args: list[str], env: dict[str, str]) -> dict:
    """Run one ``--phase run`` driver, sampling its workers from this process."""
    samplers: list[_WorkerPeak] = []

    def watch(pid: int) -> _WorkerPeak:
        samplers.append(_WorkerPeak(pid))
        return samplers[-1]

    result = run_phase(SCRIPT, args, env, watch=watch)
    workers = samplers[0]
    result["worker_peak_bytes"] = workers.peak_bytes
    result["worker_cpu_s"] = sum(workers.cpu_s.values())
    return result


def _phase_one_report(args: argparse.Namespace) -> None:
    import strata.analysis.recipes  # noqa: F401 - the same imports as a worker
    from strata.analysis import open_report

    baseline = peak_rss_bytes()
    path = sorted(Path(args.folder).glob("rank*.sqlite"))[0]
    report, load_s = timed(lambda: open_report(path, use_cache=False))
    print_phase_result(
        {
            "load_s": load_s,
            "events": report.event_count,
            "import_peak_bytes": baseline,
            "peak_bytes": peak_rss_bytes(),
        }
    )


def main(argv: list[str] | None = None) -> int:
    from scale_report import DEFAULT_SOURCE

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--reports", type=int, default=64)
    parser.add_argument("--events", type=int, default=200_000, help="events per report")
    parser.add_argument(
        "--recipe", default="cuda_gpu_kern_sum", help="a recipe, or 'all' (every one but diff)"
    )
    parser.add_argument(
        "--kernel", default=None, help="cuda_gpu_kern_pace: --name (default: most frequent)"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cache", action="store_true", help="use the columnar cache")
    parser.add_argument("--modes", default=",".join(_MODES))
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per mode; the fastest counts (shared machine)"
    )
    parser.add_argument(
        "--folder", type=Path, default=Path(tempfile.gettempdir()) / "strata-bench-recipes"
    )
    parser.add_argument("--phase", choices=("run", "one"), help=argparse.SUPPRESS)
    parser.add_argument("--mode", help=argparse.SUPPRESS)
    parser.add_argument("--dump", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.phase == "run":
        _phase_run(args)
        return 0
    if args.phase == "one":
        _phase_one_report(args)
        return 0

    _, build_s = timed(lambda: build_reports(args.source, args.folder, args.events, args.reports))
    env = {"STRATA_CACHE_DIR": str(args.folder / "cache")}
    shutil.rmtree(args.folder / "cache", ignore_errors=True)
    one = run_phase(SCRIPT, ["--phase", "one", "--folder", str(args.folder)], env)
    print(
        f"{args.reports} reports x {one['events']:,d} events ({build_s:.1f} s to build); "
        f"{args.workers} workers, cache {'on' if args.cache else 'off'}"
    )
    print(
        f"one report: load {one['load_s']:.2f} s, peak RSS {one['peak_bytes'] / 2**20:,.0f} MiB "
        f"({one['import_peak_bytes'] / 2**20:,.0f} MiB after imports)"
    )
    recipes = _all_recipes() if args.recipe == "all" else [args.recipe]
    speedups = {recipe: _bench_recipe(args, recipe, env) for recipe in recipes}
    if len(recipes) > 1:
        print("\nspeed-up over serial (target >= 1.7x)")
        print(f"{'recipe':22s} {'serial':>8s} {'processes':>10s} {'dask':>10s}")
        for recipe, (serial_s, ratios) in speedups.items():
            cells = "".join(f" {ratios[m]:9.2f}x" if m in ratios else f" {'-':>10s}"
                            for m in ("processes", "dask"))  # fmt: skip
            print(f"{recipe:22s} {serial_s:7.2f}s{cells}")
    return 0


def _all_recipes() -> list[str]:
    from strata.analysis.recipes import recipe_names
    from strata.analysis.recipes.base import get_recipe

    return [name for name in recipe_names() if get_recipe(name).takes_reports]


def _common_kernel(folder: Path) -> str:
    """The short name of the most frequent kernel of the first report (for the pace recipe)."""
    path = sorted(folder.glob("rank*.sqlite"))[0]
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute(
            "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL AS k "
            "JOIN StringIds AS s ON s.id = k.shortName GROUP BY s.value ORDER BY count(*) DESC"
        ).fetchone()[0]
    finally:
        con.close()


def _bench_recipe(
    args: argparse.Namespace, recipe: str, env: dict[str, str]
) -> tuple[float, dict[str, float]]:
    """Run ``recipe`` in each mode; print the lines; return (serial s, mode -> speed-up)."""
    import pandas as pd

    kernel = args.kernel
    if recipe == "cuda_gpu_kern_pace" and not kernel:
        kernel = _common_kernel(args.folder)
    print(f"-- {recipe}" + (f" --name {kernel}" if recipe == "cuda_gpu_kern_pace" else ""))
    results, tables = {}, {}
    for mode in args.modes.split(","):
        dump = args.folder / f"out-{mode}.parquet"
        common = ["--folder", str(args.folder), "--recipe", recipe, "--dump", str(dump)]
        common += ["--workers", str(args.workers), "--mode", mode]
        common += ["--cache"] if args.cache else []
        common += ["--kernel", kernel] if kernel else []
        runs = []
        for _ in range(args.repeat):
            shutil.rmtree(args.folder / "cache", ignore_errors=True)
            runs.append(_run_watched(["--phase", "run", *common], env))
        results[mode] = min(runs, key=lambda r: r["wall_s"])
        results[mode]["all_wall_s"] = [round(r["wall_s"], 2) for r in runs]
        tables[mode] = pd.read_parquet(dump)
        r = results[mode]
        print(
            f"{mode:15s} {r['wall_s']:7.2f} s  driver peak {r['driver_peak_bytes'] / 2**20:7,.0f}"
            f" MiB  largest worker peak {r['worker_peak_bytes'] / 2**20:7,.0f} MiB"
            f"  CPU {r['driver_cpu_s'] + r['worker_cpu_s']:6.1f} s"
            f"  failures {r['failures']}  (runs: {r['all_wall_s']})"
        )
    ratios: dict[str, float] = {}
    for peer in ("serial", _SERIAL_ONE_THREAD):
        if peer not in results:
            continue
        for mode in ("processes", "dask"):
            if mode in results:
                ratio = results[peer]["wall_s"] / results[mode]["wall_s"]
                print(f"speed-up {mode}/{peer}: {ratio:.2f}x (target >= 1.7x)")
                if peer == "serial":
                    ratios[mode] = ratio
    if "serial" in results:
        for table in tables.values():
            pd.testing.assert_frame_equal(table, tables["serial"])
        print(f"output tables identical across {', '.join(tables)}")
    serial_s = results["serial"]["wall_s"] if "serial" in results else float("nan")
    return serial_s, ratios


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
