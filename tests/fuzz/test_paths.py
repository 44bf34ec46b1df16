"""What the file system can hand Strata instead of a report: FIFOs, folders, loops, odd names.

Deterministic: each case is built in a scratch folder next to a good demo report, then
``info`` and ``stats`` run on it in a fuzz-server child (a FIFO that blocks the reader is a
Hang, not a stuck test run). Property (a) with one ``strata:`` line per bad path at most,
(c) nothing changed, and: every good report named on the command line is printed.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from strata.app.cli.stats import DEFAULT_REPORTS
from tests.fuzz.harness import check_clean, check_unchanged, failure, folder_state
from tests.fuzz.profile import collected, count, scratch


def _fifo(folder: Path, good: Path) -> tuple[list[str], list[Path]]:
    os.mkfifo(folder / "pipe.sqlite")
    return [str(folder / "pipe.sqlite")], []


def _dir_named_sqlite(folder: Path, good: Path) -> tuple[list[str], list[Path]]:
    (folder / "folder.sqlite").mkdir()
    return [str(folder / "folder.sqlite")], []


def _symlink_loop(folder: Path, good: Path) -> tuple[list[str], list[Path]]:
    (folder / "loop").symlink_to(folder, target_is_directory=True)
    (folder / "a").symlink_to(folder / "b")
    (folder / "b").symlink_to(folder / "a")
    return [str(folder)], [good]


def _dangling_link(folder: Path, good: Path) -> tuple[list[str], list[Path]]:
    (folder / "gone.sqlite").symlink_to(folder / "nowhere.sqlite")
    return [str(folder)], [good]


def _non_utf8_name(folder: Path, good: Path) -> tuple[list[str], list[Path]]:
    odd = Path(os.fsdecode(bytes(folder) + b"/r\xff\xfe.sqlite"))
    shutil.copyfile(good, odd)
    return [str(odd)], [odd]


def _escape_in_name(folder: Path, good: Path) -> tuple[list[str], list[Path]]:
    odd = folder / "r\x1b[2J\x07.sqlite"
    shutil.copyfile(good, odd)
    return [str(odd)], [odd]


def _dash_name(folder: Path, good: Path) -> tuple[list[str], list[Path]]:
    odd = folder / "-x.sqlite"
    shutil.copyfile(good, odd)
    return ["--", odd.name], [odd]  # relative: the command runs in the folder


def _bad_then_good(folder: Path, good: Path) -> tuple[list[str], list[Path]]:
    bad = folder / "bad.sqlite"
    bad.write_text("not a database\n")
    return [str(bad), str(good)], [good]


def _json_then_good(folder: Path, good: Path) -> tuple[list[str], list[Path]]:
    bad = folder / "bad.json"
    bad.write_text('{"traceEvents": [')
    return [str(bad), str(good)], [good]


def _bad_in_folder(folder: Path, good: Path) -> tuple[list[str], list[Path]]:
    (folder / "zero.sqlite").write_bytes(b"")
    return [str(folder)], [good]


CASES: dict[str, Callable[[Path, Path], tuple[list[str], list[Path]]]] = {
    "a FIFO named *.sqlite": _fifo,
    "a directory named *.sqlite": _dir_named_sqlite,
    "symlink loops in a folder": _symlink_loop,
    "a dangling symlink in a folder": _dangling_link,
    "a file name that is not UTF-8": _non_utf8_name,
    "a terminal escape in the file name": _escape_in_name,
    "a file named -x.sqlite (after --)": _dash_name,
    "a bad report, then a good one": _bad_then_good,
    "a bad .json, then a good report": _json_then_good,
    "a folder with an empty report and a good one": _bad_in_folder,
}


@pytest.mark.parametrize("label", list(CASES))
def test_odd_path(label: str, demo_seeds, runner) -> None:
    count("file-system oddities")
    with scratch() as work, collected("file-system oddities"):
        folder = work / "in"
        folder.mkdir()
        good = folder / "good.sqlite"
        shutil.copyfile(demo_seeds[0].path, good)
        args, goods = CASES[label](folder, good)
        before = folder_state(folder)
        env = {"STRATA_CACHE_DIR": str(work / "cache")}
        commands = [[command, "--no-cache", *args] for command in ("info", "stats")]
        job = runner.run(commands, env, cwd=folder)
        ctx = f"{label}: {args}"
        job.check_alive(ctx)
        bad = max(1, len([a for a in args if a != "--"]) - len(goods))
        for step in job.steps:
            check_clean(step, reports=bad, context=ctx)
            _check_goods_shown(step, goods, ctx)
        check_unchanged(before, folder, ctx)


#: What each good report adds to the output: info's version line, or one header per summary.
_SHOWN = {"info": ("  nsys version:", 1), "stats": ("Processing [", len(DEFAULT_REPORTS))}


def _check_goods_shown(step, goods: list[Path], ctx: str) -> None:
    """Every good report named is printed (however its odd name is escaped)."""
    marker, per_report = _SHOWN[step.argv[0]]
    shown = sum(line.startswith(marker) for line in step.out.splitlines())
    if shown < per_report * len(goods):
        raise failure(
            "GoodReportNotShown",
            f"{step.where()} [{ctx}]: exit {step.rc}; {len(goods)} good report(s) named, "
            f"{shown // per_report} printed; stderr: {step.err[-400:]}",
        )
