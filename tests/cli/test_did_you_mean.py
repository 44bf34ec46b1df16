"""A mistyped name or option is refused in one line that names what was meant (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata.app.cli import SUBCOMMANDS, build_parser, main
from tests.cli.conftest import one_line, plant


@pytest.fixture
def report(tmp_path: Path) -> str:
    return str(plant(tmp_path / "r.sqlite"))


def refused(capsys, *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 2
    return one_line(capsys.readouterr().err)


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ("stats", "-r", "cuda_gpu_kern_sumx"),
            "strata: unknown stats report 'cuda_gpu_kern_sumx'; did you mean 'cuda_gpu_kern_sum'?",
        ),
        (
            ("stats", "-r", "cuda_gpu_kern_sum:bas"),
            "strata: report 'cuda_gpu_kern_sum' has no option 'bas'; did you mean 'base'?",
        ),
        (
            ("analyze", "-r", "gpu_gapz"),
            "strata: unknown rule 'gpu_gapz'; did you mean 'gpu_gaps'?",
        ),
        (
            ("analyze", "-r", "gpu_gaps:gapp=1"),
            "strata: gpu_gaps: unknown option 'gapp'; did you mean 'gap'?",
        ),
        (
            ("stats", "--timeunits", "usec"),
            "strata: stats: unrecognized arguments: --timeunits; did you mean '--timeunit'?",
        ),
        (
            ("analyze", "--timeunits=usec"),
            "strata: analyze: unrecognized arguments: --timeunits=usec; did you mean '--timeunit'?",
        ),
    ],
)
def test_a_typo_names_what_was_meant(argv, line: str, report: str, capsys) -> None:
    assert refused(capsys, *argv, report) == line


def test_a_name_like_nothing_lists_the_choices(report: str, capsys) -> None:
    line = refused(capsys, "stats", "-r", "zzzzzz", report)
    assert "did you mean" not in line
    assert "choose one of" in line
    assert "cuda_gpu_kern_sum" in line


def _long_options(command: str) -> list[str]:
    parser = build_parser([command])
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    return [o for o in sub._option_string_actions if o.startswith("--") and o != "--help"]


#: The arguments each sub-command needs besides a report (its required options).
_NEEDS = {
    "recipe": ("nvtx_sum", "--input"),
    "render": ("-o", "x.png"),
    "export": ("--type", "parquet", "-o", "out"),
}


@pytest.mark.parametrize("command", list(SUBCOMMANDS))
def test_every_sub_command_names_a_mistyped_option(command: str, capsys) -> None:
    """Each long option of each sub-command, with one letter more: the hint names it."""
    for option in _long_options(command):
        line = refused(capsys, command, f"{option}x", *_NEEDS.get(command, ()), "r.sqlite")
        assert line.startswith(f"strata: {command}: unrecognized arguments: {option}x"), line
        assert f"; did you mean '{option}'?" in line, line
