"""The descriptive tables of the model (GPUs, CUDA contexts, CUDA device map, NVTX
categories, info) against direct SQL on the real reports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import real_reports, requires_shared
from tests.helpers import sql_rows

REAL = real_reports()


def _columns(path: Path, table: str) -> set[str]:
    return {r[1] for r in sql_rows(path, f"PRAGMA table_info('{table}')")}


def _with_table(table: str) -> list[Path]:
    return [p for p in REAL if _columns(p, table)]


@requires_shared
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:60])
def test_contexts_match_context_tables(path: Path, load_report) -> None:
    report = load_report(path)
    if _columns(path, "TARGET_INFO_CUDA_CONTEXT_INFO"):
        expected = sql_rows(
            path,
            "SELECT processId, deviceId, contextId, nullStreamId FROM "
            "TARGET_INFO_CUDA_CONTEXT_INFO ORDER BY 1, 2, 3",
        )
    elif _columns(path, "TARGET_INFO_CUDA_NULL_STREAM"):
        expected = sql_rows(
            path,
            "SELECT processId, deviceId, contextId, streamId FROM "
            "TARGET_INFO_CUDA_NULL_STREAM ORDER BY 1, 2, 3",
        )
    else:
        expected = []
    got = report.contexts[["pid", "device_id", "context_id", "null_stream_id"]]
    assert [tuple(int(v) for v in row) for row in got.itertuples(index=False)] == expected
    assert all(report.contexts[c].dtype == np.int64 for c in report.contexts.columns)


@requires_shared
def test_every_kernel_context_is_a_known_context(load_report) -> None:
    checked = 0
    for path in _with_table("TARGET_INFO_CUDA_CONTEXT_INFO"):
        report = load_report(path)
        if not len(report.kernels):
            continue
        # GPU tables share one key table; take the tracks that kernels use.
        keys = report.kernels.track_keys.iloc[np.unique(report.kernels["track_id"])]
        known = set(zip(report.contexts["device_id"], report.contexts["context_id"], strict=True))
        used = set(zip(keys["device_id"], keys["context_id"], strict=True))
        assert used <= known, path.name
        checked += 1
    assert checked


@requires_shared
@pytest.mark.parametrize("path", _with_table("TARGET_INFO_CUDA_DEVICE"), ids=lambda p: p.name[:60])
def test_cuda_device_map_matches_sql(path: Path, load_report) -> None:
    report = load_report(path)
    expected = sql_rows(
        path, "SELECT pid, cudaId, gpuId FROM TARGET_INFO_CUDA_DEVICE ORDER BY 1, 2"
    )
    got = report.cuda_devices[["pid", "device_id", "gpu_id"]]
    assert [tuple(int(v) for v in row) for row in got.itertuples(index=False)] == expected
    assert set(report.cuda_devices["gpu_id"]) <= set(report.gpus["device_id"])


@requires_shared
def test_reports_without_cuda_device_table_have_an_empty_map(load_report) -> None:
    path = next(p for p in REAL if "concurrent.s1" in p.name)
    report = load_report(path)
    assert list(report.cuda_devices.columns) == ["pid", "device_id", "gpu_id"]
    assert report.cuda_devices.empty


@requires_shared
@pytest.mark.parametrize("path", _with_table("TARGET_INFO_GPU"), ids=lambda p: p.name[:60])
def test_gpus_match_target_info_gpu(path: Path, load_report) -> None:
    report = load_report(path)
    cols = _columns(path, "TARGET_INFO_GPU")
    id_col = "id" if "id" in cols else "deviceId"
    rows = sql_rows(path, f"SELECT {id_col}, name, busLocation FROM TARGET_INFO_GPU ORDER BY 1")
    first: dict[int, tuple[str, str]] = {}
    for dev, name, bus in rows:
        first.setdefault(int(dev), (name, bus))
    gpus = report.gpus.set_index("device_id")
    for dev, (name, bus) in first.items():
        assert gpus.loc[dev, "name"] == name
        assert gpus.loc[dev, "bus_location"] == (bus or "")
    if "smCount" in cols:
        for dev, sm, mem in sql_rows(
            path, f"SELECT {id_col}, smCount, totalMemory FROM TARGET_INFO_GPU"
        ):
            assert gpus.loc[int(dev), "sm_count"] == sm
            assert gpus.loc[int(dev), "total_memory_bytes"] == mem


@requires_shared
def test_old_reports_take_sm_count_from_cuda_gpu(load_report) -> None:
    path = next(p for p in REAL if "cudf" in p.name)
    report = load_report(path)
    rows = sql_rows(
        path, "SELECT deviceId, numMultiprocessors, globalMemorySize FROM TARGET_INFO_CUDA_GPU"
    )
    gpus = report.gpus.set_index("device_id")
    for dev, sm, mem in rows:
        assert gpus.loc[int(dev), "sm_count"] == sm
        assert gpus.loc[int(dev), "total_memory_bytes"] == mem


@requires_shared
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:60])
def test_nvtx_domains_and_categories_match_sql(path: Path, load_report) -> None:
    report = load_report(path)
    if not _columns(path, "NVTX_EVENTS"):
        assert report.nvtx_domains.empty
        assert report.nvtx_categories.empty
        return
    text = "coalesce(s.value, n.text)" if "textId" in _columns(path, "NVTX_EVENTS") else "n.text"
    join = (
        "LEFT JOIN StringIds s ON s.id = n.textId"
        if "textId" in _columns(path, "NVTX_EVENTS")
        else ""
    )
    for event_type, frame in ((75, report.nvtx_domains), (33, report.nvtx_categories)):
        expected = sql_rows(
            path,
            f"SELECT n.domainId, {text} FROM NVTX_EVENTS n {join} "
            f"WHERE n.eventType = {event_type} ORDER BY n.rowid",
        )
        got = list(zip(frame["domain_id"].tolist(), frame["name"].tolist(), strict=True))
        assert got == [(d or 0, t or "") for d, t in expected]


@requires_shared
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:60])
def test_session_start_and_version_match_sql(path: Path, load_report) -> None:
    report = load_report(path)
    if _columns(path, "TARGET_INFO_SESSION_START_TIME"):
        (start,) = sql_rows(path, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1")[
            0
        ]
        assert report.info.session_start_utc_ns == start
    meta = next((t for t in ("META_DATA_EXPORT", "EXPORT_META_DATA") if _columns(path, t)), None)
    if meta:
        rows = dict(sql_rows(path, f"SELECT name, value FROM {meta}"))
        assert report.info.nsys_version == rows.get("EXPORT_PRODUCT_VERSION", "unknown")


def test_reprs_are_one_short_line(tmp_path: Path) -> None:
    from strata.analysis import open_report
    from strata.resources.demo import build_demo_reports

    report = open_report(build_demo_reports(tmp_path, ranks=1, steps=2)[0], use_cache=False)
    for value in (report, report.strings, *report.tables.values()):
        text = repr(value)
        assert "\n" not in text
        assert len(text) < 200, text
    assert report.name in repr(report)
    assert f"{report.event_count:,} events" in repr(report)
