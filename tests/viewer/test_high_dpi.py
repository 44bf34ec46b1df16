"""At 200 % scaling the timeline is drawn in device pixels, not stretched from logical ones.

Qt takes its scale factor once, when the application starts: the check runs in a fresh
interpreter with ``QT_SCALE_FACTOR=2`` on the offscreen platform, on the built-in demo.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

from tests.conftest import ROOT
from tests.helpers import run_python

_PROBE = """
import json, sys
from pathlib import Path
import numpy as np
from PySide6.QtWidgets import QApplication
app = QApplication([])
from strata.analysis.reportset import ReportSet
from strata.resources.demo import build_demo_reports
from strata.viewer.timeline import TimelineWidget

from strata.analysis import open_report
paths = build_demo_reports(Path(sys.argv[1]), ranks=4, steps=6)
reports = ReportSet([open_report(paths[0])])
widget = TimelineWidget()
widget.resize(900, 520)
widget.state.set_data(reports, reports.tracks(), [0])
widget.show()
for _ in range(5):
    app.processEvents()
grab = widget.grab().toImage()

def pixels(image):
    image = image.convertToFormat(image.Format.Format_RGB32)
    data = np.frombuffer(image.constBits(), np.uint32, image.bytesPerLine() // 4 * image.height())
    return data.reshape(image.height(), -1)[:, : image.width()] & 0xFFFFFF

def stretched(block):
    # True when every device pixel pair (2k, 2k+1) repeats, across and down: a picture of
    # logical pixels scaled 2x, with no detail of its own at device resolution.
    block = block[: block.shape[0] // 2 * 2, : block.shape[1] // 2 * 2]
    return bool((block[:, 0::2] == block[:, 1::2]).all() and (block[0::2] == block[1::2]).all())

theme = widget.theme
shot = pixels(grab)
ruler = theme.ruler_height_px * 2
header = shot[ruler:, : theme.header_width_px * 2 - 4]
rows = widget._painter.row_image
rows_px = pixels(rows)
# The row separators: 1 logical pixel each, in a column of the event area where no event is.
x = theme.header_width_px * 2 + 2
column = shot[ruler:, x]
runs = []
for y in np.flatnonzero(column == (theme.separator & 0xFFFFFF)):
    if runs and runs[-1][1] == y - 1:
        runs[-1][1] = y
    else:
        runs.append([y, y])
out = {
    "widget_ratio": widget.devicePixelRatioF(),
    "grab": [grab.width(), grab.height(), grab.devicePixelRatio()],
    "logical": [widget.width(), widget.height()],
    "data": [widget.width() - theme.header_width_px - 10, widget.height() - theme.ruler_height_px],
    "row_image": [rows.width(), rows.height(), rows.devicePixelRatio()],
    "header_image": [widget._painter._chrome.header_image.devicePixelRatio()],
    "header_stretched": stretched(header),
    "rows_stretched": stretched(rows_px),
    "separator_runs": sorted({int(b - a + 1) for a, b in runs}),
}
print(json.dumps(out))
"""


def test_the_timeline_is_drawn_in_device_pixels_at_200_percent(tmp_path: Path) -> None:
    script = tmp_path / "probe.py"
    script.write_text(textwrap.dedent(_PROBE))
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "QT_SCALE_FACTOR": "2"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = run_python(str(script), str(tmp_path / "demo"), env=env, timeout_s=180)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    assert facts["widget_ratio"] == 2.0
    width, height = facts["logical"]
    assert facts["grab"] == [2 * width, 2 * height, 2.0]
    # The row image has a pixel per device pixel and says so (Qt then draws it unscaled).
    data_w, data_h = facts["data"]
    assert facts["row_image"] == [2 * data_w, 2 * data_h, 2.0]
    assert facts["header_image"] == [2.0]
    # ... and holds detail a logical-size image stretched 2x cannot: the busy fraction of
    # half-pixel columns, the row labels' glyph edges.
    assert not facts["rows_stretched"]
    assert not facts["header_stretched"]
    # A one-pixel line (the separator under each row) is two device pixels, never one or three.
    assert facts["separator_runs"] == [2]
