"""Fixtures shared by the analysis tests."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from strata.resources import demo


@pytest.fixture(scope="module")
def cluster():
    """A two-worker local Dask cluster (processes), one per test module that asks for it."""
    distributed = pytest.importorskip("distributed", reason="needs dask.distributed")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        silence_logs=logging.ERROR,
    )
    yield cluster
    cluster.close()


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One generated report (1 rank, 1 step), per test module; modules may define their own."""
    (path,) = demo.build_demo_reports(tmp_path_factory.mktemp("demo"), ranks=1, steps=1)
    return path


@pytest.fixture
def report_copy(demo_report: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of :func:`demo_report` with a private, empty cache folder."""
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "report.sqlite"
    shutil.copyfile(demo_report, path)
    return path


@pytest.fixture(scope="module")
def demo_seed(tmp_path_factory: pytest.TempPathFactory):
    """The small demo report (1 rank, 2 steps) as a fuzz seed, for the named report classes."""
    from tests.fuzz.mutations import introspect

    (path,) = demo.build_demo_reports(tmp_path_factory.mktemp("sql-demo"), ranks=1, steps=2)
    return introspect(f"demo/{path.name}", path)
