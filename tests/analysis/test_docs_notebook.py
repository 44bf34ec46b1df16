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
