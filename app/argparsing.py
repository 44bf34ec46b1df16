"""The argument parser every Strata command line uses: a usage error is one line, exit 2."""

from __future__ import annotations

import argparse

from strata.analysis.errors import StrataError

__all__ = ["StrataArgumentParser"]


class StrataArgumentParser(argparse.ArgumentParser):
    """argparse that raises a usage error as a one-line :class:`StrataError` (exit status 2)."""

    def error(self, message: str) -> None:  # argparse's own name
        # "strata: render: argument --range: ...", not "strata: strata render: ...".
        command = self.prog.removeprefix("strata").strip()
        raise StrataError(f"{command}: {message}" if command else message)
