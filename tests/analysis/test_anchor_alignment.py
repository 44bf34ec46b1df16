"""Alignment on anchor events: two ranks whose clocks disagree by a planted offset, aligned on
one matched all-reduce; what is left of the other all-reduces' end skew is the planted
jitter, to the nanosecond."""

from __future__ import annotations

import pytest

from strata.analysis import open_reports
from strata.analysis.alignment import TimeAlignment, alignment_offsets
from strata.analysis.collectives import anchored_instance, collectives
from strata.analysis.errors import AnalysisError
from tests.analysis.test_recipes_data import K, write_report

ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm *, unsigned long, ncclWork *)"
#: rank 1's clock reads this much more than rank 0's for the same instant
CLOCK_OFFSET_NS = 7_654_321
#: per all-reduce, how much later rank 1's kernel ends than rank 0's (the anchor's: none)
JITTER_NS = (0, 1_234, 0, 5, 98_765, 42)
ANCHOR = 0
#: all-reduce k runs on rank 0 from STARTS[k] to STARTS[k] + 30 µs (its own clock)
STARTS = tuple(100_000 + 1_000_000 * k for k in range(len(JITTER_NS)))


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("anchor")
    rank0 = [K(ALLREDUCE, s, s + 30_000, stream=17) for s in STARTS]
    # Rank 1 arrives 2 µs later each time, and ends JITTER_NS later, on a clock ahead.
    rank1 = [K(ALLREDUCE, s + 2_000 + CLOCK_OFFSET_NS, s + 30_000 + j + CLOCK_OFFSET_NS,
               stream=17) for s, j in zip(STARTS, JITTER_NS, strict=True)]  # fmt: skip
    rank1 += [K("sgemm", 50_000 + CLOCK_OFFSET_NS, 90_000 + CLOCK_OFFSET_NS)]
    # The same UTC session start: only the clocks disagree (wall clock cannot fix it).
    paths = [write_report(folder / "r0.sqlite", kernels=rank0),
             write_report(folder / "r1.sqlite", kernels=rank1)]  # fmt: skip
    return open_reports(paths, use_cache=False)


def _anchor_ends(reports, instance: int) -> tuple[int, int]:
    """Each rank's end of its ``instance``-th all-reduce, on its own clock (as a user who
    right-clicks that kernel on each rank's row anchors it)."""
    ends = []
    for report in reports.reports:
        kernels = report.tables["kernels"]
        order = kernels["start_ns"].argsort(kind="stable")
        names = report.strings.values
        is_nccl = [str(names[i]).startswith("ncclDev") for i in kernels["name_id"][order]]
        rows = [int(r) for r, hit in zip(order, is_nccl, strict=True) if hit]
        ends.append(int(kernels["end_ns"][rows[instance]]))
    return ends[0], ends[1]


def test_anchoring_on_a_collective_leaves_the_planted_jitter_as_residual_skew(two_ranks) -> None:
    ends = _anchor_ends(two_ranks, ANCHOR)
    alignment = TimeAlignment("anchor", anchors_ns=ends)
    offsets = two_ranks.offsets_ns(alignment)
    # The clocks agree on the anchor's end: rank 1 is moved back by the clock offset.
    assert offsets == [0, -CLOCK_OFFSET_NS]
    found = collectives(two_ranks, alignment)
    inst = found.instances
    assert len(inst) == len(JITTER_NS)
    assert list(inst["end_skew_ns"]) == list(JITTER_NS)
    # The arrival skew is what it truly was: rank 1 starts 2 µs after rank 0, every time.
    assert list(inst["skew_ns"]) == [2_000] * len(JITTER_NS)
    # The anchored instance is found from the anchors' events.
    ranks = found.ranks
    picked = ranks[ranks["instance_row"] == ANCHOR]
    columns = (picked["report_index"], picked["table"], picked["row"])
    anchors = {int(i): (str(t), int(r)) for i, t, r in zip(*columns, strict=True)}
    assert anchored_instance(found, anchors) == ANCHOR
    assert anchored_instance(found, {0: anchors[0]}) is None  # rank 1 anchored elsewhere


def test_anchoring_on_a_jittered_collective_shifts_every_residual_by_its_jitter(
    two_ranks,
) -> None:
    # Anchored on all-reduce 4 (rank 1 ends 98,765 ns late there), the others' residual is
    # their jitter minus that one: rank 1's ends now come early.
    ends = _anchor_ends(two_ranks, 4)
    inst = collectives(two_ranks, TimeAlignment("anchor", anchors_ns=ends)).instances
    expected = [abs(j - JITTER_NS[4]) for j in JITTER_NS]
    assert list(inst["end_skew_ns"]) == expected


def test_anchor_alignment_needs_an_anchor_in_every_report(two_ranks) -> None:
    reports = list(two_ranks.reports)
    with pytest.raises(AnalysisError, match="no anchor event in r1.sqlite"):
        alignment_offsets(reports, "anchor", anchors_ns=(30_000, None))
    with pytest.raises(AnalysisError, match="r0.sqlite, r1.sqlite"):
        alignment_offsets(reports, "anchor")
    # Manual shifts still add to the anchors' ones.
    assert alignment_offsets(reports, "anchor", None, [0, 10], (500, 200)) == [-300, 10]
