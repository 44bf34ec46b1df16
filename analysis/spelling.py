"""Suggest the name a user meant: ``unknown stats report 'cuda_gpu_kern_sumx'; did you mean
'cuda_gpu_kern_sum'?``.

Plain Python (:mod:`difflib`), shared by every message that refuses a name: report and rule
names, their options, formats and formatter arguments, command-line options.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["closest", "did_you_mean"]

#: How alike two names must be (difflib's ratio): 0.6 finds one typo in a short word
#: (``--timeunits``, ``nohdrr``) without offering an unrelated name for a wrong one.
_CUTOFF = 0.6


def closest(word: str, choices: Iterable[str]) -> str | None:
    """Return the choice most like ``word``, or None when none is close enough."""
    import difflib  # here: only a refused name needs it, and every command imports this module

    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=_CUTOFF)
    return matches[0] if matches else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return ``"; did you mean 'CHOICE'?"`` for the closest choice, or ``""``."""
    match = closest(word, choices)
    return f"; did you mean '{match}'?" if match is not None else ""
