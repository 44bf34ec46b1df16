"""DLProf-style aggregation: the real DLProf-profiled PyTorch run, checked against SQL, and
small planted reports (emit_nvtx ranges, backward ops, iterations, plain NVTX ranges)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from strata.analysis.dlprof.reports import DlprofOptions, analyze_report, dlprof_reports
from strata.analysis.dlprof.views import op_events, view_frame
from strata.analysis.errors import AnalysisError
from strata.analysis.reportset import ReportSet
from tests.analysis.test_recipes_data import LAUNCH_NS, K, write_report
from tests.conftest import REAL_DIR, requires_shared
from tests.helpers import sql_rows

DLPROF = REAL_DIR / "MohanadOdema__DLProf__nsys_profile.sqlite"
requires_dlprof = pytest.mark.skipif(not DLPROF.is_file(), reason=f"needs {DLPROF}")

# Every GPU op with its launching call (same correlation id and process), as SQL sees it.
_LAUNCHED = """
SELECT g.start, g.end, r.start, r.end, r.globalTid FROM (
  SELECT start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL
  UNION ALL SELECT start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY
  UNION ALL SELECT start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET) g
JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = g.correlationId
  AND g.globalPid = (r.globalTid & 0xFFFFFFFFFF000000)
"""


@pytest.fixture(scope="module")
def real(load_report):
    if not DLPROF.is_file():
        pytest.skip(f"needs {DLPROF}")
    return load_report(DLPROF)


@requires_shared
@requires_dlprof
def test_every_kernel_is_attributed_with_its_gpu_and_launch_times(real) -> None:
    tables = analyze_report(real).tables
    kernel = tables["kernel"]
    (count, gpu_ns), = sql_rows(DLPROF, "SELECT count(*), sum(end - start) "
                                "FROM CUPTI_ACTIVITY_KIND_KERNEL")  # fmt: skip
    ((api_ns,),) = sql_rows(
        DLPROF,
        "SELECT sum(r.end - r.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN "
        "CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId",
    )
    assert kernel["Calls"].sum() == count == len(tables["iteration"])
    assert kernel["Total GPU Time (ns)"].sum() == gpu_ns
    assert kernel["Total API Time (ns)"].sum() == api_ns
    # spec §9: all 46 kernels resolve to an op (the two conv2d calls).
    assert set(kernel["Op ID"]) == {"CONV2D_1", "CONV2D_2"}


@requires_shared
@requires_dlprof
def test_conv2d_ops_gpu_time_is_what_their_marker_ranges_launched(real) -> None:
    markers = sql_rows(
        DLPROF,
        "SELECT start, end, globalTid FROM NVTX_EVENTS WHERE text LIKE ? ORDER BY start",
        "{'mod': 'torch.nn.functional', 'op': 'conv2d'%",
    )
    launched = sql_rows(DLPROF, _LAUNCHED)
    expected = [
        sum(ge - gs for gs, ge, rs, re_, tid in launched if tid == t and s <= rs and re_ <= e)
        for s, e, t in markers
    ]
    cpu = [e - s for s, e, _t in markers]
    detailed = analyze_report(real).tables["detailed"].set_index("Op ID")
    assert [detailed.loc[f"CONV2D_{i}", "Total GPU Time (ns)"] for i in (1, 2)] == expected
    assert [detailed.loc[f"CONV2D_{i}", "Total CPU Time (ns)"] for i in (1, 2)] == cpu
    assert detailed.loc["CONV2D_1", "Direction"] == "fprop"
    assert detailed.loc["CONV2D_1", "TC Eligible"]
    assert not detailed.loc["CONV2D_1", "Using TC"]
    # Op Name: the funcStack with /<module> -> /module and (2) -> [2] (spec §3).
    assert detailed.loc["CONV2D_2", "Op Name"].startswith("/module/dummy_network::_call_impl/")
    assert "Conv2d::_call_impl[2]/" in detailed.loc["CONV2D_2", "Op Name"]


@requires_shared
@requires_dlprof
def test_op_ids_number_each_type_in_order_of_first_call(real) -> None:
    ops = analyze_report(real).tables["detailed"]
    texts = [t for (t,) in sql_rows(DLPROF, "SELECT text FROM NVTX_EVENTS WHERE text LIKE "
                                    "'{''mod'':%' ORDER BY start")]  # fmt: skip
    uniform_calls = sum("'op': 'uniform_'" in t for t in texts)
    uniform = ops[ops["Op Type"] == "uniform_"]
    assert uniform["No. Calls"].sum() == uniform_calls
    assert set(uniform["Op ID"]) == {f"UNIFORM__{i}" for i in range(1, len(uniform) + 1)}


@requires_shared
@requires_dlprof
def test_key_node_cuts_iterations_and_the_range_filters_every_report(real) -> None:
    ((first_end,),) = sql_rows(DLPROF, "SELECT min(end) FROM NVTX_EVENTS "
                               "WHERE text LIKE 'aten::add_, seq = %'")  # fmt: skip
    ((before,),) = sql_rows(
        DLPROF,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
        "ON r.correlationId = k.correlationId WHERE r.start <= ?",
        first_end,
    )
    whole = analyze_report(real, DlprofOptions(key_node="aten::add_"))
    assert whole.iterations["end_ns"].tolist()[0] == first_end
    assert (whole.tables["iteration"]["Iteration"] == 0).sum() == before
    second = analyze_report(real, DlprofOptions(key_node="aten::add_", iter_start=1))
    assert len(second.tables["iteration"]) == len(whole.tables["iteration"]) - before
    assert set(second.tables["kernel"]["Op ID"]) == {"CONV2D_2"}
    summary = second.tables["summary"].set_index("Metric")["Value"]
    assert summary["Aggregated Iterations"] == 1
    assert summary["Wall Clock Time (ns)"] == whole.iterations["duration_ns"].iloc[1]
    with pytest.raises(AnalysisError, match="outside its iterations"):
        analyze_report(real, DlprofOptions(key_node="aten::add_", iter_stop=2))


@requires_shared
@requires_dlprof
def test_summary_shares_and_advice_on_the_real_run(real) -> None:
    tables = analyze_report(real).tables
    summary = tables["summary"].set_index("Metric")["Value"]
    ((lo, hi),) = sql_rows(
        DLPROF,
        "SELECT min(s), max(e) FROM (SELECT start s, end e FROM NVTX_EVENTS UNION ALL "
        "SELECT start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION ALL "
        "SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL)",
    )
    assert summary["Wall Clock Time (ns)"] == hi - lo
    shares = [summary[k] for k in ("Tensor Core Kernel Duration %",
              "Non-Tensor Core Kernel Duration %", "Memory Duration %", "CPU Duration %",
              "Other Duration %")]  # fmt: skip
    assert sum(shares) == pytest.approx(100.0, abs=0.3)
    assert summary["Total Iterations"] == 1  # no key node in this run
    problems = " | ".join(tables["expert_systems"]["Problem"])
    assert "key node" in problems
    # conv2d twice and linear once: eligible, all fp32 kernels.
    assert "3 ops eligible to use Tensor Cores" in problems


# --------------------------------------------------------------------------- planted
def _step(t0: int, fwd_kernel: str) -> tuple[list[K], list[tuple[str, int, int]]]:
    """One planted training step at ``t0``: conv2d twice, add_, then conv2d's backward."""
    kernels = [K(fwd_kernel, t0 + 5_000, t0 + 9_000), K("elementwise", t0 + 12_000, t0 + 13_000),
               K("conv_fwd2", t0 + 22_000, t0 + 25_000),
               K("dgrad_engine", t0 + 45_000, t0 + 52_000)]  # fmt: skip
    ranges = [
        (f"ProfilerStep#{t0 // 100_000}", t0, t0 + 90_000),
        ("aten::conv2d, seq = 1", t0 + 1_000, t0 + 10_000),
        ("aten::cudnn_convolution, seq = 1", t0 + 2_000, t0 + 9_500),
        ("aten::add_, seq = 2", t0 + 11_000, t0 + 14_000),
        ("aten::conv2d, seq = 3", t0 + 20_000, t0 + 30_000),
        ("ConvolutionBackward0, seq = 1", t0 + 40_000, t0 + 60_000),
    ]
    return kernels, ranges


def planted_torch_report(tmp_path: Path) -> Path:
    k1, r1 = _step(100_000, "sm80_xmma_gemm_f16f16")
    k2, r2 = _step(200_000, "implicit_convolve_sgemm")
    return write_report(tmp_path / "torch.sqlite", kernels=k1 + k2, ranges=r1 + r2)


def test_planted_emit_nvtx_ops_directions_and_tensor_cores(tmp_path: Path, load_report) -> None:
    report = load_report(planted_torch_report(tmp_path))
    tables = analyze_report(report).tables
    detailed = tables["detailed"]
    conv = detailed[detailed["Op Name"] == "/ProfilerStep/aten::conv2d"]
    assert sorted(conv["Direction"]) == ["bprop", "fprop"]  # backward linked by seq = 1
    assert conv["Op ID"].nunique() == 1
    assert set(detailed["Op Name"]) >= {"/ProfilerStep/aten::conv2d[2]", "/ProfilerStep/aten::add_"}
    fprop = conv.set_index("Direction").loc["fprop"]
    assert fprop["No. Calls"] == 2  # one per step
    assert fprop["Total GPU Time (ns)"] == 4_000 + 4_000
    assert bool(fprop["Using TC"])  # the xmma kernel of step 1
    kernel = tables["kernel"].set_index("Kernel Name")
    assert bool(kernel.loc["sm80_xmma_gemm_f16f16", "Uses TC"])
    assert not bool(kernel.loc["implicit_convolve_sgemm", "Uses TC"])
    assert kernel.loc["dgrad_engine", "Direction"] == "bprop"
    assert kernel.loc["elementwise", "Total API Time (ns)"] == 2 * 100  # the planted calls
    groups = tables["group_node"].set_index("Name")
    assert groups.loc["/ProfilerStep/", "Num Calls Aggregated"] == 8
    assert groups.loc["/", "Total GPU Time (ns)"] == sum(
        k.end_ns - k.start_ns for k in _step(100_000, "a")[0] + _step(200_000, "b")[0]
    )


def test_planted_iterations_default_to_profiler_steps(tmp_path: Path, load_report) -> None:
    report = load_report(planted_torch_report(tmp_path))
    result = analyze_report(report, DlprofOptions(iter_start=1))
    assert result.iterations["end_ns"].tolist() == [190_000, 290_000]
    launches = result.tables["iteration"]
    assert set(launches["Iteration"]) == {1}
    assert launches["GPU Start Time (ns)"].min() == 205_000
    assert (launches["API Call Start (ns)"] == launches["GPU Start Time (ns)"] - LAUNCH_NS).all()
    summary = result.tables["summary"].set_index("Metric")["Value"]
    assert summary["Key Node"] == "ProfilerStep"
    assert summary["Wall Clock Time (ns)"] == 100_000
    busy = 4_000 + 1_000 + 3_000 + 7_000  # step 2's kernels, none overlapping
    assert summary["GPU Utilization %"] == round(100 * busy / 100_000, 1)


def test_plain_nvtx_ranges_make_leaf_ops_and_say_so(tmp_path: Path, load_report) -> None:
    path = write_report(
        tmp_path / "plain.sqlite",
        kernels=[K("gemm", 5_000, 8_000), K("relu", 15_000, 16_000), K("copy", 40_000, 41_000)],
        ranges=[("train_step", 0, 30_000), ("forward", 1_000, 20_000),
                ("layer.0", 2_000, 10_000), ("layer.1", 12_000, 18_000)],
    )  # fmt: skip
    tables = analyze_report(load_report(path)).tables
    detailed = tables["detailed"].set_index("Op Name")
    assert detailed.loc["/train_step/forward/layer.0", "Total GPU Time (ns)"] == 3_000
    assert detailed.loc["/train_step/forward/layer.1", "Total GPU Time (ns)"] == 1_000
    # The copy kernel launched after the last step ends in no iteration: left out.
    assert "copy" not in set(tables["kernel"]["Kernel Name"])
    assert "No framework op ranges" in " ".join(tables["expert_systems"]["Problem"])


def test_several_reports_stack_with_a_report_column(tmp_path: Path, load_report) -> None:
    one = load_report(planted_torch_report(tmp_path))
    other_dir = tmp_path / "b"
    other_dir.mkdir()
    two = load_report(planted_torch_report(other_dir))
    tables = dlprof_reports(ReportSet([one, two]), names=("op_type",))
    frame = tables["op_type"]
    assert frame.columns[0] == "Report"
    assert frame["Report"].nunique() == 2
    single = analyze_report(one).tables["op_type"]
    pd.testing.assert_frame_equal(
        frame[frame["Report"] == frame["Report"].iloc[0]].drop(columns="Report")
        .reset_index(drop=True), single,
    )  # fmt: skip
    with pytest.raises(AnalysisError, match="unknown DLProf report"):
        dlprof_reports(ReportSet([one]), names=("nope",))


def test_views_name_the_events_behind_a_row(tmp_path: Path, load_report) -> None:
    k1, r1 = _step(100_000, "sm80_xmma_gemm_f16f16")
    stray = K("stray_fill", 170_000, 171_000)  # launched inside the step but in no op
    report = load_report(write_report(tmp_path / "t.sqlite", kernels=[*k1, stray], ranges=r1))
    result = analyze_report(report)
    ops = view_frame(result, "op")
    assert (ops["gpu_ns"].diff().dropna() <= 0).all()
    loose = ops[ops["name"].str.startswith("unassociated_")]
    assert len(loose) == 1
    assert loose["gpu_ns"].iloc[0] == 1_000
    events = op_events(result, "op", loose["name"].iloc[0], "")
    # Its instance is the launching call itself; its GPU work the stray kernel.
    api, kernels = report.cuda_api, report.tables["kernels"]
    (call,) = events.instances.itertuples()
    assert call.table == "cuda_api"
    assert (api.start_ns[call.row], api.end_ns[call.row]) == (170_000 - LAUNCH_NS, call.end_ns)
    assert kernels.start_ns[events.rows["kernels"]].tolist() == [170_000]
    assert len(events.rows["nvtx"]) == 0
    bwd = op_events(result, "op", "/ProfilerStep/aten::conv2d", "bprop")
    assert kernels.start_ns[bwd.rows["kernels"]].tolist() == [145_000]
    assert report.nvtx.start_ns[bwd.rows["nvtx"]].tolist() == [140_000]
    assert op_events(result, "group_node", "nope/").instances.empty
    with pytest.raises(AnalysisError, match="unknown ops view"):
        view_frame(result, "kernel")
