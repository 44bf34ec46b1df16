"""Collectives matched across ranks: exact figures on planted ranks, real Kineto traces, and
odd sets (different counts, a rank without collectives, unmatched sequence numbers)."""

from __future__ import annotations

import gzip
import json
import shutil
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from strata.analysis import open_reports
from strata.analysis.alignment import TimeAlignment
from strata.analysis.collectives import (
    OP_COLUMNS,
    UNKNOWN_COMMUNICATOR,
    collective_family,
    collectives,
    find_collectives,
    match_collectives,
)
from strata.analysis.comm_args import DTYPE_BYTES
from tests.analysis.test_recipes_data import K, write_report
from tests.conftest import SHARED

KINETO = SHARED / "reports" / "real" / "kineto"
NS_TRACE = KINETO / (
    "facebookresearch__HolisticTraceAnalysis__ns_resolution_trace_rank-0.Apr_03_18_51_38.1102"
    ".pt.trace.json.gz"
)
SAMPLED = KINETO / "facebookresearch__HolisticTraceAnalysis__trace_filter_sampled_rank-0.json.gz"

ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm *, unsigned long, ncclWork *)"
BROADCAST = "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"
UTC = 1_700_000_000_000_000_000

# Two ranks, two all-reduces and one broadcast each (start, end in ns, own clocks).
RANK0 = {"ar": [(10_000, 30_000), (100_000, 112_000)], "bc": [(200_000, 205_000)]}
RANK1 = {"ar": [(14_500, 30_200), (97_000, 111_500)], "bc": [(203_000, 205_100)]}
#: rank 1's session started this much later (its clock reads this much less)
RANK1_LATE_NS = 2_000


def _write_rank(path: Path, planted: dict, utc: int) -> Path:
    kernels = [K(ALLREDUCE, s, e, stream=17) for s, e in planted["ar"]]
    kernels += [K(BROADCAST, s, e, stream=17) for s, e in planted["bc"]]
    kernels += [K("sgemm", 40_000, 90_000)]  # not a collective
    return write_report(path, kernels=kernels, session_start_utc_ns=utc)


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("ranks")
    paths = [_write_rank(folder / "r0.sqlite", RANK0, UTC),
             _write_rank(folder / "r1.sqlite", RANK1, UTC + RANK1_LATE_NS)]  # fmt: skip
    return open_reports(paths, use_cache=False)


def test_kernel_and_nvtx_names_give_the_family() -> None:
    assert collective_family(ALLREDUCE, "kernel") == "AllReduce"
    assert collective_family(BROADCAST, "kernel") == "Broadcast"
    assert (
        collective_family("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(x)", "kernel") == "SendRecv"
    )
    assert collective_family("ncclAllReduceRingLLKernel_sum_f32", "kernel") == "AllReduce"
    assert collective_family("ncclSymkDevKernel_AllGather_LL", "kernel") == "AllGather"
    assert collective_family("ncclDevKernel_Generic", "kernel") == "Generic"
    assert collective_family("sgemm_128x64", "kernel") is None
    assert collective_family("NCCL:ncclReduceScatter", "nvtx") == "ReduceScatter"
    assert collective_family("NCCL:ncclGroupEnd", "nvtx") is None
    assert collective_family("nccl:_all_gather_base", "nvtx") == "AllGather"
    assert collective_family("allreduce", "kineto") == "AllReduce"
    assert collective_family("wait", "kineto") is None


def test_two_ranks_every_figure_to_the_nanosecond(two_ranks) -> None:
    found = collectives(two_ranks, TimeAlignment("wallclock"))
    assert collectives(two_ranks, TimeAlignment("wallclock")) is found  # computed once
    inst = found.instances
    assert list(zip(inst["collective"], inst["instance"], strict=True)) == [
        ("AllReduce", 0), ("AllReduce", 1), ("Broadcast", 0)]  # fmt: skip
    assert set(inst["communicator"]) == {UNKNOWN_COMMUNICATOR}
    # Wall clock: rank 1's times move RANK1_LATE_NS later.
    s0 = [10_000, 100_000, 200_000]
    e0 = [30_000, 112_000, 205_000]
    s1 = [14_500 + 2_000, 97_000 + 2_000, 203_000 + 2_000]
    e1 = [30_200 + 2_000, 111_500 + 2_000, 205_100 + 2_000]
    for i in range(3):
        first, last = min(s0[i], s1[i]), max(s0[i], s1[i])
        row = inst.iloc[i]
        assert row["first_start_ns"] == first
        assert row["last_start_ns"] == last
        assert row["skew_ns"] == last - first
        assert row["end_ns"] == max(e0[i], e1[i])
        assert row["transfer_ns"] == max(e0[i], e1[i]) - last
        waits = [min(last - s0[i], e0[i] - s0[i]), min(last - s1[i], e1[i] - s1[i])]
        assert row["total_wait_ns"] == sum(waits)
        assert row["max_wait_ns"] == max(waits)
        assert row["straggler"] == ("r1.sqlite" if s1[i] > s0[i] else "r0.sqlite")
        ranks = found.ranks[found.ranks["instance_row"] == i]
        assert ranks["start_ns"].tolist() == [s0[i], s1[i]]
        assert ranks["wait_ns"].tolist() == waits
        assert ranks["transfer_ns"].tolist() == [e0[i] - last, e1[i] - last]
    # Broadcast: rank 1 arrives 5,000 ns late; rank 0 waits all of its 5,000 ns kernel.
    assert inst.iloc[2]["total_wait_ns"] == 5_000
    summary = found.summary.set_index("collective")
    assert summary.loc["AllReduce", "count"] == 2
    assert summary.loc["AllReduce", "max_skew_ns"] == 6_500
    assert summary.loc["AllReduce", "mean_skew_ns"] == (6_500 + 1_000) / 2
    assert summary.loc["AllReduce", "total_wait_ns"] == 6_500 + 1_000
    assert summary.loc["AllReduce", "worst_straggler"] == "r1.sqlite"
    assert summary.loc["AllReduce", "caused_wait_ns"] == 6_500
    waits = found.rank_waits.set_index(["collective", "report"])
    assert waits.loc[("AllReduce", "r0.sqlite"), "wait_ns"] == 6_500
    assert waits.loc[("AllReduce", "r1.sqlite"), "wait_ns"] == 1_000
    assert waits.loc[("AllReduce", "r0.sqlite"), "wait_share"] == pytest.approx(6_500 / 7_500)
    assert waits.loc[("Broadcast", "r1.sqlite"), "wait_share"] == 0.0
    assert any("communicator unknown" in n for n in found.notes)


def test_session_alignment_sees_the_raw_clocks(two_ranks) -> None:
    inst = collectives(two_ranks, TimeAlignment("session")).instances
    assert inst["skew_ns"].tolist() == [4_500, 3_000, 3_000]


def _ops(starts: list[int], family: str = "AllReduce", seq: list[int] | None = None,
         size: int = -1) -> pd.DataFrame:  # fmt: skip
    n = len(starts)
    return pd.DataFrame({
        "collective": [family] * n, "communicator": ["pg 0"] * n,
        "size_bytes": np.full(n, size, np.int64),
        "seq": np.asarray(seq if seq is not None else [-1] * n, np.int64),
        "start_ns": np.asarray(starts, np.int64), "end_ns": np.asarray(starts, np.int64) + 500,
        "source": "kernel", "table": "kernels", "row": np.arange(n, dtype=np.int64),
        "name": family,
    })[list(OP_COLUMNS)]  # fmt: skip


def test_sequence_numbers_match_across_order_and_gaps() -> None:
    a = _ops([100, 200, 300], seq=[1, 2, 3])
    b = _ops([210, 310], seq=[2, 3])  # rank b never saw sequence 1
    found = match_collectives([a, b], ["a", "b"])
    inst = found.instances
    assert inst["instance"].tolist() == [1, 2, 3]
    assert inst["ranks"].tolist() == [1, 2, 2]
    assert inst["skew_ns"].tolist() == [0, 10, 10]
    assert any("sequence number not seen on every rank" in n for n in found.notes)


def test_message_sizes_that_differ_stop_the_match() -> None:
    a = pd.concat([_ops([100], size=64), _ops([200], size=128)], ignore_index=True)
    b = pd.concat([_ops([110], size=64), _ops([220], size=256)], ignore_index=True)
    found = match_collectives([a, b], ["a", "b"])
    assert found.instances["instance"].tolist() == [0]
    assert found.instances["size_bytes"].tolist() == [64]
    assert any("message sizes differ at instance 1" in n for n in found.notes)


def test_odd_sets_give_notes_never_a_crash() -> None:
    rng = np.random.default_rng(7)
    families = ["AllReduce", "AllGather", "Broadcast"]
    for _ in range(60):
        ranks = int(rng.integers(1, 5))
        ops = []
        for _r in range(ranks):
            parts = []
            for family in families[: int(rng.integers(0, 4))]:
                n = int(rng.integers(0, 6))
                starts = np.sort(rng.integers(0, 10**6, n)).tolist()
                seq = rng.permutation(8)[:n].tolist() if rng.random() < 0.3 else None
                parts.append(_ops(starts, family, seq, int(rng.choice([-1, 8, 16]))))
            ops.append(pd.concat(parts, ignore_index=True) if parts else _ops([]))
        found = match_collectives(ops, [f"r{i}" for i in range(ranks)])
        inst, per_rank = found.instances, found.ranks
        assert (inst["skew_ns"] >= 0).all()
        assert (inst["ranks"] >= 1).all()
        assert (inst["ranks"] <= ranks).all()
        assert (per_rank["wait_ns"] >= 0).all()
        assert (per_rank["wait_ns"] <= per_rank["end_ns"] - per_rank["start_ns"]).all()
        assert len(per_rank) == int(inst["ranks"].sum())
        counts = [len(o) for o in ops]
        for i, n in enumerate(counts):
            if n == 0:
                assert any(n.startswith(f"r{i}: no collectives") for n in found.notes)
        assert len(found.summary) == inst.groupby(["collective", "communicator"]).ngroups


def test_counts_that_differ_match_the_common_prefix_and_say_so() -> None:
    found = match_collectives([_ops([1, 2, 3]), _ops([5, 6]), _ops([])], ["a", "b", "c"])
    assert found.instances["instance"].tolist() == [0, 1]
    notes = " | ".join(found.notes)
    assert "counts differ (a 3, b 2)" in notes
    assert "c: no collectives found" in notes


@pytest.mark.skipif(not NS_TRACE.is_file(), reason="needs ../shared/reports/real/kineto")
def test_kineto_records_are_matched_with_group_and_size(tmp_path: Path) -> None:
    # Two copies of one rank's trace: every collective matches its twin exactly.
    copies = [tmp_path / "a" / NS_TRACE.name, tmp_path / "b" / NS_TRACE.name]
    for copy in copies:
        copy.parent.mkdir()
        shutil.copy(NS_TRACE, copy)
    with gzip.open(NS_TRACE, "rt") as f:
        events = json.load(f)["traceEvents"]
    wanted = ("allreduce", "broadcast")
    records = sorted(
        ((Decimal(str(e["ts"])), e["args"]) for e in events
         if e.get("name") == "record_param_comms" and e["args"].get("Collective name") in wanted),
        key=lambda pair: pair[0],
    )  # fmt: skip
    sizes = [int(a["In msg nelems"]) * DTYPE_BYTES[a["dtype"]] for _, a in records]
    found = collectives(open_reports(copies))
    inst = found.instances
    assert inst.groupby("collective").size().to_dict() == {"AllReduce": 25, "Broadcast": 10}
    assert set(inst["communicator"]) == {"pg 0 [0]"}
    assert (inst["ranks"] == 2).all()
    assert (inst["skew_ns"] == 0).all()
    assert (inst["total_wait_ns"] == 0).all()
    assert inst["size_bytes"].tolist() == sizes  # in time order
    assert set(found.ranks["source"]) == {"kineto"}


@pytest.mark.skipif(not SAMPLED.is_file(), reason="needs ../shared/reports/real/kineto")
def test_kineto_nccl_kernels_are_found() -> None:
    ops = find_collectives(open_reports([SAMPLED])[0])
    assert len(ops) == 10
    assert set(ops["collective"]) == {"SendRecv"}
    assert set(ops["source"]) == {"kernel"}
