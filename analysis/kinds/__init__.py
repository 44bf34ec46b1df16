"""One registry entry per event kind: its tables, its rows as columns, its label, and the
summaries, panel tabs, outliers and timeline rows it feeds.

``analysis.kinds.registry`` defines what a kind is; ``analysis.kinds.builtin`` registers the
kinds of an Nsight Systems report. A new kind is one module that calls :func:`register`,
named in :data:`KIND_MODULES`.
"""

from __future__ import annotations

import importlib

from strata.analysis.kinds.registry import *  # noqa: F403 - the registry's API is the package's
from strata.analysis.kinds.registry import __all__ as _REGISTRY_NAMES

#: The modules that register kinds, imported in this order when the package is: their
#: kinds' order is that of the panel tabs, thread rows and GPU parts.
KIND_MODULES = ("builtin", "cuda_graph")

for _module in KIND_MODULES:
    importlib.import_module(f"{__name__}.{_module}")

from strata.analysis.kinds.builtin import BUILTIN_KINDS  # noqa: E402 - registered above

__all__ = ["BUILTIN_KINDS", "KIND_MODULES", *_REGISTRY_NAMES]
