"""Hypothesis: mutated reports (hostile SQL values and structure; damaged bytes).

For each example: a seed report (the demo, or one of the smallest real reports), mutated;
``info`` and ``stats`` run uncached, then a drawn sequence of commands shares one cache
(each command its own process, or all in one). Properties (a)-(e) of
:func:`tests.fuzz.checks.check_report`.
"""

from __future__ import annotations

from hypothesis import given, reject
from hypothesis import strategies as st

from tests.fuzz.checks import NotApplicable, check_report
from tests.fuzz.profile import collected, count, fuzz_settings, scratch
from tests.fuzz.strategies import byte_mutations, command_sequences, sql_mutations


def _run(prop: str, runner, seed, mutations, commands, same_process: bool) -> None:
    count(prop, mutations)
    with scratch() as work, collected(prop):
        try:
            check_report(runner, seed, mutations, commands, work, same_process)
        except NotApplicable:
            count(prop, mutations, -1)  # not a case tried: SQLite refused the mutation
            reject()


@fuzz_settings(ci_examples=10)
@given(data=st.data())
def test_hostile_sql(seeds, runner, data) -> None:
    seed = data.draw(st.sampled_from(seeds), label="seed")
    mutations = data.draw(sql_mutations(seed), label="mutations")
    commands = data.draw(command_sequences(3), label="commands")
    same_process = data.draw(st.booleans(), label="same_process")
    _run(
        "report: hostile SQL values and structure", runner, seed, mutations, commands, same_process
    )


@fuzz_settings(ci_examples=8)
@given(data=st.data())
def test_damaged_bytes(seeds, runner, data) -> None:
    seed = data.draw(st.sampled_from(seeds), label="seed")
    mutations = data.draw(byte_mutations(seed), label="mutations")
    commands = data.draw(command_sequences(2), label="commands")
    _run("report: damaged bytes", runner, seed, mutations, commands, same_process=False)
