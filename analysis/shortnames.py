"""Short labels that tell a set of long names apart: the part where they differ is kept.

Two reports called ``ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite`` and
``…_v4.sqlite``, or two Kineto traces that both start ``facebookresearch__…`` and end
``…trace.json.gz``, read the same once a narrow column cuts them at either end or in the
middle. :func:`distinct_short_labels` drops the prefix and the suffix every name shares
(each replaced by ``…`` when it is long) so the differing part comes first; the full name
belongs in a tooltip. Plain Python, no Qt.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

__all__ = ["distinct_base_names", "distinct_short_labels"]

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


_TOKEN = re.compile(r"[A-Za-z_~][A-Za-z0-9_]*|[0-9]+")
#: C++ words that say nothing about which kernel a name is.
_NOISE = frozenset(
    [
        "const",
        "volatile",
        "void",
        "bool",
        "char",
        "short",
        "int",
        "long",
        "unsigned",
        "signed",
        "float",
        "double",
        "auto",
        "std",
        "array",
        "vector",
        "size_t",
        "T",
        "T0",
        "T1",
        "T2",
        "T3",
        "lambda",
        "operator",
    ]
)


def _own_words(tokens: list[str], shared: set[str]) -> list[str]:
    """The words of ``tokens`` that tell it from the rest of its group: its first word that
    not every name has (C++ keywords and types aside), and its last such number with the
    word before it (``size 16``, not a bare ``16``). A lambda's number, which the demangler
    writes ``(instance 16)``, is ``#16``: short, so that it survives where a table cuts the
    name (``… advec_mom_kernel instanc…`` read alike on a dozen rows)."""
    own = [i for i, t in enumerate(tokens) if t not in shared]
    words = [tokens[i] for i in own if not tokens[i].isdigit() and tokens[i] not in _NOISE][:1]
    numbers = [i for i in own if tokens[i].isdigit()]
    if numbers:
        i = numbers[-1]
        before = tokens[i - 1] if i and not tokens[i - 1].isdigit() else ""
        if before == "instance":
            words.append(f"#{tokens[i]}")
            return words
        if before and before not in words and before not in _NOISE:
            words.append(before)
        words.append(tokens[i])
    return words


def distinct_base_names(base_by_full: Mapping[str, str]) -> dict[str, str]:
    """Return a readable, distinct on-screen name per full kernel name.

    ``base_by_full`` maps each full (demangled) name to its base name (what ``nsys stats``
    prints with ``:base``). Where several full names share a base name (the 25 lambdas of
    ``clover::par_ranged1d_kernel<…>`` all read ``par_ranged1d_kernel``), each gets the
    words of its own that the others lack, its first word and its last number that not all
    share: ``par_ranged1d_kernel · update_halo_kernel #16``. A name that still
    collides gets its rank in that group (``#2``); a base name no other full name shares is
    returned as it is.
    """
    groups: dict[str, list[str]] = {}
    for full, base in base_by_full.items():
        groups.setdefault(base, []).append(full)
    shown: dict[str, str] = {}
    for base, fulls in groups.items():
        if len(fulls) == 1:
            shown[fulls[0]] = base
            continue
        tokens = {full: _TOKEN.findall(full) for full in fulls}
        shared = set.intersection(*(set(t) for t in tokens.values()))
        labels = {}
        for full in sorted(fulls):
            words = _own_words(tokens[full], shared)
            labels[full] = f"{base} · {' '.join(words)}" if words else base
        seen: dict[str, int] = {}
        for full in sorted(fulls):
            label = labels[full]
            seen[label] = seen.get(label, 0) + 1
        ranks: dict[str, int] = {}
        for full in sorted(fulls):
            label = labels[full]
            if seen[label] > 1:
                ranks[label] = ranks.get(label, 0) + 1
                label = f"{label} #{ranks[label]}"
            shown[full] = label
    return shown
