"""``main.py collectives``: the demo's late rank is named with the wait it caused; odd inputs
give notes or one-line errors; ``recipe nccl_straggler`` gives the same output in every mode."""

from __future__ import annotations

import csv
import io
import json
import logging
from pathlib import Path

import pandas as pd
import pytest

from strata.analysis.recipes import run_recipe
from strata.resources import demo
from tests.analysis.test_recipes_data import K, write_report
from tests.cli.conftest import one_line
from tests.helpers import run_cli

ALLREDUCE = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"
BROADCAST = "ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("demo")
    demo.build_demo_reports(folder)
    return folder


def test_demo_late_rank_is_named_with_the_wait_it_caused(demo_dir: Path) -> None:
    truth = demo.demo_truth()
    assert truth.late_arrivals
    # The planted starts are on the ranks' wall clock (resources.demo.LateArrival).
    proc = run_cli("collectives", str(demo_dir), "-f", "json", "--no-cache", "--align",
                   "wallclock")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["alignment"] == "wall clock (UTC session starts)"
    rows = out["collectives"]
    assert len(rows) == truth.steps
    for late in truth.late_arrivals:
        row = rows[late.step]
        last = max(late.starts_ns)
        waits = [last - s for s in late.starts_ns]
        assert late.starts_ns.index(last) == late.rank  # the planted rank really is last
        assert row["straggler"] == f"rank{late.rank}.sqlite"
        assert row["skew_ns"] == last - min(late.starts_ns)
        assert row["total_wait_ns"] == sum(waits)
        assert row["max_wait_ns"] == max(waits)
        assert row["skew_ns"] >= late.delay_ns // 2
    others = [r for i, r in enumerate(rows) if i not in {a.step for a in truth.late_arrivals}]
    assert {r["straggler"] for r in others} == {f"rank{truth.straggler_rank}.sqlite"}
    waits = {w["report"]: w for w in out["rank_waits"]}
    assert waits[f"rank{demo.LATE_RANK}.sqlite"]["straggler_count"] == len(truth.late_arrivals)
    assert out["summary"][0]["worst_straggler"] == f"rank{truth.straggler_rank}.sqlite"


def test_column_and_csv_tables(demo_dir: Path) -> None:
    proc = run_cli("collectives", str(demo_dir), "--top", "3")
    assert proc.returncode == 0, proc.stderr
    assert " ** Matched collectives (first 3 of 40):" in proc.stdout
    assert "communicator unknown" in proc.stdout
    proc = run_cli("collectives", str(demo_dir), "-f", "csv", "-q")
    instances, summary, waits = proc.stdout.strip().split("\n\n")
    assert len(list(csv.DictReader(io.StringIO(instances)))) == 40
    assert [r["collective"] for r in csv.DictReader(io.StringIO(summary))] == ["AllReduce"]
    assert len(list(csv.DictReader(io.StringIO(waits)))) == 4


def test_a_rank_without_collectives_is_a_note(tmp_path: Path) -> None:
    write_report(tmp_path / "a.sqlite", kernels=[K(ALLREDUCE, 1_000, 5_000)])
    write_report(tmp_path / "b.sqlite", kernels=[K(ALLREDUCE, 1_500, 5_100)])
    write_report(tmp_path / "c.sqlite", kernels=[K("sgemm", 1_000, 2_000)])
    write_report(tmp_path / "d.sqlite", kernels=[K(BROADCAST, 1_000, 2_000)])
    proc = run_cli("collectives", str(tmp_path), "--no-cache")
    assert proc.returncode == 0, proc.stderr
    assert "c.sqlite: no collectives found" in proc.stdout
    assert "AllReduce: not on d.sqlite" in proc.stdout
    out = json.loads(run_cli("collectives", str(tmp_path), "-f", "json").stdout)
    assert [(r["collective"], r["ranks"], r["skew_ns"]) for r in out["collectives"]] == [
        ("AllReduce", 2, 500), ("Broadcast", 1, 0)]  # fmt: skip


def test_bad_arguments_are_one_line(demo_dir: Path) -> None:
    proc = run_cli("collectives", str(demo_dir), "-o", str(demo_dir / "out.txt"))
    assert proc.returncode == 2
    assert "inside the input" in one_line(proc.stderr)
    proc = run_cli("collectives", str(demo_dir), "--top", "-1")
    assert proc.returncode == 2
    assert "--top" in one_line(proc.stderr)


def test_recipe_gives_identical_output_serially_in_processes_and_on_dask(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed", reason="needs dask.distributed")
    folder = tmp_path / "ranks"
    demo.build_demo_reports(folder, ranks=3, steps=4)
    serial = run_recipe("nccl_straggler", [folder], mode="serial")
    pool = run_recipe("nccl_straggler", [folder], mode="processes", workers=2)
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        silence_logs=logging.ERROR,
    ) as cluster:
        dask = run_recipe("nccl_straggler", [folder], mode="dask",
                          scheduler=cluster.scheduler_address)  # fmt: skip
    assert len(serial.output.tables["collectives"]) == 4
    for other in (pool, dask):
        assert other.output.tables.keys() == serial.output.tables.keys()
        for name, table in serial.output.tables.items():
            pd.testing.assert_frame_equal(table, other.output.tables[name])
        assert other.output.summary == serial.output.summary


def test_cli_and_the_tab_s_analysis_give_one_skew_and_name_the_alignment(demo_dir: Path) -> None:
    from strata.analysis import open_report
    from strata.analysis.collectives import collectives
    from strata.analysis.reportset import ReportSet

    proc = run_cli("collectives", str(demo_dir), "-f", "json", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    # What the GUI's Collectives tab runs: the set's offsets as the timeline first shows
    # them (session starts, no manual shift), passed as offsets with their alignment.
    reports = ReportSet(
        [open_report(p, use_cache=False) for p in sorted(demo_dir.glob("*.sqlite"))]
    )
    offsets = reports.offsets_ns()
    found = collectives(reports, reports.alignment, offsets_ns=offsets)
    first = found.instances.iloc[0]
    cli_first = out["collectives"][0]
    assert (first["collective"], int(first["instance"])) == ("AllReduce", 0)
    assert (cli_first["collective"], cli_first["instance"]) == ("AllReduce", 0)
    assert cli_first["skew_ns"] == int(first["skew_ns"])
    assert out["alignment"] == found.alignment == "session starts at 0"
    # The column output says it above the numbers.
    column = run_cli("collectives", str(demo_dir), "--top", "1")
    assert column.stdout.startswith(" ** Alignment: session starts at 0\n")
    # Wall clock gives another skew, and says so.
    wall = json.loads(run_cli("collectives", str(demo_dir), "-f", "json", "--align",
                              "wallclock").stdout)  # fmt: skip
    assert wall["alignment"] != out["alignment"]
    assert wall["collectives"][0]["skew_ns"] != cli_first["skew_ns"]
