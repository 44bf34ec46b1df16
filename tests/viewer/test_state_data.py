"""The reports shown, their offsets, the picked event and the emphasis: the timeline's state
without Qt (no QApplication in this module), and a widget that only follows it."""

from __future__ import annotations

import numpy as np
import pytest

from strata.analysis.reportset import ReportSet
from strata.viewer.events import EventRef
from strata.viewer.state import EventTints, TimelineState
from tests.conftest import REAL_DIR, requires_shared

CONCURRENT = REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite"
SAXPY = REAL_DIR / "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite"

#: What app/ once asked the widget and now asks the state (the widget kept ~20 forwarding
#: methods for it): none of them may come back on the widget.
MOVED_TO_STATE = (
    "tracks", "set_data", "replace_reports", "set_tracks", "set_offsets", "offsets",
    "full_range", "view_range", "set_view_range", "fit", "toggle_fit", "pan",
    "select_time_range", "time_selection", "selected_event", "partner_event", "select_event",
    "pinned_keys", "set_pinned_keys", "pin", "unpin", "pin_matching", "hidden_keys",
    "set_hidden_keys", "collapsed_groups", "set_collapsed", "set_highlights", "tints", "marks",
)  # fmt: skip


class Seen:
    """The notifications of a state's data, picked event and emphasis, in order."""

    NAMES = ("data_changed", "offsets_changed", "event_selected", "emphasis_changed")

    def __init__(self, state: TimelineState) -> None:
        self.calls: list[tuple[str, tuple]] = []
        for name in self.NAMES:
            getattr(state, name).connect(lambda *args, n=name: self.calls.append((n, args)))

    def names(self) -> list[str]:
        return [n for n, _ in self.calls]


@pytest.fixture
def shown(load_report) -> tuple[TimelineState, Seen, ReportSet]:
    reports = ReportSet([load_report(CONCURRENT)])
    state = TimelineState()
    seen = Seen(state)
    state.set_data(reports, reports.tracks(), [0])
    return state, seen, reports


@requires_shared
def test_the_state_shows_a_report_set_and_fits_its_activity(shown) -> None:
    state, seen, reports = shown
    assert seen.names() == ["data_changed"]
    assert state.report_set() is reports
    assert [set(t) for t in state.tables()] == [set(reports.slice_tables(0))]
    assert state.offsets_ns() == [0]
    kernels = reports[0].tables["kernels"]
    lo, hi = state.full_range()
    assert lo <= int(kernels.start_ns.min())
    assert hi >= int(kernels.end_ns.max())
    t0, t1 = state.view_range()
    assert t0 < t1
    assert t1 - t0 <= (hi - lo) * 1.05  # the activity, with a small margin


@requires_shared
def test_offsets_shift_the_full_range_and_notify_once_per_change(shown) -> None:
    state, seen, _reports = shown
    lo, hi = state.full_range()
    view = state.view_range()
    state.set_offsets([5_000])
    state.set_offsets([5_000])
    assert seen.names() == ["data_changed", "offsets_changed"]
    assert seen.calls[-1] == ("offsets_changed", ([5_000],))
    assert state.full_range() == (lo + 5_000, hi + 5_000)
    assert state.view_range() == view  # the view stays where it was


@requires_shared
def test_picking_a_cuda_call_finds_the_kernel_it_launched(shown) -> None:
    state, seen, reports = shown
    report = reports[0]
    api = report.tables["cuda_api"]
    launches = np.flatnonzero(api["correlation_id"] >= 0) if "correlation_id" in api else []
    kernels = report.tables["kernels"]
    launched = set(kernels["correlation_id"].tolist())
    row = next(int(r) for r in launches if int(api["correlation_id"][r]) in launched)
    ref = _ref(state, "cuda_api", row)
    state.select_event(ref)
    state.select_event(ref)  # a second pick shows it again
    assert seen.names()[-2:] == ["event_selected", "event_selected"]
    assert state.selected_event() == ref
    partner = state.partner_event()
    assert partner is not None
    assert partner.table == "kernels"
    assert int(kernels["correlation_id"][partner.index]) == int(api["correlation_id"][row])
    state.select_event(None)
    assert (state.selected_event(), state.partner_event()) == (None, None)


@requires_shared
def test_emphasis_marks_and_tints_resolve_against_the_tables_shown(shown) -> None:
    state, seen, reports = shown
    kernels = reports.slice_tables(0)["kernels"]
    version = state.emphasis_version
    codes = np.ones(len(kernels), np.uint8)
    tints = EventTints({(0, "kernels"): codes, (0, "memcpy"): np.ones(3, np.uint8)}, (0xFF00FF00,))
    state.set_highlights({(0, "kernels"): [0, 2]}, marks=[(0, "kernels", 1)], tints=tints)
    assert seen.names()[-1] == "emphasis_changed"
    assert state.emphasis_version == version + 1
    (mask,) = state.highlights().values()
    assert mask.dtype == bool
    assert len(mask) == len(kernels)
    assert np.flatnonzero(mask).tolist() == [0, 2]
    (mark,) = state.marks()
    assert (mark.table, mark.index) == ("kernels", 1)
    # The memcpy codes are not one per memcpy shown: left out.
    assert list(state.tints().codes) == [(0, "kernels")]
    state.set_highlights()
    assert (state.highlights(), state.marks(), bool(state.tints())) == ({}, [], False)


@requires_shared
def test_newer_versions_of_the_reports_drop_the_pick_and_emphasis_but_keep_the_view(
    shown, load_report
) -> None:
    state, seen, reports = shown
    state.set_view_range(*(v + 1_000 for v in state.view_range()))
    view, version = state.view_range(), state.data_version
    state.select_event(_ref(state, "kernels", 0))
    state.set_highlights({(0, "kernels"): [0]})
    again = ReportSet([load_report(CONCURRENT, use_cache=True)])
    state.replace_reports(again, again.tracks(), [0])
    assert state.report_set() is again
    assert state.data_version > version
    assert (state.selected_event(), state.highlights()) == (None, {})
    assert state.view_range() == view


@requires_shared
def test_rows_computed_later_draw_the_tables_derived_meanwhile(load_report) -> None:
    reports = ReportSet([load_report(SAXPY)])
    state = TimelineState()
    state.set_data(reports, reports.tracks(include_projection=False), [0])
    assert "nvtx_gpu" not in state.tables()[0]
    version = state.data_version
    state.set_tracks(reports.tracks())  # with the projected NVTX rows
    assert "nvtx_gpu" in state.tables()[0]
    assert state.data_version == version + 1


def test_the_widget_keeps_no_forwarding_methods() -> None:
    from strata.viewer.timeline import TimelineWidget

    assert [name for name in MOVED_TO_STATE if hasattr(TimelineWidget, name)] == []


def _ref(state: TimelineState, table: str, row: int) -> EventRef:
    from strata.viewer.events import event_ref

    return event_ref(state.tables()[0], 0, table, row)
