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

from strata.analysis.open import find_nsys
from strata.app.cli import main
from strata.app.cli.stats import DEFAULT_REPORTS
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


def _both(in_tmp: Path, capsys, report: str, *argv: str):
    """Run nsys in ``in_tmp/nsys`` and Strata in ``in_tmp/strata``, each on its own copy of
    ``report``; return both (status, stdout, stderr) and the two folders."""
    theirs, ours = in_tmp / "nsys", in_tmp / "strata"
    for folder in (theirs, ours):
        folder.mkdir(exist_ok=True)
        if not (folder / report).exists():
            shutil.copyfile(REAL_DIR / report, folder / report)
    expected = nsys_run(theirs, *argv, report)
    os.chdir(ours)
    got = strata_run(capsys, argv[0], "--no-cache", *argv[1:], report)
    os.chdir(in_tmp)
    return expected, got, theirs, ours


def _same_files(theirs: Path, ours: Path) -> None:
    names = sorted(p.name for p in theirs.iterdir() if p.suffix != ".sqlite")
    assert names == sorted(p.name for p in ours.iterdir() if p.suffix != ".sqlite")
    for name in names:
        assert (ours / name).read_bytes() == (theirs / name).read_bytes(), name


@requires_shared
@requires_nsys
@pytest.mark.parametrize(
    ("command", "what"),
    [
        ("stats", ("-r", "cuda_api_sum,osrt_sum,cuda_gpu_kern_sum", "-f", "csv,column")),
        ("analyze", ("-f", "csv,column,json")),
    ],
)
def test_an_existing_output_file_is_skipped_unless_forced(command, what, in_tmp, capsys):
    """A second run SKIPs the files the first wrote (SKIPPED summaries' empty ones too),
    ``--force-overwrite`` / ``true`` replaces them, ``false`` does not."""
    runs = [(), (), ("--force-overwrite",), ("--force-overwrite", "false")]
    runs.append(("--force-overwrite", "true"))
    printed = []
    for force in runs:
        expected, got, theirs, ours = _both(
            in_tmp, capsys, TEST_CUDA, command, *what, *force, "-o", "pre"
        )
        assert got == expected, force
        _same_files(theirs, ours)
        printed.append(expected[1])
    assert "SKIPPED: output file pre_" not in printed[0]
    assert printed[1].count("SKIPPED: output file pre_") == printed[1].count("Processing [")
    assert "SKIPPED: output file" not in printed[2]


@requires_shared
@requires_nsys
@pytest.mark.parametrize(
    "args",
    [
        ("-o", "pre"),
        ("-o", ".", "-f", "json,column", "-r", "gpu_time_util,gpu_gaps,cuda_api_sync"),
        ("-o", "pre", "-f", "table:nohdr,tsv"),
        ("-f", "csv,json", "-r", "gpu_time_util,gpu_time_util:rows=1"),
        ("-o", "-,pre", "-f", "column,htable", "-r", "gpu_time_util,gpu_time_util:chunks=5"),
    ],
)
def test_analyze_outputs_and_formats_pair_as_nsys_pairs_them(args, in_tmp: Path, capsys):
    """-o PREFIX writes PREFIX_<rule>.<ext> (-o . beside the report); -f and -o lists pair
    with the rules by position, the last repeating."""
    expected, got, theirs, ours = _both(in_tmp, capsys, TEST_CUDA, "analyze", *args)
    assert got == expected
    _same_files(theirs, ours)


@requires_nsys
def test_help_reports_of_one_or_all_has_nsys_headings(capsys) -> None:
    """--help-reports NAME: that report's help (its line of the list, then its options in
    Strata's words), not the list; ALL: every report's, in nsys's order."""
    from strata.analysis.stats import REPORT_NAMES

    headings = {}
    for name in REPORT_NAMES:
        _, out, _ = nsys_run(Path.cwd(), "stats", "--help-reports", name)
        headings[name] = out.splitlines()[1]
        status, ours, _ = strata_run(capsys, "stats", "--help-reports", name)
        assert status == 0
        assert ours.splitlines()[1] == headings[name]
        assert "The following" not in ours
        options = [a.split("=")[0] for a in headings[name].split(" -- ")[0].split(":")[1:]]
        for option in (o.strip("[]|") for o in options):
            assert f"        {option}" in ours, (name, option)
    status, every, _ = strata_run(capsys, "stats", "--help-reports", "ALL")
    assert status == 0
    assert [line for line in every.splitlines() if " -- " in line] == list(headings.values())


@requires_nsys
def test_help_rules_lists_and_describes_as_nsys_does(capsys) -> None:
    from strata.analysis.rules import RULE_NAMES

    _, listing, _ = nsys_run(Path.cwd(), "analyze", "--help-rules")
    assert strata_run(capsys, "analyze", "--help-rules") == (0, listing, "")
    for name in RULE_NAMES:
        _, theirs, _ = nsys_run(Path.cwd(), "analyze", "--help-rules", name)
        status, ours, _ = strata_run(capsys, "analyze", "--help-rules", name)
        assert status == 0
        assert ours.splitlines()[:4] == theirs.splitlines()[:4]  # heading, "Options:"
        wanted = [
            ln.split(" - ")[0]
            for ln in theirs.splitlines()
            if ln.startswith("        ") and "=<" in ln
        ]
        assert [
            ln.split(" - ")[0]
            for ln in ours.splitlines()
            if "=<" in ln and ln.startswith("        ")
        ] == wanted
    _, every, _ = nsys_run(Path.cwd(), "analyze", "--help-rules", "ALL")
    status, ours, _ = strata_run(capsys, "analyze", "--help-rules", "ALL")
    assert ours.splitlines()[:4] == every.splitlines()[:4]
    assert ours.splitlines()[-1] == every.splitlines()[-1]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (("stats", "--help-reports", "cuda_gpu_kern_sumx"), "did you mean 'cuda_gpu_kern_sum'?"),
        (("analyze", "--help-rules", "gpu_gapz"), "did you mean 'gpu_gaps'?"),
    ],
)
def test_help_of_an_unknown_name_is_one_line(argv, words: str, capsys) -> None:
    status, out, err = strata_run(capsys, *argv)
    assert (status, out) == (2, "")
    assert err.count("\n") == 1
    assert words in err


#: An .nsys-rep that nsys 2023.4 exports (and its .sqlite, exported by the project).
DLPROF = "MohanadOdema__DLProf__nsys_profile"
TEST_CUDA_REP = REAL_DIR / "nsys-rep" / "0x822a5b87__test-cuda__report1.nsys-rep"


def _rep_with_export(folder: Path, rep_s: int, export_s: int) -> tuple[Path, Path]:
    """``r.nsys-rep`` and ``r.sqlite`` beside it (test-cuda's), with these mtimes (s)."""
    rep, export = folder / "r.nsys-rep", folder / "r.sqlite"
    shutil.copyfile(TEST_CUDA_REP, rep)
    shutil.copyfile(REAL_DIR / TEST_CUDA, export)
    os.utime(rep, (rep_s, rep_s))
    os.utime(export, (export_s + 0.9, export_s + 0.9))
    return rep, export


@requires_shared
def test_without_nsys_the_export_beside_a_report_is_read_if_newer(tmp_path, monkeypatch):
    """nsys's rule: the export is used when its mtime, in whole seconds, is later."""
    import strata.analysis.open as opening

    monkeypatch.setattr(opening, "find_nsys", lambda: None)
    rep, export = _rep_with_export(tmp_path, 1_700_000_000, 1_700_000_001)
    report = opening.open_report(rep, use_cache=False)
    assert report.name == "r.nsys-rep"
    assert len(report.kernels) == len(opening.open_report(export, use_cache=False).kernels) > 0
    os.utime(export, (1_700_000_000.9, 1_700_000_000.9))  # the same second: older, for nsys
    with pytest.raises(opening.ExportError, match="r.sqlite beside it is older"):
        opening.open_report(rep, use_cache=False)


@requires_shared
@requires_nsys
def test_stats_reads_the_export_beside_a_report_as_nsys_does(in_tmp: Path, capsys) -> None:
    """nsys's NOTICE on stdout, then the tables of r.sqlite, named so."""
    _rep_with_export(in_tmp, 1_700_000_000, 1_700_000_005)
    argv = ("stats", "-r", "cuda_gpu_kern_sum,cuda_api_sum", "-f", "csv", "r.nsys-rep")
    expected = nsys_run(in_tmp, *argv)
    assert "NOTICE: Existing SQLite export found: r.sqlite" in expected[1]
    assert strata_run(capsys, "stats", "--no-cache", *argv[1:]) == expected
    quiet = nsys_run(in_tmp, "stats", "-q", *argv[1:])
    assert strata_run(capsys, "stats", "-q", "--no-cache", *argv[1:]) == quiet


@requires_shared
@requires_nsys
@pytest.mark.parametrize("command", ["stats", "analyze"])
def test_sqlite_names_the_export_as_nsys_does(command: str, in_tmp: Path, capsys) -> None:
    """--sqlite FILE: generated on the first run ("Generating SQLite file ..."), read on the
    next (NOTICE), as nsys does."""
    theirs, ours = in_tmp / "nsys", in_tmp / "strata"
    what = ("-r", "cuda_api_sum", "-f", "csv") if command == "stats" else ("-r", "gpu_gaps")
    for folder in (theirs, ours):
        folder.mkdir()
        shutil.copyfile(REAL_DIR / "nsys-rep" / f"{DLPROF}.nsys-rep", folder / "r.nsys-rep")
    for _ in range(2):
        expected = nsys_run(theirs, command, *what, "--sqlite", "my.sqlite", "r.nsys-rep")
        os.chdir(ours)
        got = strata_run(
            capsys, command, "--no-cache", *what, "--sqlite", "my.sqlite", "r.nsys-rep"
        )
        os.chdir(in_tmp)
        assert got == expected
        os.utime(ours / "my.sqlite", (2e9, 2e9))  # nsys needs a second between the two
        os.utime(theirs / "my.sqlite", (2e9, 2e9))
    assert "NOTICE: Existing SQLite export found: my.sqlite" in expected[1]


@requires_shared
@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--sqlite", "out.db", "r.nsys-rep"), "must have a .sqlite extension"),
        (("--sqlite", "out.sqlite", "r.sqlite"), "is an SQLite file, not an .nsys-rep"),
        (("--force-export", "true", "r.sqlite"), "is an SQLite file, not an .nsys-rep"),
        (("--force-export", "r.sqlite"), "is an SQLite file, not an .nsys-rep"),
        (("--sqlite", "out.sqlite", "r.nsys-rep", "r.nsys-rep"), "one .nsys-rep; 2 given"),
        (("--force-overwrite", "yes", "r.sqlite"), "takes true or false"),
    ],
)
@pytest.mark.parametrize("command", ["stats", "analyze"])
def test_export_options_where_nsys_refuses_them(command, args, words, in_tmp, capsys):
    _rep_with_export(in_tmp, 1_700_000_000, 1_700_000_005)
    status, out, err = strata_run(capsys, command, *args)
    assert (status, out) == (2, "")
    assert err.count("\n") == 1
    assert words in err


@requires_shared
def test_force_export_false_is_no_export(in_tmp: Path, capsys) -> None:
    _rep_with_export(in_tmp, 1_700_000_000, 1_700_000_005)
    status, out, _ = strata_run(capsys, "stats", "-r", "cuda_api_sum", "--force-export", "false",
                                "-f", "csv", "r.sqlite")  # fmt: skip
    assert status == 0
    assert out.startswith("Processing [r.sqlite] with [cuda_api_sum.py]... \nTime (%)")


def test_a_report_script_of_a_report_dir_is_refused(tmp_path: Path, monkeypatch, capsys):
    """nsys would run DIR/NAME.py (before its own reports); Strata cannot, and says so."""
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "my_report.py").write_text("")
    (scripts / "cuda_api_sum.py").write_text("")
    for name in ("my_report", "cuda_api_sum"):
        argv = ("stats", "--report-dir", str(scripts), "-r", name, str(tmp_path / "r.sqlite"))
        status, out, err = strata_run(capsys, *argv)
        assert (status, out) == (2, "")
        assert f"{name}.py is an nsys report script" in err
    monkeypatch.setenv("NSYS_STATS_REPORT_PATH", str(scripts))
    status, _, err = strata_run(capsys, "stats", "-r", "my_report", str(tmp_path / "r.sqlite"))
    assert status == 2
    assert "my_report.py is an nsys report script" in err
