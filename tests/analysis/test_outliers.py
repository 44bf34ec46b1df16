"""Outliers: planted facts found on the demo, robust z equal to a direct pandas computation.

Expected values come from the demo's planted truth (by construction) and from pandas over
rows read with plain SQL, never from ``analysis.outliers`` itself.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from strata.analysis import AnalysisError, open_report
from strata.analysis.outliers import OUTLIER_KINDS, find_outliers
from strata.analysis.xp import cupy_available
from strata.resources import demo
from tests.conftest import REAL_DIR, requires_shared

#: The z-score alone, no minimum effect: what the tests of the z-score arithmetic compare.
_Z_ONLY = {"min_ratio": 1.0, "min_delta_ns": 0}

CLOVERLEAF = REAL_DIR / "hpcgroup__pipit__perlmutter-cloverleaf-cuda.sqlite"
DLPROF = REAL_DIR / "MohanadOdema__DLProf__nsys_profile.sqlite"


@pytest.fixture(scope="module")
def demo_paths(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return demo.build_demo_reports(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def demo_reports(demo_paths: list[Path]):
    return [open_report(p, use_cache=False) for p in demo_paths]


@pytest.fixture(scope="module")
def demo_outliers(demo_reports):
    return find_outliers(demo_reports)


def _planted(truth: demo.DemoTruth) -> set[tuple[str, int, int]]:
    return {(f"rank{p.rank}.sqlite", p.start_ns, p.duration_ns) for p in truth.slow_instances}


def test_planted_slow_kernels_are_the_top_instances(demo_outliers) -> None:
    truth = demo.demo_truth()
    n = len(truth.slow_instances)
    top = demo_outliers.instances.head(n)
    assert set(zip(top["report"], top["start_ns"], top["duration_ns"], strict=True)) == _planted(
        truth
    )
    assert set(top["name"]) == {truth.slow_kernel_name}
    assert set(top["kind"]) == {"kernels"}
    assert (top["robust_z"] > demo_outliers.instances["robust_z"].iloc[n:].abs().max()).all()


def test_straggler_tops_the_report_ranking(demo_outliers) -> None:
    truth = demo.demo_truth()
    straggler = f"rank{truth.straggler_rank}.sqlite"
    ranking = demo_outliers.reports
    assert ranking["report"].iloc[0] == straggler
    assert (ranking["report"].head(10) == straggler).all()
    compute = ranking[(ranking["kind"] == "kernels") & ~ranking["name"].str.startswith("nccl")]
    assert np.allclose(compute["ratio"], truth.straggler_factor, rtol=0.03)


def test_instances_point_at_their_table_rows(demo_outliers, demo_reports) -> None:
    inst = demo_outliers.instances
    for i, report in enumerate(demo_reports):
        for kind in ("kernels", "nvtx", "cuda_api"):
            rows = inst[(inst["report_index"] == i) & (inst["table"] == kind)]
            table = report.tables[kind]
            idx = rows["index"].to_numpy()
            assert np.array_equal(table.start_ns[idx], rows["start_ns"].to_numpy())
            assert np.array_equal(table.duration_ns[idx], rows["duration_ns"].to_numpy())
            assert np.array_equal(table["track_id"][idx], rows["track_id"].to_numpy())
    planted = inst.head(1)
    rank = int(planted["report"].iloc[0][4])
    assert planted["row"].iloc[0] == f"GPU {rank} stream 7"


def _sql_frame(paths: list[Path], query: str) -> pd.DataFrame:
    frames = []
    for i, path in enumerate(paths):
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            frame = pd.read_sql_query(query, conn)
        finally:
            conn.close()
        frames.append(frame.assign(report_index=i))
    return pd.concat(frames, ignore_index=True)


def _expected_z(frame: pd.DataFrame) -> pd.Series:
    """Robust z straight from the definition (Iglewicz-Hoaglin; MeanAD fallback)."""
    dur = frame["dur"].astype(np.float64)
    group = frame["grp"] if "grp" in frame else frame["name"]
    median = dur.groupby(group).transform("median")
    dev = (dur - median).abs()
    mad = dev.groupby(group).transform("median")
    mean_ad = dev.groupby(group).transform("mean")
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(
            mad > 0,
            0.6745 * (dur - median) / mad,
            np.where(mean_ad > 0, (dur - median) / (1.253314 * mean_ad), 0.0),
        )
    return pd.Series(z, index=frame.index)


def _compare(found: pd.DataFrame, expected: pd.DataFrame, threshold: float) -> None:
    expected = expected.assign(z=_expected_z(expected))
    expected = expected[expected["z"].abs() > threshold]
    ours = sorted(
        zip(found["report_index"], found["name"], found["start_ns"], found["duration_ns"],
            found["robust_z"].round(9), strict=True)
    )  # fmt: skip
    theirs = sorted(
        zip(expected["report_index"], expected["name"], expected["start"], expected["dur"],
            expected["z"].round(9), strict=True)
    )  # fmt: skip
    assert len(ours) > 0
    assert ours == theirs


_KERNELS_SQL = (
    "SELECT s.value AS name, k.start AS start, k.end - k.start AS dur "
    "FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName"
)
# Grouped by the full name (nsys: by nameId), shown as cuda_api_sum prints it (spec §3.3).
_API_SQL = (
    "SELECT s.value AS grp, CASE substr(s.value, -6, 2) WHEN '_v' "
    "THEN substr(s.value, 1, length(s.value) - 6) ELSE s.value END AS name, "
    "r.start AS start, r.end - r.start AS dur "
    "FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId"
)


@requires_shared
@pytest.mark.parametrize(("kind", "query"), [("kernels", _KERNELS_SQL), ("cuda_api", _API_SQL)])
def test_robust_z_equals_pandas_on_a_real_report(kind: str, query: str) -> None:
    report = open_report(CLOVERLEAF, use_cache=False)
    found = find_outliers([report], threshold=1.0, kinds=(kind,), **_Z_ONLY).instances
    _compare(found, _sql_frame([CLOVERLEAF], query), 1.0)


@requires_shared
def test_nvtx_robust_z_equals_pandas_on_a_real_report() -> None:
    report = open_report(DLPROF, use_cache=False)
    found = find_outliers([report], threshold=0.5, kinds=("nvtx",), **_Z_ONLY).instances
    query = (
        "SELECT coalesce(s.value, e.text) AS name, e.start AS start, e.end - e.start AS dur "
        "FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId "
        "WHERE e.eventType IN (59, 60, 70, 71) AND coalesce(e.domainId, 0) = 0"
    )
    _compare(found, _sql_frame([DLPROF], query), 0.5)


def test_pools_instances_across_reports(demo_paths: list[Path], demo_reports) -> None:
    found = find_outliers(demo_reports[:2], threshold=2.0, kinds=("kernels",), **_Z_ONLY).instances
    _compare(found, _sql_frame(demo_paths[:2], _KERNELS_SQL), 2.0)


def test_threshold_changes_the_set(demo_reports) -> None:
    sets = []
    for threshold in (2.0, 3.5, 10.0, 100.0):
        inst = find_outliers(demo_reports, threshold=threshold, kinds=("kernels",), **_Z_ONLY)
        inst = inst.instances
        assert (inst["robust_z"].abs() > threshold).all()
        sets.append(set(zip(inst["report_index"], inst["index"], strict=True)))
    for looser, stricter in zip(sets, sets[1:], strict=False):
        assert stricter < looser
    assert len(sets[-1]) == len(demo.demo_truth().slow_instances)


def test_kinds_select_what_is_scored(demo_reports) -> None:
    found = find_outliers(demo_reports[:1], kinds=("cuda_api",))
    assert set(found.instances["kind"]) <= {"cuda_api"}
    assert found.reports.empty  # one report: nothing to compare it with
    with pytest.raises(AnalysisError, match="unknown kind 'frames' for outliers"):
        find_outliers(demo_reports, kinds=("kernels", "frames"))
    with pytest.raises(AnalysisError, match="threshold"):
        find_outliers(demo_reports, threshold=-1)
    assert set(OUTLIER_KINDS) == {"kernels", "nvtx", "nvtx_gpu", "cuda_api"}


def test_empty_input_gives_empty_frames() -> None:
    found = find_outliers([])
    assert found.instances.empty
    assert found.reports.empty


_XP = [pytest.param("numpy")] + [
    pytest.param(
        "cupy",
        marks=pytest.mark.skipif(not cupy_available(), reason="needs CuPy and a CUDA GPU"),
    )
]


@pytest.mark.parametrize("backend", _XP)
def test_backends_agree(backend: str, demo_reports) -> None:
    from strata.analysis.xp import get_xp

    base = find_outliers(demo_reports, kinds=("kernels", "cuda_api"))
    other = find_outliers(demo_reports, kinds=("kernels", "cuda_api"), xp=get_xp(backend))
    pd.testing.assert_frame_equal(base.instances, other.instances)
    pd.testing.assert_frame_equal(base.reports, other.reports)


_COUNTED_BY = {  # kind -> (summary, name column, style column, count column)
    "kernels": ("cuda_gpu_kern_sum", "Name", None, "Instances"),
    "cuda_api": ("cuda_api_sum", "Name", None, "Num Calls"),
    "nvtx": ("nvtx_sum", "Range", "Style", "Instances"),
    "nvtx_gpu": ("nvtx_gpu_proj_sum", "Range", "Style", "Range Instances"),
}


def test_scores_the_instances_the_stats_count(demo_paths: list[Path], tmp_path: Path) -> None:
    """Unclosed NVTX ranges (end at the last NVTX time, as nvtx_sum), zero-length ranges,
    kernels and calls: the same instances in the same groups as the stats tables."""
    import shutil

    from strata.analysis.outliers import _collect  # the instances that are scored, before the cut
    from strata.analysis.stats import run_report
    from tests.helpers import mutate_sqlite

    path = tmp_path / "edges.sqlite"
    shutil.copyfile(demo_paths[0], path)
    mutate_sqlite(
        path,
        "UPDATE NVTX_EVENTS SET end = NULL WHERE rowid IN (SELECT rowid FROM NVTX_EVENTS "
        "WHERE eventType = 59 ORDER BY rowid DESC LIMIT 3)",
        "UPDATE NVTX_EVENTS SET end = start WHERE rowid IN (SELECT rowid FROM NVTX_EVENTS "
        "WHERE eventType = 59 ORDER BY rowid LIMIT 5)",
        "UPDATE NVTX_EVENTS SET eventType = 60 WHERE eventType = 59 AND rowid % 7 = 0",
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start WHERE rowid % 50 = 0",
        "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = start WHERE rowid % 40 = 0",
    )
    report = open_report(path, use_cache=False)
    for kind, (spec, name, style, count) in _COUNTED_BY.items():
        frame = run_report(report, spec, xp=np).frame
        styles = frame[style] if style else [None] * len(frame)
        expected = sorted(zip(frame[name], styles, frame[count], strict=True), key=str)
        inst = _collect([report], [kind])
        n = np.bincount(inst.code, minlength=len(inst.code_name))
        ours = [(inst.code_name[i], inst.code_style[i], int(n[i])) for i in np.flatnonzero(n)]
        assert sorted(ours, key=str) == expected, kind
