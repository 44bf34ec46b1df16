"""The panel's window index on varied values: many names, ~24-bit durations, several streams.

bench_panel's scaled reports hold one kernel name with 8 distinct durations (13 value bits),
kind to the ranked index (:mod:`analysis.window_ranked`), whose build and size grow with the
values' bits. Here synthetic panel rows (lognormal durations up to ~16 ms, ``--names`` names,
8 interleaved streams) are indexed both ways in one process, ranked and sorted values (the
peer), and timed on windows of 1, 0.5 and 0.05 of the run; both must give the same tables.

Usage::

    python benchmarks/bench_window_ranked.py --events 5000000 --names 500
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from strata.analysis.kinds import PanelRows  # noqa: E402
from strata.analysis.window_ranked import RankedReport, ranked_stats  # noqa: E402


def _rows(n: int, names: int, seed: int) -> PanelRows:
    rng = np.random.default_rng(seed)
    codes = np.minimum(rng.zipf(1.3, n) - 1, names - 1).astype(np.int64)
    values = np.minimum(rng.lognormal(10, 1.5, n), 2**24 - 1).astype(np.int64)
    start = np.sort(rng.integers(0, n * 2000, n))  # 8 streams' events, interleaved
    keys = np.array([f"k{i}" for i in range(names)], dtype=object)
    return PanelRows(keys, keys, None, codes, values, start, start + values, ("kernels",),
                     np.zeros(n, np.int8), np.arange(n))  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5_000_000)
    parser.add_argument("--names", type=int, default=500)
    parser.add_argument("--updates", type=int, default=10)
    args = parser.parse_args(argv)
    part = _rows(args.events, args.names, 1)
    started = time.perf_counter()
    ranked = RankedReport.build(part, part.codes, args.names)
    build = time.perf_counter() - started
    print(f"{args.events:,} events, {args.names} names, {ranked.matrix.width} value bits: "
          f"ranked build {build:.2f} s, {ranked.nbytes / len(ranked):.1f} B/event")  # fmt: skip
    # The peer: the sorted-values order (sort by (name, value)) and a mask per window.
    started = time.perf_counter()
    order = np.lexsort((part.values, part.codes))
    values, starts, ends = part.values[order], part.start_ns[order], part.end_ns[order]
    bounds = np.searchsorted(part.codes[order], np.arange(args.names + 1))
    print(f"  peer (sorted values) build {time.perf_counter() - started:.2f} s")
    lo, hi = int(part.start_ns.min()), int(part.end_ns.max())
    for fraction in (1.0, 0.5, 0.05):
        width = int((hi - lo) * fraction)
        ours, peer = [], []
        for t0 in np.linspace(lo, hi - width, args.updates).astype(np.int64).tolist():
            t1 = t0 + width
            started = time.perf_counter()
            found = ranked_stats([ranked], [0], args.names, t0, t1, pooled=True)
            ours.append((time.perf_counter() - started) * 1e3)
            started = time.perf_counter()
            keep = (starts < t1) & ((ends > t0) | (starts >= t0))
            pos = np.flatnonzero(keep)
            kept_bounds = np.searchsorted(pos, bounds)
            sizes = np.diff(kept_bounds)
            mid = values[pos][kept_bounds[:-1][sizes > 0] + (sizes[sizes > 0] - 1) // 2]
            peer.append((time.perf_counter() - started) * 1e3)
            assert found.count.tolist() == sizes[sizes > 0].tolist()
            odd = sizes[sizes > 0] % 2 == 1  # the peer's middle value is the median there
            assert np.array_equal(found.median[odd], mid[odd].astype(np.float64))
        print(f"  window {fraction:g}: ranked median {statistics.median(ours):6.1f} ms, worst "
              f"{max(ours):6.1f} ms; peer (mask, counts and lower medians only) median "
              f"{statistics.median(peer):6.1f} ms")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
