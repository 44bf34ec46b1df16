"""The collectives overlay without Qt: which instances a frame plans, where each rank's wait
is shaded (in px), and the merged plan when many instances are in view."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from strata.analysis.collectives import OP_COLUMNS, match_collectives
from strata.viewer.state.collective_overlay import DETAIL_MAX, CollectiveOverlay, plan_overlay

#: Rank 0's collectives run on track 17, rank 1's on track 23.
TRACKS = (17, 23)
ROWS = {(0, "kernels", 17): (100.0, 120.0), (1, "kernels", 23): (140.0, 160.0)}


def _ops(spans: list[tuple[int, int]]) -> pd.DataFrame:
    n = len(spans)
    return pd.DataFrame({
        "collective": ["AllReduce"] * n, "communicator": ["(unknown)"] * n,
        "size_bytes": np.full(n, -1, np.int64), "seq": np.full(n, -1, np.int64),
        "start_ns": np.array([s for s, _ in spans], np.int64),
        "end_ns": np.array([e for _, e in spans], np.int64),
        "source": ["kernel"] * n, "table": ["kernels"] * n, "row": np.arange(n, dtype=np.int64),
        "name": ["ncclDevKernel_AllReduce"] * n,
    })[list(OP_COLUMNS)]  # fmt: skip


def _overlay(rank0, rank1, offsets=(0, 0)) -> CollectiveOverlay:
    match = match_collectives([_ops(rank0), _ops(rank1)], ["r0", "r1"], offsets)
    reports = [SimpleNamespace(tables={"kernels": pd.DataFrame({"track_id": [track] * len(s)})})
               for s, track in zip((rank0, rank1), TRACKS, strict=True)]  # fmt: skip
    return CollectiveOverlay.from_match(match, reports, offsets)


def test_each_rank_waits_from_its_start_to_the_last_arrival_in_pixels() -> None:
    # Instance 0: rank 1 arrives 4 µs late; instance 1: rank 0 does, by 10 µs.
    overlay = _overlay([(10_000, 30_000), (100_000, 120_000)],
                       [(14_000, 30_500), (90_000, 121_000)])  # fmt: skip
    plan = plan_overlay(overlay, t0_ns=0, ns_per_px=200.0, data_x=50.0, width_px=1000,
                        rows=ROWS)  # fmt: skip
    assert not plan.merged
    assert list(plan.instances) == [0, 1]
    # Only the rank that waited is shaded: rank 0 in instance 0, rank 1 in instance 1.
    assert list(plan.wait_instances) == [0, 1]
    assert list(plan.wait_reports) == [0, 1]
    x, y, w, h = plan.waits[0]
    assert (x, w) == (50.0 + 10_000 / 200, 4_000 / 200)
    assert (y, h) == (102.0, 16.0)
    x, y, w, h = plan.waits[1]
    assert (x, w) == (50.0 + 90_000 / 200, 10_000 / 200)
    assert y == 142.0
    # Each instance joins its ranks' starts, top row first, and marks its last arrival.
    assert plan.links == [[(100.0, 110.0), (120.0, 150.0)], [(550.0, 110.0), (500.0, 150.0)]]
    assert [a[0] for a in plan.arrivals] == [50.0 + 14_000 / 200, 50.0 + 100_000 / 200]


def test_only_the_instances_in_view_and_the_rows_on_screen_are_planned() -> None:
    # A long instance that starts before the view and ends inside it is in view.
    overlay = _overlay([(0, 500_000), (600_000, 610_000), (900_000, 910_000)],
                       [(5_000, 500_100), (601_000, 610_000), (905_000, 910_000)])  # fmt: skip
    plan = plan_overlay(overlay, 400_000, 100.0, 0.0, 3_000, ROWS)  # 400 µs to 700 µs
    assert list(plan.instances) == [0, 1]
    assert set(plan.wait_instances) == {0, 1}
    # The wait of instance 0 starts left of the view: clipped to 2 px before it.
    assert plan.waits[0][0] == -2.0
    # Rank 1's row scrolled off: nothing of it, and no line to join (one rank left).
    plan = plan_overlay(overlay, 400_000, 100.0, 0.0, 3_000, {(0, "kernels", 17): (0, 20)})
    assert set(plan.wait_reports) == {0}
    assert plan.links == []
    assert plan_overlay(overlay, 2_000_000, 100.0, 0.0, 3_000, ROWS).instances.size == 0


def test_many_instances_in_view_are_merged_per_row_at_pixel_resolution() -> None:
    rng = np.random.default_rng(3)
    n = 5 * DETAIL_MAX
    starts = np.arange(n, dtype=np.int64) * 100_000
    late = rng.integers(0, 20_000, n)
    rank0 = [(int(s), int(s) + 50_000) for s in starts]
    overlay = _overlay(rank0, [(s + int(d), e) for (s, e), d in zip(rank0, late, strict=True)])
    width = 800
    ns_per_px = n * 100_000 / width
    plan = plan_overlay(overlay, 0, ns_per_px, 0.0, width, ROWS)
    assert plan.merged
    assert len(plan.instances) == n
    assert plan.links == []
    assert plan.arrivals == []
    # At most one rectangle per pixel column and row, and no two overlap on a row.
    assert len(plan.waits) <= 2 * width
    for report in (0, 1):
        mine = plan.waits[plan.wait_reports == report]
        assert (mine[1:, 0] > mine[:-1, 0] + mine[:-1, 2]).all()
    # Every rank-0 wait (those with one) lies inside a merged run of its row.
    runs = plan.waits[plan.wait_reports == 0]
    waited = late > 0
    x0 = starts[waited] / ns_per_px
    inside = [(runs[:, 0] <= x) & (x < runs[:, 0] + runs[:, 2]) for x in x0]
    assert all(hit.any() for hit in inside)


def test_an_events_instance_and_its_ranks_on_their_own_clocks() -> None:
    # Rank 1 drawn 500 ns later than its clock reads: its members' ends are its own.
    overlay = _overlay([(10_000, 30_000), (100_000, 120_000)],
                       [(14_000, 30_500), (90_000, 121_000)], offsets=(0, 500))  # fmt: skip
    assert overlay.instance_of(1, "kernels", 1) == 1
    assert overlay.instance_of(0, "kernels", 0) == 0
    assert overlay.instance_of(0, "nvtx", 0) is None
    assert overlay.instance_of(0, "kernels", 7) is None
    assert overlay.members(0) == [(0, "kernels", 0, 30_000), (1, "kernels", 0, 30_500)]
