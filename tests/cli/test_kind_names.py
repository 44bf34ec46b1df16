"""Kind names: one reading (``analysis.kinds.resolve_kind``) for the CLI and the API alike."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from strata.analysis.diff import DIFF_KINDS, diff_sets
from strata.analysis.errors import AnalysisError
from strata.analysis.export import TRACE_KINDS
from strata.analysis.kinds import panel_kinds, resolve_kind, resolve_kinds
from strata.analysis.outliers import OUTLIER_KINDS
from strata.analysis.reportset import EVENT_KINDS, open_reports
from strata.app.cli import main
from tests.cli.conftest import one_line, plant

#: spelling -> the kind it names, in every list that holds that kind.
SPELLINGS = {
    "kernel": "kernels",
    "kernels": "kernels",
    "Kernels": "kernels",
    " kernel ": "kernels",
    "cuda-api": "cuda_api",
    "api": "cuda_api",
    "runtime": "cuda_api",
    "nvtx-gpu": "nvtx_gpu",
    "memcpys": "memcpy",
    "os-runtime": "osrt",
}


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> tuple:
    folder = tmp_path_factory.mktemp("kinds")
    return plant(folder / "a.sqlite"), plant(folder / "b.sqlite", slow=400)


@pytest.mark.parametrize("allowed", [EVENT_KINDS, TRACE_KINDS, DIFF_KINDS, OUTLIER_KINDS,
                                     panel_kinds()])  # fmt: skip
def test_every_spelling_names_its_kind_wherever_that_kind_is_taken(allowed) -> None:
    for spelling, kind in SPELLINGS.items():
        if kind in allowed:
            assert resolve_kind(spelling, allowed) == kind
    assert resolve_kinds("kernel,kernels,nvtx", ("kernels", "nvtx")) == ("kernels", "nvtx")


def test_an_unknown_kind_names_the_choices_and_the_nearest() -> None:
    with pytest.raises(AnalysisError) as caught:
        resolve_kind("kernal", EVENT_KINDS, " for parquet")
    text = str(caught.value)
    assert text.startswith("unknown kind 'kernal' for parquet; use kernels, memcpy")
    assert text.endswith("did you mean 'kernels'?")
    with pytest.raises(AnalysisError, match="no kind given"):
        resolve_kinds(" , ", EVENT_KINDS)


def test_the_api_reads_kinds_as_the_cli_does(pair) -> None:
    rs = open_reports(list(pair))
    pd.testing.assert_frame_equal(rs.events("Kernels"), rs.events("kernels"))
    pd.testing.assert_frame_equal(rs.events("cuda-api"), rs.events("cuda_api"))
    pd.testing.assert_frame_equal(rs.window(None, None, "kernel"), rs.window(None, None, "kernels"))
    got = rs.outliers(kinds=["kernel"], threshold=0.0)
    want = rs.outliers(kinds=["kernels"], threshold=0.0)
    pd.testing.assert_frame_equal(got.instances, want.instances)
    before, after = rs.subset([0]), rs.subset([1])
    pd.testing.assert_frame_equal(diff_sets(before, after, ["kernel"]),
                                  diff_sets(before, after, ["kernels"]))  # fmt: skip


def _diff_json(capsys, pair, kinds: str) -> list:
    assert main(["diff", *map(str, pair), "--kinds", kinds, "-f", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_diff_kinds_take_the_singular(pair, capsys) -> None:
    rows = _diff_json(capsys, pair, "kernel")
    assert rows == _diff_json(capsys, pair, "kernels")
    assert {r["Kind"] for r in rows} == {"kernels"}


@pytest.mark.parametrize("export_type", ["parquet", "chrome-trace"])
def test_export_kinds_take_the_singular(pair, tmp_path, export_type) -> None:
    outs = []
    for spelling in ("kernel", "kernels"):
        out = tmp_path / f"{spelling}{'.json' if export_type == 'chrome-trace' else ''}"
        assert main(["export", str(pair[0]), "--type", export_type, "--kinds", spelling,
                     "-o", str(out)]) == 0  # fmt: skip
        outs.append(out)
    if export_type == "chrome-trace":
        assert outs[0].read_text() == outs[1].read_text()
    else:
        assert sorted(p.name for p in outs[0].iterdir()) == ["kernels.parquet", "manifest.json"]


def test_a_mistyped_kind_is_one_line_with_the_nearest(pair, capsys) -> None:
    assert main(["diff", *map(str, pair), "--kinds", "kernal"]) == 2
    assert one_line(capsys.readouterr().err).endswith("did you mean 'kernels'?")
