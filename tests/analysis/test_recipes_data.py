"""Small reports with planted facts for the recipe tests, written by our own code.

The schema is the real nsys 2023.4 DDL of the built-in demo (:mod:`resources.demo_schema`);
the rows are whatever a test plants: kernels (each with its launching ``cudaLaunchKernel``
call, paired by correlation id), memcpys, NVTX push/pop ranges and CUDA profiler overhead.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from strata.resources.demo_schema import create_schema

PID = 4242
GLOBAL_PID = (1 << 48) | (PID << 24)
GLOBAL_TID = GLOBAL_PID | 7
LAUNCH_NS = 400  # the launch call starts this long before its kernel


@dataclass(frozen=True)
class K:
    """A planted kernel: name, [start, end) in ns, stream and device."""

    name: str
    start_ns: int
    end_ns: int
    stream: int = 7
    device: int = 0
    short: str | None = None


def write_report(
    path: Path,
    kernels: Sequence[K] = (),
    ranges: Iterable[tuple[str, int, int]] = (),
    memcpy: Iterable[tuple[int, int]] = (),
    overhead: Iterable[tuple[str, int, int]] = (),
    session_start_utc_ns: int = 1_700_000_000_000_000_000,
) -> Path:
    """Write a report holding exactly the planted rows; return ``path``."""
    path.unlink(missing_ok=True)
    con = sqlite3.connect(path)
    create_schema(con)
    con.execute(
        "CREATE TABLE PROFILER_OVERHEAD (id INTEGER PRIMARY KEY, start INTEGER, end INTEGER, "
        "globalTid INTEGER, nameId INTEGER, returnValue INTEGER)"
    )
    strings: dict[str, int] = {}

    def sid(text: str) -> int:
        if text not in strings:
            strings[text] = len(strings) + 1
            con.execute("INSERT INTO StringIds (id, value) VALUES (?, ?)", (strings[text], text))
        return strings[text]

    con.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.7.2')")
    con.execute(
        "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, '', '')", (session_start_utc_ns,)
    )
    con.execute(
        "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, 'planted')", (GLOBAL_PID, PID)
    )
    con.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (sid("main"), GLOBAL_TID))
    launch = sid("cudaLaunchKernel")
    for corr, k in enumerate(kernels, start=1):
        con.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, "
            "correlationId, nameId, returnValue) VALUES (?, ?, 1, ?, ?, ?, 0)",
            (k.start_ns - LAUNCH_NS, k.start_ns - LAUNCH_NS + 100, GLOBAL_TID, corr, launch),
        )
        con.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
            "correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, "
            "gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
            "localMemoryPerThread, localMemoryTotal, gridId) "
            "VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, 32, 1, 1, 1, 128, 1, 1, 0, 0, 0, 0, ?)",
            (
                k.start_ns,
                k.end_ns,
                k.device,
                k.stream,
                corr,
                GLOBAL_PID,
                sid(k.name),
                sid(k.short or k.name),
                corr,
            ),
        )
    for corr, (start, end) in enumerate(memcpy, start=100_000):
        con.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
            "correlationId, globalPid, bytes, copyKind) VALUES (?, ?, 0, 1, 9, ?, ?, 1024, 1)",
            (start, end, corr, GLOBAL_PID),
        )
    for text, start, end in ranges:
        con.execute(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, globalTid, textId, domainId) "
            "VALUES (?, ?, 59, ?, ?, 0)",
            (start, end, GLOBAL_TID, sid(text)),
        )
    for name, start, end in overhead:
        con.execute(
            "INSERT INTO PROFILER_OVERHEAD (start, end, globalTid, nameId, returnValue) "
            "VALUES (?, ?, ?, ?, 0)",
            (start, end, GLOBAL_TID, sid(name)),
        )
    con.commit()
    con.close()
    return path


def test_planted_report_loads_with_every_planted_row(tmp_path: Path, load_report) -> None:
    path = write_report(
        tmp_path / "p.sqlite",
        kernels=[K("a", 10_000, 12_000), K("b", 20_000, 21_000, stream=8)],
        ranges=[("step", 9_000, 30_000)],
        memcpy=[(40_000, 41_000)],
    )
    report = load_report(path)
    assert len(report.kernels) == 2
    assert len(report.memcpy) == 1
    assert len(report.cuda_api) == 2
    assert report.strings.lookup(report.kernels["name_id"]).tolist() == ["a", "b"]
    assert report.info.session_start_utc_ns == 1_700_000_000_000_000_000
