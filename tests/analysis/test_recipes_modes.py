"""The same recipe gives identical output serially, in a process pool and on Dask.

Dask runs on a real ``LocalCluster`` with two worker processes (started once for the module:
it takes a few seconds), reached by address and by scheduler file; one run lets
``run_recipe`` start and stop its own cluster.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

from strata.analysis.recipes import RecipeOptions, run_recipe
from tests.analysis.test_recipes import CONCURRENT
from tests.analysis.test_recipes_data import K, write_report
from tests.conftest import ROOT, requires_shared
from tests.helpers import run_python

# One recipe of each kind of partial: exact group partials, per-report rule tables, bin counts.
RECIPES = [
    ("nvtx_gpu_proj_sum", RecipeOptions()),
    ("cuda_gpu_kern_hist", RecipeOptions()),
    ("gpu_time_util", RecipeOptions(chunks=20)),
]


@pytest.fixture(scope="module")
def report_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The extra-p parameter sweep plus a truncated copy, in one folder."""
    if not all(p.is_file() for p in CONCURRENT):
        pytest.skip("needs the extra-p concurrent reports in ../shared")
    folder = tmp_path_factory.mktemp("sweep")
    for path in CONCURRENT:
        shutil.copy(path, folder / path.name)
    (folder / "broken.sqlite").write_bytes(CONCURRENT[0].read_bytes()[:5000])
    return folder


def _run(name: str, options: RecipeOptions, folder: Path, **mode) -> tuple:
    calls = []
    run = run_recipe(name, [folder], options, progress=lambda *a: calls.append(a), **mode)
    return run, calls


def _same(a, b) -> None:
    assert a.output.files == b.output.files
    assert [(f.file, f.reason) for f in a.failures] == [(f.file, f.reason) for f in b.failures]
    assert a.output.tables.keys() == b.output.tables.keys()
    for name, table in a.output.tables.items():
        if name == "files":
            table = table.drop(columns="Path")
            other = b.output.tables[name].drop(columns="Path")
        else:
            other = b.output.tables[name]
        pd.testing.assert_frame_equal(table, other)
    assert a.output.summary == b.output.summary


@requires_shared
def test_serial_processes_and_dask_give_identical_output(report_set: Path, cluster) -> None:
    for name, options in RECIPES:
        serial, calls = _run(name, options, report_set, mode="serial")
        assert [c[:2] for c in calls] == [(i, 6) for i in range(1, 7)]
        assert {c[2] for c in calls} == {p.name for p in report_set.iterdir()}
        assert [f.file for f in serial.failures] == ["broken.sqlite"]
        pool, calls = _run(name, options, report_set, mode="processes", workers=2)
        assert pool.mode == "processes"
        assert sorted(c[0] for c in calls) == list(range(1, 7))
        _same(serial, pool)
        dask, calls = _run(
            name, options, report_set, mode="dask", scheduler=cluster.scheduler_address
        )
        assert sorted(c[0] for c in calls) == list(range(1, 7))
        _same(serial, dask)


def test_dask_by_scheduler_file_and_own_local_cluster(tmp_path: Path, cluster) -> None:
    paths = [
        write_report(tmp_path / f"rank{i}.sqlite", kernels=[K("k", 10_000, 10_000 + 50 * i)])
        for i in range(1, 4)
    ]
    serial = run_recipe("cuda_gpu_kern_sum", paths)
    # What ``dask scheduler --scheduler-file`` writes, reduced to what a client reads.
    # (Client.write_scheduler_file fails once workers report tuple-keyed metrics.)
    scheduler_file = tmp_path / "scheduler.json"
    scheduler_file.write_text(
        json.dumps({"type": "Scheduler", "address": cluster.scheduler_address})
    )
    by_file = run_recipe("cuda_gpu_kern_sum", paths, mode="dask", scheduler_file=scheduler_file)
    own = run_recipe("cuda_gpu_kern_sum", paths, mode="dask", workers=2)
    for run in (by_file, own):
        assert run.mode == "dask"
        pd.testing.assert_frame_equal(
            run.output.tables["all_stats"], serial.output.tables["all_stats"]
        )
    assert serial.output.tables["all_stats"]["Total Time"].tolist() == [300]


def _run_driver(tmp_path: Path, source: str, *args: str, timeout_s: int) -> dict:
    """Run ``source`` as a fresh single-threaded driver script; return its last JSON line.

    No worker of it may have lingered past its cluster's close (that is logged).
    """
    script = tmp_path / "driver.py"
    script.write_text(source)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = run_python(str(script), *args, env=env, timeout_s=timeout_s)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "did not exit" not in proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


_SINGLE_THREADED_DRIVER = """
import json, multiprocessing, sys, threading, time
from pathlib import Path

def main():
    import pandas as pd
    from strata.analysis.recipes import run_recipe
    from strata.analysis.recipes._procs import pool_context
    paths = [Path(p) for p in sys.argv[1:]]
    out = {"pool": pool_context().get_start_method()}
    serial = run_recipe("cuda_gpu_kern_sum", paths).output.tables["all_stats"]
    pool = run_recipe("cuda_gpu_kern_sum", paths, mode="processes", workers=2)
    pd.testing.assert_frame_equal(pool.output.tables["all_stats"], serial)
    out["threads_after_pool"] = threading.active_count()

    from distributed import Client
    from strata.analysis.recipes._cluster import local_cluster
    cluster = local_cluster(2)
    out["worker_classes"] = sorted({type(w).__name__ for w in cluster.workers.values()})
    with Client(cluster) as client:
        client.wait_for_workers(2, timeout=30)
        out["workers"] = len(client.scheduler_info()["workers"])
        out["total"] = client.submit(sum, [1, 2, 3]).result()
    t0 = time.perf_counter()
    cluster.close()
    out["close_s"] = time.perf_counter() - t0
    out["children_after_close"] = len(multiprocessing.active_children())
    # Dask leaves its event-loop thread running: a second cluster comes from a fork server.
    dask = run_recipe("cuda_gpu_kern_sum", paths, mode="dask", workers=2)
    pd.testing.assert_frame_equal(dask.output.tables["all_stats"], serial)
    out["children_after_runs"] = len(multiprocessing.active_children())
    # With another thread running, nothing forks this process any more.
    threading.Thread(target=time.sleep, args=(2,), daemon=True).start()
    out["pool_with_a_thread"] = pool_context().get_start_method()
    print(json.dumps(out))

if __name__ == "__main__":
    main()
"""


def test_a_single_threaded_driver_forks_its_pool_and_dask_workers(tmp_path: Path) -> None:
    """The CLI's case: workers forked from the driver, identical output, nothing left over."""
    pytest.importorskip("distributed", reason="needs dask.distributed")
    if not sys.platform.startswith("linux"):
        pytest.skip("workers are forked on Linux only")
    paths = [
        write_report(tmp_path / f"rank{i}.sqlite", kernels=[K("k", 10_000, 10_000 + 50 * i)])
        for i in range(1, 4)
    ]
    out = _run_driver(tmp_path, _SINGLE_THREADED_DRIVER, *map(str, paths), timeout_s=240)
    assert out["pool"] == "fork"
    assert out["threads_after_pool"] == 1
    assert out["pool_with_a_thread"] == "forkserver"
    assert out["worker_classes"] == ["PreforkedWorker"]
    assert out["workers"] == 2
    assert out["total"] == 6
    assert out["children_after_runs"] == 0
    assert out["children_after_close"] == 0
    assert out["close_s"] < 5.0


_CRASHING_DRIVER = """
import json, os, signal, sys
from pathlib import Path

from strata.analysis.errors import AnalysisError
from strata.analysis.recipes import run_recipe
from strata.analysis.recipes.base import Recipe, register


class Crash(Recipe):
    name = "test_crash"

    def map(self, report_path, options):
        if report_path.name.startswith("crash"):
            os.kill(os.getpid(), signal.SIGKILL)  # what the kernel's OOM killer does
        return None


def submit_after_the_pool_broke():
    # Hold every submit after the first until a worker has died: the pool is then broken
    # while tasks are still being queued, and the next submit raises BrokenProcessPool.
    import time
    from concurrent.futures import ProcessPoolExecutor

    submit = ProcessPoolExecutor.submit

    def late_submit(self, *args, **kwargs):
        deadline = time.monotonic() + 60
        while getattr(self, "_queue_count", 0) and not self._broken:
            if time.monotonic() > deadline:
                raise TimeoutError("no worker died")
            time.sleep(0.01)
        return submit(self, *args, **kwargs)

    ProcessPoolExecutor.submit = late_submit


def main():
    register(Crash())  # before the workers are forked: they inherit it
    mode = sys.argv[1]
    if mode == "processes-submitting":
        submit_after_the_pool_broke()
        mode = "processes"
    paths = [Path(p) for p in sys.argv[2:]]
    try:
        run_recipe("test_crash", paths, mode=mode, workers=2)
    except AnalysisError as exc:
        print(json.dumps({"error": str(exc)}))

if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("mode", ["processes", "processes-submitting", "dask"])
def test_a_worker_killed_by_a_report_ends_the_run_with_one_line(tmp_path: Path, mode: str) -> None:
    """No hang, no traceback: a report that kills its worker (out of memory) stops the run.

    ``processes-submitting``: the worker dies while the other tasks are still being queued
    (once a flaky BrokenProcessPool traceback from ``pool.submit``), made certain by holding
    each submit until the pool knows.
    """
    if mode == "dask":
        pytest.importorskip("distributed", reason="needs dask.distributed")
    if not sys.platform.startswith("linux"):
        pytest.skip("workers are forked on Linux only")
    paths = [write_report(tmp_path / f"rank{i}.sqlite", kernels=[K("k", 0, 10)]) for i in range(3)]
    paths.append(write_report(tmp_path / "crash.sqlite", kernels=[K("k", 0, 10)]))
    error = _run_driver(tmp_path, _CRASHING_DRIVER, mode, *map(str, paths), timeout_s=120)["error"]
    assert "died" in error
    assert "out of memory?" in error
