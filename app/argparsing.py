"""The argument parser every Strata command line uses: a usage error is one line, exit 2."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from analysis.errors import StrataError
from analysis.spelling import did_you_mean

__all__ = ["StrataArgumentParser"]


class StrataArgumentParser(argparse.ArgumentParser):
    """argparse that raises a usage error as a one-line :class:`StrataError` (exit status 2).

    A mistyped option (``stats --timeunits usec``) is named with the option it looks like:
    ``stats: unrecognized arguments: --timeunits; did you mean '--timeunit'?``, for every
    sub-command, since they all parse with this class.
    """

    def error(self, message: str) -> None:  # argparse's own name
        # "strata: render: argument --range: ...", not "strata: strata render: ...".
        command = self.prog.removeprefix("strata").strip()
        raise StrataError(f"{command}: {message}" if command else message)

    def parse_args(self, args: Sequence[str] | None = None, namespace=None):  # noqa: ANN001, ANN201
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            parser = self._chosen(namespace)
            hint = next(
                filter(None, (parser._suggestion(token) for token in extras if token[:1] == "-")),
                "",
            )
            parser.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        return namespace

    def _chosen(self, namespace: argparse.Namespace) -> StrataArgumentParser:
        """The sub-command's parser the arguments went to (this one when none)."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                sub = action.choices.get(getattr(namespace, action.dest, None) or "")
                if isinstance(sub, StrataArgumentParser):
                    return sub._chosen(namespace)
        return self

    def _suggestion(self, token: str) -> str:
        """``"; did you mean '--timeunit'?"`` for an option written ``--timeunits[=V]``."""
        option = token.partition("=")[0]
        return did_you_mean(option, [o for o in self._option_string_actions if o[:2] == "--"])
