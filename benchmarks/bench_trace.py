"""``cuda_gpu_trace`` (one printed row per GPU operation) on a scaled real report, against nsys.

Builds (or reuses) a report with ``--kernels`` kernels by replicating a real export
(:mod:`scale_report`), then times, each as a fresh command, ``--repeat`` times (fastest
counts; the reference machine is shared):

* **nsys stats** ``-r cuda_gpu_trace -f csv`` on a copy of the report (when nsys is
  installed);
* **Strata** ``main.py stats -r cuda_gpu_trace -f csv``, cold (empty cache: it reads the
  report) and from the cache;

checks that both print the same table (the ``Processing ...`` line names another script
path), and prints the ratios. Most of the time on both sides is printing millions of rows.

Usage::

    python benchmarks/bench_trace.py --kernels 1000000
    python benchmarks/bench_trace.py --report big.sqlite --skip-nsys
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, ensure_scaled_report


def _timed_command(argv: list[str], out: Path, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    with out.open("w") as fh:
        subprocess.run(argv, stdout=fh, stderr=subprocess.DEVNULL, env=env, check=True)
    return time.perf_counter() - t0


def _table(path: Path) -> list[str]:
    """The printed table, without nsys's ``Processing [...] with [script]...`` line."""
    return [line for line in path.read_text().splitlines() if not line.startswith("Processing")]


def main(argv: list[str] | None = None) -> int:
    from strata.analysis.open import find_nsys

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=1_000_000)
    parser.add_argument("--report", type=Path, help="use this report instead of building one")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "strata")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (fastest)")
    parser.add_argument("--skip-nsys", action="store_true")
    args = parser.parse_args(argv)

    args.workdir.mkdir(parents=True, exist_ok=True)
    report = ensure_scaled_report(args.report, args.workdir, args.kernels)
    cache = args.workdir / "trace-cache"
    env = {**os.environ, "STRATA_CACHE_DIR": str(cache)}
    ours = [sys.executable, str(REPO / "main.py"), "stats", str(report), "-r", "cuda_gpu_trace"]
    ours += ["-f", "csv"]
    out_ours, out_nsys = args.workdir / "trace-strata.csv", args.workdir / "trace-nsys.csv"
    times: dict[str, float] = {}

    def best(name: str, run) -> None:
        times[name] = min(run() for _ in range(args.repeat))
        print(f"{name:22s} {times[name]:7.2f} s")

    def cold() -> float:
        shutil.rmtree(cache, ignore_errors=True)
        return _timed_command(ours, out_ours, env)

    best("Strata, cold report", cold)
    best("Strata, from the cache", lambda: _timed_command(ours, out_ours, env))
    nsys = None if args.skip_nsys else find_nsys()
    if nsys is None:
        print("nsys not found (PATH or $NSYS): no peer")
        return 0
    copy = args.workdir / "trace-nsys-copy.sqlite"  # nsys gets a copy: ours is never written
    shutil.copyfile(report, copy)
    command = [nsys, "stats", "-r", "cuda_gpu_trace", "-f", "csv", str(copy)]
    best("nsys stats", lambda: _timed_command(command, out_nsys, dict(os.environ)))
    copy.unlink()
    same = _table(out_ours) == _table(out_nsys)
    rows = len(_table(out_ours)) - 1
    print(f"{rows:,d} rows; tables identical: {same}")
    for name in ("Strata, cold report", "Strata, from the cache"):
        print(f"speed-up over nsys stats, {name[8:]}: {times['nsys stats'] / times[name]:.2f}x")
    return 0 if same else 1


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
