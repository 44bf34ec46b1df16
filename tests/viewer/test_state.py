"""The timeline state without Qt: pins, hidden rows, groups, view range, selection, highlight."""

from __future__ import annotations

from strata.analysis.tracks import Track
from strata.viewer.state import (
    MIN_SPAN_NS,
    NameHighlight,
    Scope,
    TimelineSelection,
    TimelineState,
    scope_window,
)

HEIGHTS = (26, 22, 20)


def _track(report: str, group: str, label: str) -> Track:
    return Track(
        key=f"{report}/{group}/{label}",
        report_index=0,
        kind="cpu",
        label=label,
        group=(report, group),
        parts=(("cpu", 0),),
    )


TRACKS = [_track("a.sqlite", "CPU", f"Core {i}") for i in range(3)] + [
    _track("a.sqlite", "CUDA HW", f"Stream {i}") for i in (7, 70)
]


class Recorder:
    """Every notification of a state, as (notifier name, args)."""

    def __init__(self, state: TimelineState) -> None:
        self.calls: list[tuple[str, tuple]] = []
        for name in ("rows_changed", "pins_changed", "view_range_changed", "selection_changed",
                     "highlight_changed"):  # fmt: skip
            getattr(state, name).connect(lambda *args, n=name: self.calls.append((n, args)))

    def names(self) -> list[str]:
        return [n for n, _ in self.calls]


def _state() -> tuple[TimelineState, Recorder]:
    state = TimelineState()
    state.reset_tracks(TRACKS)
    return state, Recorder(state)


def _track_keys(layout) -> list[str]:
    return [r.track.key for r in layout.rows if r.track is not None]


def test_pin_moves_a_row_to_the_pinned_area_and_unpin_puts_it_back() -> None:
    state, seen = _state()
    key = TRACKS[3].key
    state.pin(key)
    pinned, rows = state.layout(HEIGHTS)
    assert _track_keys(pinned) == [key]
    assert key not in _track_keys(rows)
    assert seen.calls == [("rows_changed", ()), ("pins_changed", ([key],))]
    state.pin(key)  # already pinned: nothing to tell
    assert len(seen.calls) == 2
    state.unpin(key)
    assert state.pinned_keys() == []
    assert key in _track_keys(state.layout(HEIGHTS)[1])
    assert seen.names()[-1] == "pins_changed"


def test_pin_matching_takes_whole_labels_first() -> None:
    state, _seen = _state()
    assert state.pin_matching("Stream 7") == 1
    assert state.pinned_keys() == [TRACKS[3].key]
    assert state.pin_matching("Core") == 3
    assert state.pin_matching("Core") == 0


def test_new_tracks_drop_pins_of_rows_that_are_gone_without_telling() -> None:
    state, seen = _state()
    state.set_pinned_keys([TRACKS[0].key, "b.sqlite/CPU/Core 0"])
    state.set_tracks(TRACKS)  # same reports, later rows: unknown pins are kept
    assert state.pinned_keys() == [TRACKS[0].key, "b.sqlite/CPU/Core 0"]
    seen.calls.clear()
    state.reset_tracks(TRACKS)
    assert state.pinned_keys() == [TRACKS[0].key]
    assert seen.names() == ["rows_changed"]


def test_hidden_rows_are_left_out_everywhere() -> None:
    state, seen = _state()
    state.pin(TRACKS[1].key)
    state.hide(TRACKS[1].key)
    state.hide(TRACKS[2].key)
    pinned, rows = state.layout(HEIGHTS)
    assert _track_keys(pinned) == []
    assert TRACKS[2].key not in _track_keys(rows)
    assert state.hidden_keys() == sorted([TRACKS[1].key, TRACKS[2].key])
    seen.calls.clear()
    state.set_hidden_keys(reversed(state.hidden_keys()))  # the same set: no news
    assert seen.calls == []
    state.set_hidden_keys([])
    assert seen.names() == ["rows_changed"]


def test_collapsed_group_shows_its_header_only() -> None:
    state, seen = _state()
    state.set_collapsed(("a.sqlite", "CPU"), True)
    rows = state.layout(HEIGHTS)[1].rows
    cpu = next(r for r in rows if r.path == ("a.sqlite", "CPU") and r.kind == "group")
    assert cpu.is_collapsed
    assert not any(r.track is not None and r.track.group[1] == "CPU" for r in rows)
    state.set_collapsed(["a.sqlite", "CPU"], True)  # a list path is the same group
    assert state.collapsed_groups() == [("a.sqlite", "CPU")]
    assert seen.names() == ["rows_changed"]
    state.set_collapsed_groups([("a.sqlite",), ("a.sqlite", "CUDA HW")])
    assert state.collapsed_groups() == [("a.sqlite",), ("a.sqlite", "CUDA HW")]
    assert seen.names() == ["rows_changed", "rows_changed"]


def test_view_range_is_ordered_and_never_narrower_than_the_minimum() -> None:
    state, seen = _state()
    state.set_view_range(2_000, 1_000)
    assert state.view_range() == (1_000, 2_000)
    state.set_view_range(500, 510)
    t0, t1 = state.view_range()
    assert t1 - t0 == MIN_SPAN_NS
    assert t0 <= 505 <= t1
    state.set_view_range(500, 510)  # the same clamped range: told once
    assert seen.names() == ["view_range_changed", "view_range_changed"]


def test_zoom_keeps_the_anchor_and_stops_at_the_minimum_span() -> None:
    state, _seen = _state()
    state.set_view_range(0, 1_000_000)
    state.zoom(4, fraction=0.25)
    assert state.view_range() == (187_500, 437_500)  # 250,000 stays a quarter in
    for _ in range(40):
        state.zoom(10)
    t0, t1 = state.view_range()
    assert t1 - t0 == MIN_SPAN_NS
    state.zoom(2, fraction=7.0)  # an anchor off the view counts as its edge
    assert state.view_range() == (t0, t1)
    state.pan(-1.0)
    assert state.view_range() == (t0 - MIN_SPAN_NS, t0)


def test_fit_shows_the_full_range_with_a_margin() -> None:
    state, _seen = _state()
    state.set_full_range(1_000, 101_000)
    state.fit()
    assert state.view_range() == (-1_000, 103_000)
    state.set_full_range(5, 5)  # empty: a microsecond
    assert state.full_range() == (5, 1_005)


def test_selection_changes_notify_listeners_once() -> None:
    state, seen = _state()
    state.select(300, 100)
    assert state.selection() == TimelineSelection(100, 300)
    assert state.time_selection() == (100, 300)
    state.select(100, 300)
    state.select(300, 100)
    assert seen.calls == [("selection_changed", (TimelineSelection(100, 300),))]
    state.select(100, 300, rows=[TRACKS[0].key])
    assert state.selection().rows == (TRACKS[0].key,)
    state.select(None)
    state.select(None)
    assert seen.names() == ["selection_changed"] * 3
    assert seen.calls[-1] == ("selection_changed", (None,))


def test_highlighted_name_notifies_on_change_only() -> None:
    state, seen = _state()
    sgemm = NameHighlight("sgemm", "kernels")
    state.set_highlight(sgemm)
    state.set_highlight(NameHighlight("sgemm", "kernels", (None, None)))
    state.set_highlight(None)
    assert seen.calls == [("highlight_changed", (sgemm,)), ("highlight_changed", (None,))]


def test_a_listener_can_disconnect_itself() -> None:
    state = TimelineState()
    calls = []

    def once(*args) -> None:
        calls.append(args)
        state.view_range_changed.disconnect(once)

    state.view_range_changed.connect(once)
    state.set_view_range(0, 1_000)
    state.set_view_range(0, 2_000)
    assert calls == [(0, 1_000)]


def test_scope_window_reads_the_state() -> None:
    state, _seen = _state()
    state.set_view_range(0, 1_000)
    assert scope_window(Scope(), state) == (None, None)
    assert scope_window(Scope("visible"), state) == (0, 1_000)
    assert scope_window(Scope("selection"), state) is None
    state.select(10, 20)
    assert scope_window(Scope("selection", report_index=1), state) == (10, 20)


def test_search_state_counts_steps_and_wraps() -> None:
    from strata.viewer.state import SearchState

    state = TimelineState()
    seen: list[SearchState] = []
    state.search_changed.connect(seen.append)
    assert state.step_search(1) == -1  # nothing searched: no step
    state.set_search("gemm")
    assert state.search() == SearchState("gemm", False, None, -1, "")
    state.set_search("gemm")  # unchanged: no notification
    state.set_search_result(3)
    assert [state.step_search(1) for _ in range(4)] == [0, 1, 2, 0]
    assert state.step_search(-1) == 2
    assert state.search().current == 2
    assert len(seen) == 7
    state.set_search("gemm(", is_regex=True)
    state.set_search_result(0, "invalid regular expression: missing )")
    assert state.step_search(1) == -1
    assert state.search().error
    state.set_search("")
    assert not state.search().is_active
    assert state.search().count == 0


def test_diff_state_keeps_a_report_on_one_side_and_colours_only_a_full_diff() -> None:
    from strata.viewer.state import DiffState

    state = TimelineState()
    seen: list[DiffState] = []
    state.diff_changed.connect(seen.append)
    state.set_diff_colored(True)  # nothing to compare: nothing to colour
    assert state.diff() == DiffState()
    assert seen == []
    state.set_baseline(["a", "b"])
    state.compare_with_baseline(["b", "c"])  # b moves to the after side
    assert (state.diff().before, state.diff().after) == (("a",), ("b", "c"))
    state.set_diff_colored(True)
    assert state.diff().is_colored
    state.set_baseline(["c"])  # c moves back: the after side keeps b
    assert (state.diff().before, state.diff().after) == (("c",), ("b",))
    assert state.diff().is_colored
    state.set_diff(state.diff().without(["b"]))  # a closed report empties a side
    assert state.diff() == DiffState(("c",), (), False)
    state.compare_with_baseline(["d"])
    assert not state.diff().is_colored  # the colours stay off until asked again
    state.clear_diff()
    assert state.diff() == DiffState()
    assert len(seen) == 7


def test_pin_matching_reads_the_label_as_shown_case_insensitively() -> None:
    thread = ("a.sqlite", "Processes", "app [1]", "vectorAdd_streams [2]")
    tracks = [
        *TRACKS,
        _track("a.sqlite", "CUDA HW", "All streams"),
        Track(
            key="a.sqlite/t2/api",
            report_index=0,
            kind="cuda_api",
            label="CUDA API",
            group=thread,
            parts=(("cuda_api", 0),),
        ),  # fmt: skip
    ]
    state = TimelineState()
    state.reset_tracks(tracks)
    # The thread's name holds "streams"; its rows' labels do not, so they are not named.
    assert state.pin_matching("stream") == 3
    assert state.pinned_keys() == [tracks[3].key, tracks[4].key, tracks[5].key]
    assert state.pin_matching("STREAM 70") == 0  # already pinned, whatever the case
    assert state.pin_matching("vectoradd_streams .*/ CUDA API") == 1  # a '/': the full path


def test_zooming_out_stops_at_the_data_with_a_margin() -> None:
    state, _seen = _state()
    state.set_full_range(1_000_000, 46_000_000)
    state.set_view_range(40_000_000, 41_000_000)  # near the end: zooming out meets the edge
    lo, hi = state.zoom_out_limit()
    assert lo < 1_000_000
    assert hi > 46_000_000
    assert hi - lo < 46_000_000 * 1.1  # a small margin, not a multiple of the trace
    for _ in range(60):
        state.zoom(1 / 1.25, fraction=0.9)
        t0, t1 = state.view_range()
        assert lo <= t0 < t1 <= hi
    assert state.view_range() == (lo, hi)
    state.zoom(2)  # zooming in from there is free again
    t0, t1 = state.view_range()
    assert t1 - t0 < hi - lo
