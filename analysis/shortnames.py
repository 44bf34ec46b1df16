"""Short labels that tell a set of long names apart: the part where they differ is kept.

Two reports called ``ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite`` and
``…_v4.sqlite``, or two Kineto traces that both start ``facebookresearch__…`` and end
``…trace.json.gz``, read the same once a narrow column cuts them at either end or in the
middle. :func:`distinct_short_labels` drops the prefix and the suffix every name shares
(each replaced by ``…`` when it is long) so the differing part comes first; the full name
belongs in a tooltip. Plain Python, no Qt.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["distinct_short_labels"]

#: A shared prefix or suffix this long or shorter is kept whole (``.sqlite``, ``rank``).
_KEEP_CHARS = 8
#: At most this many characters of a long shared prefix are kept before the ``…``, from a
#: word start: its last word often says what the differing part is (``profile_v3``).
_PREFIX_CONTEXT_CHARS = 12
_SEPARATORS = "_-. /"
_ELLIPSIS = "…"


def _context(prefix: str) -> str:
    """The end of a long shared prefix from the first word start in its last characters
    (nothing when no word starts there: a prefix ending in ``__``)."""
    window = prefix[-_PREFIX_CONTEXT_CHARS:]
    starts = [
        i
        for i in range(1, len(window))
        if window[i - 1] in _SEPARATORS and window[i] not in _SEPARATORS
    ]
    return window[starts[0] :] if starts else ""


def _common_prefix_len(names: Sequence[str]) -> int:
    shortest = min(len(n) for n in names)
    for i in range(shortest):
        if any(n[i] != names[0][i] for n in names):
            return i
    return shortest


def _common_suffix_len(names: Sequence[str], prefix_len: int) -> int:
    room = min(len(n) for n in names) - prefix_len  # never eat into the shared prefix
    for i in range(room):
        if any(n[-1 - i] != names[0][-1 - i] for n in names):
            return i
    return max(room, 0)


def distinct_short_labels(names: Sequence[str], max_chars: int = 32) -> list[str]:
    """Return one short label per name, cut around the part where the names differ.

    Parameters
    ----------
    names
        The names to tell apart (report labels, file names). Equal names give equal labels:
        make them unique first (:func:`analysis.tracks.report_labels`).
    max_chars
        Names all at most this long are returned as they are.

    Returns
    -------
    list[str]
        Per name, the name itself when one name alone or every name is short; otherwise
        the name with a long prefix and suffix shared by every name replaced by ``…``
        (the prefix's last word kept). Distinct
        names give distinct labels.
    """
    names = [str(n) for n in names]
    if len(set(names)) < 2 or all(len(n) <= max_chars for n in names):
        return names
    unique = sorted(set(names))
    prefix = _common_prefix_len(unique)
    suffix = _common_suffix_len(unique, prefix)
    labels = []
    for name in names:
        head = name[:prefix]
        if prefix > _KEEP_CHARS + _PREFIX_CONTEXT_CHARS:
            head = _ELLIPSIS + _context(head)
        tail = name[len(name) - suffix :]
        if suffix > _KEEP_CHARS:
            tail = tail[:_KEEP_CHARS] + _ELLIPSIS
        labels.append(head + name[prefix : len(name) - suffix] + tail)
    return labels
