"""One spelling and one grouping everywhere: every view names an event as ``nsys stats`` does.

Expected names come from the nsys-compatible summaries (themselves checked against nsys by
the parity tests) and from SQL over the report; each view is then asked what it shows.
"""

from __future__ import annotations

import numpy as np
import pytest

from strata.analysis.names import api_display_names, event_name
from strata.analysis.outliers import find_outliers
from strata.analysis.reportset import ReportSet
from strata.analysis.selection import aggregate
from strata.analysis.stats import run_report
from strata.analysis.tracks import build_slice_tables
from strata.analysis.window_stats import build_window_index
from strata.viewer.events import EventRef, describe_event
from tests.conftest import REAL_DIR, requires_shared
from tests.helpers import sql_rows

#: Reports whose CUDA API names carry _vNNNN suffixes; the first two hold pairs such as
#: cudaMalloc and cudaMalloc_v3020 (two cuda_api_sum rows, both printed cudaMalloc).
SAXPY = REAL_DIR / "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
EXGPU = REAL_DIR / "extra-p__extrap__ex-gpu.s1000.sqlite"
CONCURRENT = REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite"
DLPROF = REAL_DIR / "MohanadOdema__DLProf__nsys_profile.sqlite"
ICON_GPU = REAL_DIR / "NTHU-SC__ISC25-ICON-C__gpu.sqlite"


def test_api_suffix_rule_is_nsys_substr_rule() -> None:
    # spec §3.3: CASE substr(name, -6, 2) WHEN '_v' THEN drop the last 6 characters.
    names = ["cudaMalloc_v3020", "cudaLaunchKernel_v7000", "cudaGraphAddKernelNode_v10000",
             "cuInit", "_v1234", "x_v12", None]  # fmt: skip
    assert api_display_names(names).tolist() == [
        "cudaMalloc", "cudaLaunchKernel", "cudaGraphAddKernelNode_v10000", "cuInit", "", "x_v12",
        None,
    ]  # fmt: skip


def _pairs(frame, name: str, count: str) -> list[tuple]:
    return sorted(zip(frame[name].tolist(), frame[count].tolist(), strict=True))


def _ref(report, table: str, row: int) -> EventRef:
    t = report.tables[table]
    return EventRef(0, table, row, table, row, "", "", int(t.start_ns[row]), int(t.end_ns[row]))


@requires_shared
@pytest.mark.parametrize("path", [SAXPY, EXGPU, CONCURRENT], ids=lambda p: p.stem[:30])
def test_cuda_api_spelled_and_grouped_as_cuda_api_sum_everywhere(path, load_report) -> None:
    report = load_report(path)
    nsys = run_report(report, "cuda_api_sum", xp=np).frame
    expected = _pairs(nsys, "Name", "Num Calls")
    _, raw, printed = _raw_and_shown(path)
    assert raw != printed  # the report does hold _vNNNN names
    panel = build_window_index([report], "cuda_api").stats()
    assert _pairs(panel, "name", "count") == expected
    assert _pairs(aggregate(report, "cuda_api", xp=np), "name", "count") == expected
    # Outliers: same spelling, and each instance scored within its nsys row (the twins of a
    # pair have different medians, so a pooled pair would show another median).
    found = find_outliers([report], threshold=0.0, kinds=("cuda_api",)).instances
    rows = set(zip(nsys["Name"], nsys["Med"].astype(float), strict=True))
    assert len(found)
    assert set(zip(found["name"], found["median_ns"], strict=True)) <= rows
    # Timeline boxes and tooltips.
    sliced = build_slice_tables(report)["cuda_api"]
    assert set(sliced.labels[sliced.label_ids]) == set(nsys["Name"])
    shown = dict(zip(*_raw_and_shown(path)[::2], strict=True))
    row_ids = report.cuda_api["row_id"]
    for row in range(len(row_ids)):
        assert event_name(report, "cuda_api", row) == shown[int(row_ids[row])]
    lines = dict(describe_event(report, _ref(report, "cuda_api", 0), "row"))
    assert lines["Name"] == shown[int(row_ids[0])]


def _raw_and_shown(path) -> tuple[list[int], list[str], list[str]]:
    """Per CUDA API row: its rowid, stored name and the name nsys prints (SQL, spec §3.3)."""
    rows = sql_rows(
        path,
        "SELECT r.rowid, s.value, CASE substr(s.value, -6, 2) WHEN '_v' THEN substr(s.value, "
        "1, length(s.value) - 6) ELSE s.value END FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
        "JOIN StringIds s ON s.id = r.nameId",
    )
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


@requires_shared
def test_kernels_memops_and_nvtx_spelled_as_their_summaries(load_report) -> None:
    report = load_report(DLPROF)
    kern = run_report(report, "cuda_gpu_kern_sum", xp=np).frame
    base = run_report(report, "cuda_gpu_kern_sum:base", xp=np).frame
    panel = build_window_index([report], "kernels").stats()
    assert _pairs(panel, "name", "count") == _pairs(kern, "Name", "Instances")
    kernels = build_slice_tables(report)["kernels"]  # boxes: the short name, as the nsys GUI
    assert set(kernels.labels[kernels.label_ids]) == set(base["Name"])
    (demangled,) = sql_rows(
        DLPROF,
        "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
        "ON s.id = k.demangledName ORDER BY k.rowid LIMIT 1",
    )[0]
    first = int(np.flatnonzero(report.kernels["row_id"] == report.kernels["row_id"].min())[0])
    assert dict(describe_event(report, _ref(report, "kernels", first), "r"))["Name"] == demangled
    nvtx = run_report(report, "nvtx_sum", xp=np).frame
    panel = build_window_index([report], "nvtx").stats()
    assert sorted(zip(panel["name"], panel["style"], panel["count"], strict=True)) == sorted(
        zip(nvtx["Range"], nvtx["Style"], nvtx["Instances"], strict=True)
    )


@requires_shared
def test_nvtx_tooltip_says_the_domain_label_of_nvtx_sum(load_report) -> None:
    report = load_report(CONCURRENT)
    ranges = run_report(report, "nvtx_sum", xp=np).frame
    domain_ranges = [r for r in ranges["Range"] if ":" in r]
    assert domain_ranges  # this report's ranges live in a named domain
    tracks = [t for t in ReportSet([report]).tracks(include_projection=False) if t.kind == "nvtx"]
    table, track_id = tracks[0].parts[0]
    row = build_slice_tables(report)[table].bounds(track_id)[0]
    name = dict(describe_event(report, _ref(report, "nvtx", row), "r"))["Name"]
    assert name in domain_ranges


@requires_shared
def test_memory_operations_spelled_as_the_memory_summary(load_report) -> None:
    report = load_report(ICON_GPU)
    mem = run_report(report, "cuda_gpu_mem_time_sum", xp=np).frame
    assert mem["Operation"].str.startswith("[CUDA memcpy Unified").any()
    panel = build_window_index([report], "memcpy").stats()
    assert _pairs(panel, "name", "count") == _pairs(mem, "Operation", "Count")
    memcpy = build_slice_tables(report)["memcpy"]
    assert set(memcpy.labels[memcpy.label_ids]) | {"[CUDA memset]"} >= set(mem["Operation"])
    assert event_name(report, "memcpy", 0) in set(mem["Operation"])
