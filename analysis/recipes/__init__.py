"""Multi-report analysis: recipes mapped over many reports and reduced (``main.py recipe``).

spec: nsys-sqlite.md §5. ``run_recipe(name, inputs, mode=...)`` runs a recipe serially, in a
process pool or on Dask; ``write_output`` writes its tables (Parquet + CSV), plots (PNG) and
summary into a folder that ``load_output`` reads back.
"""

from strata.analysis.recipes import (
    diff,
    gaps,
    histogram,
    nccl_straggler,
    nvtx_pace,
    pace,
    range_sums,
    rule_tables,
    summaries,
    util_maps,
)
from strata.analysis.recipes.base import (
    RECIPES,
    FilePartial,
    PlotSpec,
    Recipe,
    RecipeOptions,
    RecipeOutput,
    get_recipe,
    recipe_names,
    register,
)
from strata.analysis.recipes.output import (
    is_recipe_output,
    load_manifest,
    load_output,
    write_output,
)
from strata.analysis.recipes.runner import (
    MODE_ALIASES,
    MODES,
    RecipeRun,
    ReportFailure,
    mode_name,
    run_recipe,
)

__all__ = [
    "MODES",
    "MODE_ALIASES",
    "RECIPES",
    "FilePartial",
    "PlotSpec",
    "Recipe",
    "RecipeOptions",
    "RecipeOutput",
    "RecipeRun",
    "ReportFailure",
    "get_recipe",
    "is_recipe_output",
    "load_manifest",
    "load_output",
    "mode_name",
    "recipe_names",
    "run_recipe",
    "write_output",
]

# Every recipe, registered in one place (a worker process imports this package too).
for _recipe in (
    summaries.CudaGpuKernSum(),
    summaries.NvtxSum(),
    summaries.NvtxGpuProjSum(),
    summaries.CudaApiSum(),
    summaries.OsrtSum(),
    summaries.CudaGpuMemSizeSum(),
    summaries.CudaGpuMemTimeSum(),
    histogram.CudaGpuKernHist(),
    pace.CudaGpuKernPace(),
    nvtx_pace.NvtxPace(),
    nvtx_pace.NvtxGpuProjPace(),
    util_maps.CudaGpuTimeUtilMap(),
    util_maps.NcclGpuTimeUtilMap(),
    util_maps.GpuMetricUtilMap(),
    range_sums.MpiSum(),
    range_sums.NcclSum(),
    range_sums.NcclGpuProjSum(),
    gaps.GpuGaps(),
    gaps.GpuTimeUtil(),
    diff.Diff(),
    *rule_tables.cuda_rule_recipes(),
    rule_tables.NvtxGpuProjTrace(),
    nccl_straggler.NcclStraggler(),
):
    register(_recipe)
