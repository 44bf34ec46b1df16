"""resources/screenshots.py takes the docs' pictures from the real window, offscreen."""

from __future__ import annotations

from PySide6.QtGui import QImage

from strata.resources.screenshots import SIZE, take_screenshots


def test_the_script_saves_each_view_of_the_demo(qapp, tmp_path) -> None:
    written = take_screenshots(tmp_path, real_dir=None)
    assert [p.name for p in written] == [
        f"{n}.png"
        for n in (
            "screenshot",
            "search",
            "events",
            "details",
            "area",
            "expert",
            "collectives",
            "diff",
            "ops",
        )
    ]
    for path in written:
        image = QImage(str(path))
        assert (image.width(), image.height()) == SIZE
        # Small enough for the docs; the Expert tab lists more findings since the histogram
        # left the list tabs (~215 KB).
        assert path.stat().st_size <= 260_000
        # A real picture: many colours, not one flat (or black) frame.
        colors = {image.pixel(x, y) for x in range(0, SIZE[0], 16) for y in range(0, SIZE[1], 16)}
        assert len(colors) > 50, path.name
