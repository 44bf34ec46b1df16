"""The cache-order tests' forked runner behaves as a fresh ``python`` process would."""

from __future__ import annotations

import os

from tests.helpers import run_cli, run_cli_forked

_PROBE = """
import os, sys
print(sorted(m for m in sys.modules if m.split(".")[0] == "strata"))
print(os.environ.get("STRATA_PROBE"), os.getcwd() == sys.argv[1])
import strata.analysis  # a fresh Strata: importing it here must not leak into the next run
sys.exit(int(sys.argv[2]))
"""


def test_each_run_is_a_fresh_strata_with_its_own_environment_and_status() -> None:
    from tests.conftest import ROOT

    for status in (0, 7):
        env = {**os.environ, "STRATA_PROBE": f"run {status}"}
        proc = run_cli_forked("-c", _PROBE, str(ROOT), str(status), env=env)
        assert proc.stdout.splitlines() == ["[]", f"run {status} True"], proc.stderr
        assert proc.returncode == status


def test_the_cli_prints_and_fails_as_in_a_subprocess() -> None:
    args = ("stats", "-r", "no_such_summary", "missing.sqlite")
    forked, real = run_cli_forked(*args), run_cli(*args, fresh=True)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        real.returncode,
        real.stdout,
        real.stderr,
    )
    assert forked.returncode == 2
    assert forked.stderr.startswith("strata")


def test_a_crash_is_reported_not_waited_for() -> None:
    proc = run_cli_forked("-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert proc.returncode < 0
