"""``stats`` and ``analyze`` frame their results alike: one framing (analysis.stats.text)
prints the ``Processing`` line, the SKIPPED line and ``-q`` for both, and names the ``-o``
files alike, on a real report that has no CUDA data (both the summary and the rule SKIP it)."""

from __future__ import annotations

import pytest

from strata.analysis.escape import escape_text
from strata.analysis.rules import RULE_FORMATS, format_rule_results, run_rule
from strata.analysis.rules.format import rule_file_section
from strata.analysis.stats import format_results, run_report
from strata.analysis.stats.text import file_section
from tests.conftest import REAL_DIR, requires_shared

ICON_CPU = REAL_DIR / "NTHU-SC__ISC25-ICON-C__cpu.sqlite"  # CPU samples only, no CUDA


@pytest.fixture(scope="module")
def skipped(load_report):
    """A summary and a rule, each with options, both SKIPPED on the same report."""
    report = load_report(ICON_CPU)
    summary = run_report(report, "cuda_gpu_kern_sum:base")
    rule = run_rule(report, "cuda_api_sync:rows=3")
    assert summary.skipped
    assert rule.skipped
    return report.name, summary, rule


@requires_shared
@pytest.mark.parametrize("fmt", RULE_FORMATS)
def test_a_skipped_summary_and_a_skipped_rule_print_alike(skipped, fmt: str) -> None:
    name, summary, rule = skipped
    printed = {
        "cuda_gpu_kern_sum.py](base)": (summary, format_results({name: [summary]}, fmt)),
        "cuda_api_sync.py](rows=3)": (rule, format_rule_results({name: [rule]}, fmt)),
    }
    for script, (result, text) in printed.items():
        head, rest = text.split("\n", 1)
        assert head == f"Processing [{escape_text(name)}] with [{script}... "
        assert rest == f"SKIPPED: {escape_text(result.skipped)}\n\n"
    assert format_results({name: [summary]}, fmt, quiet=True) == ""
    assert format_rule_results({name: [rule]}, fmt, quiet=True) == ""


@requires_shared
def test_stats_and_analyze_name_their_output_files_alike(skipped) -> None:
    name, summary, rule = skipped
    target = "out_cuda.csv"
    sections = {
        "cuda_gpu_kern_sum.py](base)": lambda **kw: file_section(
            name, summary, "csv", None, target, **kw
        ),
        "cuda_api_sync.py](rows=3)": lambda **kw: rule_file_section(
            name, rule, "csv", None, target, **kw
        ),
    }
    for script, section in sections.items():
        head = f"Processing [{escape_text(name)}] with [{script} to [{target}]..."
        result = summary if "kern" in script else rule
        # A file that is there and may not be replaced: nothing to write.
        assert section(exists=True) == (f"{head} SKIPPED: output file {target} exists.\n\n", None)
        # A SKIPPED result: the file is written empty, as nsys leaves it.
        assert section() == (f"{head} SKIPPED: {escape_text(result.skipped)}\n\n", "")
        assert section(quiet=True) == ("", "")
