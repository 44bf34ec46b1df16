"""An event's extra fields read on demand by rowid, and the details lines made of them."""

from __future__ import annotations

import shutil

from strata.analysis.event_fields import read_event_fields
from strata.analysis.reportset import ReportSet
from strata.analysis.timefmt import format_duration_ns, format_time_ns, pluralize
from strata.viewer.events import describe_event, event_ref
from tests.conftest import FIXTURES_DIR, REAL_DIR, fingerprint, requires_fixtures, requires_shared
from tests.helpers import mutate_sqlite, sql_rows

NVTX_FIXTURE = FIXTURES_DIR / "real-2023.4-nvtx.sqlite"
CUPY = REAL_DIR / "quasiben__nvtx-examples__cupy.sqlite"
CONCURRENT = REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite"


def _nvtx_row(report, rowid: int) -> int:
    return int((report.nvtx["row_id"] == rowid).nonzero()[0][0])


def _details(report, table: str, row: int, projection=None) -> dict[str, str]:
    tables = ReportSet([report]).slice_tables(0)
    ref = event_ref(tables, 0, table, row) if table in tables else None
    if ref is None:  # NVTX marks and ranges are drawn through the nvtx slice table
        from strata.viewer.events import EventRef

        nvtx = report.nvtx
        ref = EventRef(0, table, row, table, row, "", "", int(nvtx["start_ns"][row]),
                       int(nvtx["end_ns"][row]))  # fmt: skip
    fields = read_event_fields(report, table, row)
    return dict(describe_event(report, ref, "row", 0, tables, fields, projection))


@requires_fixtures
def test_nvtx_payload_category_colour_and_domain(load_report) -> None:
    report = load_report(NVTX_FIXTURE)
    before = fingerprint(NVTX_FIXTURE)
    # rowid 4: "inner", category 3 ("cat3"), colour 0xFFFF0000, int64 payload -7 (spec §6).
    inner = _details(report, "nvtx", _nvtx_row(report, 4))
    assert inner["Category"] == "cat3 (3)"
    assert inner["Colour"] == "#FF0000"
    assert inner["Payload"] == "-7 (int64)"
    assert inner["Domain"] == "(default)"
    # rowid 6: a registered string in domain MyDomain, double payload 3.5.
    registered = _details(report, "nvtx", _nvtx_row(report, 6))
    assert registered["Domain"] == "MyDomain"
    assert registered["Payload"] == "3.5 (double)"
    assert fingerprint(NVTX_FIXTURE) == before


@requires_shared
def test_nvtx_range_shows_its_gpu_projection(load_report) -> None:
    report = load_report(CUPY)
    reports = ReportSet([report])
    projection = reports.projection(0)
    first = projection.iloc[0]
    row = _nvtx_row(report, int(first["range_id"]))
    lines = _details(report, "nvtx", row, projection)
    ops = pluralize(int(first["num_gpu_ops"]), "GPU op")
    duration = format_duration_ns(int(first["end_ns"]) - int(first["start_ns"]))
    assert (
        lines["GPU projection"] == f"{format_time_ns(int(first['start_ns']))}, {duration} ({ops})"
    )


@requires_shared
def test_memcpy_kinds_and_kernel_extras(load_report) -> None:
    report = load_report(CONCURRENT)
    copy_kind, src, dst = sql_rows(
        CONCURRENT, "SELECT copyKind, srcKind, dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY "
        "ORDER BY rowid LIMIT 1")[0]  # fmt: skip
    memcpy_row = int((report.memcpy["row_id"] == 1).nonzero()[0][0])
    lines = _details(report, "memcpy", memcpy_row)
    labels = {0: "Pageable", 1: "Pinned", 2: "Device"}
    assert lines["Source memory"] == labels[src]
    assert lines["Destination memory"] == labels[dst]
    assert lines["Kind"] == {1: "Host-to-Device", 2: "Device-to-Host"}[copy_kind]
    (local_total,) = sql_rows(
        CONCURRENT, "SELECT localMemoryTotal FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = 1"
    )[0]
    kernel_row = int((report.kernels["row_id"] == 1).nonzero()[0][0])
    assert read_event_fields(report, "kernels", kernel_row)["localMemoryTotal"] == local_total


@requires_shared
def test_a_report_gone_or_changed_gives_the_model_fields_only(load_report, tmp_path) -> None:
    copy = tmp_path / "r.sqlite"
    shutil.copy(CONCURRENT, copy)
    report = load_report(copy)
    assert read_event_fields(report, "kernels", 0)
    # A column dropped meanwhile: read what is left; the table gone: nothing, no error.
    mutate_sqlite(copy, "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN launchType")
    assert "launchType" not in read_event_fields(report, "kernels", 0)
    mutate_sqlite(copy, "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL")
    assert read_event_fields(report, "kernels", 0) == {}
    copy.unlink()
    assert read_event_fields(report, "kernels", 0) == {}
    assert "Grid" in _details(report, "kernels", 0)
    # Rows out of range and tables without extra columns give nothing.
    assert read_event_fields(report, "kernels", 10**9) == {}
    assert read_event_fields(report, "cuda_api", 0) == {}


@requires_shared
def test_a_rewritten_report_gives_no_fields_of_another_event(load_report, tmp_path) -> None:
    copy = tmp_path / "r.sqlite"
    shutil.copy(CONCURRENT, copy)
    report = load_report(copy)
    row = int((report.kernels["row_id"] == 1).nonzero()[0][0])
    assert read_event_fields(report, "kernels", row)
    # Same rowid, another event (its start moved): nothing rather than wrong details.
    mutate_sqlite(copy, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start + 1 WHERE rowid = 1")
    assert read_event_fields(report, "kernels", row) == {}
