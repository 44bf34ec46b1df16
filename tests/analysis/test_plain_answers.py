"""Stored answers print without NumPy or pandas, exactly as the computed tables (issue #13).

:class:`analysis.stats.plain.PlainResult` is printed cell by cell in plain Python; the
computed :class:`~analysis.stats.StatsResult` whole columns at a time through pandas. These
tests hold the two to the same bytes on real reports, check that the summaries a user runs
are in fact stored (a table the store refuses would silently never be answered), and that
the plain-Python checksum is the NumPy one.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from strata.analysis import _cachefiles, answers, open_report
from strata.analysis.stats import FORMATS, format_results, run_report
from strata.analysis.stats._base import REGISTRY
from strata.analysis.stats.catalog import SUMMARIES
from tests.conftest import REAL_DIR, requires_shared

#: Summaries with rows on the reports below (traces excepted: too big to store).
SPECS = ("cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_kern_sum:base", "cuda_gpu_mem_time_sum",
         "cuda_gpu_mem_size_sum", "cuda_api_gpu_sum", "cuda_gpu_sum", "cuda_kern_exec_sum",
         "cuda_gpu_kern_gb_sum", "nvtx_sum", "nvtx_pushpop_sum", "osrt_sum", "nvtx_kern_sum",
         "nvtx_gpu_proj_sum", "um_total_sum", "openmp_sum")  # fmt: skip
REPORTS = ("0x822a5b87__test-cuda__report1.sqlite",
           "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
           "quasiben__nvtx-examples__cupy.sqlite")  # fmt: skip


def test_every_summary_of_the_catalog_is_registered() -> None:
    assert set(REGISTRY) == set(SUMMARIES)
    for name, spec in REGISTRY.items():
        assert (spec.title, spec.args) == (SUMMARIES[name].title, SUMMARIES[name].args)


@pytest.mark.parametrize("size", [0, 1, 7, 8, 9, 4095, 65535, 65536, 65537, 300_001])
def test_plain_python_checksum_is_the_numpy_one(size: int) -> None:
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    small = _cachefiles._small_digest(memoryview(data))
    assert small == _cachefiles._large_digest(data, memoryview(data))
    flipped = bytearray(data or b"\0")
    flipped[len(flipped) // 2] ^= 4
    assert _cachefiles._small_digest(memoryview(bytes(flipped))) != small


@requires_shared
@pytest.mark.parametrize("name", REPORTS)
def test_stored_answers_print_what_was_computed(name: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    copy = tmp_path / name
    shutil.copyfile(REAL_DIR / name, copy)
    report = open_report(copy, use_cache=False)
    store = answers.Answers.for_report(copy)
    for spec in SPECS:
        computed = run_report(report, spec)
        store.put(spec, report.name, computed)
        hit = store.get(spec)
        assert hit is not None, f"{spec} of {name} was not stored"
        _, stored = hit
        for fmt in FORMATS:
            for unit in ("nsec", "msec"):
                ours = format_results({name: [stored]}, fmt, unit)
                assert ours == format_results({name: [computed]}, fmt, unit), (spec, fmt, unit)
    assert len(os.listdir(store.folder)) >= len(SPECS)
