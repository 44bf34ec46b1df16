"""Stats rows to timeline rows: a name's highlights are exactly its table row's instances."""

from __future__ import annotations

import shutil

import numpy as np

from strata.analysis import open_report
from strata.analysis.projection import project_nvtx
from strata.analysis.reportset import ReportSet
from strata.app.event_lookup import highlight_rows, slice_indices
from strata.resources.demo import build_demo_reports
from tests.helpers import mutate_sqlite


def test_projected_highlights_are_the_rows_instances_only(tmp_path) -> None:
    """One NVTX name in both styles is two rows; each row lights its own projected ranges
    (the label-wide lookup lit both rows' ranges for either)."""
    path = tmp_path / "styles.sqlite"
    shutil.copyfile(build_demo_reports(tmp_path / "demo", ranks=1, steps=2)[0], path)
    mutate_sqlite(path, "UPDATE NVTX_EVENTS SET eventType = 60 WHERE eventType = 59 AND "
                        "rowid % 2 = 0")  # fmt: skip
    report = open_report(path, use_cache=False)
    reports = ReportSet([report])
    index = reports.window_index("nvtx_gpu")
    frame = index.stats()
    twins = frame[frame.duplicated("name", keep=False)]
    assert len(twins) >= 2
    proj = project_nvtx(report)
    sliced = reports.projected_slices(report)
    for row in twins.itertuples(index=False):
        inst = index.instances(index.groups(row.key, row.style))
        lit = highlight_rows(reports, "nvtx_gpu", inst)[(0, "nvtx_gpu")]
        assert len(lit) == row.count
        shown = slice_indices(reports, 0, "nvtx_gpu", inst["row"], inst["start_ns"], inst["end_ns"])
        np.testing.assert_array_equal(np.sort(shown), lit)
        # The lit ranges are this row's: its name and style, drawn where they start.
        picked = proj.iloc[inst["row"].to_numpy()]
        assert set(picked["style"]) == {row.style}
        np.testing.assert_array_equal(
            np.sort(sliced.start_ns[lit]), np.sort(picked["start_ns"].to_numpy())
        )
