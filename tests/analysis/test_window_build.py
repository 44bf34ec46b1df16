"""Building the panel's window index: on threads, with progress, cancellable; the same index."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from strata.analysis.errors import CancelledError
from strata.analysis.wavelet import WaveletMatrix, kth_smallest
from strata.analysis.window_stats import WINDOW_KINDS, build_window_index
from strata.resources.demo import build_demo_reports


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    from strata.analysis import open_report

    paths = build_demo_reports(tmp_path_factory.mktemp("demo"))
    return [open_report(p, use_cache=False) for p in paths]


def test_wavelet_levels_built_in_parts_equal_one_pass() -> None:
    """Spans of several cache-sized steps, on threads: the same bits and ranks."""
    rng = np.random.default_rng(11)
    values = rng.integers(0, 2**20, size=300_001).astype(np.int32)
    whole = WaveletMatrix(values, 20)
    levels: list[int] = []
    with ThreadPoolExecutor(3) as pool:
        split = WaveletMatrix(values, 20, pool, 3, levels.append)
    assert levels == list(range(1, 21))
    np.testing.assert_array_equal(whole.zeros, split.zeros)
    at = np.sort(rng.integers(0, len(values) + 1, size=200))
    for level in range(20):
        np.testing.assert_array_equal(whole.ones_before(level, at), split.ones_before(level, at))
    lo, hi = np.array([0, 1000, 77_777]), np.array([300_001, 250_000, 77_779])
    k = np.array([150_000, 3, 1])
    found = kth_smallest([split], [lo], [hi], k)
    expected = [int(np.sort(values[a:b])[j]) for a, b, j in zip(lo, hi, k, strict=True)]
    assert found.tolist() == expected


@pytest.mark.parametrize("kind", WINDOW_KINDS)
def test_threads_give_the_serial_index(reports, kind) -> None:
    serial = build_window_index(reports, kind, threads=1)
    parallel = build_window_index(reports, kind, threads=3)
    assert serial.keys.tolist() == parallel.keys.tolist()
    lo, hi = reports[0].span_ns()
    for t0, t1 in [(None, None), (lo + (hi - lo) // 3, lo + (hi - lo) // 2)]:
        for by_report in (False, True):
            a = serial.stats(t0, t1, by_report=by_report)
            b = parallel.stats(t0, t1, by_report=by_report)
            assert a.drop(columns="std_ns").equals(b.drop(columns="std_ns"))
            np.testing.assert_allclose(a["std_ns"], b["std_ns"], rtol=1e-12)


def test_a_report_that_cannot_be_ranked_while_others_build(reports, monkeypatch) -> None:
    """The third report's values do not fit: every report's sorted values instead."""
    import strata.analysis.window_stats as window_stats

    calls = []
    real = window_stats.fits_ranked

    def third_fails(values):
        calls.append(len(values))
        return real(values) and len(calls) != 3

    monkeypatch.setattr(window_stats, "fits_ranked", third_fails)
    index = build_window_index(reports, "kernels", threads=2)
    assert not index.is_ranked
    ranked = build_window_index(reports, "kernels", threads=2)
    a, b = index.stats(by_report=True), ranked.stats(by_report=True)
    assert a[["report", "name", "count", "total_ns"]].equals(b[["report", "name", "count",
                                                                "total_ns"]])  # fmt: skip


@pytest.mark.parametrize("threads", [1, 2])
def test_cancel_stops_the_build_within_a_step(reports, threads) -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(CancelledError):
        build_window_index(reports, "kernels", cancel=cancel, threads=threads)
    fractions: list[float] = []
    cancel = threading.Event()

    def progress(fraction: float, _text: str) -> None:
        fractions.append(fraction)
        cancel.set()  # the user closed the report as the first step was done

    with pytest.raises(CancelledError):
        build_window_index(reports, "kernels", progress=progress, cancel=cancel,
                           threads=threads)  # fmt: skip
    assert 1 <= len(fractions) <= threads  # each running report stopped at its next step
    assert max(fractions) < 0.5


def test_progress_grows_to_one(reports) -> None:
    fractions: list[float] = []
    build_window_index(reports, "kernels", progress=lambda f, _t: fractions.append(f), threads=2)
    assert fractions == sorted(fractions)
    assert fractions[-1] == pytest.approx(1.0)


@pytest.mark.parametrize("kind", WINDOW_KINDS)
def test_the_one_shot_window_is_the_index_table(reports, kind) -> None:
    """What the panel shows while the index builds: the same rows, numbers and columns."""
    from strata.analysis.area import aggregate_window
    from strata.analysis.reportset import ReportSet

    offsets = [0, 1000, -1000, 7]
    index = build_window_index(reports, kind, offsets_ns=offsets)
    index.report_names = ReportSet(reports).labels
    lo, hi = reports[0].span_ns()
    for t0, t1 in [(None, None), (lo + (hi - lo) // 3, lo + (hi - lo) // 2)]:
        for by_report, report_index in [(False, None), (True, None), (False, 2)]:
            ours = aggregate_window(ReportSet(reports), kind, t0, t1, offsets, report_index,
                                    by_report)  # fmt: skip
            theirs = index.stats(t0, t1, report_index, by_report)
            assert list(ours.columns) == list(theirs.columns)
            shown = [c for c in ours.columns if c not in ("group", "std_ns")]
            key = [c for c in ("report", "key", "style") if c in ours]
            a = ours.sort_values(key).reset_index(drop=True)
            b = theirs.sort_values(key).reset_index(drop=True)
            assert a[shown].equals(b[shown]), (kind, t0, by_report, report_index)
            np.testing.assert_allclose(a["std_ns"], b["std_ns"], rtol=1e-9, atol=1e-6)
            # One group per (key, style), in both.
            assert a.groupby(["group"]).ngroups == b.groupby(["group"]).ngroups
