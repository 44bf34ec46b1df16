"""Outlier marks: close ones on a row are one mark with a count, not a red bar."""

from __future__ import annotations

import numpy as np

from strata.viewer.painter import MARK_CLUSTER_PX, cluster_marks
from strata.viewer.render import render_to_image
from tests.conftest import requires_shared
from tests.viewer.test_timeline import CONCURRENT, make_timeline  # noqa: F401 (a fixture)


def test_cluster_marks_groups_close_marks_of_one_row() -> None:
    points = [(10.0, 50.0), (14.0, 50.0), (21.0, 50.0), (40.0, 50.0), (12.0, 80.0)]
    assert cluster_marks(points, gap_px=9.0) == [(10.0, 50.0, 3), (40.0, 50.0, 1), (12.0, 80.0, 1)]
    assert cluster_marks([]) == []


@requires_shared
def test_many_outliers_on_a_thread_zoomed_out_are_a_few_counted_marks(
    make_timeline,  # noqa: F811 (the fixture imported)
    load_report,
) -> None:
    widget = make_timeline(CONCURRENT)
    calls = load_report(CONCURRENT).tables["cuda_api"]  # 184 calls on one thread
    rows = np.arange(len(calls))
    widget.state.fit(everything=True)
    widget.state.set_highlights(None, marks=[(0, "cuda_api", int(r)) for r in rows])
    image = render_to_image(widget, (1200, 700))
    clusters = widget._painter.mark_clusters
    assert sum(count for _x, _y, count in clusters) == len(rows)  # every mark is counted
    assert len(clusters) < len(rows) / 4
    xs = sorted(x for x, y, _c in clusters if y == clusters[0][1])
    assert all(b - a >= MARK_CLUSTER_PX for a, b in zip(xs, xs[1:], strict=False))
    # The picture: a red mark where the first of a cluster is, not a solid bar after it.
    x, y, count = max(clusters, key=lambda c: c[2])
    assert count > 1
    red = widget.theme.outlier_mark & 0xFFFFFF
    assert image.pixel(int(x), int(y) + 1) & 0xFFFFFF == red
