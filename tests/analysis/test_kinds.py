"""The kind registry: a kind added through it alone reaches every view, and every view
spells a kind's events the same way."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from strata.analysis import open_report
from strata.analysis.kinds import (
    DURATION,
    EventKind,
    event_kinds,
    event_tables,
    get_kind,
    panel_kinds,
    register,
    unregister,
)
from strata.analysis.model import EVENT_TABLES, EventTable, Report
from strata.analysis.names import event_name
from strata.analysis.outliers import find_outliers
from strata.analysis.reportset import ReportSet
from strata.analysis.selection import aggregate
from strata.analysis.stats import run_report
from strata.analysis.window_stats import build_window_index
from strata.resources.demo import build_demo_reports

_TOY_COUNT = 200
_TOY_SLOW = 7  # the one instance that lasts 100 times longer


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Report:
    (path,) = build_demo_reports(tmp_path_factory.mktemp("demo"), ranks=1)
    return open_report(path, use_cache=False)


def _toy_table(report: Report) -> EventTable:
    """Evenly spaced 'toy' events on one thread, two names, one of them slow once."""
    gtid = int(report.threads["global_tid"].iloc[0])
    pool = report.strings
    names = np.flatnonzero(pool.has(np.arange(len(pool))))[:2].tolist()
    start = np.arange(_TOY_COUNT, dtype=np.int64) * 10_000
    duration = 1_000 + (np.arange(_TOY_COUNT) % 5) * 10
    duration[_TOY_SLOW] = 100_000
    columns = {
        "start_ns": start,
        "end_ns": start + duration,
        "track_id": np.zeros(_TOY_COUNT, np.int32),
        "row_id": np.arange(_TOY_COUNT, dtype=np.int64),
        "name_id": np.array([names[i % 2] for i in range(_TOY_COUNT)], dtype=np.int64),
    }
    keys = pd.DataFrame({"global_tid": [gtid], "level": [0]})
    return EventTable("toy", columns, keys, "TOY_EVENTS")


@pytest.fixture
def toy(demo: Report):
    """The demo report with a 'toy' table, and a 'toy' kind registered for the test only."""
    report = dataclasses.replace(demo, tables={**demo.tables, "toy": _toy_table(demo)})
    kind = register(
        EventKind(
            "toy", "Toy ops", ("toy",), place="thread", panels=(("toy", DURATION),), outliers=True
        )  # fmt: skip
    )
    yield report, kind
    unregister("toy")


def test_every_event_table_has_a_kind() -> None:
    names = {k.name for k in event_kinds()}
    assert set(event_tables()) <= names
    assert set(EVENT_TABLES) <= set(event_tables())
    assert {"nvtx_gpu"} <= names
    for kind in event_kinds():
        assert set(kind.tables) <= set(event_tables()), kind.name


def test_a_registered_kind_reaches_the_window_stats(toy) -> None:
    report, _ = toy
    assert "toy" in panel_kinds()
    stats = build_window_index([report], "toy").stats()
    texts = {report.strings[int(i)] for i in report.tables["toy"]["name_id"]}
    assert set(stats["name"]) == texts
    assert int(stats["count"].sum()) == _TOY_COUNT
    once = aggregate(report, "toy", xp=np)
    pd.testing.assert_frame_equal(
        once[["name", "count", "total_ns"]], stats[["name", "count", "total_ns"]]
    )


def test_a_registered_kind_reaches_the_timeline(toy) -> None:
    report, kind = toy
    reports = ReportSet([report])
    assert len(reports.slice_tables(0)["toy"]) == _TOY_COUNT
    rows = [t for t in reports.tracks(include_projection=False) if t.kind == "toy"]
    assert [(t.label, t.parts) for t in rows] == [(kind.label, (("toy", 0),))]
    assert rows[0].group[1] == "Processes"


def test_a_registered_kind_reaches_the_outliers(toy) -> None:
    report, kind = toy
    found = find_outliers([report])  # every registered kind by default
    mine = found.instances[found.instances["kind"] == "toy"]
    assert mine["index"].tolist() == [_TOY_SLOW]
    assert mine["row"].iloc[0].endswith(f"{kind.label} L0")
    again = find_outliers([report], kinds=("toy",)).instances
    assert again["index"].tolist() == [_TOY_SLOW]


def test_an_unregistered_kind_is_gone(toy) -> None:
    unregister("toy")
    assert "toy" not in panel_kinds()
    with pytest.raises(Exception, match="unknown"):
        get_kind("toy")


def test_a_kind_is_registered_once(toy) -> None:
    _, kind = toy
    with pytest.raises(Exception, match="registered already"):
        register(kind)


# --------------------------------------------------------------------------- one spelling
def _memory_rows(report: Report) -> list[tuple[str, int]]:
    return [(t, i) for t in ("memcpy", "memset") for i in range(len(report.tables[t]))]


def test_memory_labels_are_the_same_in_every_view(demo: Report) -> None:
    """A memcpy/memset is spelled as the memory summaries spell it: on its timeline box, in
    its tooltip, in the panel and its histogram instances, and in cuda_gpu_trace."""
    assert len(demo.tables["memcpy"])
    assert len(demo.tables["memset"])
    tables = ReportSet([demo]).slice_tables(0)
    boxes = {(t, i): tables[t].labels[tables[t].label_ids[i]] for t, i in _memory_rows(demo)}
    tooltips = {(t, i): event_name(demo, t, i) for t, i in _memory_rows(demo)}
    assert boxes == tooltips
    index = build_window_index([demo], "memcpy")
    panel = {}
    for group, name in zip(index.stats()["group"], index.stats()["name"], strict=True):
        for row in index.instances(group).itertuples():
            panel[(row.table, row.row)] = name
    assert panel == {key: boxes[key] for key in panel}
    assert len(panel) == len(boxes)  # every copy kind of the demo has a label
    summary = run_report(demo, "cuda_gpu_mem_time_sum", np).frame
    assert set(summary["Operation"]) == set(boxes.values())
    assert set(aggregate(demo, "memcpy", xp=np)["name"]) == set(boxes.values())
    trace = run_report(demo, "cuda_gpu_trace", np).frame
    assert set(boxes.values()) <= set(trace["Name"])
    assert any("Host-to-Device" in str(n) for n in boxes.values())
