"""What the start-order step of the loader costs: nothing on sorted tables, a sort otherwise.

Times :func:`analysis.loader.load_sqlite` (no cache: a first open) on one report, paired
with a peer run in the same process that skips :func:`analysis.loader.in_start_order`;
runs alternate (peer, ours) ``--repeat`` times and the median of the per-pair ratios is
printed. Then times ``in_start_order`` alone on the report's kernel columns in their file
order and shuffled (what a 2025.6+ export costs).

Usage::

    python benchmarks/bench_unordered.py --report /tmp/hostile/big2m.sqlite --repeat 5

Measured on the shared 2-core machine (other helpers running, so single times vary by
20 %; the ratio is paired): see the commit message that added this script.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
from _common import REPO  # noqa: F401 - puts the repository on sys.path

from strata.analysis import loader


def _load_seconds(report: Path, skip_step: bool) -> float:
    real = loader.in_start_order
    if skip_step:
        loader.in_start_order = lambda data: data
    try:
        t0 = time.perf_counter()
        loader.load_sqlite(report)
        return time.perf_counter() - t0
    finally:
        loader.in_start_order = real


def _step_seconds(data: dict[str, np.ndarray]) -> float:
    t0 = time.perf_counter()
    loader.in_start_order(data)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--report", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    ratios, peers, ours = [], [], []
    _load_seconds(args.report, skip_step=False)  # warm the OS page cache
    for _ in range(args.repeat):
        peer = _load_seconds(args.report, skip_step=True)
        mine = _load_seconds(args.report, skip_step=False)
        peers.append(peer)
        ours.append(mine)
        ratios.append(mine / peer)
    print(f"first open, sorted tables: peer (no step) median {statistics.median(peers):.3f} s, "
          f"with step {statistics.median(ours):.3f} s, "
          f"paired ratio median {statistics.median(ratios):.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f}, n={len(ratios)})")  # fmt: skip
    kernels = loader.load_sqlite(args.report, kinds=["kernels"]).tables["kernels"]
    by_row = np.argsort(kernels["row_id"])
    data = {name: np.asarray(kernels[name])[by_row] for name in kernels.columns}
    shuffled = np.random.default_rng(15).permutation(len(by_row))
    mixed = {name: column[shuffled] for name, column in data.items()}
    sorted_s = statistics.median(_step_seconds(data) for _ in range(args.repeat))
    mixed_s = statistics.median(_step_seconds(mixed) for _ in range(args.repeat))
    print(f"in_start_order on {len(by_row):,} kernels x {len(data)} columns: "
          f"file order {sorted_s * 1e3:.1f} ms, shuffled {mixed_s * 1e3:.0f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
