"""The fuzz suite's budget: Hypothesis profiles, job limits, counters, scratch folders.

Profiles (``STRATA_FUZZ_PROFILE``): ``ci`` (default; what ``make test`` runs: a fixed seed,
few examples, no shrinking, so that even a red run stays within its budget) and ``long``
(``make fuzz``: many more random examples, shrunk to a minimal reproducer). They are
registered as ``strata-fuzz-ci``/``strata-fuzz-long`` and applied per test, never loaded
globally: the other Hypothesis tests of the suite keep their own settings.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings

__all__ = [
    "CLASSES",
    "COLLECT",
    "FOUND",
    "JOB_MEMORY_MB",
    "JOB_TIMEOUT_S",
    "PROFILE",
    "TRIED",
    "collected",
    "count",
    "fuzz_settings",
    "scratch",
]

PROFILE = os.environ.get("STRATA_FUZZ_PROFILE", "ci")
if PROFILE not in ("ci", "long"):
    raise ValueError(f"STRATA_FUZZ_PROFILE must be ci or long, not {PROFILE!r}")

#: Per-job wall limit of the runner (a hang is killed and fails its example) and memory.
JOB_TIMEOUT_S = float(os.environ.get("STRATA_FUZZ_JOB_TIMEOUT", {"ci": 10, "long": 60}[PROFILE]))
JOB_MEMORY_MB = 2048

_HEALTH = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
settings.register_profile(
    "strata-fuzz-ci",
    derandomize=True,
    database=None,
    deadline=timedelta(seconds=20),
    phases=[Phase.explicit, Phase.generate],
    report_multiple_bugs=False,
    print_blob=False,
    suppress_health_check=_HEALTH,
)
settings.register_profile(
    "strata-fuzz-long",
    derandomize=False,
    database=None,
    deadline=timedelta(seconds=120),
    phases=[Phase.explicit, Phase.generate, Phase.shrink],
    report_multiple_bugs=True,
    print_blob=True,
    suppress_health_check=_HEALTH,
)

#: How many more examples the long profile runs than the CI one.
LONG_FACTOR = 10


def fuzz_settings(ci_examples: int) -> settings:
    """The settings of one property: ``ci_examples`` in CI, LONG_FACTOR times that in long."""
    examples = ci_examples if PROFILE == "ci" else ci_examples * LONG_FACTOR
    return settings(settings.get_profile(f"strata-fuzz-{PROFILE}"), max_examples=examples)


#: property -> examples tried, and mutation class -> times drawn (printed after the run)
TRIED: Counter[str] = Counter()
CLASSES: Counter[str] = Counter()


def count(prop: str, mutations: tuple = (), step: int = 1) -> None:
    """Count one case tried by ``prop`` (``step=-1``: take back a rejected one)."""
    TRIED[prop] += step
    for mutation in mutations:
        CLASSES[getattr(mutation, "label", type(mutation).__name__).split(":")[0]] += step


@contextmanager
def scratch() -> Iterator[Path]:
    """A fresh scratch folder for one example, removed after it (even when it fails)."""
    with tempfile.TemporaryDirectory(prefix="strata-fuzz-") as name:
        yield Path(name)


#: Survey mode (``STRATA_FUZZ_COLLECT=FILE``): a property violation is recorded, not raised,
#: so that Hypothesis goes on to its last example and every distinct failure gets counted;
#: the end of the run lists them, and FILE gets each one in full (JSON lines). Off by
#: default: then every violation fails its test.
COLLECT = os.environ.get("STRATA_FUZZ_COLLECT", "")
#: failure class -> (times seen, properties, the first reproducer)
FOUND: dict[str, list] = {}


@contextmanager
def collected(prop: str) -> Iterator[None]:
    """Run one example's checks; in survey mode, record a FuzzFailure instead of raising."""
    from tests.fuzz.harness import FuzzFailure

    try:
        yield
    except FuzzFailure as exc:
        if not COLLECT:
            raise
        name = type(exc).__name__
        seen = FOUND.setdefault(name, [0, set(), str(exc).splitlines()[0][:600]])
        seen[0] += 1
        seen[1].add(prop)
        with open(COLLECT, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"failure": name, "property": prop, "message": str(exc)}) + "\n")
