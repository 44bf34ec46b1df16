"""Folders written by ``nsys export --type arrowdir|parquetdir`` open like the .sqlite export.

With nsys installed, a real ``.nsys-rep`` is exported three ways into ``tmp_path`` and every
supported summary must print the same CSV (and the model hold the same tables). Without
nsys, hostile folders are built from a real .sqlite with pyarrow: each must be refused in
one line with exit status 2.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

from strata.analysis import find_reports, open_report
from strata.analysis.discover import export_dir_format
from strata.analysis.open import find_nsys
from strata.analysis.stats.catalog import SUMMARIES
from strata.app.cli import main as cli_main
from tests.analysis.test_stats_fixtures import parse_sections
from tests.analysis.test_stats_nsys import REPORTS
from tests.conftest import REAL_DIR, requires_shared
from tests.helpers import run_cli

NSYS = find_nsys()
requires_nsys = pytest.mark.skipif(NSYS is None, reason="needs nsys (PATH or $NSYS)")
SOURCES = {
    "dlprof": REAL_DIR / "nsys-rep" / "MohanadOdema__DLProf__nsys_profile.nsys-rep",
    # GENERIC_EVENTS.rawTimestamp holds 2^64 - 66163 (uint64 in the folders), and
    # ThreadNames priorities feed cuda_api_trace's T-Pri.
    "vector_add": REAL_DIR
    / "nsys-rep"
    / "ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.nsys-rep",
}
SMALL = REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite"
#: Every summary Strata supports (nsys's default set among them), with each option that
#: takes no value.
ALL_SUMMARIES = ",".join(
    [s.name for s in SUMMARIES.values()]
    + [f"{s.name}:{a}" for s in SUMMARIES.values() for a in s.args if "=" not in a]
)


@pytest.fixture(scope="session", params=sorted(SOURCES))
def exports(request, tmp_path_factory) -> dict[str, Path]:
    """One source exported as sqlite, arrowdir and parquetdir by the installed nsys, once per
    test session (an export takes seconds)."""
    source = SOURCES[request.param]
    if NSYS is None or not source.is_file():
        pytest.skip(f"needs nsys and {source.name} in {source.parent}")
    folder = tmp_path_factory.mktemp(f"exports-{request.param}")
    rep = folder / source.name
    shutil.copyfile(source, rep)
    out = {}
    for kind, name in (("sqlite", "r.sqlite"), ("arrowdir", "r_arwdir"), ("parquetdir", "r_pq")):
        proc = subprocess.run(
            [NSYS, "export", "--type", kind, "--output", str(folder / name), str(rep)],
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        out[kind] = folder / name
    return out


def _bodies(capsys, path: Path, reports: str = REPORTS) -> list[tuple[str, tuple[str, ...]]]:
    capsys.readouterr()
    assert cli_main(["stats", str(path), "-r", reports, "-f", "csv", "--no-cache"]) == 0
    sections = parse_sections(capsys.readouterr().out)
    # SKIPPED lines name the report: the same report under another name.
    return [(s.spec, tuple(b.replace(path.name, "REPORT") for b in s.body)) for s in sections]


@requires_shared
@requires_nsys
@pytest.mark.parametrize("kind", ["arrowdir", "parquetdir"])
def test_export_folder_prints_the_sqlite_summaries(exports, kind: str, capsys) -> None:
    assert export_dir_format(exports[kind]) == kind
    assert _bodies(capsys, exports[kind]) == _bodies(capsys, exports["sqlite"])


@requires_shared
@requires_nsys
@pytest.mark.parametrize("stats_path", ["columns", "sql"])
@pytest.mark.parametrize("kind", ["arrowdir", "parquetdir"])
def test_export_folder_prints_every_summary_as_the_sqlite(
    exports, kind: str, stats_path: str, capsys, monkeypatch
) -> None:
    """Every summary of ``--help-reports``, on both stats paths: a uint64 column beyond
    int64 that no summary reads (rawTimestamp) blocks none, and T-Pri is the same."""
    monkeypatch.setenv("STRATA_STATS_PATH", stats_path)
    mine = _bodies(capsys, exports[kind], ALL_SUMMARIES)
    assert mine == _bodies(capsys, exports["sqlite"], ALL_SUMMARIES)
    assert len(mine) == ALL_SUMMARIES.count(",") + 1


@requires_shared
@requires_nsys
@pytest.mark.parametrize("kind", ["arrowdir", "parquetdir"])
def test_export_folder_info_is_the_sqlite_info(exports, kind: str, capsys) -> None:
    def info(path: Path) -> str:
        capsys.readouterr()
        assert cli_main(["info", str(path)]) == 0
        return capsys.readouterr().out.replace(str(path), "REPORT").replace(path.name, "REPORT")

    assert info(exports[kind]) == info(exports["sqlite"])


@requires_shared
@requires_nsys
@pytest.mark.parametrize("kind", ["arrowdir", "parquetdir"])
def test_export_folder_holds_the_sqlite_model(exports, kind: str) -> None:
    mine = open_report(exports[kind], use_cache=False)
    theirs = open_report(exports["sqlite"], use_cache=False)
    assert mine.name == exports[kind].name
    for name, table in theirs.tables.items():
        for column in table.columns:
            np.testing.assert_array_equal(mine.tables[name][column], table[column], err_msg=column)
    assert mine.strings.values.tolist() == theirs.strings.values.tolist()


@requires_shared
@requires_nsys
def test_export_folders_are_found_in_a_folder(exports) -> None:
    """A folder of reports lists the export folders in it (drag-and-drop, CLI, recipes)."""
    found = find_reports([exports["sqlite"].parent])
    assert exports["arrowdir"] in found
    assert exports["parquetdir"] in found
    assert find_reports([exports["arrowdir"]]) == [exports["arrowdir"]]


# --------------------------------------------------------------------------- hostile
def _export_folder(source: Path, dest: Path, suffix: str) -> Path:
    """Write every table of ``source`` as one Arrow stream or Parquet file in ``dest``."""
    import adbc_driver_sqlite.dbapi as adbc

    dest.mkdir()
    with adbc.connect(f"file:{source}?mode=ro") as con, con.cursor() as cur:
        cur.execute("SELECT name FROM sqlite_master WHERE type='table'")
        names = [row[0] for row in cur.fetchall()]
        for name in names:
            cur.execute(f'SELECT * FROM "{name}"')
            table = cur.fetch_arrow_table()
            if suffix == ".parquet":
                pq.write_table(table, dest / f"{name}.parquet")
            else:
                with ipc.new_stream(dest / f"{name}.arrow", table.schema) as writer:
                    writer.write_table(table)
    return dest


@pytest.fixture
def pq_folder(tmp_path: Path) -> Path:
    if not SMALL.is_file():
        pytest.skip(f"{SMALL.name} is not in {REAL_DIR}")
    return _export_folder(SMALL, tmp_path / "r_pqtdir", ".parquet")


def _refused(path: Path, tmp_path: Path, *words: str) -> None:
    env = dict(os.environ, STRATA_CACHE_DIR=str(tmp_path / "cache"))
    proc = run_cli("stats", "-r", "cuda_gpu_kern_sum,nvtx_sum", str(path), env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"strata: {path}: "), proc.stderr
    assert "Traceback" not in proc.stderr
    for word in words:
        assert word in lines[0], lines[0]


@requires_shared
def test_built_folder_opens_like_its_sqlite(pq_folder: Path) -> None:
    mine, theirs = open_report(pq_folder, use_cache=False), open_report(SMALL, use_cache=False)
    np.testing.assert_array_equal(mine.kernels.start_ns, theirs.kernels.start_ns)
    np.testing.assert_array_equal(mine.nvtx["name_id"], theirs.nvtx["name_id"])


@requires_shared
def test_wrong_typed_column_is_refused(pq_folder: Path, tmp_path: Path) -> None:
    file = pq_folder / "CUPTI_ACTIVITY_KIND_KERNEL.parquet"
    table = pq.read_table(file)
    at = table.schema.get_field_index("start")
    table = table.set_column(at, "start", pa.array([f"t{i}" for i in range(len(table))]))
    pq.write_table(table, file)
    _refused(pq_folder, tmp_path, "CUPTI_ACTIVITY_KIND_KERNEL", "start")


@requires_shared
def test_truncated_file_is_refused(pq_folder: Path, tmp_path: Path) -> None:
    file = pq_folder / "NVTX_EVENTS.parquet"
    data = file.read_bytes()
    file.write_bytes(data[: len(data) // 2])
    _refused(pq_folder, tmp_path, "NVTX_EVENTS.parquet")


@requires_shared
def test_symlink_loop_table_is_refused(pq_folder: Path, tmp_path: Path) -> None:
    file = pq_folder / "CUPTI_ACTIVITY_KIND_RUNTIME.parquet"
    file.unlink()
    file.symlink_to(file.name)  # points at itself
    _refused(pq_folder, tmp_path, "CUPTI_ACTIVITY_KIND_RUNTIME.parquet")


@requires_shared
def test_symlink_loop_folder_is_skipped(pq_folder: Path, tmp_path: Path) -> None:
    loop = tmp_path / "loop_pqtdir"
    loop.symlink_to(loop.name)
    assert export_dir_format(loop) is None
    assert find_reports([tmp_path]) == [pq_folder]


def test_plain_folder_is_not_an_export(tmp_path: Path) -> None:
    (tmp_path / "StringIds.arrow").write_bytes(b"")
    (tmp_path / "StringIds.parquet").write_bytes(b"")  # two formats: neither
    assert export_dir_format(tmp_path) is None
    assert export_dir_format(tmp_path / "absent") is None


def _with_uint64(file: Path, column: str, value: int) -> None:
    """Rewrite ``column`` of the Parquet table ``file`` as uint64, its first row ``value``."""
    table = pq.read_table(file)
    values = table.column(column).to_pylist()
    values[0] = value
    at = table.schema.get_field_index(column)
    pq.write_table(table.set_column(at, column, pa.array(values, pa.uint64())), file)


@requires_shared
def test_needed_uint64_beyond_int64_is_refused(pq_folder: Path, tmp_path: Path) -> None:
    _with_uint64(pq_folder / "CUPTI_ACTIVITY_KIND_KERNEL.parquet", "correlationId", 2**63)
    _refused(pq_folder, tmp_path, "CUPTI_ACTIVITY_KIND_KERNEL.parquet", "correlationId")


@requires_shared
def test_uint64_beyond_int64_in_the_string_pool_is_refused(pq_folder: Path, tmp_path: Path) -> None:
    _with_uint64(pq_folder / "StringIds.parquet", "id", 2**64 - 66163)
    _refused(pq_folder, tmp_path, "StringIds.parquet", "id")


@requires_shared
def test_unneeded_uint64_beyond_int64_is_stored_as_nsys_sqlite_does(
    pq_folder: Path, tmp_path: Path
) -> None:
    """A table the model is not built from keeps the report open, its 64 bits read as signed
    (what nsys's .sqlite export of the same report holds: -66163 for 2^64 - 66163)."""
    import sqlite3

    from strata.analysis.open import sqlite_source

    raw = [2**64 - 66163, 92233]
    table = pa.table({"rawTimestamp": pa.array(raw, pa.uint64()), "data": ["{}", "{}"]})
    pq.write_table(table, pq_folder / "GENERIC_EVENTS.parquet")
    env = dict(os.environ, STRATA_CACHE_DIR=str(tmp_path / "cache"))
    proc = run_cli("stats", "-r", "cuda_gpu_kern_sum", str(pq_folder), env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == run_cli(
        "stats", "-r", "cuda_gpu_kern_sum", str(SMALL), env=env
    ).stdout.replace(SMALL.name, pq_folder.name)
    source = sqlite_source(pq_folder)
    assert source is not None
    con = sqlite3.connect(source)
    try:
        stored = con.execute("SELECT rawTimestamp FROM GENERIC_EVENTS ORDER BY rowid").fetchall()
    finally:
        con.close()
    assert stored == [(raw[0] - 2**64,), (raw[1],)]
