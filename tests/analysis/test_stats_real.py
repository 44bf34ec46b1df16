"""Our summaries against statistics that real nsys versions wrote, on the same reports.

* nsys 2020.3 stored its ``--stats=true`` tables inside the quasiben reports
  (``cudaKernelStats``, ``cudaAPIStats``, ``osrtAPIStats``, ``nvtxPushPopRangeStats``,
  ``cudaMemoryOperation{Time,Byte}Stats``): count, min, max and total must be equal and the
  average equal up to 2020.3's integer storage.
* The console output of ``nsys profile --stats=true`` saved next to the ayush-os reports:
  every printed row and value (thousands separators removed; that nsys printed memcpy
  operations with the ``HtoD`` labels that 2023.4 spells ``Host-to-Device``).
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from strata.analysis.selection import aggregate
from strata.analysis.stats import run_report
from strata.analysis.stats._base import strip_api_version
from strata.analysis.stats.format import table_strings
from strata.analysis.stats.text import header_of
from tests.conftest import REAL_DIR, requires_shared

QUASIBEN = sorted(REAL_DIR.glob("quasiben__*.sqlite")) if REAL_DIR.is_dir() else []
AYUSH = (
    sorted((REAL_DIR / "nsys-rep").glob("ayush-os__*.nsys-stats.txt")) if REAL_DIR.is_dir() else []
)
#: nsys 2020.3 / 2024+ memcpy label -> the 2023.4 ENUM_CUDA_MEMCPY_OPER label we print.
SHORT_LABELS = {"HtoD": "Host-to-Device", "DtoH": "Device-to-Host", "DtoD": "Device-to-Device",
                "HtoH": "Host-to-Host", "PtoP": "Peer-to-Peer"}  # fmt: skip


def _long_label(name: str) -> str:
    match = re.fullmatch(r"\[CUDA memcpy (\w+)\]", name)
    return f"[CUDA memcpy {SHORT_LABELS[match[1]]}]" if match and match[1] in SHORT_LABELS else name


def _stored(path: Path, table: str) -> list[tuple] | None:
    with sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True) as db:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchall():
            return None
        return db.execute(f"SELECT * FROM {table}").fetchall()


def _strings(path: Path) -> dict[int, str]:
    with sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True) as db:
        return dict(db.execute("SELECT id, value FROM StringIds"))


def _check(ours: dict[str, tuple], theirs: dict[str, tuple]) -> None:
    """Both map name -> (count, min, max, total, avg)."""
    assert sorted(ours) == sorted(theirs)
    for name, (num, lo, hi, total, avg) in theirs.items():
        assert ours[name][:4] == (num, lo, hi, total), name
        assert abs(ours[name][4] - avg) < 1.0, name


def _from_frame(frame, name_col: str, count_col: str, total_col: str = "Total Time") -> dict:
    return {
        row[name_col]: (row[count_col], row["Min"], row["Max"], row[total_col], row["Avg"])
        for _, row in frame.iterrows()
    }


@requires_shared
@pytest.mark.parametrize("path", QUASIBEN, ids=lambda p: p.stem)
def test_matches_nsys_2020_stats_tables(path: Path, load_report) -> None:
    report = load_report(path)
    strings = _strings(path)
    checked = 0
    kernels = _stored(path, "cudaKernelStats")
    if kernels is not None:
        theirs = {strings[k]: (n, lo, hi, tot, avg) for k, n, lo, hi, avg, tot in kernels}
        _check(_from_frame(run_report(report, "cuda_gpu_kern_sum").frame, "Name", "Instances"),
               theirs)  # fmt: skip
        checked += 1
    api = _stored(path, "cudaAPIStats")
    if api is not None:
        names = strip_api_version(np.array([strings[r[0]] for r in api], dtype=object))
        theirs = {n: (r[1], r[2], r[3], r[5], r[4]) for n, r in zip(names, api, strict=True)}
        _check(_from_frame(run_report(report, "cuda_api_sum").frame, "Name", "Num Calls"), theirs)
        checked += 1
    osrt = _stored(path, "osrtAPIStats")
    if osrt is not None:
        theirs = {strings[k]: (n, lo, hi, tot, avg) for k, n, lo, hi, avg, tot in osrt}
        _check(_from_frame(run_report(report, "osrt_sum").frame, "Name", "Num Calls"), theirs)
        checked += 1
    nvtx = _stored(path, "nvtxPushPopRangeStats")
    if nvtx is not None:
        theirs = {tag: (n, lo, hi, tot, avg) for tag, n, lo, hi, avg, tot in nvtx}
        frame = run_report(report, "nvtx_pushpop_sum").frame
        _check(_from_frame(frame, "Range", "Instances"), theirs)
        checked += 1
    for table, kind in (("cudaMemoryOperationTimeStats", "memcpy"),
                        ("cudaMemoryOperationByteStats", "memcpy_bytes")):  # fmt: skip
        rows = _stored(path, table)
        if rows is not None:
            theirs = {
                _long_label(name): (n, lo, hi, tot, avg) for n, lo, hi, avg, tot, name in rows
            }
            frame = aggregate(report, kind)
            ours = {r.name: (r.count, r.min_ns, r.max_ns, r.total_ns, r.mean_ns)
                    for r in frame.itertuples()}  # fmt: skip
            _check(ours, theirs)
            checked += 1
    assert checked


def _console_sections(text: str) -> dict[str, list[list[str]]]:
    """Parse ``[n/8] Executing '<name>' stats report`` tables into rows of cell texts."""
    sections: dict[str, list[list[str]]] = {}
    lines = text.split("\n")
    for i, line in enumerate(lines):
        match = re.search(r"Executing '(\w+)' stats report", line)
        if not match:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        header, dashes = lines[j], lines[j + 1]
        spans = [m.span() for m in re.finditer(r"-+", dashes)]
        rows = [[header[a:b].strip() for a, b in spans]]
        k = j + 2
        while k < len(lines) and lines[k].strip():
            rows.append([lines[k][a:b].strip() for a, b in spans])
            k += 1
        sections[match[1]] = rows
    return sections


@requires_shared
@pytest.mark.parametrize("stats_txt", AYUSH, ids=lambda p: p.stem)
def test_matches_saved_nsys_console_output(stats_txt: Path, load_report) -> None:
    sqlite = REAL_DIR / stats_txt.name.replace(".nsys-stats.txt", ".sqlite")
    if not sqlite.is_file():
        pytest.skip(f"no SQLite export {sqlite.name} next to the reports")
    report = load_report(sqlite)
    sections = _console_sections(stats_txt.read_text())
    assert {"nvtx_sum", "cuda_api_sum", "cuda_gpu_kern_sum"} <= set(sections)
    for name, (header, *rows) in sections.items():
        result = run_report(report, name)
        assert header == [header_of(c, result.units.get(c)) for c in result.frame.columns]
        ours = table_strings(result.frame, result.units)
        theirs = [[_long_label(cell.replace(",", "") if i < len(row) - 1 else cell)
                   for i, cell in enumerate(row)] for row in rows]  # fmt: skip
        assert ours == theirs, name
