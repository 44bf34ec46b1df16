"""Every recipe's output ends with the ``files`` table of the reports it reduced, in rank order,
and names the same reports in its file list (one builder, ``Recipe.output``, serves them all)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from strata.analysis.errors import AnalysisError
from strata.analysis.recipes import RECIPES, RecipeOptions, run_recipe
from strata.analysis.recipes.range_sums import Durations, NcclGpuProjSum
from strata.analysis.recipes.runner import NoReportError
from strata.resources import demo


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two generated ranks of one run (their file names sort as their ranks)."""
    return demo.build_demo_reports(tmp_path_factory.mktemp("ranks"), ranks=2, steps=1)


def _options(name: str) -> RecipeOptions:
    # The pace recipes follow one name: a kernel of every layer, or the step's NVTX range.
    if name == "cuda_gpu_kern_pace":
        return RecipeOptions(kernel_name="vectorized_elementwise_kernel")
    if name in ("nvtx_pace", "nvtx_gpu_proj_pace"):
        return RecipeOptions(kernel_name="train_step")
    return RecipeOptions()


@pytest.mark.parametrize("name", sorted(n for n, r in RECIPES.items() if r.takes_reports))
def test_a_recipe_output_lists_its_reports_last(name: str, two_ranks: list[Path]) -> None:
    try:
        run = run_recipe(name, two_ranks, _options(name))
    except NoReportError:
        pytest.skip(f"the demo reports hold no data for {name}")
    except AnalysisError as exc:  # the heatmaps' own words for it
        if not str(exc).startswith("no report gave data"):
            raise
        pytest.skip(f"the demo reports hold no data for {name}")
    files = run.output.tables["files"]
    assert list(run.output.tables)[-1] == "files"
    assert list(files["File"]) == run.output.files
    assert files["Rank"].to_numpy().tolist() == list(range(len(run.output.files)))
    assert files["Rank"].dtype == np.int64
    assert set(files["Path"]) <= {str(p.resolve()) for p in two_ranks}
    assert run.output.recipe == name


def test_a_report_with_one_projected_nccl_range_sums_it(two_ranks: list[Path]) -> None:
    """One NCCL range of a demo rank (ncclAllReduce) launches GPU work: its projection is the
    rank's one event, a group of its own (pandas' groupby took a key array of one element
    for a list of keys, and nccl_gpu_proj_sum failed with a KeyError)."""
    durations = NcclGpuProjSum().map(two_ranks[0], RecipeOptions())
    assert isinstance(durations, Durations)
    assert durations.names == ("ncclAllReduce",)
    assert [len(v) for v in durations.values] == [1]
    assert durations.values[0].dtype == np.int64
    assert durations.values[0][0] > 0
