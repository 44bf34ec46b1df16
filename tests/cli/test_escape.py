"""A report must not drive the terminal: names and paths are printed with escapes."""

from __future__ import annotations

import json
import os
import sqlite3
import unicodedata
from pathlib import Path

import pandas as pd
import pytest

from strata.analysis.escape import escape_frame, escape_text, escape_texts
from strata.app.cli import main
from tests.analysis.test_recipes_data import K, write_report
from tests.cli.conftest import HOSTILE, one_line, plant
from tests.helpers import run_cli

_UNSAFE = {"Cc", "Cf", "Cs", "Zl", "Zp"}


def assert_safe(text: str) -> None:
    """No character of ``text`` but the newline may act on a terminal."""
    bad = [c for c in text if c != "\n" and unicodedata.category(c) in _UNSAFE]
    assert not bad, f"unescaped {bad!r} in output"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b[31mred", "\\x1b[31mred"),
        ("a\x00b\x07c\td\re\nf", "a\\x00b\\x07c\\x09d\\x0de\\x0af"),
        ("del\x7f", "del\\x7f"),
        ("c1\x9b2J", "c1\\x9b2J"),
        ("abc\u202etxt.exe", "abc\\u202etxt.exe"),
        ("zero\u200bwidth\ufeff", "zero\\u200bwidth\\ufeff"),
        ("line\u2028para\u2029", "line\\u2028para\\u2029"),
        ("tag\U000e0041", "tag\\U000e0041"),
        ("bad\udcffname.sqlite", "bad\\xffname.sqlite"),
    ],
)
def test_unsafe_characters_become_escapes(text: str, shown: str) -> None:
    assert escape_text(text) == shown
    assert_safe(escape_text(text))


@pytest.mark.parametrize(
    "text",
    [
        "void kernel<float, 3>(float*, int)",
        "C:\\Users\\me\\run.exe",
        "2.5 µs — 東京 🙂",
        "non\u00a0breaking",
        "",
    ],
)
def test_ordinary_names_are_printed_as_they_are(text: str) -> None:
    assert escape_text(text) == text
    assert escape_texts([text, "x"]) == [text, "x"]


def test_escape_frame_keeps_numbers_and_missing_values() -> None:
    frame = pd.DataFrame({"n": [1, 2], "name": ["a\x1b", None], "x\x07": ["b", "c"]})
    out = escape_frame(frame)
    assert out["n"].tolist() == [1, 2]
    assert out["name"].iloc[0] == "a\\x1b"
    assert out["name"].isna().tolist() == [False, True]
    assert out["name"].dtype == frame["name"].dtype
    assert list(out.columns) == ["n", "name", "x\\x07"]
    assert frame["name"].iloc[0] == "a\x1b"  # the input is not changed


def _hostile_report(path: Path) -> Path:
    """Kernels, an NVTX range, a thread and a process all named :data:`HOSTILE`."""
    kernels = [K(HOSTILE, 10_000 * i, 10_000 * i + 100) for i in range(1, 12)]
    kernels.append(K(HOSTILE, 200_000, 290_000))  # a slow one: an outlier
    write_report(path, kernels=kernels, ranges=[(HOSTILE, 5_000, 300_000)])
    con = sqlite3.connect(path)
    con.execute("UPDATE StringIds SET value = ? WHERE value = 'main'", (HOSTILE,))
    con.execute("UPDATE PROCESSES SET name = ?", (HOSTILE,))
    con.commit()
    con.close()
    return path


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    return _hostile_report(tmp_path / "hostile.sqlite")


_SUMMARIES = "cuda_gpu_kern_sum,nvtx_sum,cuda_gpu_trace,nvtx_kern_sum,nvtx_gpu_proj_trace"


@pytest.mark.parametrize("fmt", ["column", "csv"])
def test_stats_escapes_names(fmt: str, hostile: Path, capsys) -> None:
    assert main(["stats", "--no-cache", "-f", fmt, "-r", _SUMMARIES, str(hostile)]) == 0
    out = capsys.readouterr().out
    assert_safe(out)
    assert escape_text(HOSTILE)[:40] in out


def test_stats_strata_json_keeps_names_exact_and_escaped(hostile: Path, capsys) -> None:
    argv = ["stats", "--no-cache", "-f", "strata-json", "-r", "cuda_gpu_kern_sum", str(hostile)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert_safe(out)
    rows = json.loads(out)[0]["rows"]
    assert HOSTILE in {v for row in rows for v in row}


def test_stats_nsys_json_keeps_names_exact_and_escaped(hostile: Path, capsys) -> None:
    """nsys's json: the name as a JSON string decoding to itself, nothing raw printed."""
    assert main(["stats", "--no-cache", "-f", "json", "-r", "cuda_gpu_kern_sum", str(hostile)]) == 0
    out = capsys.readouterr().out
    assert_safe(out)
    rows = json.loads(out.split("\n", 1)[1])  # after the Processing line
    assert HOSTILE in {row["Name"] for row in rows}


def test_info_escapes_process_and_file_names(tmp_path: Path, capsys) -> None:
    path = _hostile_report(tmp_path / "r\x1b[2J.sqlite")
    assert main(["info", "--no-cache", str(path)]) == 0
    out = capsys.readouterr().out
    assert_safe(out)
    assert "r\\x1b[2J.sqlite" in out
    assert escape_text(HOSTILE) in out


@pytest.mark.parametrize("fmt", ["column", "csv"])
def test_outliers_escape_names(fmt: str, hostile: Path, capsys) -> None:
    assert main(["outliers", "--no-cache", "-f", fmt, "--kinds", "kernels", str(hostile)]) == 0
    out = capsys.readouterr().out
    assert_safe(out)
    assert escape_text(HOSTILE)[:40] in out


def test_recipe_escapes_its_summary_and_csv_but_keeps_parquet(
    hostile: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "out"
    argv = ["recipe", "cuda_gpu_kern_sum", "-q", "--mode", "serial", "--input", str(hostile)]
    assert main([*argv, "--output", str(out)]) == 0
    assert_safe(capsys.readouterr().out)
    assert_safe((out / "summary.txt").read_text())
    assert_safe((out / "all_stats.csv").read_text())
    assert pd.read_parquet(out / "all_stats.parquet")["Name"].tolist() == [HOSTILE]


def test_a_bad_file_name_is_escaped_in_the_error_line(tmp_path: Path) -> None:
    path = tmp_path / "x\x1b]0;owned\x07.sqlite"
    path.write_text("not a report\n")
    proc = run_cli("info", str(path))
    assert proc.returncode == 2
    line = one_line(proc.stderr)
    assert_safe(line)
    assert "x\\x1b]0;owned\\x07.sqlite" in line


def test_a_file_name_that_is_not_utf8_is_one_escaped_line(tmp_path: Path) -> None:
    raw = os.fsencode(tmp_path) + b"/bad\xff\xfe.sqlite"
    with open(raw, "w") as fh:
        fh.write("not a report\n")
    proc = run_cli("info", "--no-cache", os.fsdecode(raw))
    assert proc.returncode == 2
    line = one_line(proc.stderr)
    assert "bad\\xff\\xfe.sqlite" in line


def test_plain_names_keep_nsys_parity(tmp_path: Path, capsys) -> None:
    """Backslashes, quotes and non-ASCII letters are data, not control: printed unchanged."""
    name = 'void f<"q">(C:\\x, µ)'
    plant(tmp_path / "p.sqlite", kernel=name)
    assert main(["stats", "--no-cache", "-f", "csv", "-r", "cuda_gpu_kern_sum", str(tmp_path)]) == 0
    quoted = '"' + name.replace('"', '""') + '"'  # quoted for its comma, as before
    assert quoted in capsys.readouterr().out


def test_log_lines_are_escaped() -> None:
    import logging

    from strata.app.cli.logsetup import EscapingFormatter

    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "odd name %s", (HOSTILE,), None)
    text = EscapingFormatter(logging.BASIC_FORMAT).format(record)
    assert_safe(text)
    assert escape_text(HOSTILE) in text
