"""A damaged cache never crashes a process and never yields a wrong table.

Every file of a columnar-cache entry, complete or partial (what the lean stats read keeps), is
damaged in five ways
(one bit flipped in the middle, truncated to half, a range zeroed, replaced with garbage,
deleted); the next ``stats`` run, in a fresh process (a segfault fails the test), exits 0,
prints what ``--no-cache`` prints, and leaves an intact entry behind. One driver process per
damage kind runs all the files' cases one after the other, each on its own copy of the cache.

Also: a ``meta.json`` claiming absurd sizes is rejected without allocating them; an entry
that cannot be mapped for lack of memory is kept; a full or unusable cache folder costs a
warning only.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import random
import shutil
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from strata.analysis import _cachefiles, cache, open_report
from strata.analysis._tablespecs import event_tables
from strata.analysis.stats.lean import open_for_stats, wait_for_cache_writes
from strata.resources import demo
from tests.helpers import run_cli, run_python

DAMAGES = ("flip", "truncate", "zero", "garbage", "delete")
FULL_SPECS = "cuda_gpu_kern_sum,cuda_api_sum,nvtx_sum,osrt_sum"  # not all lean: the full model
LEAN_SPECS = "cuda_gpu_kern_sum,cuda_gpu_kern_sum:base,cuda_api_sum"
#: The files of a columnar-cache entry (test_entry_holds_exactly_these_files checks them).
FULL_FILES = sorted(
    [f"{k}.arrow" for k in event_tables()]
    + [f"{k}.keys.arrow" for k in event_tables()]
    + [f"{name}.frame.arrow" for name in cache._FRAMES]
    + ["strings.arrow", "meta.json"]
)
#: The files of the partial entry LEAN_SPECS leave.
LEAN_FILES = sorted(["meta.json", "strings.arrow", "kernels.arrow", "cuda_api.arrow"])

_DRIVER = """
import contextlib, io, json, os, sys
from strata.app.cli import main
report, specs, folders = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
for folder in folders:
    os.environ["STRATA_CACHE_DIR"] = folder
    print("== case", folder, file=sys.stderr, flush=True)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["stats", "-r", specs, report])
    print(json.dumps([folder, code, out.getvalue()]), flush=True)
"""


def _damage(path: Path, how: str) -> bool:
    """Damage one file in place; return whether its bytes changed."""
    data = path.read_bytes()
    n = len(data)
    if how == "delete":
        path.unlink()
        return True
    if how == "flip":
        new = bytearray(data)
        new[n // 2] ^= 0x10
    elif how == "truncate":
        new = bytearray(data[: n // 2])
    elif how == "zero":
        new = bytearray(data)
        new[n // 4 : n // 2] = bytes(n // 2 - n // 4)
    else:
        new = bytearray(random.Random(n).randbytes(n))
    path.write_bytes(bytes(new))
    return bytes(new) != data


def _entry_dir(folder: Path, report: Path) -> Path:
    return folder / "reports" / cache.cache_key(report)


def _intact(entry: Path, lean: bool) -> bool:
    """Whether every file of ``entry`` matches its meta.json record (no parsing), and the
    entry is partial (``lean``) or complete."""
    try:
        meta = _cachefiles.read_meta(entry / "meta.json")
    except (OSError, ValueError):
        return False
    records = meta["files"]
    return meta["partial"] is lean and all(
        (entry / name).is_file() and _cachefiles.file_record(entry / name) == record
        for name, record in records.items()
    )


class Damaged:
    """The outcome of every (file, damage) case of one cache kind."""

    def __init__(self, report: Path, work: Path, lean: bool) -> None:
        self.report, self.lean = report, lean
        specs = LEAN_SPECS if lean else FULL_SPECS
        env = {**os.environ, "STRATA_CACHE_DIR": str(work / "pristine")}
        expected = run_cli("stats", "--no-cache", "-r", specs, str(report), env=env)
        assert expected.returncode == 0, expected.stderr
        self.expected = expected.stdout
        assert run_cli("stats", "-r", specs, str(report), env=env).returncode == 0
        pristine = _entry_dir(work / "pristine", report)
        self.files = sorted(p.name for p in pristine.iterdir())
        self.changed: dict[tuple[str, str], bool] = {}
        folders: dict[str, list[str]] = {how: [] for how in DAMAGES}
        for name in self.files:
            for how in DAMAGES:
                folder = work / f"{how}-{name}"
                shutil.copytree(work / "pristine", folder)
                # Without the stored answers, so that the next run reads the damaged entry.
                shutil.rmtree(folder / "answers", ignore_errors=True)
                self.changed[name, how] = _damage(_entry_dir(folder, report) / name, how)
                folders[how].append(str(folder))
        with ThreadPoolExecutor(max_workers=2) as pool:
            runs = list(pool.map(lambda f: self._drive(specs, f), folders.values()))
        self.results = {k: v for run in runs for k, v in run.items()}

    def _drive(self, specs: str, folders: list[str]) -> dict[str, tuple[int, str, str]]:
        """Run the cases of one driver process; return folder -> (status, stdout, stderr)."""
        proc = run_python("-c", _DRIVER, str(self.report), specs, json.dumps(folders))
        errors = dict(
            (part.split("\n", 1) + [""])[:2] for part in proc.stderr.split("== case ")[1:]
        )
        results = {}
        for line in proc.stdout.splitlines():
            folder, code, out = json.loads(line)
            results[folder] = (code, out, errors.get(folder, ""))
        for folder in folders:  # a crash (segfault) ends the driver: its case has no line
            results.setdefault(folder, (proc.returncode, "", proc.stderr[-2000:]))
        return results

    def check(self, work: Path, name: str) -> None:
        for how in DAMAGES:
            folder = work / f"{how}-{name}"
            code, out, err = self.results[str(folder)]
            assert code == 0, (name, how, err)
            assert "Traceback" not in err, (name, how, err)
            assert out == self.expected, (name, how, "printed another table")
            assert _intact(_entry_dir(folder, self.report), self.lean), (name, how)
            if self.changed[name, how] and not (name == "meta.json" and how == "delete"):
                assert "discarding a damaged" in err, (name, how, err)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("damage")


@pytest.fixture(scope="module")
def small_report(work: Path) -> Path:
    (path,) = demo.build_demo_reports(work / "demo", ranks=1, steps=1)
    return path


@pytest.fixture(scope="module")
def full_cases(small_report: Path, work: Path) -> Damaged:
    return Damaged(small_report, work / "full", lean=False)


@pytest.fixture(scope="module")
def lean_cases(small_report: Path, work: Path) -> Damaged:
    return Damaged(small_report, work / "lean", lean=True)


def test_entry_holds_exactly_these_files(full_cases: Damaged, lean_cases: Damaged) -> None:
    assert full_cases.files == FULL_FILES
    assert lean_cases.files == LEAN_FILES


@pytest.mark.parametrize("name", FULL_FILES)
def test_damaged_columnar_cache_file_is_rebuilt(full_cases: Damaged, work: Path, name: str) -> None:
    full_cases.check(work / "full", name)


@pytest.mark.parametrize("name", LEAN_FILES)
def test_damaged_partial_entry_file_is_rebuilt(lean_cases: Damaged, work: Path, name: str) -> None:
    lean_cases.check(work / "lean", name)


# -- in-process cases: nothing here hands damaged bytes to Arrow or NumPy ------------------


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("STRATA_CACHE_DIR", str(root))
    return root


@pytest.fixture
def report_copy(small_report: Path, tmp_path: Path) -> Path:
    path = tmp_path / "report.sqlite"
    shutil.copyfile(small_report, path)
    return path


def _rewrite_meta(meta_path: Path, change) -> None:
    """Change meta.json and give it a valid checksum: only the content checks remain."""
    meta = _cachefiles.read_meta(meta_path)
    change(meta)
    _cachefiles.write_meta(meta_path, meta)


def _peak_bytes(fn) -> tuple[object, int]:
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_meta_claiming_absurd_sizes_is_rejected_without_allocating(
    private_cache: Path, report_copy: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fresh = open_report(report_copy, use_cache=False)
    open_report(report_copy)
    meta_path = _entry_dir(private_cache, report_copy) / "meta.json"

    def absurd(meta: dict) -> None:
        meta["rows"]["kernels"] = 2**40
        meta["layout"]["kernels"]["constants"] = {
            name: [0, "<i8"] for name in meta["layout"]["kernels"]["columns"]
        }  # every column "constant": only meta.json would say how many rows there are

    _rewrite_meta(meta_path, absurd)
    with caplog.at_level(logging.WARNING):
        report, peak = _peak_bytes(lambda: open_report(report_copy))
    assert peak < 64 << 20
    assert len(report.kernels) == len(fresh.kernels)
    assert "discarding a damaged cache entry" in caplog.text
    assert _intact(meta_path.parent, lean=False)


def test_partial_meta_claiming_absurd_rows_is_rejected_without_allocating(
    private_cache: Path, report_copy: Path, caplog: pytest.LogCaptureFixture
) -> None:
    expected = len(open_for_stats(report_copy, ["cuda_api_sum"], use_cache=False).cuda_api)
    open_for_stats(report_copy, ["cuda_api_sum"])
    wait_for_cache_writes()
    entry = _entry_dir(private_cache, report_copy)

    def absurd(meta: dict) -> None:
        meta["rows"]["cuda_api"] = 2**40
        meta["layout"]["cuda_api"]["constants"] = {
            name: [0, "<i8"] for name in meta["layout"]["cuda_api"]["columns"]
        }
        meta["files"]["cuda_api.arrow"][0] = 2**45

    _rewrite_meta(entry / "meta.json", absurd)
    with caplog.at_level(logging.WARNING):
        report, peak = _peak_bytes(lambda: open_for_stats(report_copy, ["cuda_api_sum"]))
        wait_for_cache_writes()
    assert peak < 64 << 20
    assert len(report.cuda_api) == expected > 0
    assert "discarding a damaged cache entry" in caplog.text
    assert _intact(entry, lean=True)


@pytest.mark.parametrize(
    "error", [OSError(errno.ENOMEM, "Cannot allocate memory"), MemoryError()], ids=repr
)
def test_entry_that_cannot_be_mapped_is_kept(
    private_cache: Path,
    report_copy: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    error: BaseException,
) -> None:
    open_report(report_copy)
    entry = _entry_dir(private_cache, report_copy)
    before = {p.name: p.stat().st_mtime_ns for p in entry.iterdir()}

    def no_memory(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr(_cachefiles.mmap, "mmap", no_memory)
    with caplog.at_level(logging.WARNING):
        report = open_report(report_copy)
    assert len(report.kernels) == len(open_report(report_copy, use_cache=False).kernels) > 0
    assert "cannot use the cache entry" in caplog.text
    assert {p.name: p.stat().st_mtime_ns for p in entry.iterdir()} == before
    monkeypatch.undo()
    assert _intact(entry, lean=False)


def test_partial_entry_that_cannot_be_mapped_is_kept(
    private_cache: Path,
    report_copy: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    open_for_stats(report_copy, ["cuda_gpu_kern_sum"])
    wait_for_cache_writes()
    entry = _entry_dir(private_cache, report_copy)
    before = {p.name: p.stat().st_mtime_ns for p in entry.iterdir()}

    def no_memory(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(_cachefiles.mmap, "mmap", no_memory)
    with caplog.at_level(logging.WARNING):
        report = open_for_stats(report_copy, ["cuda_gpu_kern_sum"])
        wait_for_cache_writes()
    assert len(report.kernels) > 0
    assert "cannot use the cache entry" in caplog.text
    # The report read holds nothing the entry lacks: the entry is not rewritten.
    assert {p.name: p.stat().st_mtime_ns for p in entry.iterdir()} == before


def test_full_cache_folder_costs_a_warning(
    private_cache: Path,
    report_copy: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache.pa, "OSFile", disk_full)
    with caplog.at_level(logging.WARNING):
        lean = open_for_stats(report_copy, ["cuda_api_sum"])
        wait_for_cache_writes()
        assert "could not write the cache entry" in caplog.text
        caplog.clear()
        report = open_report(report_copy)
    assert len(report.kernels) > 0
    assert len(lean.cuda_api) == len(report.cuda_api) > 0
    assert "could not write the cache entry" in caplog.text
    assert not [p for p in (private_cache / "reports").iterdir()]


@pytest.mark.parametrize("specs", [FULL_SPECS, LEAN_SPECS])
def test_unusable_cache_folder_costs_a_warning(
    small_report: Path, tmp_path: Path, specs: str
) -> None:
    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("a file where the cache folder should be")
    env = {**os.environ, "STRATA_CACHE_DIR": str(not_a_folder)}
    proc = run_cli("stats", "-r", specs, str(small_report), env=env)
    uncached = run_cli("stats", "--no-cache", "-r", specs, str(small_report), env=env)
    assert proc.returncode == uncached.returncode == 0, proc.stderr
    assert proc.stdout == uncached.stdout
    assert "WARNING" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_file_in_place_of_an_entry_folder_is_replaced(
    private_cache: Path, report_copy: Path
) -> None:
    entry = _entry_dir(private_cache, report_copy)
    entry.parent.mkdir(parents=True)
    entry.write_text("not a folder")
    lean = open_for_stats(report_copy, ["cuda_api_sum"])  # before the full entry exists
    wait_for_cache_writes()
    assert _intact(entry, lean=True)
    report = open_report(report_copy)  # replaces the partial entry
    assert len(lean.cuda_api) == len(report.cuda_api) > 0
    assert _intact(entry, lean=False)


def test_other_entry_with_odd_meta_does_not_stop_publishing(
    private_cache: Path, report_copy: Path
) -> None:
    # Pruning reads the other entries' meta.json: one that is JSON but not an object.
    odd = private_cache / "reports" / "0123456789abcdef01234567"
    odd.mkdir(parents=True)
    (odd / "meta.json").write_text("[1, 2]")
    report = open_report(report_copy)
    assert len(report.kernels) > 0
    assert _intact(_entry_dir(private_cache, report_copy), lean=False)


_FORGED_FULL = {
    "files": lambda m: m.update(files=[]),
    "layout": lambda m: m["layout"].update(kernels="x"),
    "rows": lambda m: m["rows"].update(kernels="many"),
    "format": lambda m: m.update(format=5),
    "info": lambda m: m.update(info=3),
    "record": lambda m: m["files"].update({"strings.arrow": {"size": 1}}),
}
_FORGED_LEAN = {
    "partial": lambda m: m.update(partial="yes"),
    "rows": lambda m: m["rows"].update(cuda_api="many"),
    "kinds": lambda m: m["rows"].update(bogus=0),
    "info": lambda m: m.update(info="x"),
    "columns": lambda m: m["layout"]["cuda_api"].update(columns=["duration_ns"]),
    "anchor": lambda m: m["layout"]["cuda_api"]["constants"].update(duration_ns=[0, "<i8"]),
}


@pytest.mark.parametrize("forged", sorted(_FORGED_FULL))
def test_meta_with_a_valid_checksum_but_wrong_types_is_rejected(
    private_cache: Path, report_copy: Path, caplog: pytest.LogCaptureFixture, forged: str
) -> None:
    expected = len(open_report(report_copy).cuda_api)
    entry = _entry_dir(private_cache, report_copy)
    _rewrite_meta(entry / "meta.json", _FORGED_FULL[forged])
    with caplog.at_level(logging.WARNING):
        assert len(open_report(report_copy).cuda_api) == expected
    assert "discarding a damaged cache entry" in caplog.text
    assert _intact(entry, lean=False)


@pytest.mark.parametrize("forged", sorted(_FORGED_LEAN))
def test_partial_meta_with_a_valid_checksum_but_wrong_types_is_rejected(
    private_cache: Path, report_copy: Path, caplog: pytest.LogCaptureFixture, forged: str
) -> None:
    expected = len(open_for_stats(report_copy, ["cuda_api_sum"]).cuda_api)
    wait_for_cache_writes()
    entry = _entry_dir(private_cache, report_copy)
    _rewrite_meta(entry / "meta.json", _FORGED_LEAN[forged])
    with caplog.at_level(logging.WARNING):
        assert len(open_for_stats(report_copy, ["cuda_api_sum"]).cuda_api) == expected
        wait_for_cache_writes()
    assert "discarding a damaged cache entry" in caplog.text
    assert _intact(entry, lean=True)
