"""Fixtures shared by the analysis tests."""

from __future__ import annotations

import logging

import pytest


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
