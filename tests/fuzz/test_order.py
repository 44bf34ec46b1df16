"""Hypothesis: any order and mix of summaries, cached or not, gives the --no-cache tables.

The lean stats cache once kept zero-length placeholders for tables it did not read and
trusted them later (issue #11): the order of the commands matters, so the sequence is
drawn, on valid reports (the seed itself, or with tables dropped, emptied or duplicated).
"""

from __future__ import annotations

import pytest
from hypothesis import given, reject
from hypothesis import strategies as st

from tests.fuzz.checks import NotApplicable, check_report
from tests.fuzz.profile import collected, count, fuzz_settings, scratch
from tests.fuzz.strategies import benign_mutations, command_sequences


@fuzz_settings(ci_examples=8)
@given(data=st.data())
def test_any_order_equals_uncached(seeds, runner, data) -> None:
    seed = data.draw(st.sampled_from(seeds), label="seed")
    mutations = data.draw(benign_mutations(seed), label="mutations")
    commands = data.draw(command_sequences(4), label="commands")
    same_process = data.draw(st.booleans(), label="same_process")
    count("cache: order of commands", mutations)
    with scratch() as work, collected("cache: order of commands"):
        try:
            check_report(runner, seed, mutations, commands, work, same_process)
        except NotApplicable:
            count("cache: order of commands", mutations, -1)
            reject()


#: The sequences issue #11 names, each command its own process on a fresh cache.
ISSUE_SEQUENCES = {
    "kernels then API": (("stats", "-r", "cuda_gpu_kern_sum"), ("stats", "-r", "cuda_api_sum")),
    "API then kernels": (("stats", "-r", "cuda_api_sum"), ("stats", "-r", "cuda_gpu_kern_sum")),
    "base names then mangled": (
        ("stats", "-r", "cuda_gpu_kern_sum:base"),
        ("stats", "-r", "cuda_gpu_kern_sum:mangled"),
    ),
}


@pytest.mark.parametrize("label", list(ISSUE_SEQUENCES))
def test_issue_sequences_equal_uncached(label: str, demo_seeds, runner) -> None:
    count("cache: order of commands (the issue's sequences)")
    with scratch() as work, collected("cache: order of commands (the issue's sequences)"):
        check_report(runner, demo_seeds[0], (), ISSUE_SEQUENCES[label], work)
