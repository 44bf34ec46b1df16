"""Any order of summaries, each in its own process, prints what ``--no-cache`` prints.

The lean stats side cache once wrote empty placeholder columns for the tables a run did not
read, and a later run trusted them: ``stats -r cuda_gpu_kern_sum`` then ``stats -r
cuda_api_sum`` printed an empty CUDA API table with exit status 0. Here every ordered pair
(and some triples) of lean summaries, full-model summaries and the GUI's full open run on a
fresh cache, one process per step, and every step's text is compared with the uncached one.

A step's result only depends on the cache folder the steps before it left, so the folder
after each first step is kept and copied for the second steps, and first steps that leave
byte-identical folders (every full-model step writes the same entry) share their second steps.
"""

from __future__ import annotations

import os
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from strata.resources import demo
from tests.conftest import REAL_DIR, requires_shared
from tests.helpers import run_cli, run_cli_forked

LEAN_SPECS = (
    "cuda_gpu_kern_sum",
    "cuda_gpu_kern_sum:base",
    "cuda_gpu_kern_sum:mangled",
    "cuda_api_sum",
)
FULL_SPECS = ("nvtx_sum", "cuda_gpu_mem_time_sum", "osrt_sum")
#: The GUI's open: the full model through ``open_report``, every summary printed from it.
GUI = "gui"
STEPS = (*LEAN_SPECS, *FULL_SPECS, GUI)
TRIPLES = (
    ("cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_kern_sum:base"),
    ("cuda_api_sum", "cuda_gpu_kern_sum:mangled", "cuda_gpu_kern_sum"),
    ("cuda_gpu_kern_sum:base", "cuda_gpu_kern_sum:mangled", "cuda_api_sum"),
    ("cuda_gpu_kern_sum", "nvtx_sum", "cuda_api_sum"),
    ("cuda_api_sum", "cuda_gpu_kern_sum", GUI),
    ("osrt_sum", "cuda_api_sum", "cuda_gpu_kern_sum:base"),
)
ALL_SPECS = ",".join((*LEAN_SPECS, *FULL_SPECS))

_GUI_SCRIPT = """
import sys
from strata.analysis import open_report
from strata.analysis.stats import format_results, run_report
from strata.analysis.xp import get_xp
report = open_report(sys.argv[1])
results = {report.name: [run_report(report, s, get_xp(None)) for s in sys.argv[2].split(",")]}
sys.stdout.write(format_results(results, "column", "nsec"))
"""


def _run_step(step: str, report: Path, cache: Path) -> str:
    """Run one step in a fresh process with the cache folder ``cache``; return its stdout."""
    # The column path: the one that writes and reads cache entries (a small report would
    # otherwise be computed through SQLite, analysis.stats.compute).
    env = {**os.environ, "STRATA_CACHE_DIR": str(cache), "STRATA_STATS_PATH": "columns"}
    if step == GUI:
        proc = run_cli_forked("-c", _GUI_SCRIPT, str(report), ALL_SPECS, env=env)
    else:
        proc = run_cli_forked("stats", "-r", step, str(report), env=env)
    assert proc.returncode == 0, (step, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def _uncached(report: Path, work: Path) -> dict[str, str]:
    """Return each step's ``--no-cache`` text (one run: the sections of all summaries)."""
    env = {**os.environ, "STRATA_CACHE_DIR": str(work / "unused")}
    proc = run_cli("stats", "--no-cache", "-r", ALL_SPECS, str(report), env=env)
    assert proc.returncode == 0, proc.stderr
    sections = re.split(r"(?m)^(?=Processing \[)", proc.stdout)[1:]
    assert len(sections) == len(ALL_SPECS.split(","))
    assert "no data" not in sections[LEAN_SPECS.index("cuda_api_sum")]
    return {**dict(zip(ALL_SPECS.split(","), sections, strict=True)), GUI: proc.stdout}


def _state(folder: Path) -> tuple:
    """Return what a cache folder holds: every file's path and bytes."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return tuple((str(p.relative_to(folder)), p.read_bytes()) for p in files)


def _check_every_order(report: Path, work: Path) -> None:
    """Run the pairs and triples of STEPS on fresh caches; compare with ``--no-cache``."""
    expected = _uncached(report, work)

    def run(sequence: tuple[str, ...]) -> str | None:
        """Run the last step on a copy of the folder the others left; return a mismatch."""
        folder = work / "-".join(s.replace(":", "_") for s in sequence)
        if len(sequence) > 1:
            shutil.copytree(work / "-".join(s.replace(":", "_") for s in sequence[:-1]), folder)
        out = _run_step(sequence[-1], report, folder)
        if out == expected[sequence[-1]]:
            return None
        return f"{' then '.join(sequence)} printed\n{out}\nnot\n{expected[sequence[-1]]}"

    with ThreadPoolExecutor(max_workers=2) as pool:
        failures = list(pool.map(run, [(s,) for s in STEPS]))
        # First steps that left the same folder: the first of them stands for the others.
        same: dict[tuple, str] = {}
        first = {s: same.setdefault(_state(work / s.replace(":", "_")), s) for s in STEPS}
        pairs = [(a, b) for a in dict.fromkeys(first.values()) for b in STEPS]
        failures += pool.map(run, pairs)
        failures += pool.map(run, [(first[a], b, c) for a, b, c in TRIPLES])
    failures = [f for f in failures if f is not None]
    assert not failures, f"{len(failures)} orders differ from --no-cache; {failures[0]}"


@pytest.fixture
def demo_report(tmp_path: Path) -> Path:
    (path,) = demo.build_demo_reports(tmp_path / "demo", ranks=1, steps=2)
    return path


def test_every_order_of_summaries_equals_no_cache_on_a_generated_report(
    demo_report: Path, tmp_path: Path
) -> None:
    _check_every_order(demo_report, tmp_path)


@requires_shared
def test_every_order_of_summaries_equals_no_cache_on_a_real_report(tmp_path: Path) -> None:
    _check_every_order(REAL_DIR / "extra-p__extrap__ex-gpu.s10.sqlite", tmp_path)


def test_kernels_then_api_in_two_processes_prints_the_api_table(demo_report: Path) -> None:
    # The reported case, alone: the second run found zero-length placeholder columns.
    cache = demo_report.parent / "cache"
    env = {**os.environ, "STRATA_CACHE_DIR": str(cache)}
    first = run_cli("stats", "-r", "cuda_gpu_kern_sum", str(demo_report), env=env)
    second = run_cli("stats", "-r", "cuda_api_sum", str(demo_report), env=env)
    uncached = run_cli("stats", "--no-cache", "-r", "cuda_api_sum", str(demo_report), env=env)
    assert first.returncode == second.returncode == uncached.returncode == 0
    assert "cudaLaunchKernel" in uncached.stdout
    assert second.stdout == uncached.stdout
