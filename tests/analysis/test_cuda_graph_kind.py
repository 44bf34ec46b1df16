"""The cuda_graph kind (analysis.kinds.cuda_graph): one module, and every view has it.

A demo report gets nsys's ``CUDA_GRAPH_NODE_EVENTS`` table (its DDL from nsys 2023.4's
schema reference, where the table was still named ``CUDA_GRAPH_EVENTS``); each test checks
one thing the registry entry alone gives the kind: the table read and cached, timeline
rows, detail lines, a per-name summary, search, the events frame and the exports.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from strata.analysis.export import TRACE_KINDS, export_tables, write_chrome_trace
from strata.analysis.kinds import event_tables, get_kind, panel_kinds, panel_title
from strata.analysis.kinds.cuda_graph import CUDA_GRAPH
from strata.analysis.kinds.details import EventDetail
from strata.analysis.reportset import EVENT_KINDS, ReportSet, open_reports
from strata.analysis.search import search_events
from strata.analysis.selection import aggregate
from strata.viewer.events import describe_event, event_ref

_DDL = (
    "CREATE TABLE CUDA_GRAPH_NODE_EVENTS (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "eventClass INTEGER NOT NULL, globalTid INTEGER, nameId INTEGER NOT NULL, "
    "graphNodeId INTEGER NOT NULL, originalGraphNodeId INTEGER)"
)
#: (name, start offset ns, duration ns, graphNodeId, originalGraphNodeId): two calls of one
#: name, one of another; the last node is a clone of the first (an instantiated graph).
_NODES = (
    ("cudaGraphAddKernelNode", 1_000, 400, 11, None),
    ("cudaGraphAddKernelNode", 2_000, 600, 12, None),
    ("cudaGraphAddMemcpyNode", 3_000, 300, 13, None),
    ("cudaGraphInstantiate", 4_000, 900, 21, 11),
)


@pytest.fixture
def graph_report(report_copy: Path) -> tuple[Path, int]:
    """The demo report with four graph node rows on its first CUDA API thread; and that
    thread's globalTid."""
    con = sqlite3.connect(report_copy)
    with con:
        gtid, t0 = con.execute(
            "SELECT globalTid, min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME"
        ).fetchone()
        next_id = con.execute("SELECT max(id) + 1 FROM StringIds").fetchone()[0]
        ids = {}
        for name, *_ in _NODES:
            if name not in ids:
                ids[name] = next_id + len(ids)
                con.execute("INSERT INTO StringIds VALUES (?, ?)", (ids[name], name))
        con.execute(_DDL)
        con.executemany(
            "INSERT INTO CUDA_GRAPH_NODE_EVENTS VALUES (?, ?, 77, ?, ?, ?, ?)",
            [(t0 + s, t0 + s + d, gtid, ids[n], node, orig) for n, s, d, node, orig in _NODES],
        )
    con.close()
    return report_copy, int(gtid)


@pytest.fixture
def graph_set(graph_report: tuple[Path, int]) -> ReportSet:
    return open_reports(graph_report[0])


def test_the_loader_reads_and_the_cache_keeps_the_table(graph_report, graph_set) -> None:
    assert "cuda_graph" in event_tables()
    nodes = graph_set.reports[0].tables["cuda_graph"]
    assert len(nodes) == len(_NODES)
    assert sorted(nodes["graph_node_id"].tolist()) == [11, 12, 13, 21]
    assert sorted(nodes["original_graph_node_id"].tolist()) == [-1, -1, -1, 11]
    durations = dict(zip(nodes["graph_node_id"].tolist(), nodes.duration_ns.tolist(), strict=True))
    assert durations == {node: d for _, _, d, node, _ in _NODES}
    again = open_reports(graph_report[0]).reports[0].tables["cuda_graph"]  # from the cache
    np.testing.assert_array_equal(again["graph_node_id"], nodes["graph_node_id"])


def test_its_events_are_thread_rows_on_the_timeline(graph_report, graph_set) -> None:
    rows = [t for t in graph_set.tracks(include_projection=False) if t.kind == "cuda_graph"]
    assert [t.label for t in rows] == ["CUDA graph nodes"]
    assert rows[0].group[1] == "Processes"
    slices = graph_set.slice_tables(0)["cuda_graph"]
    assert len(slices) == len(_NODES)
    shown = {str(slices.labels[i]) for i in slices.label_ids}
    assert shown == {name for name, *_ in _NODES}


def test_an_event_says_its_thread_and_graph_node(graph_set) -> None:
    report = graph_set.reports[0]
    nodes = report.tables["cuda_graph"]
    row = int(np.flatnonzero(nodes["graph_node_id"] == 21)[0])
    lines = dict(
        CUDA_GRAPH.details(
            EventDetail(report, "cuda_graph", row, int(nodes.start_ns[row]), int(nodes.end_ns[row]))
        )
    )
    assert lines["Graph node"] == "21"
    assert lines["Cloned from node"] == "11"
    assert "tid" in lines["Thread"]
    # As the hover text and the details pane show it (viewer.events, Qt-free).
    shown = dict(describe_event(report, event_ref(graph_set.slice_tables(0), 0, "cuda_graph", row),
                                "row"))  # fmt: skip
    assert shown["Graph node"] == "21"
    assert shown["Name"] == "cudaGraphInstantiate"
    first = int(np.flatnonzero(nodes["graph_node_id"] == 11)[0])
    event = EventDetail(report, "cuda_graph", first, 0, 0)
    assert "Cloned from node" not in dict(CUDA_GRAPH.details(event))


def test_a_summary_per_name(graph_set) -> None:
    assert "cuda_graph" in panel_kinds()
    assert panel_title("cuda_graph") == "CUDA graph nodes"
    stats = aggregate(graph_set.reports[0], "cuda_graph", xp=np).set_index("name")
    assert stats.loc["cudaGraphAddKernelNode", "count"] == 2
    assert stats.loc["cudaGraphAddKernelNode", "total_ns"] == 1_000
    assert stats.loc["cudaGraphAddMemcpyNode", "total_ns"] == 300
    window = graph_set.window(None, None, kind="cuda_graph").set_index("name")
    assert window.loc["cudaGraphInstantiate", "total_ns"] == 900
    assert int(window["count"].sum()) == len(_NODES)


def test_search_finds_its_events_by_name(graph_set) -> None:
    found = search_events(graph_set, "addkernel")
    mine = found.table_codes == found.tables.index("cuda_graph")
    assert int(np.count_nonzero(mine)) == 2


def test_the_events_frame_and_the_exports(graph_set, tmp_path: Path) -> None:
    assert "cuda_graph" in EVENT_KINDS
    assert "cuda_graph" in TRACE_KINDS
    frame = graph_set.events("cuda_graph")
    assert frame["name"].tolist() == [name for name, *_ in _NODES]
    assert frame["graph_node_id"].tolist() == [11, 12, 13, 21]
    manifest = export_tables(graph_set, tmp_path / "tables", "parquet", kinds=["cuda_graph"])
    files = json.loads(manifest.read_text())["kinds"]
    assert files["cuda_graph"]["rows"] == len(_NODES)
    written = pd.read_parquet(tmp_path / "tables" / files["cuda_graph"]["file"])
    assert written["name"].tolist() == frame["name"].tolist()
    with (tmp_path / "trace.json").open("w", encoding="utf-8") as out:
        counts = write_chrome_trace(graph_set, out, kinds=["cuda_graph", "cuda_api"])
    assert counts["cuda_graph"] == len(_NODES)
    events = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    mine = [e for e in events if e.get("cat") == "cuda_graph"]
    assert sorted(e["args"]["graph_node_id"] for e in mine) == [11, 12, 13, 21]
    threads = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert any(name.endswith("· CUDA graph nodes") for name in threads)


def test_a_report_without_the_table_has_no_such_events(report_copy: Path) -> None:
    reports = open_reports(report_copy)
    assert len(reports.reports[0].tables["cuda_graph"]) == 0
    assert not [t for t in reports.tracks(include_projection=False) if t.kind == "cuda_graph"]
    assert get_kind("cuda_graph").table.source == "CUDA_GRAPH_NODE_EVENTS"
