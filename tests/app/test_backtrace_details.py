"""CUDA API backtraces, a sample's call chain and the thread's nearest sample in the event
details, checked against CUDA_CALLCHAINS / SAMPLING_CALLCHAINS read with sqlite3."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from strata.analysis import open_report
from strata.analysis.event_fields import backtrace_lines
from strata.analysis.tracks import build_slice_tables
from strata.viewer.details_pane import EventDetailsPane
from strata.viewer.events import describe_event, event_ref
from tests.conftest import REAL_DIR, requires_shared
from tests.helpers import sql_rows

EX_GPU = REAL_DIR / "extra-p__extrap__ex-gpu.s10.sqlite"
SAXPY = REAL_DIR / "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite"

_CHAIN = (
    "SELECT c.stackDepth, s.value, m.value FROM {t} c JOIN StringIds s ON s.id = c.symbol "
    "JOIN StringIds m ON m.id = c.module WHERE c.id = ? ORDER BY c.stackDepth"
)


def _expected(path: Path, table: str, chain: int) -> list[str]:
    return [f"#{d} {s}  ({Path(m).name})" if m else f"#{d} {s}"
            for d, s, m in sql_rows(path, _CHAIN.format(t=table), chain)][:24]  # fmt: skip


@requires_shared
@pytest.mark.parametrize("path", [EX_GPU, SAXPY], ids=lambda p: p.stem[:20])
def test_cuda_api_details_show_the_calls_backtrace(qtbot, path) -> None:
    report = open_report(path)
    api = report.cuda_api
    (chain,) = sql_rows(
        path, "SELECT r.callchainId FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE EXISTS (SELECT 1 "
        "FROM CUDA_CALLCHAINS c WHERE c.id = r.callchainId) ORDER BY r.start LIMIT 1"
    )[0]  # fmt: skip
    row = int(np.flatnonzero(api["callchain_id"] == chain)[0])
    tables = build_slice_tables(report)
    ref = event_ref(tables, 0, "cuda_api", row)
    lines = describe_event(report, ref, "CUDA API", tables=tables)
    pane = EventDetailsPane()
    qtbot.addWidget(pane)
    pane.show_lines(lines)
    shown = [(pane.table.item(i, 0).text(), pane.table.item(i, 1).text())
             for i in range(pane.table.rowCount())]  # fmt: skip
    at = [f for f, _v in shown].index("Backtrace")
    frames = _expected(path, "CUDA_CALLCHAINS", chain)
    assert [v for _f, v in shown[at : at + len(frames)]] == frames
    assert all(f == "" for f, _v in shown[at + 1 : at + len(frames)])


@requires_shared
def test_sample_and_nearest_sample_call_chains(load_report) -> None:
    report = load_report(SAXPY)
    samples = report.tables["samples"]
    row = int(np.argmax(np.bincount(report.sample_chains["chain_id"].to_numpy())[
        samples["sample_id"]]))  # the sample with the deepest chain  # fmt: skip
    chain = int(samples["sample_id"][row])
    lines = backtrace_lines(report, "samples", row)
    assert lines[0][0] == "Call chain"
    assert [v for _f, v in lines[:24]] == _expected(SAXPY, "SAMPLING_CALLCHAINS", chain)
    # An NVTX range: the sample of its thread nearest to its start.
    nvtx = report.tables["nvtx"]
    r = 0
    gtid, start = int(nvtx["global_tid"][r]), int(nvtx["start_ns"][r])
    ((sid, t),) = sql_rows(
        SAXPY, "SELECT id, start FROM COMPOSITE_EVENTS WHERE globalTid = ? "
        "ORDER BY abs(start - ?), start LIMIT 1", gtid, start,
    )  # fmt: skip
    lines = backtrace_lines(report, "nvtx", r)
    assert lines[0][0] == "Nearest CPU sample"
    assert lines[0][1].startswith("+" if t >= start else "-")
    assert [v for _f, v in lines[1:25]] == _expected(SAXPY, "SAMPLING_CALLCHAINS", sid)
