"""Hypothesis: a damaged cache file is never trusted and never crashes the process.

A first cached run fills the cache (the full model's Arrow files, or the lean stats columns,
or both); then bits are flipped, files truncated, zeroed, emptied or deleted; the next run,
and the one after it, must print what ``--no-cache`` prints. Every run is its own child
process of the fuzz server, so a segfault is one failed example, not a dead test run.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.checks import check_cache
from tests.fuzz.profile import collected, count, fuzz_settings, scratch
from tests.fuzz.strategies import cache_damages, command_sequences


@fuzz_settings(ci_examples=8)
@given(data=st.data())
def test_damaged_cache_is_rebuilt(seeds, runner, data) -> None:
    seed = data.draw(st.sampled_from(seeds), label="seed")
    priming = data.draw(command_sequences(2), label="priming")
    damages = data.draw(cache_damages(), label="damages")
    checks = data.draw(command_sequences(2), label="checks")
    count("cache: damaged files", damages)
    with scratch() as work, collected("cache: damaged files"):
        check_cache(runner, seed, priming, damages, checks, work)
