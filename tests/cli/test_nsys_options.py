"""``stats`` and ``analyze`` options as nsys 2023.4 takes them, against the real nsys.

Each test runs nsys and Strata with the same arguments on a copy of a small real report (or
an nsys fixture) in ``tmp_path``, from that folder, and compares what each prints on stdout
and stderr. nsys names its report script by its install path (``with
[/…/reports/nvtx_sum.py]``); Strata names the script alone, so the path is dropped from
nsys's text first. Skipped without nsys or the shared reports.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from analysis.open import find_nsys
from app.cli import main
from app.cli.stats import DEFAULT_REPORTS
from tests.conftest import FIXTURES_DIR, REAL_DIR, requires_fixtures, requires_shared
from tests.helpers import mutate_sqlite

NSYS = find_nsys()
requires_nsys = pytest.mark.skipif(NSYS is None, reason="needs nsys ($NSYS or PATH) as the oracle")
_SCRIPT_PATH = re.compile(r"with \[/[^\]]*/(reports|rules)/")

CUPY = "quasiben__nvtx-examples__cupy.sqlite"
#: Memory copies (sizes, throughputs) and kernels, 100-odd rows of trace.
TEST_CUDA = "0x822a5b87__test-cuda__report1.sqlite"
#: Device-to-host copies of 6 sizes (median 8, from two equal middle values).
RECON = "nikitinvv__recon-stream__report13.sqlite"


def nsys_run(folder: Path, *argv: str) -> tuple[int, str, str]:
    """nsys's (exit status, stdout, stderr), run in ``folder``, script paths dropped."""
    env = dict(os.environ, LANG="C.UTF-8", LC_ALL="C.UTF-8")
    proc = subprocess.run(
        [NSYS, *argv], cwd=folder, capture_output=True, text=True, timeout=300, env=env,
        check=False,
    )  # fmt: skip
    return proc.returncode, _SCRIPT_PATH.sub("with [", proc.stdout), proc.stderr


def strata_run(capsys, *argv: str) -> tuple[int, str, str]:
    """Strata's (exit status, stdout, stderr), run in the current folder."""
    capsys.readouterr()
    try:
        status = main(list(argv))
    except SystemExit as done:  # the --help-... options exit as argparse's help does
        status = done.code
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def copy_real(name: str, folder: Path) -> str:
    shutil.copyfile(REAL_DIR / name, folder / name)
    return name


@requires_shared
@requires_nsys
def test_default_set_prints_every_summary_as_nsys(in_tmp: Path, capsys) -> None:
    """No -r: nsys's 19 summaries in its order, the SKIPPED ones included, nothing on stderr."""
    report = copy_real(CUPY, in_tmp)
    status, out, err = nsys_run(in_tmp, "stats", report)
    assert status == 0
    ours = strata_run(capsys, "stats", "--no-cache", report)
    assert ours == (0, out, err)
    assert out.count("Processing [") == len(DEFAULT_REPORTS) == 19
    assert "SKIPPED: " in out


@requires_fixtures
@requires_nsys
@pytest.mark.parametrize("fixture", ["syn.sqlite", "real-2023.4-nvtx.sqlite"])
@pytest.mark.parametrize("quiet", [(), ("-q",)])
def test_default_set_on_the_fixtures_equals_nsys(fixture: str, quiet, in_tmp: Path, capsys):
    shutil.copyfile(FIXTURES_DIR / fixture, in_tmp / fixture)
    expected = nsys_run(in_tmp, "stats", *quiet, fixture)
    assert strata_run(capsys, "stats", "--no-cache", *quiet, fixture) == expected


@requires_shared
@requires_nsys
@pytest.mark.parametrize("fmt", ["column", "csv", "json"])
def test_analyze_quiet_prints_the_results_alone_as_nsys(fmt: str, in_tmp: Path, capsys) -> None:
    """analyze -q: no Processing lines, no SKIPPED rules (test-cuda SKIPs two of seven)."""
    report = copy_real(TEST_CUDA, in_tmp)
    expected = nsys_run(in_tmp, "analyze", "-q", "-f", fmt, report)
    ours = strata_run(capsys, "analyze", "-q", "--no-cache", "-f", fmt, report)
    assert ours == expected
    assert "Processing [" not in ours[1]
    assert "SKIPPED" not in ours[1]


@requires_shared
@requires_nsys
@pytest.mark.parametrize("command", ["stats", "analyze"])
def test_timeunit_takes_the_words_and_prefixes_nsys_takes(command: str, in_tmp: Path, capsys):
    """--timeunit: a prefix of one of nsys's words, case and all; the others are refused."""
    report = copy_real(TEST_CUDA, in_tmp)
    what = ["-r", "cuda_gpu_trace"] if command == "stats" else ["-r", "gpu_time_util"]
    for unit in ("na", "nanoseconds", "micro", "microseconds", "milli", "milliseconds", "se"):
        expected = nsys_run(in_tmp, command, *what, "-f", "csv", "--timeunit", unit, report)
        assert expected[0] == 0
        ours = strata_run(
            capsys, command, "--no-cache", *what, "-f", "csv", "--timeunit", unit, report
        )
        assert ours == expected, unit
    for unit in ("n", "mi", "secs", "NSEC", "Usec", ""):
        assert nsys_run(in_tmp, command, *what, "--timeunit", unit, report)[0] != 0
        status, out, err = strata_run(capsys, command, *what, "--timeunit", unit, report)
        assert (status, out) == (2, "")
        assert err.startswith(f"strata: unknown time unit '{unit}'")
        assert err.count("\n") == 1


#: Summaries with every unit category (times, sizes, throughputs, percents); cuda_gpu_trace
#: last, as nsys 2023.4 leaks its column check into the summaries after it.
FORMAT_SPECS = "cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum,cuda_gpu_trace"
FORMATTER_ARGS = [
    "column:nolimit", "column:nofmt", "column:nohdr", "column:colmax=20", "column:autolines=0",
    "column:12:0:.:7", "column:0:0:0:0:0:0:0:0:0", "column:+5:colmax=3:nolimit",
    "table:nohdr", "table:3:.:0", "table:autolines=1:colmax=9",
    "csv:nohdr", "csv:nofmt", "csv:noconv:nohdrunit", "csv:mem=KB:thru=GiB",
    "csv:time=sec:dur=us", "csv:bytes=kib", "tsv:nohdr:time=ms", "tsv:esc",
    "json:dur=us:mem=KiB", "json:noconv", "htable:bytes=B:ts=ms",
    "hdoc:title=Kernels & more:css=style.css", "hdoc:nohdrunit",
]  # fmt: skip


@requires_shared
@requires_nsys
@pytest.mark.parametrize("fmt", FORMATTER_ARGS)
def test_formatter_arguments_equal_nsys(fmt: str, in_tmp: Path, capsys) -> None:
    report = copy_real(TEST_CUDA, in_tmp)
    expected = nsys_run(in_tmp, "stats", "-f", fmt, "-r", FORMAT_SPECS, report)
    assert expected[0] == 0
    assert strata_run(capsys, "stats", "--no-cache", "-f", fmt, "-r", FORMAT_SPECS, report) == (
        expected
    )


@requires_shared
@requires_nsys
@pytest.mark.parametrize("fmt", ["csv:mem=B:thru=KB", "column:bytes=MiB", "json:noconv"])
def test_size_units_equal_nsys(fmt: str, in_tmp: Path, capsys) -> None:
    """Sizes in other units; medians in bytes as nsys's SQL gives them (six sizes whose
    middle two are 8 and 8: ``8``, not ``8.0``)."""
    for name in (TEST_CUDA, RECON):
        report = copy_real(name, in_tmp)
        argv = ("stats", "-f", fmt, "-r", "cuda_gpu_mem_size_sum", report)
        expected = nsys_run(in_tmp, *argv)
        assert strata_run(capsys, *argv[:1], "--no-cache", *argv[1:]) == expected


@requires_shared
@requires_nsys
@pytest.mark.parametrize(
    "args",
    [
        ("-f", "csv:dur=ms", "--timeunit", "usec"),
        ("-f", "csv:time=us", "--timeunit", "nsec"),
        ("-f", "csv:noconv", "--timeunit", "msec"),
        ("-f", "column:nohdrunit", "--timeunit", "sec"),
    ],
)
def test_timeunit_comes_after_the_formats_units_as_in_nsys(args, in_tmp: Path, capsys) -> None:
    report = copy_real(TEST_CUDA, in_tmp)
    argv = ("stats", *args, "-r", FORMAT_SPECS, report)
    assert strata_run(capsys, *argv[:1], "--no-cache", *argv[1:]) == nsys_run(in_tmp, *argv)


@requires_shared
@requires_nsys
def test_columns_are_sized_by_the_first_hundred_rows_as_in_nsys(in_tmp: Path, capsys) -> None:
    """A 5,400-row trace whose timestamps grow wider after row 100: nsys cuts them (``…``)."""
    report = copy_real("quasiben__nvtx-examples__cpython-nvtx-patch.sqlite", in_tmp)
    argv = ("stats", "-r", "nvtx_pushpop_trace", report)
    expected = nsys_run(in_tmp, *argv)
    assert "…" in expected[1]
    assert strata_run(capsys, *argv[:1], "--no-cache", *argv[1:]) == expected


@requires_shared
@requires_nsys
@pytest.mark.parametrize("fmt", ["tsv", "tsv:esc", "csv"])
def test_a_tab_in_a_name_is_written_as_nsys_writes_it(fmt: str, in_tmp: Path, capsys) -> None:
    report = copy_real(CUPY, in_tmp)
    mutate_sqlite(
        in_tmp / report,
        "UPDATE StringIds SET value = 'fill\tkernel' WHERE value = 'fill'",
    )
    argv = ("stats", "-f", fmt, "-r", "cuda_gpu_kern_sum", report)
    expected = nsys_run(in_tmp, *argv)
    if fmt.startswith("tsv"):
        assert ("fill\\tkernel" if fmt == "tsv:esc" else "fill kernel") in expected[1]
        assert strata_run(capsys, *argv[:1], "--no-cache", *argv[1:]) == expected
    else:  # nsys writes the tab raw; Strata escapes it as every control character
        assert strata_run(capsys, *argv[:1], "--no-cache", *argv[1:])[1] == expected[1].replace(
            "fill\tkernel", "fill\\x09kernel"
        )


@requires_shared
@requires_nsys
def test_an_argument_nsys_ignores_is_ignored_with_a_warning(in_tmp: Path, capsys) -> None:
    report = copy_real(CUPY, in_tmp)
    argv = ("stats", "-f", "column:limit=5:nohdrr:dur=days", "-r", "cuda_api_sum", report)
    status, out, _ = nsys_run(in_tmp, *argv)
    ours = strata_run(capsys, *argv[:1], "--no-cache", *argv[1:])
    assert ours[:2] == (status, out)
    warnings = ours[2].splitlines()
    assert len(warnings) == 3
    assert all(w.startswith("WARNING: -f column:limit=5:nohdrr:dur=days: '") for w in warnings)
    assert "'nohdrr' is no argument of nsys's column formatter" in warnings[1]
    assert warnings[1].endswith("did you mean 'nohdr'?")
    quiet = strata_run(capsys, "stats", "-q", "--no-cache", *argv[1:])
    assert quiet[2] == ""


@pytest.mark.parametrize(
    ("fmt", "words"),
    [
        ("column:colmax=abc", "whole number"),
        ("column:autolines=-1", "whole number"),
        ("colum", "did you mean 'column'?"),
        ("strata-json:nohdr", "takes no arguments"),
    ],
)
def test_a_malformed_format_is_one_line_and_exit_2(fmt: str, words: str, tmp_path, capsys):
    status, out, err = strata_run(capsys, "stats", "-f", fmt, str(tmp_path / "r.sqlite"))
    assert (status, out) == (2, "")
    assert err.count("\n") == 1
    assert words in err


@requires_shared
@requires_nsys
@pytest.mark.parametrize("fmt", ["hdoc", "htable"])
def test_html_escapes_as_nsys_does_quotes_kept(fmt: str, in_tmp: Path, capsys) -> None:
    """``&``, ``<`` and ``>`` become entities; quotes stay (nsys writes ``'``, not ``&#x27;``)."""
    report = copy_real(CUPY, in_tmp)
    mutate_sqlite(
        in_tmp / report,
        "UPDATE StringIds SET value = 'fill<\"it''s\" & more>' WHERE value = 'fill'",
    )
    argv = ("stats", "-f", fmt, "-r", "cuda_gpu_kern_sum", report)
    expected = nsys_run(in_tmp, *argv)
    assert '<td>fill&lt;"it\'s" &amp; more&gt;</td>' in expected[1]
    assert strata_run(capsys, *argv[:1], "--no-cache", *argv[1:]) == expected
