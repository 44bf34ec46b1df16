"""docs/notebook.md: its python blocks run, in order, in one namespace, on real reports."""

from __future__ import annotations

import contextlib
import io
import re

from tests.conftest import REAL_DIR, ROOT, requires_shared

PAGE = ROOT / "docs" / "notebook.md"


def _blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


@requires_shared
def test_the_notebook_page_runs(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    # The page names the shared reports where this project keeps them; run it on this copy.
    blocks = _blocks(PAGE.read_text().replace("/work/shared/reports/real", str(REAL_DIR)))
    assert len(blocks) >= 5
    namespace: dict = {"__name__": "notebook"}
    for number, block in enumerate(blocks, 1):
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(block, f"{PAGE.name} block {number}", "exec"), namespace)  # noqa: S102


def test_the_readme_links_the_notebook_page() -> None:
    assert "docs/notebook.md" in (ROOT / "README.md").read_text()


# -- docs/notebook.ipynb: the API tutorial on the demo reports ----------------------------------

NOTEBOOK = ROOT / "docs" / "notebook.ipynb"


def test_the_api_notebook_runs_on_the_demo_reports(tmp_path, monkeypatch) -> None:
    import tempfile

    from strata.resources.demo import demo_truth
    from tests.helpers import run_notebook

    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    namespace = run_notebook(NOTEBOOK, cwd=tmp_path)
    truth = demo_truth(ranks=4, steps=12)
    straggler = truth.file_names[truth.straggler_rank]
    # The planted facts, found by the notebook's own questions.
    assert namespace["summary"]["worst_straggler"].tolist() == [straggler]
    assert namespace["found"].reports["report"].iloc[0] == straggler
    slow = {(p.rank, p.duration_ns) for p in truth.slow_instances}
    instances = namespace["found"].instances
    found = {
        (int(r.report_index), int(r.duration_ns))
        for r in instances.itertuples()
        if r.name == truth.slow_kernel_name
    }
    assert slow <= found
    assert set(namespace["gaps"]["report"]) <= set(truth.file_names)
    assert list(namespace["pace"].columns) == ["Iteration", *truth.file_names]
    assert namespace["_figures"] == 2


def test_the_api_page_lists_every_public_report_set_method() -> None:
    from strata.analysis import ReportSet

    page = (ROOT / "docs" / "api.md").read_text()
    public = [n for n in dir(ReportSet) if not n.startswith("_")]
    missing = [n for n in public if f"`{n}" not in page]
    assert not missing, missing
    for page_name in ("docs/api.md", "docs/notebook.ipynb"):
        assert page_name.removeprefix("docs/") in (ROOT / "docs" / "notebook.md").read_text()
