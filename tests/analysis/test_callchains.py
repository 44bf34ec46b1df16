"""Call chains (SAMPLING_CALLCHAINS, CUDA_CALLCHAINS) and the samples' call trees, checked
against the real reports read with sqlite3; a forged cached chain frame is not trusted."""

from __future__ import annotations

import logging
import shutil
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from strata.analysis import _cachefiles, cache, open_report
from strata.analysis.calltree import call_tree, sample_stacks
from tests.conftest import REAL_DIR, requires_shared
from tests.helpers import sql_rows

SAXPY = REAL_DIR / "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
ICON_CPU = REAL_DIR / "NTHU-SC__ISC25-ICON-C__cpu.sqlite"
EX_GPU = REAL_DIR / "extra-p__extrap__ex-gpu.s10.sqlite"

_FRAMES = (
    "SELECT c.id, c.stackDepth, coalesce(s.value, ''), coalesce(m.value, '') FROM {t} c "
    "LEFT JOIN StringIds s ON s.id = c.symbol LEFT JOIN StringIds m ON m.id = c.module "
    "ORDER BY c.id, c.stackDepth"
)


def _texts(report, frame):
    lookup = report.strings.lookup
    return list(
        zip(frame["chain_id"].tolist(), frame["depth"].tolist(),
            lookup(frame["symbol"].to_numpy(), missing="").tolist(),
            lookup(frame["module"].to_numpy(), missing="").tolist(), strict=True)
    )  # fmt: skip


@requires_shared
@pytest.mark.parametrize("path", [SAXPY, EX_GPU], ids=lambda p: p.stem[:24])
def test_chain_frames_are_the_tables(load_report, path) -> None:
    for use_cache in (False, True, True):  # uncached; written; read back
        report = load_report(path) if not use_cache else open_report(path, use_cache=True)
        assert _texts(report, report.sample_chains) == sql_rows(
            path, _FRAMES.format(t="SAMPLING_CALLCHAINS")
        )
        assert _texts(report, report.cuda_chains) == sql_rows(
            path, _FRAMES.format(t="CUDA_CALLCHAINS")
        )
    expected = sql_rows(path, "SELECT coalesce(callchainId, -1) FROM CUPTI_ACTIVITY_KIND_RUNTIME")
    assert Counter(report.cuda_api["callchain_id"].tolist()) == Counter(c for (c,) in expected)


def _by_depth(path: Path, outermost: bool) -> Counter:
    pick = "max" if outermost else "min"
    rows = sql_rows(
        path, f"SELECT coalesce(s.value, ''), coalesce(m.value, '') FROM SAMPLING_CALLCHAINS c "
        f"JOIN (SELECT id, {pick}(stackDepth) AS d FROM SAMPLING_CALLCHAINS GROUP BY id) x "
        "ON x.id = c.id AND x.d = c.stackDepth JOIN COMPOSITE_EVENTS e ON e.id = c.id "
        "LEFT JOIN StringIds s ON s.id = c.symbol LEFT JOIN StringIds m ON m.id = c.module",
    )  # fmt: skip
    return Counter(rows)


@requires_shared
@pytest.mark.parametrize("path", [SAXPY, ICON_CPU], ids=lambda p: p.stem[:24])
def test_call_trees_count_the_samples(load_report, path) -> None:
    report = load_report(path)
    stacks = sample_stacks(report)
    (samples,) = sql_rows(path, "SELECT count(*) FROM COMPOSITE_EVENTS")[0]
    (chained,) = sql_rows(
        path, "SELECT count(DISTINCT e.id) FROM COMPOSITE_EVENTS e JOIN SAMPLING_CALLCHAINS c "
        "ON c.id = e.id"
    )[0]  # fmt: skip
    top, bottom = call_tree(stacks), call_tree(stacks, bottom_up=True)
    assert top.samples == bottom.samples == samples
    for tree, outermost in ((top, True), (bottom, False)):
        frame = tree.to_frame()
        roots = frame[frame["level"] == 0]
        keys = zip(roots["symbol"], roots["module"], strict=True)
        got = Counter(dict(zip(keys, roots["total"], strict=True)))
        assert got == _by_depth(path, outermost)
        assert int(frame["self"].sum()) == chained
        # Top-down, a node's total is its self plus its children's totals; bottom-up, its
        # callers' totals never pass it (a chain may end at it).
        children = frame[frame["parent"] >= 0].groupby("parent")["total"].sum()
        below = children.reindex(range(len(frame)), fill_value=0)
        if tree.bottom_up:
            assert (below <= frame["total"]).all()
        else:
            assert (frame["self"] + below == frame["total"]).all()
        # Preorder: each node follows its parent.
        assert (frame["parent"] < frame.index).all()
    # Top-down self = samples that stopped there: the bottom-up roots, per frame.
    frame = top.to_frame()
    selfs = frame.groupby(["symbol", "module"])["self"].sum()
    assert Counter({k: v for k, v in selfs.items() if v}) == _by_depth(path, False)


@requires_shared
def test_forged_chain_frame_in_the_cache_is_discarded(tmp_path, monkeypatch, caplog) -> None:
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "saxpy.sqlite"
    shutil.copyfile(SAXPY, path)
    expected = _texts(open_report(path), open_report(path, use_cache=True).sample_chains)
    (entry,) = (tmp_path / "cache" / "reports").iterdir()
    name = "sample_chains.frame.arrow"
    forged = pa.ipc.open_file(pa.memory_map(str(entry / name))).read_all().to_pandas()
    forged.loc[0, "symbol"] = 1 << 30  # beyond the string table: a name from nowhere
    (entry / name).unlink()
    record, _ = cache._write_table(entry / name, pa.Table.from_pandas(forged))
    meta = _cachefiles.read_meta(entry / "meta.json")
    meta["files"][name] = record
    _cachefiles.write_meta(entry / "meta.json", meta)
    with caplog.at_level(logging.WARNING):
        report = open_report(path, use_cache=True)
    assert "discarding a damaged cache entry" in caplog.text
    assert _texts(report, report.sample_chains) == expected
