"""``main.py analyze``: the nsys analyze rules, byte for byte against nsys 2023.4.

The oracle is the installed nsys, run on a copy of each real report (``nsys analyze`` may
write beside its input); its ``Processing [...] with [<install path>/rules/<rule>.py]`` line
is compared without the install path. Skipped without nsys or the shared reports.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from strata.analysis.open import find_nsys
from strata.analysis.rules import DEFAULT_RULES, RULE_FORMATS, format_rule_results, run_rule
from strata.app.cli import main
from tests.conftest import REAL_DIR, real_reports, requires_shared
from tests.helpers import mutate_sqlite

NSYS = find_nsys()
requires_nsys = pytest.mark.skipif(NSYS is None, reason="needs nsys ($NSYS or PATH) as the oracle")
_RULE_PATH = re.compile(r"with \[/[^\]]*/rules/")

#: Reports whose rules find something (tables, row limits, several contexts, graphics tables).
SUBSET = (
    "quasiben__nvtx-examples__cudf.sqlite",
    "quasiben__nvtx-examples__cupy.sqlite",
    "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
    "NTHU-SC__ISC25-ICON-C__gpu.sqlite",
    "extra-p__extrap__ex-gpu.s100000.sqlite",
    "ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite",
)


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of copies of the real reports, for nsys to run on."""
    folder = tmp_path_factory.mktemp("analyze-copies")
    for path in real_reports():
        shutil.copy(path, folder / path.name)
    return folder


def nsys_analyze(report: Path, *args: str) -> str:
    """nsys's output (run in the report's folder: SKIPPED lines name the file alone)."""
    out = subprocess.run(
        [NSYS, "analyze", *args, report.name],
        cwd=report.parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return _RULE_PATH.sub("with [", out.stdout + out.stderr)


def strata(load_report, report: Path, specs, fmt: str = "csv", timeunit: str = "nsec") -> str:
    loaded = load_report(report)
    results = [run_rule(loaded, spec) for spec in specs]
    return format_rule_results({loaded.name: results}, fmt, timeunit)


@requires_shared
@requires_nsys
@pytest.mark.parametrize("name", [p.name for p in real_reports()] or ["none"])
def test_every_rule_equals_nsys_on_every_real_report(name, copies, load_report) -> None:
    report = copies / name
    assert strata(load_report, report, DEFAULT_RULES) == nsys_analyze(report, "-f", "csv")


@requires_shared
@requires_nsys
@pytest.mark.parametrize("name", SUBSET)
def test_rule_options_equal_nsys(name, copies, load_report) -> None:
    specs = (
        "gpu_gaps:gap=0",
        "gpu_gaps:gap=0:rows=2",
        "gpu_gaps:gap=-1:rows=-1",
        "gpu_time_util:threshold=80:chunks=7",
        "gpu_time_util:threshold=100:chunks=1000:rows=3",
        "cuda_api_sync:rows=0",
        "cuda_api_sync:rows=1:start=3700000000:end=3750000000",
        "cuda_api_sync:process=138543:thread=138543",
        "cuda_memcpy_sync:rows=-1",
        "cuda_memcpy_async:rows=-1",
    )
    report = copies / name
    expected = nsys_analyze(report, "-f", "csv", "-r", ",".join(specs))
    assert strata(load_report, report, specs) == expected


@requires_shared
@requires_nsys
@pytest.mark.parametrize("fmt", RULE_FORMATS)
@pytest.mark.parametrize("name", SUBSET[:4])
def test_every_format_equals_nsys(fmt, name, copies, load_report) -> None:
    report = copies / name
    specs = (*DEFAULT_RULES, "cuda_api_sync:rows=1", "gpu_gaps:gap=0:rows=3")
    expected = nsys_analyze(report, "-f", fmt, "-r", ",".join(specs), "--timeunit", "usec")
    assert strata(load_report, report, specs, fmt, "usec") == expected


@requires_shared
@requires_nsys
@pytest.mark.parametrize(
    ("name", "args"),
    [
        (SUBSET[0], ("--filter-time", "3.7s/3.8s")),
        (SUBSET[0], ("--filter-time", "/3s400ms")),
        (SUBSET[0], ("--filter-nvtx", "null_count@libcudf/5")),
        (SUBSET[0], ("--filter-nvtx", "no such range")),
        (SUBSET[2], ("--filter-nvtx", "saxpy/3")),
        (SUBSET[2], ("--filter-nvtx", "MPI_Send@MPI/3")),
        ("MohanadOdema__DLProf__nsys_profile.sqlite", ("--filter-nvtx", "aten::empty/1")),
    ],
)
def test_filters_equal_nsys(name, args, copies, capsys) -> None:
    report = copies / name
    assert main(["analyze", "-f", "csv", *args, str(report)]) == 0
    assert capsys.readouterr().out == nsys_analyze(report, "-f", "csv", *args)


def _planted_memory_ops(path: Path) -> None:
    """Memsets (pinned and managed) launched by cudaMemset, and a memcpy within one device."""
    mutate_sqlite(
        path,
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET AS SELECT start, end, deviceId, contextId, "
        "greenContextId, streamId, correlationId, globalPid, bytes, 0 AS value, "
        "CASE WHEN rowid % 2 THEN 1 ELSE 4 END AS memKind FROM CUPTI_ACTIVITY_KIND_MEMCPY",
        "INSERT INTO StringIds VALUES ((SELECT max(id) + 1 FROM StringIds), 'cudaMemset_v3020')",
        "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = (SELECT max(id) FROM StringIds) "
        "WHERE correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY "
        "WHERE rowid > 1)",
        "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET srcDeviceId = 0, dstDeviceId = 0 WHERE rowid = 1",
    )


def _planted_dx12_ops(path: Path) -> None:
    """DX12 memory operations of every warning type, and some without a warning."""
    names = [
        "ID3D12Device::CreateHeap",
        "ID3D12Device::CreateCommittedResource",
        "ID3D12Resource::ReadFromSubresource",
        "ID3D12Resource::WriteToSubresource",
        "ID3D12Resource::Map",
    ]
    statements = [
        f"INSERT INTO StringIds VALUES ({900000 + i}, '{n}')" for i, n in enumerate(names)
    ]
    cases = [  # name index, heapFlags, heapType, cpuPageProperty
        (0, 0, 0, 0), (0, 0x1000, 0, 0), (1, 0, 1, 0), (2, 0x1000, 1, 0), (2, 0x1000, 0, 2),
        (3, 0x1000, 2, 0), (3, 0x1000, 0, 3), (3, 0x1000, 0, 0), (4, 0, 1, 2),
    ]  # fmt: skip
    for i, (name, flags, heap, page) in enumerate(cases):
        start, gtid = 1_000_000 + 10_000 * i, (77 << 24) | 78
        end = start + 100 * (i % 4 + 1)
        statements.append(
            "INSERT INTO DX12_API (id, start, end, eventClass, globalTid, nameId) VALUES "
            f"({i + 1}, {start}, {end}, 0, {gtid}, {900000 + name})"
        )
        statements.append(
            "INSERT INTO DX12_MEMORY_OPERATION (gpu, heapType, heapFlags, cpuPageProperty, "
            f"traceEventId) VALUES (0, {heap}, {flags}, {page}, {i + 1})"
        )
    mutate_sqlite(path, *statements)


@requires_shared
@requires_nsys
@pytest.mark.parametrize(
    ("name", "plant", "specs"),
    [
        (SUBSET[5], _planted_memory_ops, ("cuda_memset_sync", "cuda_memcpy_sync:rows=-1")),
        (SUBSET[2], _planted_dx12_ops, ("dx12_mem_ops", "dx12_mem_ops:rows=3:start=1040000")),
    ],
)
def test_planted_rows_equal_nsys(name, plant, specs, tmp_path, load_report) -> None:
    # The real reports have no memset of pinned memory and no DX12 memory operation.
    report = tmp_path / name
    shutil.copy(REAL_DIR / name, report)
    plant(report)
    for fmt in ("csv", "column"):
        expected = nsys_analyze(report, "-f", fmt, "-r", ",".join(specs))
        assert strata(load_report, report, specs, fmt) == expected
        assert "SKIPPED" not in expected


@pytest.mark.parametrize(
    "args",
    [
        ("-r", "gpu_gaps:gap=abc"),
        ("-r", "gpu_gaps:gap"),
        ("-r", "gpu_time_util:chunks=0"),
        ("-r", "gpu_time_util:chunks=1001"),
        ("-r", "gpu_time_util:threshold=1.5"),
        ("-r", "cuda_api_sync:rows=x"),
        ("-r", "cuda_api_sync:rows=99999999999999999999"),
        ("-r", "cuda_api_sync:foo=1"),
        ("-r", "no_such_rule"),
        ("-r", ","),
        ("--filter-time", "abc"),
        ("--filter-time", "5/3"),
        ("--filter-time", "1parsec/"),
        ("-f", "xml"),
        ("--timeunit", "fortnight"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(args, tmp_path, capsys) -> None:
    # Checked before any report is read: the report need not even exist.
    try:
        code = main(["analyze", *args, str(tmp_path / "absent.sqlite")])
    except SystemExit as exc:  # argparse's own refusals (-f xml)
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith(("strata: ", "strata analyze: "))
    if args[0] != "-f":
        assert err.count("\n") == 1, err


def test_a_rule_on_a_report_without_its_tables_says_skipped(tmp_path, capsys) -> None:
    from tests.cli.conftest import plant

    report = plant(tmp_path / "tiny.sqlite")
    assert main(["analyze", "-f", "csv", "-r", "dx12_mem_ops,cuda_api_sync", str(report)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Processing [tiny.sqlite] with [dx12_mem_ops.py]... \nSKIPPED: ")
    assert "does not contain the required DX12 data" in out
