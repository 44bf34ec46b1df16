"""Demo builder and outlier search speed, each against a peer measured in the same run.

* **demo build**: ``build_demo_reports`` (simulate + write every table) against SQLite's own
  bulk insert of the same number of rows (one 8-integer-column table, ``executemany``);
* **find_outliers**: instances and report ranking over every report, against pandas doing the
  instance scores alone (``groupby().transform('median')`` twice) on the same durations.

Usage::

    python benchmarks/bench_outliers.py --ranks 4 --steps 40
    python benchmarks/bench_outliers.py --ranks 8 --steps 400
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from strata.analysis import open_report  # noqa: E402
from strata.analysis.outliers import find_outliers  # noqa: E402
from strata.resources.demo import build_demo_reports  # noqa: E402


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _sqlite_insert(rows: int, folder: Path) -> None:
    path = folder / "peer.sqlite"
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = OFF")
    con.execute("PRAGMA synchronous = OFF")
    con.execute("CREATE TABLE t (a INTEGER, b INTEGER, c INTEGER, d INTEGER, e INTEGER, "
                "f INTEGER, g INTEGER, h INTEGER)")  # fmt: skip
    data = np.arange(rows * 8, dtype=np.int64).reshape(rows, 8).tolist()
    with con:
        con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?)", data)
    con.close()


def _pandas_scores(frame) -> None:
    dur = frame["duration_ns"].astype(np.float64)
    median = dur.groupby([frame["kind"], frame["name"]]).transform("median")
    dev = (dur - median).abs()
    mad = dev.groupby([frame["kind"], frame["name"]]).transform("median")
    _ = 0.6745 * (dur - median) / mad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        counter = iter(range(10**6))
        build = _best(
            lambda: build_demo_reports(folder / f"d{next(counter)}", args.ranks, args.steps),
            args.repeat,
        )
        paths = build_demo_reports(folder / "d0", args.ranks, args.steps)
        reports = [open_report(p, use_cache=False) for p in paths]
        rows = sum(r.event_count for r in reports)
        peer = _best(lambda: _sqlite_insert(rows, folder), args.repeat)
        print(f"demo build: {args.ranks} ranks x {args.steps} steps, {rows:,} events: "  # noqa: T201
              f"{build:.3f} s; sqlite executemany of {rows:,} rows: {peer:.3f} s; "
              f"ratio {build / peer:.2f}")  # fmt: skip
        found = find_outliers(reports)
        ours = _best(lambda: find_outliers(reports, kinds=("kernels", "nvtx", "cuda_api")),
                     args.repeat)  # fmt: skip
        everything = _best(lambda: find_outliers(reports), args.repeat)
        frame = find_outliers(reports, threshold=0.0, kinds=("kernels", "nvtx", "cuda_api"))
        scored = frame.instances
        pandas = _best(lambda: _pandas_scores(scored), args.repeat)
        print(f"find_outliers (kernels, nvtx, cuda_api; {len(scored):,} scored instances "  # noqa: T201
              f"with |z| > 0): {ours:.3f} s; pandas groupby z alone: {pandas:.3f} s; "
              f"ratio {ours / pandas:.2f}; with nvtx_gpu projection: {everything:.3f} s; "
              f"{len(found.instances):,} outliers, {len(found.reports)} report rows")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
