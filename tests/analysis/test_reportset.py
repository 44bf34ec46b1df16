"""ReportSet: one owner of everything derived from the loaded reports (issue #12)."""

from __future__ import annotations

import ast
import io
import os
import re
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from strata.analysis import ReportSet, open_reports
from strata.analysis import projection as projection_module
from strata.analysis.errors import AnalysisError
from tests.conftest import ROOT, requires_shared
from tests.helpers import run_cli

REAL = Path("/work/shared/reports/real")
DLPROF = REAL / "MohanadOdema__DLProf__nsys_profile.sqlite"
SWEEP = [REAL / f"extra-p__extrap__concurrent.s{n}__profile{n}.sqlite" for n in (1, 2)]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from strata.analysis import open_report
    from strata.resources.demo import build_demo_reports

    paths = build_demo_reports(tmp_path_factory.mktemp("demo"), ranks=2, steps=2)
    return [open_report(p, use_cache=False) for p in paths]


def _counting_projection(monkeypatch) -> list:
    """Make project_nvtx slow and count its calls (two threads must overlap in it)."""
    calls: list = []
    real = projection_module.project_nvtx

    def slow(report):
        calls.append(report)
        time.sleep(0.2)
        return real(report)

    monkeypatch.setattr(projection_module, "project_nvtx", slow)
    return calls


def test_two_threads_asking_for_the_projection_compute_it_once(demo, monkeypatch) -> None:
    calls = _counting_projection(monkeypatch)
    reports = ReportSet(demo)
    results: list = []
    threads = [
        threading.Thread(target=lambda: results.append(reports.projection(0))) for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(calls) == 1
    assert results[0] is results[1]


def test_every_view_shares_one_projection_per_report(demo, monkeypatch) -> None:
    """Rows, window stats and outliers of a load used to project three times each."""
    calls = _counting_projection(monkeypatch)
    reports = ReportSet(demo)
    reports.tracks()
    reports.window_index("nvtx_gpu")
    reports.outliers()
    reports.events("nvtx_gpu")
    assert len(calls) == len(demo)
    assert {id(r) for r in calls} == {id(r) for r in demo}


def test_adding_or_removing_a_report_invalidates_the_set_values(demo, monkeypatch) -> None:
    calls = _counting_projection(monkeypatch)
    reports = ReportSet(demo[:1])
    first_tracks = reports.tracks()
    index = reports.window_index("kernels")
    assert reports.window_index("kernels") is index
    reports.add(demo[1])
    assert len(reports) == 2
    assert reports.window_index("kernels") is not index
    assert {t.report_index for t in reports.tracks()} == {0, 1}
    assert reports.labels == [demo[0].name, demo[1].name]
    # The projection of the report that stayed is kept; the new one is projected once.
    assert len(calls) == 2
    reports.remove(demo[0])
    assert list(reports) == [demo[1]]
    assert {t.report_index for t in reports.tracks()} == {0}
    assert len(reports.tracks()) != len(first_tracks) or reports.labels == [demo[1].name]
    with pytest.raises(AnalysisError):
        reports.projection(demo[0])
    assert len(calls) == 2


def test_window_indexes_of_several_kinds_are_kept_for_one_alignment(demo) -> None:
    # The stats panel holds the highlighted kind's index while another tab's is built; an
    # index of one kind evicting the other's made the two rebuild each other for ever.
    reports = ReportSet(demo)
    kernels = reports.window_index("kernels")
    api = reports.window_index("cuda_api")
    assert reports.window_index("kernels", build=False) is kernels
    assert reports.window_index("cuda_api", build=False) is api
    # Another alignment: the indexes of the old offsets are dropped (memory, not speed).
    shifted = [o + 1_000 for o in reports.offsets_ns()]
    moved = reports.window_index("kernels", shifted)
    assert moved is not kernels
    assert reports.window_index("cuda_api", build=False) is None
    assert reports.window_index("kernels", shifted, build=False) is moved


def test_a_snapshot_keeps_its_membership_while_the_live_set_changes(demo) -> None:
    live = ReportSet(demo[:1])
    snap = live.snapshot()
    live.add(demo[1])
    assert snap.reports == (demo[0],)
    assert len(live) == 2
    assert {t.report_index for t in snap.tracks()} == {0}
    with pytest.raises(AnalysisError):
        snap.add(demo[1])
    # A value computed through a snapshot of the current membership serves the live set.
    now = live.snapshot()
    assert now.window_index("kernels") is live.window_index("kernels")


def test_a_removed_report_gets_no_values_back_from_a_late_worker(demo) -> None:
    live = ReportSet(demo)
    snap = live.snapshot()
    live.remove(1)
    late = snap.projection(1)  # a worker still busy with the old set
    live.add(demo[1])
    assert live.projection(demo[1]) is not late


def test_a_snapshot_keeps_its_values_of_a_report_that_left_the_live_set(demo) -> None:
    # A progressive open: the layout of an older partial report is shown after a newer one
    # replaced it in the live set; drawing it must not build its slice tables again.
    live = ReportSet(demo[:1])
    snap = live.snapshot()
    live.set_reports(demo[1:])
    tables = snap.slice_tables(0)
    again = snap.slice_tables(0)
    assert all(again[name] is table for name, table in tables.items())
    assert snap.projection(0) is snap.projection(0)
    # The live set keeps nothing of it: the report is back, its values are new.
    live.set_reports(demo[:1])
    assert live.slice_tables(0)["kernels"] is not tables["kernels"]


def test_a_membership_version_names_the_reports_not_their_ids(demo) -> None:
    """What a panel result is keyed by (app/stats_jobs.py): a new number whenever the
    reports change, the same one for a snapshot, none shared between two memberships."""
    first, second = demo
    live = ReportSet([first])
    assert ReportSet().version == 0
    before = live.version
    assert before > 0
    assert live.snapshot().version == before
    live.add(second)
    grown = live.version
    assert grown not in (0, before)
    live.remove(second)
    assert live.version not in (0, before, grown)  # the same reports again: a new membership
    assert ReportSet([first]).version != live.version
    assert live.subset([0]).version not in (0, live.version)
    live.set_reports([])
    assert live.version == 0


def test_no_module_keeps_derived_data_in_a_global() -> None:
    """Guard: no module-level dict/cache keyed by report identity is left in analysis/,
    viewer/ or app/ (ReportSet owns derived data), and no code writes into report.tables."""
    offenders = []
    for package in ("analysis", "viewer", "app"):
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text()
            if path.name != "reportset.py" and re.search(
                r"(\[|\.get\()id\((report|r|pool)\)", text
            ):
                offenders.append(f"{path.name}: keyed by id(report)")
            if re.search(r"\.tables\[[^]]+\]\s*=[^=]", text):
                offenders.append(f"{path.name}: writes into Report.tables")
            for node in ast.parse(text).body:
                targets = node.targets if isinstance(node, ast.Assign) else (
                    [node.target] if isinstance(node, ast.AnnAssign) else [])  # fmt: skip
                names = [t.id for t in targets if isinstance(t, ast.Name)]
                if any(re.fullmatch(r"_(CACHE|PROJECTIONS|POOL_CODES)\w*", n) for n in names):
                    offenders.append(f"{path.name}: module-level {names}")
    assert offenders == []


def test_reprs_are_one_short_line(demo) -> None:
    reports = ReportSet(demo)
    for text in (repr(reports), repr(reports.outliers()), repr(demo[0])):
        assert "\n" not in text, text
        assert len(text) < 200, text


def test_events_speak_names_with_a_report_column(demo) -> None:
    reports = ReportSet(demo)
    kernels = reports.events("kernel")
    assert list(kernels.columns[:7]) == ["report", "name", "start", "end", "duration",
                                         "device", "stream"]  # fmt: skip
    assert not [c for c in kernels.columns if c.endswith("_id") and c != "correlation_id"]
    assert set(kernels["report"]) == set(reports.labels)
    assert (kernels["duration"] == kernels["end"] - kernels["start"]).all()
    assert len(kernels) == sum(len(r.tables["kernels"]) for r in demo)
    # The names are the stats panel's names, with the same counts.
    window = reports.window(None, None, "kernels", by_report=False)
    assert kernels.groupby("name").size().sort_index().to_dict() == dict(
        zip(window["name"], window["count"], strict=True)
    )
    for kind in ("memcpy", "cuda_api", "nvtx", "nvtx_gpu", "osrt", "memset"):
        frame = reports.events(kind)
        assert {"report", "name", "start", "end", "duration"} <= set(frame.columns), kind
        assert frame["name"].map(lambda v: v is None or isinstance(v, str)).all(), kind
    with pytest.raises(AnalysisError):
        reports.events("frames")


def test_window_is_one_row_per_report_and_name_for_several_reports(demo) -> None:
    reports = ReportSet(demo)
    frame = reports.window(None, None)
    assert list(frame.columns[:2]) == ["report", "name"]
    single = ReportSet(demo[:1]).window(None, None)
    assert "report" not in single
    assert single["count"].sum() == len(demo[0].tables["kernels"])


@requires_shared
@pytest.mark.parametrize("spec", ["cuda_gpu_kern_sum", "cuda_api_sum", "nvtx_sum"])
def test_stats_equals_the_cli_csv(spec, tmp_path) -> None:
    expected = _cli_csv(spec, DLPROF, tmp_path)
    frame = open_reports(DLPROF, use_cache=False).stats(spec)
    pd.testing.assert_frame_equal(frame, expected, check_dtype=False)


@requires_shared
def test_stats_of_several_reports_stack_the_csv_sections(tmp_path) -> None:
    frame = open_reports(SWEEP, use_cache=False).stats("cuda_gpu_kern_sum")
    for label, path in zip(["concurrent.s1__profile1"], SWEEP, strict=False):
        mine = frame[frame["report"].str.contains(label)].drop(columns="report")
        expected = _cli_csv("cuda_gpu_kern_sum", path, tmp_path)
        pd.testing.assert_frame_equal(mine.reset_index(drop=True), expected, check_dtype=False)


def _cli_csv(spec: str, path: Path, tmp_path: Path) -> pd.DataFrame:
    env = {**os.environ, "STRATA_CACHE_DIR": str(tmp_path / "cache")}
    result = run_cli("stats", "--no-cache", "-f", "csv", "-r", spec, str(path), env=env)
    assert result.returncode == 0, result.stderr
    body = result.stdout.split("\n", 1)[1]  # the "Processing [...]" line
    return pd.read_csv(io.StringIO(body))


def test_a_subset_shares_the_projections_and_owns_its_window_index(demo, monkeypatch) -> None:
    calls = _counting_projection(monkeypatch)
    reports = ReportSet(demo)
    whole = reports.window_index("nvtx_gpu")
    part = reports.snapshot().subset([1])
    assert list(part) == [demo[1]]
    index = part.window_index("nvtx_gpu")
    assert index is not whole
    assert part.window_index("nvtx_gpu") is index
    assert len(calls) == len(demo)  # the subset projected nothing again
    with pytest.raises(AnalysisError):
        part.add(demo[0])
    with pytest.raises(AnalysisError):
        reports.subset([5])
