"""``aggregate``: the live panel's per-name statistics of a selection, checked against
pandas on rows read with plain SQL from the same file."""

from __future__ import annotations

import sqlite3

import numpy as np
import pandas as pd
import pytest

from strata.analysis.errors import AnalysisError
from strata.analysis.selection import Selection, aggregate
from strata.analysis.xp import cupy_available, get_xp
from tests.conftest import FIXTURES_DIR, REAL_DIR, requires_fixtures, requires_shared

BACKENDS = [
    "numpy",
    pytest.param(
        "cupy", marks=pytest.mark.skipif(not cupy_available(), reason="needs CuPy and a CUDA GPU")
    ),
]


def _sql(path, query: str) -> pd.DataFrame:
    with sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True) as db:
        return pd.read_sql_query(query, db)


def _expected(rows: pd.DataFrame) -> pd.DataFrame:
    g = rows.groupby("name")["dur"]
    out = pd.DataFrame({"count": g.count(), "total_ns": g.sum(), "median_ns": g.median(),
                        "min_ns": g.min(), "max_ns": g.max(),
                        "std_ns": g.std().fillna(0.0)})  # fmt: skip
    return out.sort_index()


def _check(frame: pd.DataFrame, rows: pd.DataFrame) -> None:
    got = frame.set_index("name").sort_index()
    want = _expected(rows)
    assert list(got.index) == list(want.index)
    for col in ("count", "total_ns", "min_ns", "max_ns"):
        assert got[col].tolist() == want[col].tolist(), col
    np.testing.assert_allclose(got["median_ns"], want["median_ns"], rtol=1e-12)
    np.testing.assert_allclose(got["std_ns"], want["std_ns"], rtol=1e-9)


KERNELS_SQL = (
    "SELECT s.value AS name, k.end - k.start AS dur, k.start, k.end, k.streamId "
    "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName"
)


@requires_fixtures
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("t0", "t1"), [(None, None), (9_500, 300_003), (0, 9_000)])
def test_time_window_keeps_overlapping_events(load_report, backend, t0, t1) -> None:
    path = FIXTURES_DIR / "syn.sqlite"
    rows = _sql(path, KERNELS_SQL)
    if t0 is not None:
        rows = rows[(rows["start"] < t1) & (rows["end"] > t0)]
    frame = aggregate(load_report(path), "kernels", Selection(t0, t1), xp=get_xp(backend))
    _check(frame, rows)
    assert frame["total_ns"].is_monotonic_decreasing


@requires_fixtures
def test_tracks_restrict_to_one_stream(load_report) -> None:
    path = FIXTURES_DIR / "syn.sqlite"
    report = load_report(path)
    keys = report.kernels.track_keys
    track = int(np.flatnonzero(keys["stream_id"] == 7)[0])
    frame = aggregate(report, "kernels", Selection(track_ids={"kernels": (track,)}))
    rows = _sql(path, KERNELS_SQL)
    _check(frame, rows[rows["streamId"] == 7])


@requires_fixtures
def test_reports_pool_or_split(load_report) -> None:
    syn, syn2 = load_report(FIXTURES_DIR / "syn.sqlite"), load_report(FIXTURES_DIR / "syn2.sqlite")
    pooled = aggregate([syn, syn2], "cuda_api")
    split = aggregate([syn, syn2], "cuda_api", by_report=True)
    rows = pd.concat([
        _sql(FIXTURES_DIR / f"{db}.sqlite",
             "SELECT s.value AS name, r.end - r.start AS dur, '" + db + ".sqlite' AS report "
             "FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId")
        for db in ("syn", "syn2")
    ])  # fmt: skip
    # API names lose their _vNNNN suffix, as in cuda_api_sum (spec §3.3)
    rows["name"] = [n[:-6] if n[-6:-4] == "_v" else n for n in rows["name"]]
    _check(pooled, rows)
    launch = split[split["name"] == "cudaLaunchKernel"].set_index("report")["count"]
    assert launch.to_dict() == {"syn.sqlite": 7, "syn2.sqlite": 6}
    only = aggregate([syn, syn2], "cuda_api", Selection(report_names=frozenset({"syn2.sqlite"})))
    _check(only, rows[rows["report"] == "syn2.sqlite"])


@requires_fixtures
def test_nvtx_kinds_carry_the_style(load_report) -> None:
    report = load_report(FIXTURES_DIR / "syn.sqlite")
    cpu = aggregate(report, "nvtx").set_index("name")
    gpu = aggregate(report, "nvtx_gpu").set_index("name")
    # spec §6.1: 'se' is a StartEnd range of 120000 ns projected onto 3000100000 ns of GPU work
    assert (cpu.loc["se", "style"], cpu.loc["se", "total_ns"]) == ("StartEnd", 120_000)
    assert gpu.loc["se", "total_ns"] == 3_000_100_000
    assert "empty" in cpu.index
    assert "empty" not in gpu.index


@requires_shared
def test_memory_bytes_on_a_real_report(load_report) -> None:
    path = REAL_DIR / "ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite"
    rows = _sql(path, "SELECT '[CUDA memcpy ' || e.label || ']' AS name, m.bytes AS dur "
                      "FROM CUPTI_ACTIVITY_KIND_MEMCPY m JOIN ENUM_CUDA_MEMCPY_OPER e "
                      "ON e.id = m.copyKind")  # fmt: skip
    _check(aggregate(load_report(path), "memcpy_bytes"), rows)


def test_unknown_kind_is_an_analysis_error() -> None:
    with pytest.raises(AnalysisError, match="unknown kind"):
        aggregate([], "gpu_metrics")
