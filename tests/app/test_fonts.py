"""A machine without fonts: labels draw real glyphs from the bundled font, not empty boxes."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QFont, QFontDatabase, QImage, QPainter

from strata.app.fonts import ensure_usable_font, has_usable_font
from tests.conftest import ROOT
from tests.helpers import run_python

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="fontconfig (FONTCONFIG_FILE) is Linux's"
)

# Two strings of the same length: empty boxes ('tofu') draw them pixel for pixel alike.
_A, _B = "Kernel", "memcpy"

_PROBE = """
import json, sys
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QApplication
app = QApplication([])
from strata.app.fonts import ensure_usable_font, has_usable_font
before = has_usable_font(app)
family = ensure_usable_font(app) if sys.argv[1] == "fallback" else None
def draw(text):
    image = QImage(200, 40, QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    painter.setPen(QColor("white"))
    painter.drawText(5, 30, text)
    painter.end()
    return bytes(image.constBits())
print(json.dumps({"before": before, "family": family, "differ": draw("Kernel") != draw("memcpy")}))
"""


def _fontless_env(tmp_path: Path) -> dict[str, str]:
    """Environment of a machine whose fontconfig knows no font (a bare headless Debian)."""
    (tmp_path / "none").mkdir(exist_ok=True)
    conf = tmp_path / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
        f"<dir>{tmp_path / 'none'}</dir><cachedir>{tmp_path / 'cache'}</cachedir></fontconfig>"
    )
    env = {**os.environ, "FONTCONFIG_FILE": str(conf), "QT_QPA_PLATFORM": "offscreen"}
    return {**env, "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])}


def _probe(tmp_path: Path, mode: str) -> dict:
    script = tmp_path / "probe.py"
    script.write_text(textwrap.dedent(_PROBE))
    done = run_python(str(script), mode, env=_fontless_env(tmp_path), timeout_s=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_without_system_fonts_the_bundled_font_draws_real_glyphs(tmp_path) -> None:
    bare = _probe(tmp_path, "none")
    if bare["differ"]:
        pytest.skip("this Qt finds a font even with an empty fontconfig (not a bare machine)")
    assert bare["before"] is False  # the machine as the issue found it: boxes only
    fixed = _probe(tmp_path, "fallback")
    assert fixed["family"] == "DejaVu Sans"
    assert fixed["differ"], "two different strings still draw the same boxes"


def _draw(text: str, font: QFont) -> QImage:
    image = QImage(200, 40, QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    painter.setFont(font)
    painter.setPen(QColor("white"))
    painter.drawText(5, 30, text)
    painter.end()
    return image


def test_fallback_is_registered_when_qt_lists_only_generic_families(qapp, monkeypatch) -> None:
    """fontconfig with no font installed still answers 'Sans Serif', 'Serif', 'Monospace'."""
    old_font = QFont(qapp.font())
    for listed in ([], ["Sans Serif", "Serif", "Monospace"]):
        monkeypatch.setattr(QFontDatabase, "families", staticmethod(lambda *_a, _l=listed: _l))
        assert not has_usable_font(qapp)
        try:
            family = ensure_usable_font(qapp)
            assert family == "DejaVu Sans"
            assert qapp.font().families() == ["DejaVu Sans"]
            font = QFont(family, 14)
            first, second = _draw(_A, font), _draw(_B, font)
            assert first != second
            lit = sum(
                1 for y in range(40) for x in range(200) if first.pixelColor(x, y).alpha() > 0
            )
            assert 50 < lit < 200 * 40 // 2  # ink of letters, not nothing and not filled
        finally:
            qapp.setFont(old_font)
            for generic in ("Sans Serif", "Serif", "Monospace", "monospace", "sans-serif"):
                QFont.removeSubstitutions(generic)


def test_a_machine_with_fonts_keeps_them(qapp) -> None:
    if not has_usable_font(qapp):
        pytest.skip("this machine has no usable font")
    before = qapp.font().toString()
    assert ensure_usable_font(qapp) is None
    assert qapp.font().toString() == before
