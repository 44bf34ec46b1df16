"""Reports whose event tables are written in no particular row order (nsys 2025.6+).

A real report is copied and each event table rewritten in a random rowid order (the rows'
content untouched). The model, the timeline rows and every stats summary must come out as
for the original: only rowids differ, and where a summary prints a rowid (``RangeId``,
``ParentId``, ``RangeStack``) it is mapped back before comparing. Rows that start and end
at the same nanosecond on one timeline row (``fopen``/``fclose`` zero-length calls) keep no
order a shuffled file could tell, so they are compared as a set.
"""

from __future__ import annotations

import dataclasses
import os
import random
import shutil
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from strata.analysis.kinds.registry import event_kinds, kind_slices
from strata.analysis.loader import in_start_order, load_sqlite
from strata.analysis.model import Report
from strata.analysis.stats import REPORT_NAMES, format_results, run_report
from tests.analysis.test_stats_fixtures import parse_sections
from tests.conftest import REAL_DIR, requires_shared
from tests.helpers import SOURCE_TABLES, run_cli

#: Real reports with what the shuffle can break: ties within a row (ayush v3), nested NVTX
#: on many streams (extra-p), projection and OS runtime (cudf), rows not in start order
#: already (0x822a), CPU samples and scheduling (cloverleaf).
REPORTS = [
    "ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite",
    "extra-p__extrap__concurrent.s1__profile1.sqlite",
    "quasiben__nvtx-examples__cudf.sqlite",
    "0x822a5b87__test-cuda__report1.sqlite",
    "hpcgroup__pipit__perlmutter-cloverleaf-cuda.sqlite",
    "MohanadOdema__DLProf__nsys_profile.sqlite",
]
#: Not the API traces: nsys prints calls that start together in rowid order, so a file
#: whose rows were written in another order prints those ties in another order (nsys too).
_TIES_IN_ROWID_ORDER = ("cuda_api_trace", "cuda_kern_exec_trace")
SPECS = [
    *(n for n in REPORT_NAMES if n not in _TIES_IN_ROWID_ORDER),
    "cuda_gpu_kern_sum:base",
    "cuda_gpu_kern_sum:mangled",
]
#: Summaries that print NVTX_EVENTS rowids, and those printed in rowid order.
ROWID_COLUMNS = ("RangeId", "ParentId")
ROWID_ORDERED = ("nvtx_gpu_proj_trace",)


def shuffled_copy(source: Path, dest: Path, seed: int = 15) -> dict[str, np.ndarray]:
    """Copy ``source`` to ``dest`` with every event table's rows in a random rowid order.

    Returns, per table, the original rowid of each new rowid (index 0 unused). Tables whose
    rowid is a column (``id INTEGER PRIMARY KEY``: COMPOSITE_EVENTS) keep their order.
    """
    shutil.copyfile(source, dest)
    rng = random.Random(seed)
    old_of: dict[str, np.ndarray] = {}
    con = sqlite3.connect(dest)
    con.text_factory = bytes
    try:
        query = "SELECT name FROM sqlite_master WHERE type='table'"
        tables = {r[0].decode() for r in con.execute(query)}
        for table in SOURCE_TABLES.values():
            info = con.execute(f'PRAGMA table_info("{table}")').fetchall()
            if table not in tables or any(col[5] for col in info):
                continue
            rows = con.execute(f'SELECT rowid, * FROM "{table}"').fetchall()
            rng.shuffle(rows)
            con.execute(f'DELETE FROM "{table}"')
            marks = ",".join("?" * len(info))
            con.executemany(f'INSERT INTO "{table}" VALUES ({marks})', [r[1:] for r in rows])
            old_of[table] = np.array([0] + [r[0] for r in rows], dtype=np.int64)
        con.commit()
    finally:
        con.close()
    return old_of


def _real(name: str) -> Path:
    path = REAL_DIR / name
    if not path.is_file():
        pytest.skip(f"{name} is not in {REAL_DIR}")
    return path


@pytest.fixture(scope="module", params=REPORTS, ids=lambda n: n.split("__")[-1])
def pair(request, tmp_path_factory) -> tuple[Report, Report, dict[str, np.ndarray]]:
    source = _real(request.param)
    copy = tmp_path_factory.mktemp("shuffled") / source.name
    old_of = shuffled_copy(source, copy)
    return load_sqlite(source), load_sqlite(copy), old_of


def _old_rowids(kind: str, rows: np.ndarray, old_of: dict[str, np.ndarray]) -> np.ndarray:
    table = SOURCE_TABLES[kind]
    return old_of[table][rows] if table in old_of else rows


def _tie_order(track: np.ndarray, start: np.ndarray, end: np.ndarray, key: np.ndarray):
    return np.lexsort((key, end, start, track))


@requires_shared
def test_shuffled_tables_are_the_original_tables(pair) -> None:
    original, shuffled, old_of = pair
    assert any(len(v) > 2 for v in old_of.values())
    for kind, table in original.tables.items():
        other = shuffled.tables[kind]
        rows = _old_rowids(kind, other["row_id"], old_of)
        mine = _tie_order(table["track_id"], table.start_ns, table.end_ns, table["row_id"])
        theirs = _tie_order(other["track_id"], other.start_ns, other.end_ns, rows)
        np.testing.assert_array_equal(rows[theirs], table["row_id"][mine], err_msg=kind)
        for name in table.columns:
            if name != "row_id":
                np.testing.assert_array_equal(
                    other[name][theirs], table[name][mine], err_msg=f"{kind}.{name}"
                )
        pd.testing.assert_frame_equal(other.track_keys, table.track_keys)


def _slice_rows(report: Report, kind) -> pd.DataFrame | None:
    slices = kind_slices(report, kind)
    if slices is None:
        return None
    track = np.repeat(np.arange(len(slices.track_offsets) - 1), np.diff(slices.track_offsets))
    frame = pd.DataFrame({
        "track": track, "start": slices.start_ns, "end": slices.end_ns,
        "label": np.append(np.asarray(slices.labels, dtype=object), None)[slices.label_ids],
    })  # fmt: skip
    return frame.sort_values(list(frame.columns), kind="stable").reset_index(drop=True)


@requires_shared
def test_shuffled_timeline_rows_are_the_original_rows(pair) -> None:
    original, shuffled, _ = pair
    for kind in event_kinds():
        if kind.place in ("", "gpu_projected") and kind.slices is None:
            continue
        mine, theirs = _slice_rows(shuffled, kind), _slice_rows(original, kind)
        if theirs is None:
            assert mine is None, kind.name
        else:
            pd.testing.assert_frame_equal(mine, theirs, obj=kind.name)


def _map_rowids(frame: pd.DataFrame, old_nvtx: np.ndarray) -> pd.DataFrame:
    """Name NVTX ranges by the original report's rowids (as printed by the summary)."""
    frame = frame.copy()

    def old(value):
        return value if pd.isna(value) or value == 0 else int(old_nvtx[int(value)])

    for column in ROWID_COLUMNS:
        if column in frame:
            values = frame[column]
            frame[column] = pd.Series([old(v) for v in values], values.index, values.dtype)
    if "RangeStack" in frame:
        frame["RangeStack"] = frame["RangeStack"].map(
            lambda s: s if not s else "".join(f":{old(int(p))}" for p in s.split(":")[1:])
        )
    return frame


@requires_shared
def test_shuffled_report_prints_the_same_summaries(pair) -> None:
    original, shuffled, old_of = pair
    old_nvtx = old_of.get("NVTX_EVENTS")
    for spec in SPECS:
        result = run_report(shuffled, spec)
        frame = result.frame
        if old_nvtx is not None and not result.skipped:
            frame = _map_rowids(frame, old_nvtx)
            if spec in ROWID_ORDERED:
                # Printed in rowid order, as nsys does: the original's order once mapped
                # back (the nameless outside-every-range row stays first).
                key = frame["RangeId"].map(lambda v: -1 if pd.isna(v) else v).astype(np.int64)
                frame = frame.iloc[np.argsort(key.to_numpy(), kind="stable")]
                frame = frame.reset_index(drop=True)
        result = dataclasses.replace(result, frame=frame)
        expected = format_results({original.name: [run_report(original, spec)]}, "csv")
        assert format_results({original.name: [result]}, "csv") == expected, spec


def test_rows_in_start_order_are_kept_as_they_are() -> None:
    start = np.array([1, 2, 2, 5], dtype=np.int64)
    data = {"start_ns": start, "end_ns": np.array([4, 3, 9, 5]), "row_id": np.arange(4)}
    assert in_start_order(data) is data


def test_unordered_rows_are_sorted_ties_by_content() -> None:
    data = {
        "start_ns": np.array([5, 2, 2, 1, 2], dtype=np.int64),
        "end_ns": np.array([6, 9, 3, 1, 3], dtype=np.int64),
        "name_id": np.array([0, 1, 2, 3, 1], dtype=np.int32),
        "row_id": np.array([10, 11, 12, 13, 14], dtype=np.int64),
    }
    out = in_start_order(data)
    np.testing.assert_array_equal(out["start_ns"], [1, 2, 2, 2, 5])
    np.testing.assert_array_equal(out["end_ns"], [1, 3, 3, 9, 6])
    np.testing.assert_array_equal(out["name_id"], [3, 1, 2, 1, 0])
    np.testing.assert_array_equal(out["row_id"], [13, 14, 12, 11, 10])


NSYS = shutil.which("nsys") or os.environ.get("NSYS")


@requires_shared
@pytest.mark.skipif(
    not (NSYS and Path(NSYS).is_file()), reason="needs nsys (PATH or $NSYS) as the oracle"
)
@pytest.mark.parametrize("name", [REPORTS[1], REPORTS[2]], ids=lambda n: n.split("__")[-1])
def test_shuffled_report_same_as_nsys(name: str, tmp_path: Path) -> None:
    """On the shuffled file itself, Strata prints what nsys 2023.4 prints (rowid order)."""
    report = tmp_path / name
    shuffled_copy(_real(name), report)
    reports = "nvtx_gpu_proj_trace,nvtx_pushpop_trace,nvtx_sum,nvtx_kern_sum,cuda_gpu_kern_sum"
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8")
    proc = subprocess.run(
        [NSYS, "stats", "-f", "csv", "-r", reports, report.name],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    ours = run_cli("stats", str(report), "-r", reports, "-f", "csv", "--no-cache")
    assert ours.returncode == 0, ours.stderr
    theirs = parse_sections(proc.stdout)
    mine = parse_sections(ours.stdout)
    assert [s.spec for s in mine] == [s.spec for s in theirs]
    for a, b in zip(mine, theirs, strict=True):
        assert a.body == b.body, a.spec
