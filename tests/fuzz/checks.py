"""The properties, as procedures shared by the named-class tests and the Hypothesis tests.

* :func:`check_report` -- a mutated report: (a) only clean errors, (b) bounded time (the
  runner kills a job past its limit), (c) inputs unchanged, (d) every cached command gives
  what ``--no-cache`` gives (the column path; the cached runs take the SQL path where
  :mod:`analysis.stats.compute` chooses it), for a sequence of commands sharing one cache;
  (e) every CSV kernel or CUDA API summary printed with exit 0 agrees with plain SQL
  (:mod:`tests.fuzz.oracle`), and (f) ``stats`` accepts the report exactly when ``info``
  does (one validation, whichever summaries run);
* :func:`check_cache` -- a damaged cache: no crash, and the same output as ``--no-cache``,
  on the damaged run and on the run after it.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from strata.analysis.stats.sql import SQL_REPORTS
from tests.fuzz import oracle
from tests.fuzz.harness import (
    FuzzFailure,
    JobResult,
    Runner,
    StepResult,
    check_clean,
    check_same,
    check_unchanged,
    failure,
    first_difference,
    folder_state,
)
from tests.fuzz.mutations import CacheDamage, Seed, WalPending, apply_all, cache_files

__all__ = ["NotApplicable", "argv", "check_cache", "check_report", "prepare"]

Command = tuple[str, ...]


def argv(command: Command, report: Path, no_cache: bool = False) -> list[str]:
    """``command`` (``("stats", "-r", "x")``) as an argv on ``report``."""
    return [*command, *(["--no-cache"] if no_cache else []), str(report)]


class NotApplicable(Exception):
    """The drawn mutation cannot be applied to this seed (the example is rejected)."""


def prepare(seed: Seed, mutations: tuple, work: Path) -> Path:
    """Copy the seed to ``work/in/`` (its own folder) and mutate the copy; return its path.

    Raises NotApplicable when SQLite refuses a mutation (e.g. a column dropped that an
    index uses, a row duplicated in a table with a UNIQUE constraint).
    """
    folder = work / "in"
    folder.mkdir(parents=True)
    report = folder / seed.path.name
    shutil.copyfile(seed.path, report)
    try:
        apply_all(report, mutations)
    except sqlite3.Error as exc:
        raise NotApplicable(f"{mutations!r}: {exc}") from exc
    return report


def _steps(job: JobResult, context: str) -> list[StepResult]:
    job.check_alive(context)
    for step in job.steps:
        check_clean(step, context=context)
    return job.steps


def _truths(runner: Runner, commands: Sequence[Command], report: Path, work: Path, ctx: str):
    """Run each distinct command with --no-cache; return command -> StepResult."""
    distinct = list(dict.fromkeys(commands))
    probe = work / "no-cache-dir"
    # The truth is the column path; the cached runs choose (the SQL path for a small report
    # without a cache entry), so that every mutated report compares the two paths too.
    env = {"STRATA_CACHE_DIR": str(probe), "STRATA_STATS_PATH": "columns"}
    job = runner.run([argv(c, report, True) for c in distinct], env)
    steps = _steps(job, ctx + " (uncached)")
    if cache_files(probe):
        written = [str(p.relative_to(probe)) for p in cache_files(probe)]
        raise failure("NoCacheWroteCache", f"[{ctx}] --no-cache wrote {written[:5]}")
    truth = dict(zip(distinct, steps, strict=True))
    # The SQL path, wherever it can answer: the same bytes, the same refusals.
    stats = [c for c in distinct if _sql_served(c)]
    job = runner.run([argv(c, report, True) for c in stats], {**env, "STRATA_STATS_PATH": "sql"})
    for command, step in zip(stats, _steps(job, ctx + " (SQL path)"), strict=True):
        check_same(step, truth[command], ctx + " (SQL path)")
        if step.err != truth[command].err:
            raise failure(
                "SqlPathMessageDiffers",
                f"{step.where()}  [{ctx}]: the SQL path says {step.err.strip()[-300:]!r}, "
                f"the column path {truth[command].err.strip()[-300:]!r}",
            )
    return truth


def _sql_served(command: Command) -> bool:
    """Whether ``command`` is a ``stats`` run the SQL path may answer (its summaries)."""
    if command[0] != "stats" or "-r" not in command:
        return False
    specs = command[command.index("-r") + 1].split(",")
    return all(s.strip() in SQL_REPORTS for s in specs if s.strip())


def check_report(
    runner: Runner,
    seed: Seed,
    mutations: tuple,
    commands: Sequence[Command],
    work: Path,
    same_process: bool = False,
) -> list[StepResult]:
    """Properties (a)-(e) on ``seed`` mutated by ``mutations``; return the cached steps."""
    report = prepare(seed, mutations, work)
    ctx = f"{seed!r} mutated by {list(mutations)!r}; commands {list(commands)!r}"
    before = folder_state(report.parent)
    truth = _truths(runner, [*commands, ("stats",), ("info",)], report, work, ctx)
    check_unchanged(before, report.parent, ctx)
    if mutations and all(getattr(m, "valid", False) for m in mutations):
        _check_opens(truth[("info",)], truth[("stats",)], ctx=ctx)
    env = {"STRATA_CACHE_DIR": str(work / "cache")}
    if same_process:
        steps = _steps(runner.run([argv(c, report) for c in commands], env), ctx)
    else:
        steps = [_steps(runner.run([argv(c, report)], env), ctx)[0] for c in commands]
    check_unchanged(before, report.parent, ctx)
    for command, step in zip(commands, steps, strict=True):
        check_same(step, truth[command], ctx)
    for step in [*truth.values(), *steps]:
        if step.rc == 0 and "csv" in step.argv:
            oracle.compare(report, step, ctx)
    if any(isinstance(m, WalPending) for m in mutations):
        _check_wal(runner, report, truth[("stats",)], work, ctx)
    _check_same_validation(truth, ctx)
    return steps


def _check_same_validation(truth: dict[Command, StepResult], ctx: str) -> None:
    """``stats`` (lean or full, any summaries) accepts a report exactly when ``info`` does."""
    info = truth[("info",)]
    for command, step in truth.items():
        if command[0] == "stats" and (step.rc == 0) != (info.rc == 0):
            if info.rc == 0 and _summary_overflow(step):
                continue  # the report is valid; one total does not fit (nsys stops too)
            raise failure(
                "StatsValidationDiffersFromInfo",
                f"{step.where()}  [{ctx}]: exit {step.rc}, but info --no-cache exits {info.rc}"
                f"\nstats: {step.err.strip()[-300:]}\ninfo: {info.err.strip()[-300:]}",
            )


def _summary_overflow(step: StepResult) -> bool:
    """Whether ``step`` stopped on a summary total beyond int64 (one group's total, or the
    sum of the totals that the Time(%) column divides by), not on the report."""
    lines = step.err.strip().splitlines()
    return bool(lines) and all(any(m in line for m in _OVERFLOWS) for line in lines)


#: The two ways a summary stops where nsys's SQL ``sum()`` fails with "integer overflow".
_OVERFLOWS = (": integer overflow: the total of ", ": integer overflow: the sum of the totals ")


def _check_opens(*steps: StepResult, ctx: str) -> None:
    """A report that is still valid (an odd extra table, say) opens: exit 0."""
    for step in steps:
        if step.rc != 0:
            raise failure(
                "ValidReportRefused",
                f"{step.where()}  [{ctx}]: a valid report refused, exit {step.rc}: "
                f"{step.err.strip()[-400:]}",
            )


def _check_wal(runner: Runner, report: Path, got: StepResult, work: Path, ctx: str) -> None:
    """A report whose newest data is in its -wal: shown with that data, or refused."""
    if got.rc != 0 or not Path(f"{report}-wal").exists():
        return
    twin = work / "checkpointed" / report.name
    twin.parent.mkdir()
    shutil.copyfile(report, twin)
    shutil.copyfile(f"{report}-wal", f"{twin}-wal")
    con = sqlite3.connect(twin)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.execute("PRAGMA journal_mode = DELETE")
    con.close()
    env = {"STRATA_CACHE_DIR": str(work / "twin-cache")}
    want = _steps(runner.run([argv(("stats",), twin, True)], env), ctx)[0]
    if want.rc == 0 and want.out != got.out:
        raise failure(
            "WalDataIgnored",
            f"[{ctx}] exit 0 with the data before the -wal; the checkpointed report gives "
            f"other tables:\n{first_difference(got.out, want.out)}",
        )


def check_cache(
    runner: Runner,
    seed: Seed,
    priming: Sequence[Command],
    damages: tuple[CacheDamage, ...],
    checks: Sequence[Command],
    work: Path,
) -> None:
    """Prime a cache, damage it, then every check command (twice) equals --no-cache.

    A mismatch is told apart by running the same command on an undamaged copy of the
    primed cache: DamagedCacheTrusted when only the damage explains it, CachedOutputDiffers
    (the order bug test_order.py finds) when the undamaged cache gives the same wrong table.
    """
    report = prepare(seed, (), work)
    before = folder_state(report.parent)
    cache = work / "cache"
    env = {"STRATA_CACHE_DIR": str(cache)}
    ctx = f"{seed!r}; cache primed by {list(priming)!r}"
    for command in priming:  # the column path: the one that writes cache entries
        _steps(runner.run([argv(command, report)], {**env, "STRATA_STATS_PATH": "columns"}), ctx)
    pristine = work / "undamaged-cache"
    if cache.is_dir():
        shutil.copytree(cache, pristine)
    done = [damage.apply(cache) for damage in damages]
    ctx += f"; then damaged: {done}; then {list(checks)!r}"
    truth = _truths(runner, checks, report, work, ctx)
    for command in checks:
        for attempt in ("first run after the damage", "the run after that"):
            step = _steps(runner.run([argv(command, report)], env), f"{ctx} ({attempt})")[0]
            try:
                check_same(step, truth[command], f"{ctx} ({attempt})")
            except FuzzFailure:
                _blame(runner, (command, step, truth[command]), report, pristine, work, ctx)
                raise
    check_unchanged(before, report.parent, ctx)


def _blame(runner, run: tuple, report: Path, pristine: Path, work: Path, ctx: str) -> None:
    """Raise DamagedCacheTrusted when an undamaged copy of the cache gives the right table.

    ``run``: (the command, its step on the damaged cache, its step with --no-cache).
    """
    command, damaged, truth = run
    control = work / "control-cache"
    shutil.rmtree(control, ignore_errors=True)
    if pristine.is_dir():
        shutil.copytree(pristine, control)
    job = runner.run([argv(command, report)], {"STRATA_CACHE_DIR": str(control)})
    job.check_alive(ctx + " (control run, undamaged cache)")
    step = job.steps[0]
    if step.exc is None and step.rc == truth.rc and (step.rc != 0 or step.out == truth.out):
        raise failure(
            "DamagedCacheTrusted",
            f"[{ctx}] {damaged.where()}: exit {damaged.rc} from the damaged cache, --no-cache "
            f"exits {truth.rc} (the undamaged cache agrees with --no-cache):\n"
            + first_difference(damaged.out, truth.out),
        )
