"""Valid-looking but hostile reports: each one reads right or gives one clear line.

Every hostile report is a copy of a small demo report (built by ``resources.demo``, so no
shared data is needed) changed with sqlite3. Each case goes through the full loader
(``open_report``), the lean stats reader (``open_for_stats`` + ``run_report``, what
``main.py stats -r cuda_gpu_kern_sum,cuda_api_sum`` runs) and, where a case could hang or
crash the process, the CLI in a subprocess with a timeout.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from strata.analysis import _sqlfile, open_report
from strata.analysis._sqlite import ReportDatabase
from strata.analysis.errors import (
    AnalysisError,
    CorruptReportError,
    NotAReportError,
    ReportError,
    UnsupportedVersionError,
)
from strata.analysis.projection import project_nvtx, range_levels
from strata.analysis.stats import run_report
from strata.analysis.stats.lean import open_for_stats
from strata.resources import demo
from tests.helpers import mutate_sqlite, run_cli, sql_rows

KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
SPECS = ("cuda_gpu_kern_sum", "cuda_api_sum")

Make = Callable[..., Path]


@pytest.fixture(scope="module")
def base_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo.build_demo_reports(tmp_path_factory.mktemp("hostile-base"), ranks=1, steps=2)[0]


def _loosen(table: str) -> list[str]:
    """Statements that drop ``table``'s NOT NULL/type constraints (same rows, same order)."""
    return [
        f"CREATE TABLE _loose AS SELECT * FROM {table} ORDER BY rowid",
        f"DROP TABLE {table}",
        f"ALTER TABLE _loose RENAME TO {table}",
    ]


@pytest.fixture
def hostile(base_report: Path, tmp_path: Path) -> Make:
    """Return ``make(*sql, loosen=(tables...), name=...)``: a mutated copy of the demo."""

    def make(*statements: str, loosen: tuple[str, ...] = (), name: str = "r.sqlite") -> Path:
        path = tmp_path / name
        shutil.copyfile(base_report, path)
        mutate_sqlite(path, *[s for t in loosen for s in _loosen(t)], *statements)
        return path

    return make


def _lean_stats(path: Path) -> dict[str, pd.DataFrame]:
    report = open_for_stats(path, SPECS, use_cache=False)
    return {spec: run_report(report, spec).frame for spec in SPECS}


def _full_stats(path: Path) -> dict[str, pd.DataFrame]:
    report = open_report(path, use_cache=False)
    return {spec: run_report(report, spec).frame for spec in SPECS}


def _assert_refused(path: Path, *fragments: str) -> str:
    """Both readers refuse ``path`` with the same one-line message holding ``fragments``."""
    with pytest.raises(ReportError) as full:
        open_report(path, use_cache=False)
    with pytest.raises(ReportError) as lean:
        _lean_stats(path)
    message = str(full.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message
    assert str(lean.value) == message
    return message


def _assert_cli_one_line(*args: str, rc: int = 2) -> str:
    env = dict(os.environ)
    result = run_cli(*args, env=env, timeout_s=120)
    assert result.returncode == rc, result.stderr
    assert "Traceback" not in result.stderr
    if rc == 2:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith("strata: "), result.stderr
    return result.stderr


def _name_sums(path: Path, table: str, column: str) -> dict[str, int]:
    rows = sql_rows(
        path,
        f'SELECT s.value, sum(t."end" - t.start) FROM {table} t '
        f"JOIN StringIds s ON s.id = t.{column} GROUP BY s.value",
    )
    return dict(rows)


# --------------------------------------------------------------------------- string ids
def test_one_huge_string_id_is_read_sparsely_not_as_a_dense_table(hostile: Make) -> None:
    # Before: np.full(2e9 + 1, None) -> a 15 GiB allocation (MemoryError) in both readers.
    path = hostile(
        "UPDATE StringIds SET id = 2000000000 WHERE id = "
        f"(SELECT demangledName FROM {KERNELS} WHERE rowid = 1)",
        f"UPDATE {KERNELS} SET demangledName = 2000000000 WHERE demangledName = "
        f"(SELECT demangledName FROM {KERNELS} WHERE rowid = 1)",
    )
    report = open_report(path, use_cache=False)
    assert len(report.strings) < 10_000
    expected = _name_sums(path, KERNELS, "demangledName")
    for stats in (_full_stats(path), _lean_stats(path)):
        kern = stats["cuda_gpu_kern_sum"]
        assert dict(zip(kern["Name"], kern["Total Time"], strict=True)) == expected
    _assert_cli_one_line("info", str(path), rc=0)


def test_string_id_beyond_2_32_that_stringids_lacks_is_refused(hostile: Make) -> None:
    # Before: the int32 cast folded id 2^32 + k onto k, and the kernel showed string k.
    path = hostile(
        f"UPDATE {KERNELS} SET demangledName = demangledName + 4294967296 WHERE rowid = 1"
    )
    missing = sql_rows(path, f"SELECT demangledName FROM {KERNELS} WHERE rowid = 1")[0][0]
    _assert_refused(path, f"StringIds lacks id {missing} used by {KERNELS}")


def test_string_id_beyond_2_32_names_its_own_string(hostile: Make) -> None:
    path = hostile(
        "INSERT INTO StringIds VALUES (4294967301, 'far_away_name')",
        f"UPDATE {RUNTIME} SET nameId = 4294967301 WHERE rowid = 1",
    )
    expected = _name_sums(path, RUNTIME, "nameId")["far_away_name"]
    total = sql_rows(path, f'SELECT sum("end" - start) FROM {RUNTIME}')[0][0]
    for stats in (_full_stats(path), _lean_stats(path)):
        api = stats["cuda_api_sum"]
        assert dict(zip(api["Name"], api["Total Time"], strict=True))["far_away_name"] == expected
        assert api["Total Time"].sum() == total


@pytest.mark.parametrize(
    ("statements", "fragment"),
    [
        (["UPDATE StringIds SET id = 'abc' WHERE id = 5"], "StringIds holds 1 text ids"),
        (["INSERT INTO StringIds SELECT id, 'twin' FROM StringIds WHERE id = 5"], "id 5 twice"),
        (["INSERT INTO StringIds VALUES (-3, 'neg')"], "StringIds holds negative ids"),
    ],
)
def test_malformed_stringids_is_refused(
    hostile: Make, statements: list[str], fragment: str
) -> None:
    # Before: a text id gave a ValueError/TypeError traceback; a duplicate id silently won.
    path = hostile(*statements, loosen=("StringIds",))
    _assert_refused(path, fragment)


def test_stringids_value_of_another_type(hostile: Make) -> None:
    name_id = "(SELECT nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE rowid = 1)"
    path = hostile(f"UPDATE StringIds SET value = 42 WHERE id = {name_id}", loosen=("StringIds",))
    api = _lean_stats(path)["cuda_api_sum"]
    assert "42" in set(api["Name"])  # before: an ArrowTypeError traceback in open_report
    assert open_report(path, use_cache=False).strings.find("42").size == 1
    null = hostile(f"UPDATE StringIds SET value = NULL WHERE id = {name_id}", loosen=("StringIds",))
    _assert_refused(null, f"used by {RUNTIME}")  # before: lean printed a nameless row


# --------------------------------------------------------------------------- timestamps
@pytest.mark.parametrize(
    ("table", "column", "value", "fragment"),
    [
        (KERNELS, "start", "NULL", f"{KERNELS} has 1 event with a NULL start"),
        (KERNELS, "end", "NULL", f"{KERNELS} has 1 event with a NULL end"),
        (RUNTIME, "start", "NULL", f"{RUNTIME} has 1 event with a NULL start"),
        (KERNELS, "start", "'abc'", f"{KERNELS}.start holds 1 text values"),
        (KERNELS, "start", "X'0102'", f"{KERNELS}.start holds 1 blob values"),
        (KERNELS, "end", "1e9 + 0.5", f"{KERNELS}.end holds 1 real-number values"),
        (RUNTIME, "nameId", "'abc'", f"{RUNTIME}.nameId holds 1 text values"),
        (RUNTIME, "nameId", "2.5", f"{RUNTIME}.nameId holds 1 real-number values"),
    ],
)
def test_bad_values_in_integer_columns_are_refused_alike(
    hostile: Make, table: str, column: str, value: str, fragment: str
) -> None:
    # Before: NULL start read as 0, text gave an ArrowInvalid traceback (full) or a wrong
    # duration (lean: 'abc' - x is -x in SQLite), a real was truncated silently.
    path = hostile(f'UPDATE {table} SET "{column}" = {value} WHERE rowid = 3', loosen=(table,))
    _assert_refused(path, fragment)


@pytest.mark.parametrize(
    ("table", "value"), [("NVTX_EVENTS", "NULL"), ("SCHED_EVENTS", "'x'"), ("OSRT_API", "NULL")]
)
def test_bad_start_in_tables_the_lean_reader_skips(hostile: Make, table: str, value: str) -> None:
    path = hostile(f"UPDATE {table} SET start = {value} WHERE rowid = 3", loosen=(table,))
    with pytest.raises(CorruptReportError, match=f"{table}"):
        open_report(path, use_cache=False)


def test_text_in_a_key_column_is_refused(hostile: Make) -> None:
    path = hostile(f"UPDATE {KERNELS} SET streamId = 'x' WHERE rowid = 3", loosen=(KERNELS,))
    with pytest.raises(CorruptReportError, match=f"{KERNELS}.streamId holds 1 text"):
        open_report(path, use_cache=False)


@pytest.mark.parametrize(
    ("table", "sets", "fragment"),
    [
        # A column NULL in the first row (the suspect test's sample) holding the bad value.
        (KERNELS, "greenContextId = 'x'", f"{KERNELS}.greenContextId holds 1 text"),
        (KERNELS, "mangledName = 2.5", f"{KERNELS}.mangledName holds 1 real-number"),
        # A NULL the sample did not predict (correlationId is set in the first row) beside
        # the bad value: the row takes the exact test, with coalesce on every column.
        (KERNELS, "correlationId = NULL, gridX = 'x'", f"{KERNELS}.gridX holds 1 text"),
        (KERNELS, "correlationId = NULL, staticSharedMemory = X'01'", "1 blob values"),
        (KERNELS, "globalPid = NULL, blockY = 2.5", f"{KERNELS}.blockY holds 1 real-number"),
        (RUNTIME, "globalTid = NULL, returnValue = 'x'", f"{RUNTIME}.returnValue holds 1 text"),
        (RUNTIME, "correlationId = NULL, callchainId = 0.5", "callchainId holds 1 real-number"),
        ("NVTX_EVENTS", "domainId = NULL, category = 'x'", "NVTX_EVENTS.category holds 1 text"),
        ("NVTX_EVENTS", '"end" = NULL, color = 1.5', "NVTX_EVENTS.color holds 1 real-number"),
    ],
)
def test_bad_values_in_columns_stats_does_not_read_are_refused_alike(
    hostile: Make, table: str, sets: str, fragment: str
) -> None:
    # The lean stats read tests the columns it does not read in SQL (suspect rows, inside
    # its own SELECT for the tables it reads); it must refuse exactly what the loader does.
    path = hostile(f"UPDATE {table} SET {sets} WHERE rowid = 3", loosen=(table,))
    _assert_refused(path, fragment)


@pytest.mark.parametrize("column", ["start", "end"])
def test_table_without_its_time_column_is_refused(hostile: Make, column: str) -> None:
    # Before: the column read as 0 everywhere (full), or "end" - "start" compared two
    # string literals (lean): every duration 0, exit 0.
    path = hostile(f'ALTER TABLE {KERNELS} DROP COLUMN "{column}"')
    _assert_refused(path, f"{KERNELS} lacks its {column} column")


def test_duration_beyond_int64_is_refused(hostile: Make) -> None:
    # Before: end - start wrapped to a negative number (full) or a float (lean), exit 0.
    path = hostile(
        f'UPDATE {KERNELS} SET start = -9000000000000000000, "end" = 9000000000000000000 '
        "WHERE rowid = 3"
    )
    _assert_refused(path, f"{KERNELS} has 1 events whose duration does not fit in 64 bits")


def test_events_that_end_before_they_start_are_refused_alike(hostile: Make) -> None:
    path = hostile(f'UPDATE {RUNTIME} SET "end" = start - 5 WHERE rowid IN (3, 4)')
    _assert_refused(path, f"{RUNTIME} has 2 events that end before they start")


# --------------------------------------------------------------------------- metadata
@pytest.mark.parametrize(
    ("table", "column", "value"),
    [
        ("TARGET_INFO_SESSION_START_TIME", "utcEpochNs", "'abc'"),
        ("TARGET_INFO_GPU", "id", "'abc'"),
        ("TARGET_INFO_GPU", "smCount", "X'00'"),
        ("TARGET_INFO_CUDA_CONTEXT_INFO", "contextId", "'abc'"),
        ("TARGET_INFO_CUDA_STREAM", "streamId", "1.5"),
        ("ENUM_CUDA_MEMCPY_OPER", "id", "'abc'"),
        ("PROCESSES", "pid", "'abc'"),
        ("ThreadNames", "nameId", "'abc'"),
        ("ANALYSIS_DETAILS", "duration", "'abc'"),
    ],
)
def test_wrong_types_in_descriptive_tables_are_refused(
    hostile: Make, table: str, column: str, value: str
) -> None:
    # Before: ValueError tracebacks from int() in the loader; the lean reader ignored them.
    path = hostile(f'UPDATE {table} SET "{column}" = {value}', loosen=(table,))
    _assert_refused(path, f"{table}.{column} holds")


def test_null_and_numeric_metadata_values_read_as_text(hostile: Make) -> None:
    path = hostile(
        "UPDATE META_DATA_EXPORT SET value = NULL WHERE name = 'EXPORT_PRODUCT_VERSION'",
        "UPDATE META_DATA_EXPORT SET value = 3 WHERE name = 'EXPORT_SCHEMA_VERSION'",
        loosen=("META_DATA_EXPORT",),
    )
    info = open_report(path, use_cache=False).info
    assert (info.nsys_version, info.schema_version) == ("unknown", "3")  # not "None"


def test_schema_version_of_thousands_of_digits_is_too_new(hostile: Make) -> None:
    # Before: int() of a 5,000-digit string raised ValueError (a traceback).
    path = hostile(
        "UPDATE META_DATA_EXPORT SET value = '" + "9" * 5000 + "' "
        "WHERE name = 'EXPORT_SCHEMA_VERSION'"
    )
    with pytest.raises(UnsupportedVersionError, match="newer than Strata reads") as info:
        open_report(path, use_cache=False)
    assert len(str(info.value)) < 300


# --------------------------------------------------------------------------- nesting
def test_200k_nested_nvtx_ranges_on_one_thread(hostile: Make) -> None:
    # Before: the projection walked the tree one level per pass (quadratic) and built every
    # range's full path string: MemoryError. Now pointer doubling and paths only for output.
    n = 200_000
    path = hostile()
    con = sqlite3.connect(path)
    gtid = con.execute("SELECT globalTid FROM NVTX_EVENTS LIMIT 1").fetchone()[0]
    con.executemany(
        'INSERT INTO NVTX_EVENTS (start, "end", eventType, globalTid, text) '
        "VALUES (?, ?, 59, ?, 'deep')",
        ((i, 2 * n - i, gtid) for i in range(n)),
    )
    con.commit()
    con.close()
    report = open_report(path, use_cache=False)
    nvtx = report.nvtx
    deep = np.flatnonzero(report.strings.lookup(nvtx["name_id"]) == "deep")
    levels = report.nvtx.track_keys["level"].to_numpy()[nvtx["track_id"][deep]]
    assert sorted(levels.tolist()) == list(range(n))
    frame = project_nvtx(report)
    assert not frame.empty  # the demo's own ranges
    with pytest.raises(AnalysisError, match="nest .* deep"):
        run_report(report, "nvtx_pushpop_trace")  # 200k paths of ~1M chars: refused


def test_levels_by_pointer_doubling_match_a_walk() -> None:
    rng = np.random.default_rng(7)
    parent = np.array([-1] + [int(rng.integers(0, i)) for i in range(1, 500)], dtype=np.int64)
    parent[[10, 11]] = [11, 10]  # twins: a cycle, unreachable with their subtree
    walk = np.empty(len(parent), dtype=np.int64)
    for i in range(len(parent)):
        depth, node, seen = 0, i, set()
        while parent[node] >= 0 and node not in seen:
            seen.add(node)
            node, depth = int(parent[node]), depth + 1
        walk[i] = -1 if parent[node] >= 0 else depth
    assert range_levels(parent).tolist() == walk.tolist()


def test_200k_nested_cuda_api_calls_get_one_level_each(hostile: Make) -> None:
    n = 200_000
    path = hostile()
    con = sqlite3.connect(path)
    gtid, name = con.execute(f"SELECT globalTid, nameId FROM {RUNTIME} LIMIT 1").fetchone()
    con.executemany(
        f'INSERT INTO {RUNTIME} (start, "end", eventClass, globalTid, correlationId, nameId, '
        "returnValue) VALUES (?, ?, 1, ?, 0, ?, 0)",
        ((i, 2 * n - i, gtid, name) for i in range(n)),
    )
    con.commit()
    con.close()
    api = open_report(path, use_cache=False).cuda_api
    assert int(api.track_keys["level"].max()) == n - 1


def test_100k_streams_each_in_their_own_process_device_and_context(hostile: Make) -> None:
    # Before: 10^5 distinct values in each of the four stream-key columns overflowed the
    # int64 mixed-radix track code, and kernels silently landed on other streams' tracks.
    n = 100_000
    path = hostile()
    con = sqlite3.connect(path)
    cols = [r[1] for r in con.execute(f"PRAGMA table_info({KERNELS})")]
    row = list(con.execute(f"SELECT * FROM {KERNELS} LIMIT 1").fetchone())
    rows = []
    for k in range(n):
        row[cols.index("globalPid")] = (k + 1) << 24
        for key in ("deviceId", "contextId", "streamId"):
            row[cols.index(key)] = (k * 7919) % n
        row[cols.index("start")], row[cols.index("end")] = 10 * k, 10 * k + 5
        rows.append(tuple(row))
    con.executemany(f"INSERT INTO {KERNELS} VALUES ({', '.join('?' * len(cols))})", rows)
    con.commit()
    con.close()
    kernels = open_report(path, use_cache=False).kernels
    assert len(kernels.track_keys) > n
    keys = kernels.track_keys.iloc[kernels["track_id"]]
    expected = sql_rows(
        path, f"SELECT globalPid, deviceId, contextId, streamId FROM {KERNELS} ORDER BY rowid"
    )
    order = np.argsort(kernels["row_id"])
    got = keys[["global_pid", "device_id", "context_id", "stream_id"]].to_numpy()[order]
    assert got.tolist() == [list(r) for r in expected]


# --------------------------------------------------------------------------- schema
def test_event_table_that_is_an_endless_view_is_refused(hostile: Make) -> None:
    # Before: count(*) over an endless recursive CTE: every command hung.
    path = hostile(
        f"DROP TABLE {KERNELS}",
        f"CREATE VIEW {KERNELS} AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
        'SELECT x + 1 FROM c) SELECT x AS start, x + 1 AS "end", 1 AS demangledName FROM c',
    )
    _assert_cli_one_line("info", str(path))  # first: a subprocess bounded by a timeout
    _assert_refused(path, f"{KERNELS} is a view, not a table")


@pytest.mark.parametrize(
    "statements",
    [
        ["CREATE VIEW endless AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
         "SELECT x FROM c"],
        ["CREATE VIEW selfish AS SELECT * FROM selfish"],  # before: "circularly defined", exit 2
        ["CREATE VIEW va AS SELECT * FROM vb", "CREATE VIEW vb AS SELECT * FROM va"],
        ['CREATE TABLE "we""ird" (a)', "CREATE TABLE \"sp ace]`'x\" (b)"],  # before: exit 2
    ],
)  # fmt: skip
def test_odd_extra_objects_are_ignored(hostile: Make, statements: list[str]) -> None:
    path = hostile(*statements)
    report = open_report(path, use_cache=False)
    assert _lean_stats(path)["cuda_gpu_kern_sum"].equals(_full_stats(path)["cuda_gpu_kern_sum"])
    if "we" in statements[0]:
        assert report.source_columns['we"ird'] == ("a",)


def test_endless_query_stops_at_the_step_budget(
    base_report: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_sqlfile, "_STEPS_FLOOR", 1_000_000)
    monkeypatch.setattr(_sqlfile, "_STEPS_PER_BYTE", 1)
    with ReportDatabase(base_report) as db, pytest.raises(CorruptReportError, match="ran past"):
        db.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                   "SELECT count(*) FROM c")  # fmt: skip


def test_without_rowid_event_table_is_refused(hostile: Make) -> None:
    path = hostile(
        f"ALTER TABLE {KERNELS} RENAME TO k2",
        f'CREATE TABLE {KERNELS} (start INT, "end" INT, demangledName INT, '
        "PRIMARY KEY (start)) WITHOUT ROWID",
    )
    _assert_refused(path, f"{KERNELS} is a WITHOUT ROWID table")


# --------------------------------------------------------------------------- WAL
def _with_committed_wal(base_report: Path, folder: Path) -> Path:
    """A report whose last transaction (kernels 1 ms longer) is only in its -wal file."""
    work = folder / "writer"
    work.mkdir()
    src = work / "r.sqlite"
    shutil.copyfile(base_report, src)
    con = sqlite3.connect(src)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA wal_autocheckpoint = 0")
    con.execute(f'UPDATE {KERNELS} SET "end" = "end" + 1000000')
    con.commit()
    path = folder / "r.sqlite"
    shutil.copyfile(src, path)  # copied while the writer is open: the log is not folded in
    shutil.copyfile(f"{src}-wal", f"{path}-wal")
    con.close()
    return path


def test_committed_data_in_the_wal_file_is_read(base_report: Path, tmp_path: Path) -> None:
    # Before: immutable=1 ignored the -wal file and every kernel was 1 ms too short.
    folder = tmp_path / "reports"
    folder.mkdir()
    path = _with_committed_wal(base_report, folder)
    before = sorted(os.listdir(folder))
    base = _name_sums(base_report, KERNELS, "demangledName")
    expected = {name: total + 1_000_000 * _count(base_report, name) for name, total in base.items()}
    for stats in (_full_stats(path), _lean_stats(path)):
        kern = stats["cuda_gpu_kern_sum"]
        assert dict(zip(kern["Name"], kern["Total Time"], strict=True)) == expected
    assert open_report(path, use_cache=False).info.path == path  # named as the user gave it
    assert sorted(os.listdir(folder)) == before  # nothing written next to the report
    with pytest.raises(CorruptReportError, match="wal_checkpoint"):
        ReportDatabase(path)  # any other reader is told, not shown the older data


@pytest.mark.parametrize("use_cache", [False, True])
def test_a_refusal_found_in_the_wal_copy_names_the_report(
    base_report: Path, tmp_path: Path, monkeypatch, use_cache: bool
) -> None:
    # Before: the message named the private checkpointed copy (/tmp/strata-*/...), a file
    # the user never gave and that is gone once the command ends (a fuzz run found it).
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "reports"
    folder.mkdir()
    path = _with_committed_wal(base_report, folder)
    con = sqlite3.connect(path)  # a second transaction, still only in the -wal file
    con.execute("PRAGMA wal_autocheckpoint = 0")
    con.execute(f"UPDATE {KERNELS} SET demangledName = 999999999")
    con.commit()
    shutil.copyfile(path, tmp_path / "main")
    shutil.copyfile(f"{path}-wal", tmp_path / "wal")
    con.close()
    os.replace(tmp_path / "main", path)
    os.replace(tmp_path / "wal", f"{path}-wal")
    with pytest.raises(CorruptReportError, match="lacks id 999999999") as info:
        open_report(path, use_cache=use_cache)
    assert info.value.path == path
    assert str(info.value).startswith(f"{path}: ")


def _count(path: Path, name: str) -> int:
    return sql_rows(
        path,
        f"SELECT count(*) FROM {KERNELS} k JOIN StringIds s ON s.id = k.demangledName "
        "WHERE s.value = ?",
        name,
    )[0][0]


@pytest.mark.parametrize(
    "content",
    [b"", os.urandom(5000), b"\x37\x7f\x06\x82" + bytes(60)],
    ids=["empty", "random", "header-only"],
)
def test_empty_or_garbage_wal_does_not_block(hostile: Make, content: bytes) -> None:
    path = hostile()
    Path(f"{path}-wal").write_bytes(content)
    assert len(open_report(path, use_cache=False).kernels) == _kernel_rows(path)
    assert not _lean_stats(path)["cuda_gpu_kern_sum"].empty


def _kernel_rows(path: Path) -> int:
    return sql_rows(path, f"SELECT count(*) FROM {KERNELS}")[0][0]


# --------------------------------------------------------------------------- files
def test_fifo_named_like_a_report_is_refused_without_blocking(tmp_path: Path) -> None:
    # Before: open() on the FIFO blocked every command forever.
    fifo = tmp_path / "pipe.sqlite"
    os.mkfifo(fifo)
    for args in (["info"], ["stats", "-r", ",".join(SPECS)]):
        assert "named pipe" in _assert_cli_one_line(*args, str(fifo))
    with pytest.raises(NotAReportError, match="named pipe"):
        open_report(fifo, use_cache=False)


def test_folder_and_device_named_like_reports_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "dir.sqlite"
    folder.mkdir()
    with pytest.raises(NotAReportError, match="is a folder"):
        open_report(folder)
    with pytest.raises(NotAReportError, match="character device"):
        open_report("/dev/null")


def test_symlink_loop_is_named(tmp_path: Path) -> None:
    loop = tmp_path / "a.sqlite"
    os.symlink(tmp_path / "b.sqlite", loop)
    os.symlink(loop, tmp_path / "b.sqlite")
    with pytest.raises(NotAReportError, match="symbolic link loop"):
        open_report(loop)


def test_file_name_that_is_not_utf8_prints(base_report: Path, tmp_path: Path) -> None:
    bad = Path(os.fsdecode(os.fsencode(tmp_path) + b"/bad\xff\x1b.sqlite"))
    bad.write_bytes(b"not a report at all" * 10)
    with pytest.raises(NotAReportError) as info:
        open_report(bad)
    message = str(info.value)
    message.encode("utf-8")  # before: UnicodeEncodeError when printed
    assert "bad\\xff\\x1b.sqlite" in message
    assert "bad\\xff" in _assert_cli_one_line("info", str(bad))
    good = Path(os.fsdecode(os.fsencode(tmp_path) + b"/good\xfe.sqlite"))
    shutil.copyfile(base_report, good)
    assert len(open_report(good).kernels) == _kernel_rows(base_report)  # cache key: no crash


@pytest.mark.parametrize(
    ("damage", "error", "fragment"),
    [
        ("truncate", CorruptReportError, "truncated file"),
        ("empty", NotAReportError, "empty file"),
        ("random", NotAReportError, "not an SQLite database"),
        ("plain", NotAReportError, "no StringIds table"),
    ],
)
def test_damaged_files_give_one_line(
    base_report: Path, tmp_path: Path, damage: str, error: type, fragment: str
) -> None:
    path = tmp_path / "r.sqlite"
    shutil.copyfile(base_report, path)
    if damage == "truncate":
        os.truncate(path, path.stat().st_size // 2)
    elif damage == "empty":
        os.truncate(path, 0)
    elif damage == "random":
        path.write_bytes(np.random.default_rng(1).bytes(100_000))
    else:
        path.unlink()
        mutate_sqlite(path, "CREATE TABLE t (a)")
    with pytest.raises(error, match=fragment):
        open_report(path, use_cache=False)
    with pytest.raises(error, match=fragment):
        _lean_stats(path)
