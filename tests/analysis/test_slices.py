"""The slice table's typed derived data: what its tracks are, and columns computed once."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import numpy as np
import pytest

import strata.analysis.slices as slices_module
from strata.analysis.errors import AnalysisError
from strata.analysis.reportset import ReportSet
from strata.analysis.slices import SliceTable
from tests.conftest import REAL_DIR, ROOT, requires_shared

METRICS = REAL_DIR / "ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite"
MEMORY = REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite"
ICON_CPU = REAL_DIR / "NTHU-SC__ISC25-ICON-C__cpu.sqlite"


def _table(n: int, values: bool = False) -> SliceTable:
    rng = np.random.default_rng(n)
    starts = np.cumsum(rng.integers(1, 1_000, n, dtype=np.int64))
    ends = starts + rng.integers(0, 900, n, dtype=np.int64)
    half = n // 2
    return SliceTable(
        kind="test",
        start_ns=starts,
        end_ns=ends,
        track_offsets=np.array([0, half, n], dtype=np.int64),
        label_ids=np.zeros(n, dtype=np.int32),
        labels=np.array(["e"], dtype=object),
        values=rng.uniform(0, 10, n) if values else None,
    )


def test_derived_columns_are_computed_once_by_concurrent_readers(monkeypatch) -> None:
    """Eight threads ask at once: one computation each, and every thread gets that value."""
    calls = []
    full_prefix = slices_module._full_prefix

    def counted(start_ns, end_ns):
        calls.append(threading.get_ident())
        return full_prefix(start_ns, end_ns)

    monkeypatch.setattr(slices_module, "_full_prefix", counted)
    table = _table(300_000)
    barrier = threading.Barrier(8)
    seen: list[tuple] = []

    def read() -> None:
        barrier.wait()
        seen.append((table.busy_prefix_ns(), table.max_duration_ns(), table.busy_blocks()[0]))

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert len(seen) == 8
    for column in range(3):
        assert all(s[column] is seen[0][column] for s in seen)


def test_derived_columns_are_read_only_and_right() -> None:
    table = _table(1_000, values=True)
    durations = table.end_ns - table.start_ns
    np.testing.assert_array_equal(
        table.busy_prefix_ns(), np.concatenate(([0], np.cumsum(durations)))
    )
    assert table.max_duration_ns().tolist() == [
        int(durations[:500].max()),
        int(durations[500:].max()),
    ]
    integral = np.concatenate(([0.0], np.cumsum(table.values * durations)))
    np.testing.assert_allclose(table.value_prefix(), integral)
    for column in (table.busy_prefix_ns(), table.max_duration_ns(), table.value_prefix()):
        assert not column.flags.writeable


def test_an_event_table_has_no_counter_integral() -> None:
    with pytest.raises(AnalysisError, match="no counter values"):
        _table(10).value_prefix()


def test_a_copy_of_a_table_computes_its_own_derived_columns() -> None:
    import dataclasses

    table = _table(100)
    moved = dataclasses.replace(table, start_ns=table.start_ns + 5, end_ns=table.end_ns + 5)
    assert moved.extent_ns() != table.extent_ns()


@requires_shared
@pytest.mark.parametrize("path", [METRICS, MEMORY, ICON_CPU], ids=lambda p: p.stem[:24])
def test_every_slice_table_says_what_its_tracks_are(load_report, path: Path) -> None:
    reports = ReportSet([load_report(path)])
    reports.projected_slices(0)
    tables = reports.slice_tables(0)
    for name, table in tables.items():
        if table.track_keys is not None:
            assert len(table.track_keys) == table.track_count, name
        if table.values is not None:  # a counter: a full row's value per track
            assert table.scale is not None, name
            assert len(table.scale) == table.track_count, name
            assert (table.scale > 0).all(), name
            assert table.track_keys is not None, name
            assert "device_id" in table.track_keys, name
        else:
            assert table.scale is None, name
    cpu = tables.get("cpu")
    if cpu is not None and cpu.track_count:
        assert list(cpu.track_keys.columns) == ["cpu"]
    projected = tables.get("nvtx_gpu")
    if projected is not None:
        assert len(projected.projection_rows) == len(projected)
        assert list(projected.track_keys.columns) == ["device_id", "level"]


def test_no_module_reaches_into_a_slice_tables_private_values() -> None:
    """The derived values are the table's typed fields and methods: nothing else reads or
    writes its memo (nor a string-keyed cache, as before)."""
    found = []
    for folder in ("analysis", "viewer", "app", "resources"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == ROOT / "analysis" / "slices.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Attribute) and node.attr in {"_cache", "_derived"}:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
