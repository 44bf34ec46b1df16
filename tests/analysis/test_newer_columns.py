"""Columns and tables that newer nsys exports add are ignored safely where Strata has no use
for them: a real report with such additions opens to the same model and summaries."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from strata.analysis.loader import load_sqlite
from strata.analysis.stats import REPORT_NAMES, format_results, run_report
from tests.conftest import REAL_DIR, requires_shared
from tests.helpers import mutate_sqlite

SOURCE = REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite"
#: What 2024-2026 exports add (spec §1: graph nodes, green contexts, decompression), plus
#: an unknown table and unknown columns holding text where numbers would be expected.
ADDITIONS = (
    "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN graphId INTEGER",
    "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN graphExecId INTEGER",
    "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET graphId = rowid * 7, graphExecId = 'x'",
    "ALTER TABLE CUPTI_ACTIVITY_KIND_MEMCPY ADD COLUMN copyCount INTEGER DEFAULT 3",
    "ALTER TABLE CUPTI_ACTIVITY_KIND_RUNTIME ADD COLUMN futureColumn TEXT DEFAULT 'x'",
    "ALTER TABLE NVTX_EVENTS ADD COLUMN payloadSchemaId REAL DEFAULT 1.5",
    "CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "deviceId INTEGER, contextId INTEGER, streamId INTEGER, graphId INTEGER NOT NULL, "
    "graphExecId INTEGER)",
    "INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (1, 2, 0, 1, 7, 5, NULL), "
    "('a', 'b', 1, 1, 1, 1, 1)",
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMORY_DECOMPRESSION (start INTEGER, end INTEGER, "
    "deviceId INTEGER, numberOfOperations INTEGER, sourceBytes INTEGER)",
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMORY_DECOMPRESSION VALUES (5, 1, 0, 3, 'many')",
    "CREATE TABLE FUTURE_TABLE_2027 (anything BLOB)",
    "INSERT INTO FUTURE_TABLE_2027 VALUES (x'00ff')",
)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    if not SOURCE.is_file():
        pytest.skip(f"{SOURCE.name} is not in {REAL_DIR}")
    shutil.copyfile(SOURCE, tmp_path / SOURCE.name)
    return tmp_path / SOURCE.name


@requires_shared
def test_newer_columns_and_tables_change_nothing(copy: Path) -> None:
    mutate_sqlite(copy, *ADDITIONS)
    original, newer = load_sqlite(SOURCE), load_sqlite(copy)
    for kind, table in original.tables.items():
        for column in table.columns:
            np.testing.assert_array_equal(newer.tables[kind][column], table[column])
    for spec in (*REPORT_NAMES, "cuda_gpu_kern_sum:base"):
        mine = format_results({newer.name: [run_report(newer, spec)]}, "csv")
        assert mine == format_results({original.name: [run_report(original, spec)]}, "csv"), spec


@requires_shared
def test_green_context_ids_are_read_where_present(copy: Path) -> None:
    mutate_sqlite(
        copy,
        "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN greenContextId INTEGER",
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET greenContextId = 40 + rowid % 2",
    )
    assert not load_sqlite(SOURCE).kernels["green_context_id"].any()  # absent: 0
    kernels = load_sqlite(copy).kernels
    order = np.argsort(kernels["row_id"])
    np.testing.assert_array_equal(
        kernels["green_context_id"][order], 40 + kernels["row_id"][order] % 2
    )
