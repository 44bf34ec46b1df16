"""Set-up of the fuzz suite: seed reports, the fork-server runner, the closing counts.

The budget (profiles, limits) lives in :mod:`tests.fuzz.profile`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import REAL_DIR
from tests.fuzz.harness import Runner
from tests.fuzz.mutations import Seed, introspect
from tests.fuzz.profile import CLASSES, FOUND, JOB_MEMORY_MB, JOB_TIMEOUT_S, PROFILE, TRIED


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).parents:
            item.add_marker(pytest.mark.fuzz)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not TRIED:
        return
    write = terminalreporter.write_line
    terminalreporter.section(f"fuzz: cases tried per property (profile {PROFILE})")
    for prop, n in sorted(TRIED.items()):
        write(f"{n:>7}  {prop}")
    write(f"{sum(TRIED.values()):>7}  in all")
    if PROFILE == "long":
        terminalreporter.section("fuzz: mutation classes drawn")
        for label, n in CLASSES.most_common():
            write(f"{n:>7}  {label}")
    if FOUND:
        terminalreporter.section(f"fuzz: {len(FOUND)} distinct failures (survey mode)")
        for name, (n, props, first) in sorted(FOUND.items(), key=lambda kv: -kv[1][0]):
            write(f"{n:>7}  {name}  in {', '.join(sorted(props))}")
            write(f"         first: {first}")


@pytest.fixture(scope="session")
def runner():
    if not hasattr(os, "pidfd_open"):
        pytest.skip("the fuzz server needs Linux (fork, pidfd_open, /proc)")
    run = Runner(timeout_s=JOB_TIMEOUT_S, mem_mb=JOB_MEMORY_MB)
    yield run
    run.close()


@pytest.fixture(scope="session")
def demo_seeds(tmp_path_factory: pytest.TempPathFactory) -> list[Seed]:
    """The demo report, small (1 rank, 2 steps: ~230 kB, every table Strata reads)."""
    from strata.resources.demo import build_demo_reports

    folder = tmp_path_factory.mktemp("fuzz-demo")
    paths = build_demo_reports(folder, ranks=1, steps=2)
    return [introspect(f"demo/{p.name}", p) for p in paths]


#: How many of the smallest real reports the fuzzer starts from.
REAL_SEEDS = 3


@pytest.fixture(scope="session")
def real_seeds() -> list[Seed]:
    """The smallest real reports of the shared set (skips when that set is absent)."""
    if not REAL_DIR.is_dir():
        pytest.skip(f"needs the shared real reports at {REAL_DIR}")
    smallest = sorted(REAL_DIR.glob("*.sqlite"), key=lambda p: (p.stat().st_size, p.name))
    return [introspect(f"real/{p.name}", p) for p in smallest[:REAL_SEEDS]]


@pytest.fixture(scope="session", params=["demo", "real"])
def seeds(request: pytest.FixtureRequest) -> list[Seed]:
    """The seeds of one source: the demo report (always), or real reports (when present)."""
    return request.getfixturevalue(f"{request.param}_seeds")
