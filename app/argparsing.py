"""The argument parser every Strata command line uses: a usage error is one line, exit 2."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from strata.analysis.errors import StrataError
from strata.analysis.spelling import did_you_mean

__all__ = ["StrataArgumentParser"]


class StrataArgumentParser(argparse.ArgumentParser):
    """argparse that raises a usage error as a one-line :class:`StrataError` (exit status 2).

    A mistyped option (``stats --timeunits usec``) is named with the option it looks like:
    ``stats: unrecognized arguments: --timeunits; did you mean '--timeunit'?``, for every
    sub-command, since they all parse with this class.
    """

    def add_switch(self, name: str, help_text: str) -> None:
        """An nsys-style switch: ``--name``, ``--name true|false`` or ``--name=true|false``
        (nsys's ``--force-overwrite [true|false]``); its value is a bool, False when absent.

        A ``true``/``false`` after the switch is its value (``yes``, ``1``... are refused, as
        nsys refuses them); anything else (a report) is the next argument.
        """
        self._switches = (*getattr(self, "_switches", ()), name)
        self.add_argument(
            name, type=_truth(name), default=False, metavar="true|false", help=help_text
        )

    def allow_dashed_values(self, *names: str) -> None:
        """Let these options take a value that starts with a dash, as nsys's do:
        ``-o -,out`` (the console, then files) is ``-o`` with ``-,out``."""
        self._dashed = (*getattr(self, "_dashed", ()), *names)

    def add_argument(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201 - argparse's
        # argparse checks each new argument's metavar with a formatter (``_get_formatter``),
        # whose width (the terminal's) that check never uses: see _get_formatter.
        self._checking = True
        try:
            return super().add_argument(*args, **kwargs)
        finally:
            self._checking = False

    def _get_formatter(self) -> argparse.HelpFormatter:  # argparse's own name
        if getattr(self, "_checking", False):
            # Not the terminal's width: asking it imports shutil (its archive modules: ~3 % of
            # a stored answer's run), ~20 times while a parser is built.
            return self.formatter_class(prog=self.prog, width=80)
        return super()._get_formatter()

    def parse_known_args(self, args: Sequence[str] | None = None, namespace=None):  # noqa: ANN001, ANN201
        switches = getattr(self, "_switches", ())
        if args is not None and switches:
            args = _switch_values(list(args), switches)
        dashed = getattr(self, "_dashed", ())
        if args is not None and dashed:
            args = _dashed_values(list(args), dashed)
        return super().parse_known_args(args, namespace)

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


def _truth(name: str):  # noqa: ANN202 - argparse's type callable
    def truth(text: str) -> bool:
        if text not in ("true", "false"):
            raise argparse.ArgumentTypeError(f"{name} takes true or false (as nsys), not {text!r}")
        return text == "true"

    return truth


#: Words taken as a switch's value (only ``true`` and ``false`` are valid, as in nsys): any
#: other token after the switch is the next argument.
_TRUTH_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0"})


def _switch_values(args: list[str], switches: Sequence[str]) -> list[str]:
    """``--switch true`` as ``--switch=true``, a bare ``--switch`` as ``--switch=true``."""
    out: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            return out + args[i:]
        if token in switches:
            following = args[i + 1] if i + 1 < len(args) else ""
            value = following if following.lower() in _TRUTH_WORDS else None
            out.append(f"{token}={value or 'true'}")  # a word other than true/false: refused
            i += 2 if value else 1
            continue
        out.append(token)
        i += 1
    return out


def _dashed_values(args: list[str], options: Sequence[str]) -> list[str]:
    """``-o -,x`` as ``-o=-,x``: argparse would take ``-,x`` for an option."""
    out: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        if token == "--":
            return out + args[i:]
        following = args[i + 1] if i + 1 < len(args) else ""
        if token in options and following.startswith("-") and following != "-":
            out.append(f"{token}={following}" if token.startswith("--") else token + following)
            i += 2
            continue
        out.append(token)
        i += 1
    return out
