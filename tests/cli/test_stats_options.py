"""``main.py stats`` options and the reports added for issue #15, against nsys 2023.4.

nsys runs on copies of real reports in ``tmp_path`` (it may write beside its input); its
``with [<install path>/reports/<name>.py]`` is compared without the install path. Skipped
without nsys or the shared reports.
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from strata.analysis.open import find_nsys
from strata.app.cli import main
from tests.conftest import REAL_DIR, real_reports, requires_shared
from tests.helpers import mutate_sqlite

NSYS = find_nsys()
requires_nsys = pytest.mark.skipif(NSYS is None, reason="needs nsys ($NSYS or PATH) as the oracle")
_SCRIPT_PATH = re.compile(r"with \[/[^\]]*/reports/")

NEW_REPORTS = (
    "cuda_api_trace", "cuda_kern_exec_trace", "cuda_kern_exec_trace:base",
    "cuda_kern_exec_trace:nvtx-name", "um_sum", "um_total_sum", "um_cpu_page_faults_sum",
    "openmp_sum", "openacc_sum", "mpi_event_trace", "dx11_pix_sum", "dx12_gpu_marker_sum",
    "dx12_pix_sum", "opengl_khr_range_sum", "opengl_khr_gpu_range_sum", "vulkan_api_sum",
    "vulkan_api_trace", "vulkan_gpu_marker_sum", "vulkan_marker_sum", "wddm_queue_sum",
    "nvvideo_api_sum",
)  # fmt: skip
SAXPY = "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
CUPY = "quasiben__nvtx-examples__cupy.sqlite"


def _copy(name: str, folder: Path) -> Path:
    target = folder / name
    shutil.copyfile(REAL_DIR / name, target)
    return target


def nsys_stats(report: Path, *args: str) -> str:
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8")
    proc = subprocess.run(
        [NSYS, "stats", *args, report.name],
        cwd=report.parent, capture_output=True, text=True, timeout=300, env=env, check=False,
    )  # fmt: skip
    return _SCRIPT_PATH.sub("with [", proc.stdout)


def strata_stats(report: Path, capsys, *args: str) -> str:
    capsys.readouterr()
    assert main(["stats", "--no-cache", *args, report.name]) in (0, 1)
    return capsys.readouterr().out


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@requires_shared
@requires_nsys
@pytest.mark.parametrize("source", real_reports(), ids=lambda p: p.stem)
def test_new_reports_equal_nsys(source: Path, in_tmp: Path, capsys) -> None:
    report = _copy(source.name, in_tmp)
    args = ("-f", "csv", "-r", ",".join(NEW_REPORTS))
    assert strata_stats(report, capsys, *args) == nsys_stats(report, *args)


@requires_shared
@requires_nsys
@pytest.mark.parametrize("fmt", ["column", "table", "csv", "tsv", "hdoc", "htable"])
@pytest.mark.parametrize("name", [CUPY, SAXPY])
def test_every_format_equals_nsys(fmt: str, name: str, in_tmp: Path, capsys) -> None:
    report = _copy(name, in_tmp)
    specs = "cuda_api_sum,cuda_gpu_kern_sum,nvtx_pushpop_trace,um_sum,um_total_sum,openmp_sum"
    args = ("-f", fmt, "-r", specs, "--timeunit", "usec")
    assert strata_stats(report, capsys, *args) == nsys_stats(report, *args)


@requires_shared
@requires_nsys
def test_repeated_options_pair_as_nsys_pairs_them(in_tmp: Path, capsys) -> None:
    """-r twice keeps both; the i-th -f and -o serve the i-th report, the last the rest."""
    report = _copy(CUPY, in_tmp)
    (in_tmp / "ours").mkdir()
    (in_tmp / "theirs").mkdir()
    base = ["-f", "csv,column,tsv", "-r", "cuda_gpu_kern_sum:base,nvtx_sum", "-r", "um_sum"]
    base += ["-r", "cuda_api_sum,osrt_sum"]
    ours = strata_stats(report, capsys, *base, "--output=-,ours/p")
    theirs = nsys_stats(report, *base, "--output=-,theirs/p")
    assert ours == theirs.replace("theirs/p", "ours/p")
    names = sorted(os.listdir(in_tmp / "theirs"))
    assert "p_nvtx_sum.txt" in names
    for name in names:
        if (in_tmp / "theirs" / name).stat().st_size:  # nsys leaves SKIPPED ones empty
            assert (in_tmp / "ours" / name).read_text() == (in_tmp / "theirs" / name).read_text()


@requires_shared
@requires_nsys
def test_output_dot_writes_beside_the_report(in_tmp: Path, capsys) -> None:
    report = _copy(CUPY, in_tmp)
    theirs = nsys_stats(report, "-r", "cuda_api_sum", "-f", "tsv", "-o", ".")
    expected = (in_tmp / f"{report.stem}_cuda_api_sum.tsv").read_text()
    (in_tmp / f"{report.stem}_cuda_api_sum.tsv").unlink()
    ours = strata_stats(report, capsys, "-r", "cuda_api_sum", "-f", "tsv", "-o", ".")
    assert ours == theirs
    assert (in_tmp / f"{report.stem}_cuda_api_sum.tsv").read_text() == expected


@requires_nsys
def test_help_reports_lists_ours_as_nsys_does(capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(["stats", "--help-reports"])
    assert done.value.code == 0
    ours = capsys.readouterr().out.splitlines()
    proc = subprocess.run(
        [NSYS, "stats", "--help-reports"], capture_output=True, text=True, timeout=60, check=False
    )
    theirs = [line for line in proc.stdout.splitlines() if " -- " in line]
    listed = [line for line in ours if " -- " in line]
    assert listed == theirs  # all 37, with their options (um_sum[:rows=<limit>] too)


def refusal(capsys, *argv: str) -> str:
    """The one stderr line of a stats run that must exit 2."""
    capsys.readouterr()
    assert main(["stats", "--no-cache", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "Traceback" not in err
    return err


def test_a_command_output_is_refused(tmp_path: Path, capsys) -> None:
    err = refusal(capsys, "-r", "nvtx_sum", "-o", "@cat", str(tmp_path / "x.sqlite"))
    assert "not supported" in err


@requires_shared
def test_unified_memory_rows_are_refused_not_misprinted(tmp_path: Path, capsys) -> None:
    """A report whose UM table holds rows: one line and exit 2, never a wrong table."""
    report = _copy(SAXPY, tmp_path)
    mutate_sqlite(
        report,
        "INSERT INTO CUDA_UM_CPU_PAGE_FAULT_EVENTS (start, globalPid, address, "
        "CpuInstruction, module) VALUES (1, 1, 4096, 0, 0)",
    )
    assert "does not summarise" in refusal(capsys, "-r", "um_cpu_page_faults_sum", str(report))


@requires_shared
def test_a_text_thread_priority_is_one_line_not_a_traceback(tmp_path: Path, capsys) -> None:
    report = _copy(CUPY, tmp_path)
    mutate_sqlite(report, "UPDATE ThreadNames SET priority = 'high'")
    assert "ThreadNames" in refusal(capsys, "-r", "cuda_api_trace", str(report))


@requires_shared
@pytest.mark.parametrize("variant", ["base", "mangled"])
def test_gpu_sum_names_kernels_by_the_variant(variant: str, in_tmp: Path, capsys) -> None:
    """cuda_gpu_sum:base/:mangled: the kernel rows group by that name (computed here)."""
    report = _copy("LeiWang1999__memfusion_artifact__report1.sqlite", in_tmp)
    column = {"base": "shortName", "mangled": "mangledName"}[variant]
    con = sqlite3.connect(report)
    expected = sorted(
        con.execute(
            f"SELECT s.value, count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            f"JOIN StringIds s ON s.id = coalesce(k.{column}, k.demangledName) GROUP BY 1"
        ).fetchall()
    )
    demangled = {r[0] for r in con.execute(
        "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
        "ON s.id = k.demangledName"
    )}  # fmt: skip
    con.close()
    assert {name for name, _, _ in expected} != demangled  # the variant names them otherwise
    out = strata_stats(report, capsys, "-f", "csv", "-r", f"cuda_gpu_sum:{variant}")
    rows = list(csv.DictReader(io.StringIO(out.split("\n", 1)[1].strip())))
    kernels = sorted(
        (r["Operation"], int(r["Instances"]), int(r["Total Time (ns)"]))
        for r in rows
        if r["Category"] == "CUDA_KERNEL"
    )
    assert kernels == expected
