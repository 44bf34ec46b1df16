"""``main.py diff``: the analysis.diff table through the shared printer; bad arguments exit 2."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from strata.app.cli import main
from tests.analysis.test_recipes_data import K, write_report


def _kernels(d: int) -> list[K]:
    return [K("k", 10_000 + i * 1_000, 10_000 + d + i * 1_000) for i in range(5)]


def _pair(tmp_path: Path) -> tuple[str, str]:
    before = write_report(tmp_path / "b.sqlite", kernels=_kernels(100))
    after = write_report(tmp_path / "a.sqlite", kernels=_kernels(200))
    return str(before), str(after)


def test_diff_prints_csv_json_and_groups(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    before, after = _pair(tmp_path)
    assert main(["diff", before, after, "--kinds", "kernels", "-f", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["Name"] == "k"
    assert rows[0]["Status"] == "slower"
    assert rows[0]["Total Delta (ns)"] == "500"
    assert main(["diff", "--before", before, before, "--after", after, "-f", "json"]) == 0
    first = json.loads(capsys.readouterr().out)[0]
    assert (first["Instances Before"], first["Instances After"]) == (10, 5)
    assert first["Med Delta"] == 100.0


@pytest.mark.parametrize(
    ("extra", "needle"),
    [([], "two reports"), (["--kinds", "osrt"], "unknown kind"),
     (["--confidence", "2"], "confidence")],
)  # fmt: skip
def test_bad_diff_arguments_exit_2(
    extra: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before, after = _pair(tmp_path)
    args = ["diff", before, after, *extra] if extra else ["diff", before]
    assert main(args) == 2
    assert needle in capsys.readouterr().err
