"""nsys's substitutions in a recipe's ``--output`` name: ``%q{ENV}``, ``%h``, ``%p``, ``%n``,
``%%`` (``nsys recipe NAME --output out_%q{USER}_%h``).

Read from nsys 2023.4's ``nsys_recipe/lib/args.py`` (``process_output``), left to right:

* ``%q{VAR}``: the value of the environment variable ``VAR``; an unset variable leaves
  ``%q{VAR}`` as it is, with a warning;
* ``%h``: the host name (``socket.gethostname()``; empty, with a warning, if it fails);
* ``%p``: the process id;
* ``%n``: the smallest positive integer for which the whole name does not exist yet (every
  ``%n`` of the name gets the same number), decided after the other substitutions;
* ``%%``: one ``%``.

nsys prints an error and keeps the rest of the name as it is for ``%q`` without ``{`` or
without ``}`` and for an unknown ``%x`` (the expression stays in the name); Strata does the
same, with a warning. A name that ends in a lone ``%`` makes nsys 2023.4 fail on its own
error message (a bad format string; argparse then refuses ``--output``): it is refused here
with one line. Substituted text is used as it is: a value with a ``/`` makes a sub-folder,
as in nsys.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable, Mapping

from strata.analysis.errors import AnalysisError

__all__ = ["expand_output_name"]


def expand_output_name(
    name: str,
    environ: Mapping[str, str] | None = None,
    hostname: Callable[[], str] = socket.gethostname,
    pid: int | None = None,
    exists: Callable[[str], bool] = os.path.exists,
) -> tuple[str, list[str]]:
    """Return ``name`` with nsys's ``%`` expressions substituted, and the warnings on the way.

    Parameters
    ----------
    name
        The ``--output`` text as given.
    environ
        Where ``%q{VAR}`` looks (default: :data:`os.environ`).
    hostname
        Returns the host name for ``%h``.
    pid
        The process id for ``%p`` (default: this process's).
    exists
        Whether a path exists, for ``%n``.

    Returns
    -------
    tuple of (str, list of str)
        The name, and one line per expression nsys warns or errs about (nsys's words).

    Raises
    ------
    AnalysisError
        The name ends in a lone ``%``.
    """
    env = os.environ if environ is None else environ
    warnings: list[str] = []
    counters: list[int] = []  # where each %n starts, in the name as it is when found
    index = name.find("%")
    while index != -1:
        index += 1
        if index >= len(name):
            raise AnalysisError(
                f"--output {name!r}: a lone '%' ends it (write '%%' for a percent sign)"
            )
        token = name[index]
        if token == "q":
            name, index = _environment(name, index, env, warnings)
        elif token == "h":
            name, index = _replace(name, index, _host(hostname, warnings))
        elif token == "p":
            name, index = _replace(name, index, str(os.getpid() if pid is None else pid))
        elif token == "n":
            counters.append(index - 1)
        elif token == "%":
            name = name[:index] + name[index + 1 :]
        else:
            warnings.append(f"Unknown expression '%{token}'.")
        index = name.find("%", index)
    return _numbered(name, counters, exists), warnings


def _replace(name: str, index: int, value: str) -> tuple[str, int]:
    """``name`` with the two characters of ``%X`` (``X`` at ``index``) replaced by ``value``."""
    start = index - 1
    return name[:start] + value + name[index + 1 :], start + len(value)


def _environment(
    name: str, index: int, env: Mapping[str, str], warnings: list[str]
) -> tuple[str, int]:
    """``%q{VAR}`` at ``index`` (the ``q``): its value, or the name as it is."""
    brace = index + 1
    if brace >= len(name) or name[brace] != "{":
        warnings.append("Missing '{' token after '%q' expression.")
        return name, len(name)  # nsys stops substituting here
    end = name.find("}", brace + 1)
    if end == -1:
        warnings.append("Missing '}' token after '%q{' expression.")
        return name, len(name)
    variable = name[brace + 1 : end]
    value = env.get(variable)
    if value is None:
        warnings.append(f"Environment variable '{variable}' is not set.")
        return name, end + 1
    start = index - 1
    return name[:start] + value + name[end + 1 :], start + len(value)


def _host(hostname: Callable[[], str], warnings: list[str]) -> str:
    try:
        return hostname()
    except OSError as exc:
        warnings.append(f"Unable to get host name: {exc}")
        return ""


def _numbered(name: str, counters: list[int], exists: Callable[[str], bool]) -> str:
    """``name`` with each ``%n`` at ``counters`` replaced by the first number that is free."""
    if not counters:
        return name
    for number in range(1, sys.maxsize):
        candidate = name
        for start in reversed(counters):
            candidate = candidate[:start] + str(number) + candidate[start + 2 :]
        if not exists(candidate):
            return candidate
    raise AnalysisError(f"--output {name!r}: no free number for '%n'")  # pragma: no cover
