"""The first argument: a mistyped sub-command is refused, a path still opens the window."""

from __future__ import annotations

import pytest

import strata.app.gui
from strata.analysis.errors import StrataError
from strata.app.cli import SUBCOMMANDS, main
from tests.cli.conftest import one_line


@pytest.fixture
def gui_calls(monkeypatch) -> list[list[str]]:
    """The argument lists the window would have been opened with (it never opens)."""
    seen: list[list[str]] = []
    monkeypatch.setattr(strata.app.gui, "run_gui", lambda args, **_options: seen.append(args) or 0)
    return seen


@pytest.mark.parametrize(
    ("argv", "word", "near"),
    [(["stat", "R"], "stat", "stats"), (["-v", "rendr", "R"], "rendr", "render"),
     (["Export"], "Export", "export")],
)  # fmt: skip
def test_a_mistyped_command_suggests_the_near_one(
    argv, word, near, gui_calls, capsys, tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no file of that name here
    assert main(argv) == 2
    line = one_line(capsys.readouterr().err)
    assert line == f"strata: unknown command {word!r}; did you mean {near!r}?"
    assert gui_calls == []


def test_a_word_near_no_command_lists_them(gui_calls, capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["frobnicate"]) == 2
    line = one_line(capsys.readouterr().err)
    assert all(command in line for command in SUBCOMMANDS)
    assert gui_calls == []


@pytest.mark.parametrize("name", ["stat", "runs"])
def test_an_existing_path_named_like_a_word_opens_the_window(
    name, gui_calls, tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).mkdir()
    assert main([name]) == 0
    assert gui_calls == [[name]]


def test_a_report_path_that_is_missing_still_goes_to_the_window(gui_calls) -> None:
    # The window names a missing report itself; a dotted name is no command word.
    assert main(["x.sqlite"]) == 0
    assert gui_calls == [["x.sqlite"]]


def test_the_no_display_hint_names_every_headless_command() -> None:
    with pytest.raises(StrataError) as caught:
        strata.app.gui.check_display({}, platform="linux")
    hint = str(caught.value).split("headless commands: ", 1)[1]
    assert hint.split(", ") == list(SUBCOMMANDS)
