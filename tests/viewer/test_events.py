"""Picking and tooltips (Qt-free): what describe_event says comes from the SQLite rows."""

from __future__ import annotations

import sqlite3

from strata.analysis.reportset import ReportSet
from strata.analysis.timefmt import format_duration_ns
from strata.analysis.tracks import build_slice_tables
from strata.viewer.events import describe_event, find_partner, pick_event
from tests.conftest import REAL_DIR, requires_shared

CONCURRENT = REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite"


def _row(query):
    with sqlite3.connect(f"file:{CONCURRENT}?mode=ro", uri=True) as con:
        return con.execute(query).fetchone()


def test_durations_read_well() -> None:
    assert format_duration_ns(850) == "850 ns"
    assert format_duration_ns(12_300) == "12.3 µs"
    assert format_duration_ns(4_560_000) == "4.56 ms"
    assert format_duration_ns(1_234_000_000) == "1.23 s"


@requires_shared
def test_memcpy_tooltip_has_bytes_stream_and_launch_call(load_report) -> None:
    report = load_report(CONCURRENT)
    start, end, size, stream, corr = _row(
        "SELECT start, end, bytes, streamId, correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY "
        "ORDER BY bytes DESC, start LIMIT 1"
    )
    # Spelled as cuda_api_sum prints it: the _vNNNN suffix dropped (spec §3.3).
    (api_name,) = _row(
        "SELECT CASE substr(s.value, -6, 2) WHEN '_v' THEN substr(s.value, 1, length(s.value)"
        " - 6) ELSE s.value END FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
        f"ON s.id = r.nameId WHERE correlationId = {corr}"
    )
    track = next(
        t
        for t in ReportSet([report]).tracks()
        if t.kind == "gpu_stream" and t.label == f"Stream {stream}"
    )
    event = pick_event(build_slice_tables(report), track, (start + end) // 2, 0)
    assert event is not None
    assert event.source == "memcpy"
    assert (event.start_ns, event.end_ns) == (start, end)
    lines = dict(describe_event(report, event, track.path))
    assert lines["Bytes"] == f"{size:,}"
    assert lines["Stream"].startswith(f"{stream} ")
    assert lines["Launched by"].split(" at ")[0] == api_name
    assert lines["Duration"] == format_duration_ns(end - start)


@requires_shared
def test_kernel_grid_block_and_partner(load_report) -> None:
    report = load_report(CONCURRENT)
    start, gx, gy, gz, bx, by, bz, stream, corr = _row(
        "SELECT start, gridX, gridY, gridZ, blockX, blockY, blockZ, streamId, correlationId "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 1"
    )
    tables = build_slice_tables(report)
    track = next(
        t
        for t in ReportSet([report]).tracks()
        if t.kind == "gpu_stream" and t.label == f"Stream {stream}"
    )
    event = pick_event(tables, track, start, 0)
    lines = dict(describe_event(report, event, track.path))
    assert lines["Grid"] == f"{gx}×{gy}×{gz}"
    assert lines["Block"] == f"{bx}×{by}×{bz}"
    partner = find_partner(report, tables, event)
    (api_start,) = _row(
        f"SELECT start FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = {corr}"
    )
    assert partner.start_ns == api_start
    back = find_partner(report, tables, partner)
    assert (back.source, back.start_ns) == ("kernels", start)


def test_the_events_filter_box_shows_its_placeholder_beside_a_long_hint(qtbot) -> None:
    from strata.viewer.events_view import EventsView

    view = EventsView()
    qtbot.addWidget(view)
    view.count_label.setText(
        "Shift-drag on the timeline to list a time range (Ctrl+Shift-drag: rows × time)"
    )
    view.resize(600, 200)
    view.show()
    qtbot.waitExposed(view)
    field = view.filter_field
    needed = field.fontMetrics().horizontalAdvance(field.placeholderText())
    assert field.width() > needed
