"""``main.py render``: PNG out, range/pin/size arguments, bad arguments exit 2."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from xml.etree import ElementTree

import pytest
from PySide6.QtGui import QImage

from strata.analysis.errors import StrataError
from strata.analysis.schema import tid_of
from strata.app.cli import main
from strata.app.cli.render import parse_range, parse_size, parse_time_ns
from strata.viewer.style import DARK, name_argb
from tests.cli.conftest import plant
from tests.conftest import REAL_DIR, ROOT, fingerprint, requires_shared
from tests.helpers import sql_rows

CONCURRENT = REAL_DIR / "extra-p__extrap__concurrent.s1__profile1.sqlite"
SAXPY_MPI = REAL_DIR / "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite"


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("1500", 1500),
        ("1.5s", 1_500_000_000),
        ("200ms", 200_000_000),
        ("40us", 40_000),
        ("2.5 µs", 2500),
        ("-3ms", -3_000_000),
        (".5s", 500_000_000),
    ],
)
def test_times_accept_units(text, ns) -> None:
    assert parse_time_ns(text) == ns


def test_range_and_size_parse_or_refuse() -> None:
    assert parse_range("1s:1.5s") == (1_000_000_000, 1_500_000_000)
    assert parse_size("800x600") == (800, 600)
    for bad in ("1s", "2s:1s", "a:b", "1:2", "0.5:0.8"):
        with pytest.raises(StrataError):
            parse_range(bad)
    for bad in ("800", "10x10", "axb"):
        with pytest.raises(StrataError):
            parse_size(bad)


@requires_shared
def test_bad_arguments_exit_2_with_one_line(tmp_path, capsys, qapp) -> None:
    out = tmp_path / "x.png"
    assert main(["render", str(CONCURRENT), "-o", str(out), "--size", "12"]) == 2
    assert main(["render", str(CONCURRENT), "-o", str(out), "--pin", "("]) == 2
    assert main(["render", str(CONCURRENT), "-o", str(out), "--range", "5s:1s"]) == 2
    assert main(["render", str(tmp_path / "missing.sqlite"), "-o", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 4
    assert all(line.startswith("strata: ") for line in lines)
    assert not out.exists()


@requires_shared
def test_render_pins_a_stream_and_shows_its_kernel(tmp_path, qapp) -> None:
    with sqlite3.connect(f"file:{CONCURRENT}?mode=ro", uri=True) as con:
        start, end, name, stream = con.execute(
            "SELECT start, end, coalesce(s.value, d.value), streamId "
            "FROM CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN StringIds s ON s.id = k.shortName "
            "LEFT JOIN StringIds d ON d.id = k.demangledName ORDER BY end - start DESC LIMIT 1"
        ).fetchone()
    quarter = (end - start) // 4
    out = tmp_path / "k.png"
    before = fingerprint(CONCURRENT)
    status = main(
        [
            "render",
            str(CONCURRENT),
            "-o",
            str(out),
            "--size",
            "1000x500",
            "--range",
            f"{start - quarter}ns:{end + quarter}ns",
            "--pin",
            f"Stream {stream}$",
        ]
    )
    assert status == 0
    assert fingerprint(CONCURRENT) == before
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1000, 500)
    # The pinned row is the first row under the ruler; the kernel covers the view's middle.
    y = DARK.ruler_height_px + DARK.row_height_px // 2
    x = (DARK.header_width_px + 1000) // 2
    assert image.pixel(x, y) & 0xFFFFFF == name_argb(name) & 0xFFFFFF


@requires_shared
def test_render_runs_as_a_command(tmp_path) -> None:
    out = tmp_path / "all.png"
    done = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "render", str(CONCURRENT), "-o", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
        env={
            "QT_QPA_PLATFORM": "offscreen",
            "PATH": "/usr/bin:/bin",
            "STRATA_CACHE_DIR": str(tmp_path / "cache"),
        },
    )
    assert done.returncode == 0, done.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1600, 900)


@requires_shared
def test_render_pins_the_thread_state_row(tmp_path, qapp) -> None:
    runs = sql_rows(
        SAXPY_MPI,
        "SELECT globalTid, start, nxt, cpu FROM (SELECT globalTid, start, cpu, isSchedIn, "
        "LEAD(start) OVER (PARTITION BY globalTid ORDER BY start, isSchedIn, rowid) AS nxt "
        "FROM SCHED_EVENTS) WHERE isSchedIn != 0 AND nxt IS NOT NULL",
    )
    gtid, start, end, cpu = max(runs, key=lambda r: r[2] - r[1])  # the longest run
    tid = int(tid_of(gtid))
    out = tmp_path / "state.png"
    before = fingerprint(SAXPY_MPI)
    quarter = (end - start) // 4
    status = main(["render", str(SAXPY_MPI), "-o", str(out), "--size", "1000x400", "--range",
                   f"{start + quarter}ns:{end - quarter}ns", "--pin",
                   rf"\[{tid}\] / Thread state"])  # fmt: skip
    assert status == 0
    assert fingerprint(SAXPY_MPI) == before
    image = QImage(str(out))
    # The pinned row is the first under the ruler; the run covers the view's middle.
    y = DARK.ruler_height_px + DARK.row_height_px // 2
    x = (DARK.header_width_px + 1000) // 2
    assert image.pixel(x, y) & 0xFFFFFF == name_argb(f"Running on core {cpu}") & 0xFFFFFF


@requires_shared
@pytest.mark.parametrize(
    ("suffix", "magic"),
    [
        (".png", b"\x89PNG"),
        (".jpg", b"\xff\xd8\xff"),
        (".JPEG", b"\xff\xd8\xff"),
        (".svg", b"<?xml"),
    ],
)
def test_render_writes_what_the_suffix_says(suffix, magic, tmp_path, qapp) -> None:
    out = tmp_path / f"view{suffix}"
    assert main(["render", str(CONCURRENT), "-o", str(out), "--size", "400x300"]) == 0
    data = out.read_bytes()
    assert data.startswith(magic)
    if suffix == ".svg":
        svg = ElementTree.fromstring(data)
        assert svg.get("viewBox") == "0 0 400 300"
        texts = {t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")}
        assert any(text and text.startswith("view ") for text in texts)  # the ruler's, as text
    else:
        image = QImage(str(out))
        assert (image.width(), image.height()) == (400, 300)


@pytest.mark.parametrize("name", ["x.gif", "x.png.txt", "x", "x.svgz"])
def test_render_refuses_another_suffix_before_opening_reports(
    name, tmp_path, capsys, monkeypatch
) -> None:
    report = plant(tmp_path / "r.sqlite")

    def refuse(*_args, **_kwargs):
        raise AssertionError("a report was opened")

    monkeypatch.setattr("strata.app.cli.render.open_all", refuse)
    assert main(["render", str(report), "-o", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"strata: render: cannot write '{tmp_path / name}'")
    assert not (tmp_path / name).exists()
