"""Time ``stats``'s compute step on one report three ways: the SQL path, the column path
cold (``--no-cache``) and the column path from its cache entry; print the SQL path's ratio
against each, measured alternately in one process (imports done first, so only the step
itself is timed). Used to place :data:`analysis.stats.compute.SQL_MAX_BYTES`.

Usage: ``python benchmarks/bench_sql_path.py REPORT [REPORT...] [--runs N]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import _common  # noqa: F401 - puts the repository on sys.path

from strata.analysis.stats import run_report
from strata.analysis.stats.lean import open_for_stats, wait_for_cache_writes
from strata.analysis.stats.sql import sql_summaries

SPECS = ["cuda_gpu_kern_sum", "cuda_api_sum"]


def _columns(path: str, use_cache: bool) -> None:
    report = open_for_stats(path, SPECS, use_cache=use_cache)
    [run_report(report, s) for s in SPECS]
    wait_for_cache_writes()


def _time(func) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("reports", nargs="+")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        os.environ["STRATA_CACHE_DIR"] = cache
        for path in args.reports:
            _columns(path, True)  # the entry, and every lazy import, before the timing
            sql_summaries(path, SPECS)
            times = {"sql": [], "cold": [], "cached": []}
            for _ in range(args.runs):
                times["sql"].append(_time(lambda p=path: sql_summaries(p, SPECS)))
                times["cold"].append(_time(lambda p=path: _columns(p, False)))
                times["cached"].append(_time(lambda p=path: _columns(p, True)))
            med = {k: statistics.median(v) for k, v in times.items()}
            size = os.path.getsize(path) / 2**20
            print(
                f"{os.path.basename(path)} ({size:.1f} MiB): sql {med['sql'] * 1e3:.1f} ms, "
                f"columns cold {med['cold'] * 1e3:.1f} ms, cached {med['cached'] * 1e3:.1f} ms; "
                f"sql/cold {med['sql'] / med['cold']:.2f}, sql/cached "
                f"{med['sql'] / med['cached']:.2f} (medians of {args.runs})"
            )


if __name__ == "__main__":
    main()
