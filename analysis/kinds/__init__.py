"""One registry entry per event kind: its tables, its rows as columns, its label, and the
summaries, panel tabs, outliers and timeline rows it feeds.

``analysis.kinds.registry`` defines what a kind is; ``analysis.kinds.builtin`` registers the
kinds of an Nsight Systems report. A new kind goes in with one :func:`register` call.
"""

from __future__ import annotations

from strata.analysis.kinds.builtin import BUILTIN_KINDS
from strata.analysis.kinds.registry import *  # noqa: F403 - the registry's API is the package's
from strata.analysis.kinds.registry import __all__ as _REGISTRY_NAMES

__all__ = ["BUILTIN_KINDS", *_REGISTRY_NAMES]
