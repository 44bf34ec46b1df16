"""The stats panel in the main window: numbers, scopes, links to the timeline, outliers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from strata.resources.demo import SLOW_KERNEL_NAME, STRAGGLER_RANK, build_demo_reports, demo_truth
from tests.app.conftest import LOAD_TIMEOUT_MS, small_real, wait_idle
from tests.conftest import REAL_DIR, requires_shared

JOB_TIMEOUT_MS = 60_000


@pytest.fixture(scope="module")
def demo_paths(tmp_path_factory):
    return build_demo_reports(tmp_path_factory.mktemp("demo"))


def _open(qtbot, make_window, paths):
    from strata.app.stats_controller import install_stats_panel

    window = make_window()
    controller = install_stats_panel(window.context)
    with qtbot.waitSignal(controller.outliers_ready, timeout=LOAD_TIMEOUT_MS):
        window.open_paths(paths)
    wait_idle(qtbot, window)
    if controller.panel.current_frame().empty:
        with qtbot.waitSignal(controller.table_ready, timeout=JOB_TIMEOUT_MS):
            controller.request_stats()
    return window, controller


@pytest.fixture
def demo(qtbot, make_window, demo_paths):
    return _open(qtbot, make_window, demo_paths)


def _kernel_frame(window) -> pd.DataFrame:
    """Every kernel of every shown report on the shared axis, with its name (pandas)."""
    parts = []
    offsets = window.binding.offsets_ns()
    for i, report in enumerate(window.binding.shown_reports()):
        k = report.kernels
        parts.append(pd.DataFrame({
            "report_index": i, "row": np.arange(len(k)),
            "name": report.strings.lookup(k["name_id"]),
            "start_ns": k.start_ns + offsets[i], "end_ns": k.end_ns + offsets[i],
        }))  # fmt: skip
    frame = pd.concat(parts, ignore_index=True)
    frame["duration_ns"] = frame["end_ns"] - frame["start_ns"]
    return frame


@requires_shared
@pytest.mark.parametrize(
    ("kind", "spec", "count_column"),
    [("kernels", "cuda_gpu_kern_sum", "Instances"), ("cuda_api", "cuda_api_sum", "Num Calls")],
)
def test_whole_run_table_equals_nsys_summary(qtbot, make_window, kind, spec, count_column):
    from strata.analysis.stats import run_report

    path = REAL_DIR / "MohanadOdema__DLProf__nsys_profile.sqlite"
    if not path.exists():
        path = small_real(0)
    window, controller = _open(qtbot, make_window, [path])
    if kind != "kernels":
        with qtbot.waitSignal(controller.table_ready, timeout=JOB_TIMEOUT_MS):
            controller.panel.set_kind(kind)
    ours = controller.panel.current_frame().set_index("name").sort_index()
    report = window.binding.shown_reports()[0]
    nsys = run_report(report, spec).frame.set_index("Name").sort_index()
    assert list(ours.index) == list(nsys.index)
    pairs = {"total_ns": "Total Time", "count": count_column, "mean_ns": "Avg",
             "median_ns": "Med", "min_ns": "Min", "max_ns": "Max", "time_pct": "Time"}  # fmt: skip
    for ours_col, nsys_col in pairs.items():
        np.testing.assert_array_equal(
            ours[ours_col].to_numpy(float), nsys[nsys_col].to_numpy(float)
        )
    np.testing.assert_allclose(ours["std_ns"], nsys["StdDev"].to_numpy(float), atol=0.1)


def test_selection_table_equals_numpy_groupby(qtbot, demo):
    window, controller = demo
    lo, hi = window.timeline.state.full_range()
    t0, t1 = lo + (hi - lo) // 3, lo + (hi - lo) // 2
    with qtbot.waitSignal(controller.table_ready, timeout=JOB_TIMEOUT_MS):
        window.timeline.state.select(t0, t1)
    assert controller.panel.scope().range_mode == "selection"
    kernels = _kernel_frame(window)
    inside = kernels[(kernels["start_ns"] < t1) & (kernels["end_ns"] > t0)]
    expected = inside.groupby("name")["duration_ns"].agg(["count", "sum", "min", "max", "median"])
    ours = controller.panel.current_frame().set_index("name").sort_index()
    assert list(ours.index) == list(expected.index)
    np.testing.assert_array_equal(ours["count"], expected["count"])
    np.testing.assert_array_equal(ours["total_ns"], expected["sum"])
    np.testing.assert_array_equal(ours["min_ns"], expected["min"])
    np.testing.assert_array_equal(ours["max_ns"], expected["max"])
    np.testing.assert_allclose(ours["median_ns"], expected["median"], atol=0.05)


def test_click_highlights_exactly_that_names_instances(qtbot, demo, monkeypatch):
    window, controller = demo
    calls = []
    original = window.timeline.state.set_highlights

    def spy(rows=None, marks=(), tints=None):
        calls.append(rows)
        original(rows, marks, tints)

    monkeypatch.setattr(window.timeline.state, "set_highlights", spy)
    name = controller.panel.current_frame()["name"].iloc[3]
    with qtbot.waitSignal(controller.instances_changed, timeout=JOB_TIMEOUT_MS):
        assert controller.panel.select_name(name)
    rows = calls[-1]
    kernels = _kernel_frame(window)
    for i in range(len(window.binding.shown_reports())):
        mine = kernels[(kernels["report_index"] == i) & (kernels["name"] == name)]
        np.testing.assert_array_equal(np.sort(rows[(i, "kernels")]), mine["row"].to_numpy())


def test_next_previous_step_through_instances_in_time_order(qtbot, demo):
    window, controller = demo
    name = controller.panel.current_frame()["name"].iloc[0]
    with qtbot.waitSignal(controller.instances_changed, timeout=JOB_TIMEOUT_MS):
        controller.panel.select_name(name)
    kernels = _kernel_frame(window)
    expected = kernels[kernels["name"] == name].sort_values("start_ns", kind="stable")
    starts = []
    for _ in range(3):
        controller.panel.next_button.click()
        t0, t1 = window.timeline.state.view_range()
        selected = window.timeline.state.selected_event()
        start = selected.start_ns + window.binding.offsets_ns()[selected.report_index]
        assert t0 <= start < t1
        starts.append(start)
    assert starts == expected["start_ns"].iloc[:3].tolist()
    controller.panel.prev_button.click()
    assert controller.highlighter.position() == 1


def test_other_reports_drop_the_instance_count_of_the_last_ones(qtbot, demo, demo_paths):
    # The kernels tab of a newly opened report read '35 / 40': an op of the reports closed.
    window, controller = demo
    name = controller.panel.current_frame()["name"].iloc[0]
    with qtbot.waitSignal(controller.instances_changed, timeout=JOB_TIMEOUT_MS):
        controller.panel.select_name(name)
    controller.panel.next_button.click()
    assert controller.panel.instance_label.text().startswith("1 / ")
    window.close_all_reports()
    wait_idle(qtbot, window)
    window.open_paths(demo_paths[:1])
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: bool(window.binding.tracks()), timeout=LOAD_TIMEOUT_MS)
    assert controller.panel.instance_label.text() == ""
    assert controller.highlighter.position() == -1
    assert controller.highlighter.instances().empty


def test_double_click_zooms_to_the_longest_instance(qtbot, demo):
    window, controller = demo
    with qtbot.waitSignal(controller.instances_changed, timeout=JOB_TIMEOUT_MS):
        controller.highlighter.zoom_to_longest(SLOW_KERNEL_NAME, "kernels")
    kernels = _kernel_frame(window)
    longest = kernels[kernels["name"] == SLOW_KERNEL_NAME]["duration_ns"].max()
    assert window.timeline.state.selected_event().duration_ns == longest
    t0, t1 = window.timeline.state.view_range()
    assert t1 - t0 < 5 * longest


def test_outliers_tab_starts_with_the_planted_kernels_then_the_straggler(qtbot, demo):
    window, controller = demo
    controller.panel.set_kind("outliers")
    frame = controller.panel.current_frame()
    truth = demo_truth()
    planted = {(f"rank{p.rank}.sqlite", p.start_ns) for p in truth.slow_instances}
    top = frame.head(len(planted))
    assert set(top["name"]) == {SLOW_KERNEL_NAME}
    assert set(zip(top["report"], top["start_ns"], strict=True)) == planted
    after = frame.iloc[len(planted) : len(planted) + 20]
    assert set(after["report"]) == {f"rank{STRAGGLER_RANK}.sqlite"}
    # Marks are on the timeline for the worst instances.
    marked = {(m.report_index, m.start_ns) for m in window.timeline.state.marks()}
    assert {(int(r[4]), s) for r, s in planted} <= marked


def test_selecting_an_outlier_shows_it_with_its_row(qtbot, demo):
    window, controller = demo
    controller.panel.set_kind("outliers")
    frame = controller.panel.current_frame()
    assert f"rank{STRAGGLER_RANK}.sqlite" in controller.panel.status_label.text()
    last_report = frame[frame["report"] == "rank3.sqlite"].iloc[0].to_dict()  # rows far down
    for record in (frame.iloc[0].to_dict(), last_report):
        controller.focus_outlier(record)
        offset = window.binding.offsets_ns()[int(record["report_index"])]
        start = int(record["start_ns"]) + offset
        t0, t1 = window.timeline.state.view_range()
        assert t0 <= start
        assert start + int(record["duration_ns"]) <= t1
        assert t1 - t0 < 10 * int(record["duration_ns"])
        visible = window.timeline.visible_track_keys()
        prefix = f"{record['report']}/gpu" if record["kind"] == "kernels" else record["report"]
        assert any(key.startswith(prefix) for key in visible)


def test_histogram_tail_selects_the_slow_instances(qtbot, demo):
    window, controller = demo
    with qtbot.waitSignal(controller.instances_changed, timeout=JOB_TIMEOUT_MS):
        controller.highlighter.activate_name(SLOW_KERNEL_NAME, "kernels")
    kernels = _kernel_frame(window)
    slow = kernels[kernels["name"] == SLOW_KERNEL_NAME]
    cut = slow["duration_ns"].median() * 3
    with qtbot.waitSignal(controller.instances_changed) as blocker:
        controller.panel.histogram.select_range(cut, slow["duration_ns"].max())
    chosen = blocker.args[0]
    expected = slow[slow["duration_ns"] >= cut].sort_values("start_ns")
    assert chosen["shared_start_ns"].tolist() == expected["start_ns"].tolist()
    assert len(chosen) == len(demo_truth().slow_instances)


def test_by_report_view_finds_the_straggler(qtbot, demo):
    window, controller = demo
    with qtbot.waitSignal(controller.table_ready, timeout=JOB_TIMEOUT_MS):
        controller.panel.by_report.setChecked(True)
    frame = controller.panel.current_frame().set_index("name")
    kernels = _kernel_frame(window)
    sgemm = "ampere_sgemm_128x64_nt"
    for i, label in enumerate(controller.panel.report_labels()):
        mine = kernels[(kernels["report_index"] == i) & (kernels["name"] == sgemm)]
        assert frame.loc[sgemm, f"{label}|count"] == len(mine)
        assert frame.loc[sgemm, f"{label}|median_ns"] == mine["duration_ns"].median()
    assert frame.loc[sgemm, "slowest"] == f"rank{STRAGGLER_RANK}.sqlite"


def test_export_writes_the_rows_shown(qtbot, demo, tmp_path):
    _window, controller = demo
    controller.panel.filter_edit.setText("sgemm")
    path = controller.export_csv(tmp_path / "kernels.csv")
    written = pd.read_csv(path)
    shown = controller.panel.current_frame()
    assert sorted(written["Name"]) == sorted(n for n in shown["name"] if "sgemm" in n)


@requires_shared
def test_kernel_tab_equals_main_py_stats_csv(qtbot, make_window, tmp_path):
    from strata.app.cli import main as cli_main

    path = REAL_DIR / "MohanadOdema__DLProf__nsys_profile.sqlite"
    if not path.exists():
        pytest.skip(f"needs {path.name}")
    out = tmp_path / "kern.csv"
    assert (
        cli_main(["stats", str(path), "-r", "cuda_gpu_kern_sum", "-f", "csv", "-o", str(out)]) == 0
    )
    lines = [ln for ln in out.read_text().splitlines() if not ln.startswith("Processing")]
    printed = pd.read_csv(pd.io.common.StringIO("\n".join(lines))).set_index("Name").sort_index()
    _window, controller = _open(qtbot, make_window, [path])
    ours = controller.panel.current_frame().set_index("name").sort_index()
    assert list(ours.index) == list(printed.index)
    pairs = {"time_pct": "Time (%)", "total_ns": "Total Time (ns)", "count": "Instances",
             "mean_ns": "Avg (ns)", "median_ns": "Med (ns)", "min_ns": "Min (ns)",
             "max_ns": "Max (ns)", "std_ns": "StdDev (ns)"}  # fmt: skip
    for ours_col, printed_col in pairs.items():
        np.testing.assert_allclose(ours[ours_col], printed[printed_col], atol=0.051)


def test_a_burst_of_selections_ends_on_the_last_one(qtbot, demo, monkeypatch):
    window, controller = demo
    channels = []
    submit = window.runner.submit

    def counting_submit(func, channel=None):
        channels.append(channel)
        return submit(func, channel)

    monkeypatch.setattr(window.runner, "submit", counting_submit)
    lo, hi = window.timeline.state.full_range()
    step = (hi - lo) // 40
    for i in range(12):  # as a drag: each move supersedes the previous request
        window.timeline.state.select(lo + i * step, lo + (i + 10) * step)
    t0, t1 = lo + 11 * step, lo + 21 * step
    qtbot.waitUntil(
        lambda: (
            not controller.table.is_running()
            and controller.panel.current_frame()["count"].sum() == _kernel_count(window, t0, t1)
        ),
        timeout=JOB_TIMEOUT_MS,
    )
    # Requests made while a job ran were coalesced: far fewer jobs than moves.
    assert 1 <= channels.count("stats") <= 4


def _kernel_count(window, t0: int, t1: int) -> int:
    kernels = _kernel_frame(window)
    return int(((kernels["start_ns"] < t1) & (kernels["end_ns"] > t0)).sum())


def _histogram_count(controller) -> int:
    return len(controller.highlighter.histogram_instances())


def test_histogram_follows_the_table_as_the_selection_moves(qtbot, demo):
    """The histogram counted the window of the click while the table followed the drag
    (5,760 whole-run instances of an sgemm against 2,261 in the table's selection)."""
    window, controller = demo
    name = "ampere_sgemm_128x64_nt"
    with qtbot.waitSignal(controller.instances_changed, timeout=JOB_TIMEOUT_MS):
        controller.highlighter.activate_name(name, "kernels")
    lo, hi = window.timeline.state.full_range()
    for t0, t1 in [(lo + (hi - lo) // 3, lo + 3 * (hi - lo) // 4),
                   (lo + (hi - lo) // 3, lo + (hi - lo) // 2)]:  # fmt: skip
        with qtbot.waitSignal(controller.table_ready, timeout=JOB_TIMEOUT_MS):
            window.timeline.state.select(t0, t1)
        qtbot.waitUntil(lambda: not controller.table.is_running(), timeout=JOB_TIMEOUT_MS)
        row = controller.panel.current_frame().set_index("name").loc[name]
        kernels = _kernel_frame(window)
        inside = kernels[(kernels["name"] == name) & (kernels["start_ns"] < t1)
                         & (kernels["end_ns"] > t0)]  # fmt: skip
        assert row["count"] == len(inside)
        assert _histogram_count(controller) == len(inside)
        title = controller.panel.histogram._title.text()
        assert title.startswith(f"{len(inside):,} instances of ")


@requires_shared
def test_rows_that_show_one_name_keep_their_own_instances(qtbot, make_window):
    """cudaMalloc and cudaMalloc_v3020 are two rows named cudaMalloc (as in cuda_api_sum):
    each row's histogram and highlights are its own calls, not both rows' (15 vs 30)."""
    path = REAL_DIR / "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
    if not path.exists():
        pytest.skip(f"needs {path.name}")
    window, controller = _open(qtbot, make_window, [path])
    with qtbot.waitSignal(controller.table_ready, timeout=JOB_TIMEOUT_MS):
        controller.panel.set_kind("cuda_api")
    frame = controller.panel.current_frame()
    twins = frame[frame["name"] == "cudaMalloc"]
    assert len(twins) == 2
    seen = set()
    for row in twins.itertuples(index=False):
        with qtbot.waitSignal(controller.instances_changed, timeout=JOB_TIMEOUT_MS) as got:
            controller.panel.name_activated.emit(row.name, "cuda_api", (row.key, None))
        assert len(got.args[0]) == row.count == _histogram_count(controller)
        seen.add(tuple(sorted(got.args[0]["row"])))
    assert len(seen) == 2  # two different sets of calls


@requires_shared
def test_selecting_a_versioned_api_outlier_shows_its_own_calls(qtbot, make_window):
    """An outlier of cudaMemcpy_v3020 is listed as cudaMemcpy (cuda_api_sum's spelling);
    selecting it shows that group's 15 calls (by name it found none, or both groups' 30)."""
    path = REAL_DIR / "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
    if not path.exists():
        pytest.skip(f"needs {path.name}")
    window, controller = _open(qtbot, make_window, [path])
    found = controller.outliers().instances
    versioned = found[(found["kind"] == "cuda_api") & (found["key"] != found["name"])]
    record = versioned.iloc[0].to_dict()
    assert not record["name"].endswith("_v3020")
    api = window.binding.shown_reports()[0].cuda_api
    strings = window.binding.shown_reports()[0].strings
    expected = int((strings.lookup(api["name_id"]) == record["key"]).sum())
    with qtbot.waitSignal(controller.instances_changed, timeout=JOB_TIMEOUT_MS) as got:
        controller.focus_outlier(record)
    assert len(got.args[0]) == expected == _histogram_count(controller)
    assert len(got.args[0]) > 0


def test_the_count_beside_next_follows_a_selected_range_as_the_histogram_does(qtbot, demo):
    window, controller = demo
    highlighter = controller.highlighter
    with qtbot.waitSignal(controller.instances_changed, timeout=JOB_TIMEOUT_MS):
        highlighter.activate_name(SLOW_KERNEL_NAME, "kernels")
    every = len(highlighter.instances())
    lo, hi = window.timeline.state.full_range()
    with qtbot.waitSignal(controller.instances_changed, timeout=JOB_TIMEOUT_MS):
        window.timeline.state.select(lo, lo + (hi - lo) // 3)  # a shift-drag's range
    wait_idle(qtbot, window)
    shown = len(highlighter.histogram_instances())
    assert 0 < shown < every
    assert len(highlighter.instances()) == shown
    assert controller.panel.instance_label.text() == f"{shown:,} instances"


def test_the_histogram_and_its_count_leave_with_the_summaries(qtbot, demo):
    from strata.app.stats_tabs import COLLECTIVES_TAB, DIFF_TAB, EXPERT_TAB, OUTLIERS_TAB

    window, controller = demo
    panel = controller.panel
    with qtbot.waitSignal(controller.instances_changed, timeout=JOB_TIMEOUT_MS):
        controller.highlighter.activate_name(SLOW_KERNEL_NAME, "kernels")
    assert panel.histogram.isVisible()
    for kind in (OUTLIERS_TAB, EXPERT_TAB, DIFF_TAB, COLLECTIVES_TAB):
        panel.set_kind(kind)
        assert not panel.histogram.isVisible(), kind
        assert not panel.instance_label.isVisible(), kind
    panel.set_kind("kernels")
    assert panel.histogram.isVisible()
    assert panel.instance_label.isVisible()
