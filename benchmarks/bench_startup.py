"""Whole-process start-up of the CLI against ``python -c pass`` and ``nsys stats``.

Times, each as a fresh process and round after round (peers interleaved, so a busy
neighbour slows both sides of a ratio alike):

* ``python -c pass`` (the interpreter's own start-up: the floor);
* ``main.py --version``, ``main.py info SMALL``;
* ``main.py stats -r cuda_gpu_kern_sum SMALL`` from a warm cache, and ``nsys stats`` of the
  same summary (column format, as both print by default);
* ``main.py stats -r cuda_gpu_kern_sum,cuda_api_sum BIG`` from a warm cache, and ``nsys
  stats`` of the same (skipped with ``--skip-big`` or when BIG is missing);

and prints each one's median wall and CPU seconds and its ratios to the floor and to nsys,
each ratio the median of the per-round ratios (CPU time suffers less from a busy machine).
``--before DIR`` adds the same Strata commands run from another checkout in the same rounds
(say ``git archive BASE | tar -x -C /tmp/before``: the code before a change).
``--instructions`` counts instead the instructions each command executes, once, under
valgrind's callgrind (its children included: nsys runs its reports in a child): the same
count on a busy machine as on an idle one, where wall times of a ~0.1 s command vary 2x
with the neighbours' load (it takes ~10 s per command; valgrind must be installed).
The issue's targets: ``stats`` on a small report no slower than nsys, or within 4x of the
floor where nsys is faster than that; cached stats on a big report as fast as possible.

Usage::

    python benchmarks/bench_startup.py
    python benchmarks/bench_startup.py --before /work/main --repeat 7
    python benchmarks/bench_startup.py --first --skip-big --before /tmp/before  # first runs
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import REPO, timed

_SMALL = Path("/work/shared/reports/real/Lianhang666__gpu4__report2.sqlite")
_BIG = Path("/tmp/hostile/big2m.sqlite")
_SMALL_SPECS = "cuda_gpu_kern_sum"
_BIG_SPECS = "cuda_gpu_kern_sum,cuda_api_sum"


def _strata_commands(
    main_py: Path, small: Path, big: Path | None, tag: str, first: bool = False
) -> dict:
    """label -> argv of the Strata commands, run from ``main_py``'s checkout; ``first``: the
    small report's stats as a first run (``--no-cache``: nothing stored), with the default
    summary set too."""
    python = [sys.executable, str(main_py)]
    cold = ["--no-cache"] if first else []
    commands = {
        f"{tag}--version": [*python, "--version"],
        f"{tag}info small": [*python, "info", str(small)],
        f"{tag}stats small": [*python, "stats", *cold, "-r", _SMALL_SPECS, str(small)],
    }
    if first:
        commands[f"{tag}stats-default small"] = [*python, "stats", *cold, str(small)]
    if big is not None:
        commands[f"{tag}stats big"] = [*python, "stats", "-r", _BIG_SPECS, str(big)]
    return commands


def _nsys_commands(
    nsys: str, small: Path, big: Path | None, scratch: Path, first: bool = False
) -> dict:
    """label -> argv of ``nsys stats``, reading links in ``scratch`` (nsys may write beside)."""
    commands = {}
    if first:
        link = scratch / f"default-{small.name}"
        if not link.exists():
            os.symlink(small, link)
        commands["nsys stats-default small"] = [nsys, "stats", str(link)]
    for label, path, specs in (("small", small, _SMALL_SPECS), ("big", big, _BIG_SPECS)):
        if path is None:
            continue
        link = scratch / f"{label}-{path.name}"
        if not link.exists():
            os.symlink(path, link)
        commands[f"nsys stats {label}"] = [nsys, "stats", "-r", specs, str(link)]
    return commands


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run ``argv``; return its (wall, CPU) seconds. CPU time is less hurt by a busy machine."""
    cpu0 = _children_cpu_s()
    proc, seconds = timed(lambda: subprocess.run(argv, capture_output=True, env=env, check=False))
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr[-500:]!r}")
    return seconds, _children_cpu_s() - cpu0


def _rounds(commands: dict, envs: dict, repeat: int) -> dict[str, list[tuple[float, float]]]:
    """Run every command once per round (the first round is a warm-up, not counted)."""
    times: dict[str, list[tuple[float, float]]] = {label: [] for label in commands}
    for round_no in range(repeat + 1):
        for label, argv in commands.items():
            seconds = _run(argv, envs[label])
            if round_no:
                times[label].append(seconds)
        print(f"round {round_no}/{repeat} done", file=sys.stderr)  # noqa: T201 - progress
    return times


def _instructions(argv: list[str], env: dict[str, str], scratch: Path) -> int:
    """Instructions ``argv`` executes (its children's too), counted by callgrind."""
    out = scratch / "callgrind"
    out.mkdir(exist_ok=True)
    for old in out.iterdir():
        old.unlink()
    valgrind = ["valgrind", "--tool=callgrind", "--trace-children=yes",
                f"--callgrind-out-file={out}/cg.%p"]  # fmt: skip
    proc = subprocess.run([*valgrind, *argv], capture_output=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed under valgrind: {proc.stderr[-500:]!r}")
    total = 0
    for path in out.iterdir():
        for line in path.read_text().splitlines():
            if line.startswith("summary:"):
                total += int(line.split()[1])
    return total


def _report_instructions(commands: dict, envs: dict, scratch: Path) -> None:
    """Each command's instruction count, its ratio to the floor and to nsys's."""
    counts = {}
    for label, argv in commands.items():
        counts[label] = _instructions(argv, envs[label], scratch)
        print(f"{label} counted", file=sys.stderr)  # noqa: T201 - progress
    floor = counts["python -c pass"]
    print(f"{'command':24s} {'M instr':>8s}  {'x floor':>7s}  x nsys")  # noqa: T201
    for label, count in counts.items():
        peer = "nsys " + " ".join(label.split(" ")[-2:])
        versus = f"{count / counts[peer]:6.2f}x" if peer in counts and peer != label else ""
        print(f"{label:24s} {count / 1e6:8.1f}  {count / floor:6.2f}x  {versus}")  # noqa: T201


def _ratio(times: dict, a: str, b: str, which: int = 0) -> float:
    """Median over rounds of ``a``'s time over ``b``'s (``which``: 0 wall, 1 CPU)."""
    return statistics.median(x[which] / y[which] for x, y in zip(times[a], times[b], strict=True))


def _median(runs: list[tuple[float, float]], which: int) -> float:
    return statistics.median(run[which] for run in runs)


def _report(times: dict, tags: list[str], has_nsys: bool) -> None:
    floor = "python -c pass"
    print(f"{'command':24s} {'wall':>7s} {'cpu':>7s}  {'x floor':>7s}  vs nsys (wall)")  # noqa: T201
    for label, runs in times.items():
        note = f"{_ratio(times, label, floor):6.1f}x" if label != floor else ""
        peer = "nsys " + " ".join(label.split(" ")[-2:])
        kinds = ("stats small", "stats big", "stats-default small")
        if has_nsys and label.endswith(kinds) and peer in times:
            speed = _ratio(times, peer, label)
            note += f"  {speed:6.2f}x nsys's speed" if label != peer else ""
        wall, cpu = _median(runs, 0), _median(runs, 1)
        print(f"{label:24s} {wall:6.3f}s {cpu:6.3f}s  {note}")  # noqa: T201
    if len(tags) > 1:
        before, after = tags
        for what in ("--version", "info small", "stats small", "stats-default small", "stats big"):
            if f"{before}{what}" in times:
                wall = _ratio(times, f"{before}{what}", f"{after}{what}")
                cpu = _ratio(times, f"{before}{what}", f"{after}{what}", 1)
                print(f"{what}: {wall:.2f}x faster than before (wall), {cpu:.2f}x (cpu)")  # noqa: T201


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="CLI start-up against python and nsys stats.")
    parser.add_argument("--small", type=Path, default=_SMALL, help="a small real report")
    parser.add_argument("--big", type=Path, default=_BIG, help="a big report (cached stats)")
    parser.add_argument("--skip-big", action="store_true")
    parser.add_argument("--skip-nsys", action="store_true")
    parser.add_argument("--repeat", type=int, default=5, help="counted rounds (default 5)")
    parser.add_argument("--before", type=Path, help="another checkout to time alongside")
    parser.add_argument(
        "--instructions", action="store_true",
        help="count each command's instructions once (valgrind) instead of timing rounds",
    )  # fmt: skip
    parser.add_argument(
        "--first", action="store_true",
        help="the small report's stats as first runs (--no-cache), default summary set too",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if not args.small.is_file():
        parser.error(f"{args.small} not found; give --small")
    big = None if args.skip_big or not args.big.is_file() else args.big
    from strata.analysis.open import find_nsys

    nsys = None if args.skip_nsys else find_nsys()
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        scratch = Path(tmp)
        # As installed: bytecode compiled once, not every run (PYTHONDONTWRITEBYTECODE would
        # make each start recompile every module of a checkout, ~60 ms of Strata's own).
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        base["LANG"] = "C.UTF-8"
        commands = {"python -c pass": [sys.executable, "-c", "pass"]}
        envs = {"python -c pass": base}
        checkouts = [("before ", args.before)] if args.before else []
        checkouts.append(("", REPO) if not args.before else ("after ", REPO))
        for tag, root in checkouts:
            # Each checkout its own cache: two versions never share entries.
            cache = scratch / f"cache-{tag.strip() or 'strata'}"
            strata = _strata_commands(root / "main.py", args.small, big, tag, args.first)
            commands.update(strata)
            envs.update(dict.fromkeys(strata, dict(base, STRATA_CACHE_DIR=str(cache))))
        if nsys:
            peers = _nsys_commands(nsys, args.small, big, scratch, args.first)
            commands.update(peers)
            envs.update(dict.fromkeys(peers, base))
        if args.instructions:
            for label, argv in commands.items():  # a warm-up run fills each cache
                _run(argv, envs[label])
            _report_instructions(commands, envs, scratch)
            return 0
        times = _rounds(commands, envs, args.repeat)
    print(f"{os.cpu_count()} cores; medians of {args.repeat} rounds; shared machine")  # noqa: T201
    _report(times, [tag for tag, _root in checkouts], nsys is not None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
