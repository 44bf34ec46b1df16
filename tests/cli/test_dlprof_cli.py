"""``main.py dlprof``: formats, the output folder, and one-line refusals (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.analysis.test_dlprof import planted_torch_report
from tests.helpers import run_cli


def test_json_and_csv_carry_the_asked_reports(tmp_path: Path) -> None:
    path = planted_torch_report(tmp_path)
    done = run_cli("dlprof", str(path), "-f", "json", "--reports", "kernel,expert_systems")
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert list(body) == ["kernel", "expert_systems"]
    assert sum(row["Calls"] for row in body["kernel"]) == 8
    assert all(isinstance(row["Uses TC"], bool) for row in body["kernel"])
    text = run_cli("dlprof", str(path), "--reports", "op_type").stdout
    assert text.startswith("# op_type\nOp Type,# Ops,# Calls,")


def test_output_folder_gets_one_file_per_report_and_may_be_rewritten(tmp_path: Path) -> None:
    path = planted_torch_report(tmp_path)
    out = tmp_path / "out"
    for _ in range(2):  # an earlier dlprof folder is replaced
        done = run_cli("dlprof", str(path), "-o", str(out), "--reports", "summary,kernel")
        assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.glob("dlprof_*")) == ["dlprof_kernel.csv",
                                                            "dlprof_summary.csv"]  # fmt: skip
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    done = run_cli("dlprof", str(path), "-o", str(other))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "not an earlier dlprof output" in done.stderr
    assert (other / "keep.txt").read_text() == "mine"


def test_bad_requests_are_one_line_errors(tmp_path: Path) -> None:
    path = planted_torch_report(tmp_path)
    before = path.read_bytes()
    for args, words in (
        (["--reports", "nope"], "unknown report"),
        (["--iter-stop", "7"], "outside its iterations"),
        (["--iter-start", "-1"], "0 or more"),
        (["--domains", "mine"], "no NVTX domain"),
        (["-o", str(path)], "-o"),
    ):
        done = run_cli("dlprof", str(path), *args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("strata: "), done.stderr
        assert done.stderr.count("\n") == 1, done.stderr
        assert words in done.stderr
    assert path.read_bytes() == before
