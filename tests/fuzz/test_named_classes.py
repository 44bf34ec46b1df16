"""Each class of bad input named by issue #11, tried once on the demo report (deterministic).

One test per class, so that a failure names its class; docs/reliability.md lists the same
classes. The properties are those of :func:`tests.fuzz.checks.check_report` (a)-(e) and
:func:`tests.fuzz.checks.check_cache`.
"""

from __future__ import annotations

import pytest

from tests.fuzz.cases import CACHE_CLASSES, REPORT_CLASSES
from tests.fuzz.checks import check_cache, check_report
from tests.fuzz.profile import collected, count, scratch

#: Each as its own process, one cache. The full model first (so the lean summaries after it
#: read that, not the lean cache whose order bug test_order.py finds on any report); the
#: uncached runs add ``info`` and the default ``stats``.
COMMANDS = (
    ("stats",),
    ("stats", "-f", "csv", "-r", "cuda_gpu_kern_sum"),
    ("stats", "-f", "csv", "-r", "cuda_api_sum"),
)
#: What fills the cache before it is damaged (the full model, or the lean stats columns),
#: then reads it back.
PRIMING = {
    "full": (("info",), ("stats",)),
    "lean": (("stats", "-r", "cuda_gpu_kern_sum,cuda_api_sum"),),
}


@pytest.mark.parametrize("label", list(REPORT_CLASSES))
def test_report_class(label: str, demo_seeds, runner) -> None:
    seed = demo_seeds[0]
    mutations = REPORT_CLASSES[label](seed)
    count("named report classes (demo)", mutations)
    with scratch() as work, collected("named report classes (demo)"):
        check_report(runner, seed, mutations, COMMANDS, work)


@pytest.mark.parametrize("label", list(CACHE_CLASSES))
def test_cache_class(label: str, demo_seeds, runner) -> None:
    priming, damages = CACHE_CLASSES[label]
    count("named cache damage classes (demo)")
    with scratch() as work, collected("named cache damage classes (demo)"):
        commands = PRIMING[priming]
        check_cache(runner, demo_seeds[0], commands, damages, commands, work)
