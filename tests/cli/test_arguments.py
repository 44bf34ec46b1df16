"""Bad arguments of every sub-command: one clear line, exit status 2, nothing read or written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from strata.app.cli import main
from tests.cli.conftest import one_line, plant, snapshot

#: (sub-command and options; {R}: a good report, {O}: an output path) -> text of the line.
CASES = {
    "outliers threshold nan": ("outliers {R} --threshold nan", "--threshold"),
    "outliers threshold inf": ("outliers {R} --threshold inf", "--threshold"),
    "outliers threshold -inf": ("outliers {R} --threshold -inf", "--threshold"),
    "outliers threshold negative": ("outliers {R} --threshold -1", "--threshold"),
    "outliers top 0": ("outliers {R} --top 0", "--top must be 1 or more"),
    "outliers top negative": ("outliers {R} --top -3", "--top must be 1 or more"),
    "outliers top text": ("outliers {R} --top many", "invalid int value"),
    "outliers kinds": ("outliers {R} --kinds frames", "unknown kind"),
    "outliers kinds empty": ("outliers {R} --kinds ,", "no kind given"),
    "stats timeunit": ("stats {R} --timeunit parsec", "unknown time unit"),
    "stats timeunit empty": ("stats {R} --timeunit ''", "unknown time unit"),
    "stats unknown summary": ("stats {R} -r cuda_gpu_kern_summ", "unknown stats report"),
    "stats unknown option": ("stats {R} -r cuda_gpu_kern_sum:fast", "has no option 'fast'"),
    "stats no summary": ("stats {R} -r ,", "names no summary"),
    "stats format": ("stats {R} -f xml", "invalid choice"),
    "stats backend": ("stats {R} --backend torch", "invalid choice"),
    "recipe threshold nan": ("recipe gpu_time_util --input {R} --threshold nan", "--threshold"),
    "recipe threshold inf": ("recipe gpu_time_util --input {R} --threshold inf", "--threshold"),
    "recipe threshold negative": ("recipe gpu_time_util --input {R} --threshold -1", "--threshold"),
    "recipe threshold over 100": ("recipe gpu_time_util --input {R} --threshold 101", "0-100"),
    "recipe gap nan": ("recipe gpu_gaps --input {R} --gap nan", "--gap"),
    "recipe gap negative": ("recipe gpu_gaps --input {R} --gap -1", "--gap"),
    "recipe gap inf": ("recipe gpu_gaps --input {R} --gap inf", "--gap"),
    "recipe tolerance nan": ("recipe diff --input {R} {R} --tolerance nan", "--tolerance"),
    "recipe tolerance negative": ("recipe diff --input {R} {R} --tolerance -5", "--tolerance"),
    "recipe workers 0": ("recipe nvtx_sum --input {R} --workers 0", "--workers"),
    "recipe workers negative": ("recipe nvtx_sum --input {R} --workers -2", "--workers"),
    "recipe chunks 0": ("recipe gpu_time_util --input {R} --chunks 0", "--chunks"),
    "recipe bins 0": ("recipe cuda_gpu_kern_hist --input {R} --bins-per-decade 0", "--bins"),
    "recipe pace without name": ("recipe cuda_gpu_kern_pace --input {R}", "--name"),
    "recipe mode": ("recipe nvtx_sum --input {R} --mode threads", "invalid choice"),
    "recipe unknown": ("recipe nvtx_summ --input {R}", "invalid choice"),
    "recipe scheduler without dask": (
        "recipe nvtx_sum --input {R} --mode serial --scheduler tcp://127.0.0.1:1",
        "need --mode dask",
    ),
    "recipe scheduler file missing": (
        "recipe nvtx_sum --input {R} --mode dask --scheduler-file {O}",
        "no such file",
    ),
    "recipe scheduler address": (
        "recipe nvtx_sum --input {R} --mode dask --scheduler nonsense",
        "cannot reach the Dask scheduler",
    ),
    "render range text": ("render {R} -o {O} --range abc", "bad --range"),
    "render range backwards": ("render {R} -o {O} --range 5s:1s", "ends before it starts"),
    "render range exponent": ("render {R} -o {O} --range 1e3:2e3", "bad time"),
    "render range three parts": ("render {R} -o {O} --range 1:2:3", "bad time"),
    "render range huge": ("render {R} -o {O} --range 0:99999999999999999999s", "out of range"),
    "render size tiny": ("render {R} -o {O} --size 10x10", "bad --size"),
    "render size zero": ("render {R} -o {O} --size 0x0", "bad --size"),
    "render size huge": ("render {R} -o {O} --size 100000x100000", "bad --size"),
    "render pin": ("render {R} -o {O} --pin (", "bad --pin"),
    "-v and -q": ("-v -q info {R}", "not allowed with"),
    "unknown option": ("info {R} --fast", "unrecognized arguments"),
}


@pytest.fixture
def report(tmp_path: Path) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    return plant(folder / "r.sqlite")


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_argument_is_one_line_and_exit_2(case: str, report: Path, tmp_path: Path, capsys):
    template, needle = CASES[case]
    out = tmp_path / "out.png"
    argv = [
        "" if word == "''" else word.replace("{R}", str(report)).replace("{O}", str(out))
        for word in template.split()
    ]
    before = snapshot(report.parent)
    assert main(argv) == 2
    line = one_line(capsys.readouterr().err)
    assert needle in line
    assert snapshot(report.parent) == before
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


@pytest.mark.parametrize("content", ["garbage", "[]", '{"address": 5}'])
def test_a_bad_scheduler_file_is_one_line_not_a_wait(
    content: str, report: Path, tmp_path: Path, capsys
) -> None:
    pytest.importorskip("distributed", reason="needs dask.distributed")
    file = tmp_path / "scheduler.json"
    file.write_text(content)
    argv = ["recipe", "nvtx_sum", "--input", str(report), "--mode", "dask"]
    assert main([*argv, "--scheduler-file", str(file), "--output", str(tmp_path / "o")]) == 2
    assert "--scheduler-file" in one_line(capsys.readouterr().err)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("window", ["100s:200s", "-5s:-1s"])
def test_render_refuses_a_range_outside_the_trace(
    window: str, report: Path, tmp_path: Path, capsys, qapp
) -> None:
    out = tmp_path / "out.png"
    assert main(["render", str(report), "-o", str(out), f"--range={window}"]) == 2
    assert "lies outside the trace" in one_line(capsys.readouterr().err)
    assert not out.exists()


def test_render_accepts_a_range_that_overlaps_the_trace(
    report: Path, tmp_path: Path, capsys, qapp
) -> None:
    out = tmp_path / "out.png"
    assert main(["render", str(report), "-o", str(out), "--range", "0:15us"]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_render_outside_the_trace_names_its_range_in_a_form_range_takes(
    report: Path, tmp_path: Path, capsys, qapp
) -> None:
    out = tmp_path / "out.png"
    assert main(["render", str(report), "-o", str(out), "--range", "1s:1.2s"]) == 2
    line = one_line(capsys.readouterr().err)
    span = re.search(r"spans (\S+);", line)
    assert span, line
    # What the message names is accepted as it stands, and draws without a note.
    assert main(["render", str(report), "-o", str(out), "--range", span.group(1)]) == 0
    assert capsys.readouterr().err == ""
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_render_cuts_a_range_partly_past_the_trace_with_a_note(
    report: Path, tmp_path: Path, capsys, qapp
) -> None:
    out = tmp_path / "out.png"
    assert main(["render", str(report), "-o", str(out), "--range=-1s:1s"]) == 0
    line = one_line(capsys.readouterr().err)
    assert "reaches past the trace" in line
    assert "drawing " in line
    assert out.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    ("command", "given", "meant"),
    [
        ("render", "0.5:0.8", "0.5s:0.8s"),
        ("render", "1.2:1.5s", "1.2s:1.5s"),
        ("render", "0:250ms", None),  # zero needs no unit
        ("calltree", "100:300ms", "100ms:300ms"),
        ("calltree", "1000000:2000000", "1000000ns:2000000ns"),
    ],
)
def test_a_range_without_units_is_refused_with_them_added(command, given, meant, capsys) -> None:
    out = ["-o", "x.png"] if command == "render" else []
    status = main([command, "missing.sqlite", *out, "--range", given])
    line = one_line(capsys.readouterr().err)
    if meant is None:  # refused for the missing report, not for the range
        assert "a time needs a unit" not in line
        return
    assert status == 2
    assert line == (
        f"strata: {command}: --range '{given}': a time needs a unit; did you mean {meant}? "
        "(ns, us, ms or s)"
    )


@pytest.mark.parametrize("command", ["info", "stats", "outliers", "recipe", "render"])
def test_every_help_documents_the_exit_status(command: str, capsys) -> None:
    with pytest.raises(SystemExit):
        main([command, "-h"])
    text = " ".join(capsys.readouterr().out.split())
    assert "1 done, but some inputs were skipped" in text
    assert "-q, --quiet" in text
