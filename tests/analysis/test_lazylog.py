"""analysis.lazylog: loggers that import logging only when a record may be printed, and the
command line's logging set-up applied when logging is first imported."""

from __future__ import annotations

import logging
import os

from strata.analysis.lazylog import get_logger
from tests.cli.conftest import plant
from tests.helpers import run_python

# Each probe runs in a fresh interpreter: pytest itself imports logging.
_DROPS_UNTIL_NEEDED = """
import sys
from strata.analysis.lazylog import get_logger
log = get_logger("strata.probe")
log.debug("not shown %s", 1)
log.info("not shown either")
assert "logging" not in sys.modules, "a dropped record imported logging"
log.warning("shown %s", 2)
assert "logging" in sys.modules
"""

_SET_UP_ON_IMPORT = """
import sys
from strata.analysis.lazylog import when_imported
done = []
when_imported(lambda: done.append(sys.modules["logging"].getLogger().level))
assert not done and "logging" not in sys.modules
import json  # another module: not the one awaited
assert not done
import logging
assert done == [logging.WARNING], done
assert logging.__spec__.loader.__class__.__name__ == "SourceFileLoader", logging.__spec__.loader
"""


def test_debug_and_info_are_dropped_until_logging_is_imported() -> None:
    proc = run_python("-c", _DROPS_UNTIL_NEEDED, timeout_s=60)
    assert proc.returncode == 0, proc.stderr
    assert "shown 2" in proc.stderr
    assert "not shown" not in proc.stderr


def test_the_set_up_runs_right_after_logging_is_first_imported() -> None:
    proc = run_python("-c", _SET_UP_ON_IMPORT, timeout_s=60)
    assert proc.returncode == 0, proc.stderr


def test_a_lazy_logger_is_the_real_one_once_logging_is_imported(caplog) -> None:
    log = get_logger("strata.analysis.probe")
    with caplog.at_level(logging.DEBUG, logger="strata.analysis.probe"):
        log.debug("debug %s", 1)
        log.warning("warned %s", 2)
        assert log.isEnabledFor(logging.DEBUG)
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("DEBUG", "debug 1"),
        ("WARNING", "warned 2"),
    ]
    assert caplog.records[0].pathname == __file__  # the caller's frame, not the proxy's


def test_a_default_run_logs_its_warnings_as_configured(tmp_path) -> None:
    """No -v/-q: logging is set up once something imports it, with the command line's
    format (level:logger:message), as when it was set up before the command ran."""
    report = plant(tmp_path / "r.sqlite")
    env = {**os.environ, "STRATA_CACHE_DIR": str(tmp_path / "cache"),
           "STRATA_CACHE_MAX_BYTES": "bogus"}  # fmt: skip
    proc = run_python("main.py", "stats", "-r", "cuda_gpu_kern_sum", str(report), env=env)
    assert proc.returncode == 0, proc.stderr
    assert (
        "WARNING:strata.analysis.cachesize:STRATA_CACHE_MAX_BYTES='bogus' is not a size"
        in proc.stderr
    )
