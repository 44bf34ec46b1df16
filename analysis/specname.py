"""The ``NAME[:ARG...]`` spec of an nsys stats report or expert rule, as a result holds it.

``cuda_gpu_kern_sum:base``, ``gpu_gaps:gap=1``: what ``-r`` was given, kept whole in a
result's ``name``, so that it prints as nsys prints it (``[NAME.py](ARGS)``).
"""

from __future__ import annotations

__all__ = ["SpecName"]


class SpecName:
    """A mixin for a result whose ``name`` is a spec: its report or rule name and its args."""

    name: str

    @property
    def base_name(self) -> str:
        """The report or rule name without its ``:args``."""
        return self.name.split(":")[0]

    @property
    def args(self) -> tuple[str, ...]:
        """The ``:args`` of the spec, in order."""
        return tuple(self.name.split(":")[1:])
