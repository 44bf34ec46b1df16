"""The command line's logging set-up: a stderr handler whose lines have control characters
escaped, at the level ``-v``/``-q`` ask for.

Its own module: :mod:`logging` is imported only where a record may be printed
(:mod:`analysis.lazylog`), so a default run sets it up when :mod:`logging` is first imported.
"""

from __future__ import annotations

import logging

from strata.analysis.escape import escape_text

__all__ = ["EscapingFormatter", "configure"]


class EscapingFormatter(logging.Formatter):
    """Log lines with control characters escaped: messages quote names from reports."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # logging's own name
        return escape_text(super().formatMessage(record))  # one line, whatever a name holds

    def formatException(self, ei) -> str:  # logging's own name
        return "\n".join(escape_text(line) for line in super().formatException(ei).split("\n"))


def configure(verbose: bool, quiet: bool) -> None:
    """The root logger at INFO (``verbose``), ERROR (``quiet``) or WARNING, with the escaping
    handler on stderr; a no-op where logging is set up already."""
    level = logging.INFO if verbose else logging.ERROR if quiet else logging.WARNING
    handler = logging.StreamHandler()
    handler.setFormatter(EscapingFormatter(logging.BASIC_FORMAT))
    logging.basicConfig(level=level, handlers=[handler])
