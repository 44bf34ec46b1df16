"""Outliers.within: the instances of one report and time window, scores untouched."""

from __future__ import annotations

import pandas as pd

from strata.analysis.outliers import Outliers


def _outliers() -> Outliers:
    instances = pd.DataFrame({
        "name": ["a", "b", "c", "d"], "report_index": [0, 1, 1, 0],
        "start_ns": [100, 100, 500, 900], "duration_ns": [50, 50, 0, 10],
        "robust_z": [9.0, 8.0, 7.0, 6.0],
    })  # fmt: skip
    return Outliers(instances, pd.DataFrame(), 3.5)


def test_within_filters_by_report_and_shared_axis_window() -> None:
    found = _outliers()
    assert found.within()["name"].tolist() == ["a", "b", "c", "d"]
    assert found.within(report_index=1)["name"].tolist() == ["b", "c"]
    # Report 1 is shifted by 1000 ns: its instances sit at 1100 and 1500 on the shared axis.
    assert found.within(0, 1000, offsets_ns=[0, 1000])["name"].tolist() == ["a", "d"]
    assert found.within(1100, 1500, offsets_ns=[0, 1000])["name"].tolist() == ["b"]
    # An overlapping instance counts; a zero-length one counts when it lies in the window.
    assert found.within(140, 141)["name"].tolist() == ["a", "b"]
    assert found.within(500, 501)["name"].tolist() == ["c"]
    assert found.within(None, 120, report_index=0)["robust_z"].tolist() == [9.0]
