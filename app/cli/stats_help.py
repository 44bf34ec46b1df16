"""``stats --help-formats [NAME|ALL]``: nsys 2023.4's description of its formats, as it prints it.

The texts are nsys's own (``nsys stats --help-formats``), so that a script or a reader
finds the same words. Strata prints the formats they describe with the formatter arguments
they list after a colon (``csv:nohdr``, ``column:dur=us``...; see
:mod:`analysis.stats.formatspec` and docs/cli.md). Unlike nsys, which exits 1 after any
help, Strata exits 0 after a known name, 2 (one line) after an unknown one.
"""

from __future__ import annotations

import argparse
import sys

from strata.analysis.escape import escape_text

__all__ = ["FORMAT_HELP", "FORMAT_LIST", "HelpFormats", "help_formats_text"]

#: nsys's list of its formats (``--help-formats`` without a name).
FORMAT_LIST = """
The following formats are available:

  column     Human readable columns (.txt)
  table      Human readable table (.txt)
  csv        Comma Separated Values (.csv)
  tsv        Tab Separated Values (.tsv)
  json       JavaScript Object Notation (.json)
  hdoc       HTML5 document with <table> (.html)
  htable     Raw HTML <table> (.html)

For more information, use '--help-formats <format_name>'

"""

#: Format name -> nsys's description of it (``--help-formats NAME``), in nsys's order.
FORMAT_HELP = {
    "column": """
column[:<unit>][:nohdr][:nofmt][:autolines=<lines>][:colmax=<chars>][:<width>[:<width>]...]

    <unit> : Unit specification. See below.
    nohdr : Do not display the header.
    nofmt : Do not reformat numbers.
    autolines=<lines> : Lines to scan for auto column width. A value of 0
        indicates all lines should be used. (default: 100)
    colmax=<chars> : Maximum column size for auto-width calculations.
        A value of 0 indicates an unlimited value. (default: 100)
    <width>... : Define the explicit width of one or more columns.
        If the value "." is given, the column will auto-adjust.
        If a width of 0 is given, the column will not be displayed.

    The column formatter presents data in vertical text columns. It is
    primarily designed to be a human-readable format for displaying data on
    a console display.

    Text data will be left-justified, while numeric data will be
    right-justified. If the data overflows the available column width, it will
    be marked with a "…" character, to indicate the data values were clipped.
    Clipping always occurs on the right-hand side, even for numeric data.

    Numbers will be reformatted to make easier to visually scan and understand.
    This includes adding thousands-separators. This process requires that the
    string representation of the number is converted into its native
    representation (integer or floating point) and then converted back into a
    string representation to print. This conversion process attempts to preserve
    elements of number presentation, such as the number of decimal places, or
    the use of scientific notation, but the conversion is not always perfect
    (the number should always be the same, but the presentation may not be). To
    disable the reformatting process, use the argument "nofmt".

    If no explicit width is given, the columns auto-adjust their width based off
    the header size and (by default) the first 100 lines of data. The number of
    lines used to calculate the column widths can be changed with the
    "autolines" argument. A value of 0 indicates that all output lines should
    be used in the width calculation. Auto-adjusted columns are (by default)
    limited to a maximum width of 100 characters, but this limit can be adjusted
    with the "colmax" argument. Passing "colmax" a value of 0 will remove any
    limit. This should be used with caution, as demangled C++ function names can
    result in extremely wide columns of hundreds of characters.

    UNIT SPECIFICATION

    A unit specification defines the unit to use when displaying a given
    category of data. Reports can tag specific columns as containing a known
    category of data, with a known set of units. A unit specification allows the
    data to be displayed in an alternate unit.

    Unit specifications are in the format "<category>=<unit>". Multiple
    specifications can be given to define different display units for different
    categories.

    Current categories include:

        ts    : Timestamp -- a point in time, referenced from process start
        dur   : Duration -- a span or length of time
        mem   : Memory -- allocation size
        thru  : Throughput -- in units per second
        gid   : Global ID -- process/thread context
        addr  : Memory Address
        ratio : Ratio

    There are also meta-categories that can be used to set the display unit for
    a number of related sub-categories.

    Meta-categories include:

        time  : Meta-category for ( ts dur )
        bytes : Meta-category for ( mem thru )

    Each category can be assigned a related unit.

    Current units include:

        ns        : nanoseconds
        us        : microseconds
        ms        : milliseconds
        sec       : seconds
        B         : bytes
        KB        : kilobytes (1000)
        KiB       : kilibytes (1024)
        MB        : megabytes (1000^2)
        MiB       : megibytes (1024^2)
        GB        : gigabytes (1000^3)
        GiB       : gigibytes (1024^3)
        gidint    : GID as single integer
        gidhex    : GID as single hex
        gidsubint : GID subfields as integers
        gidsubhex : GID subfields as hex
        uint      : Address as single unsigned integer
        hex       : Address as single hex
        %         : percentage

    Not all units can be used with every category. Here is a list of categories
    with their default display unit, as well as valid, allowed units:

        ts    : ns      ( ns us ms sec )
        dur   : ns      ( ns us ms sec )
        mem   : MB      ( B KB KiB MB MiB GB GiB )
        thru  : MB      ( B KB KiB MB MiB GB GiB )
        gid   : gidint  ( gidint gidhex gidsubint gidsubhex )
        addr  : hex     ( uint hex )
        ratio : %       ( % )

    Converting between units requires altering the representation of numerical
    values. This can sometimes alter the representation of the number. For
    example, if a number was originally given in scientific notation (with an
    exponent), unit conversion may result in the number being normalized,
    removing the exponent from its representation. Integers may also be
    converted floating-point numbers when converted from a smaller unit to a
    larger unit (such as nanoseconds to milliseconds).

    Additionally, unit conversion may alter how numbers are displayed and
    rounded. For example, a time value originally given in nanoseconds, but
    displayed in milliseconds, will not display the full six decimal places
    required to maintain the nanosecond precision. Rather, a reasonable number
    of decimal places will be displayed for the selected unit. If more precision
    is required, it is suggested that a smaller unit is used.

    Beyond the unit specifications, there are two additional conversion flags
    that can be used with any formatter that supports unit conversion. Those
    flags are:

    noconv

        Disable unit conversion. If this flag is given, all category unit
        specifications will be ignored and the data will be displayed in its
        native format and unit.

    nohdrunit

        Do not display the unit in the column header.

""",
    "table": """
table[:<unit>][:nohdr][:nofmt][:autolines=<lines>][:colmax=<chars>][:<width>[:<width>]...]

    The table formatter presents data in vertical text columns inside text
    boxes. Other than the lines between columns, it is identical to the "column"
    formatter. See the "column" help for more information.

""",
    "csv": """
csv[:<unit>][:nohdr]

    <unit> : Unit specification. See "column" format for more info.
    nohdr : Do not display the header

    The csv formatter outputs data as comma-separated values. This format is
    commonly used for import into other data applications, such as spread-sheets
    and databases.

    There are many different "standards" for CSV files. Most differences are in
    how escapes are handled, meaning data values that contain a comma or space.

    The CSV formatter will escape commas by surrounding the whole value. in
    double-quotes.

""",
    "tsv": """
tsv[:<unit>][:nohdr][:esc]

    <unit> : Unit specification. See "column" format for more info.
    nohdr : Do not display the header
    esc : escape tab characters, rather than removing them

    The tsv formatter outputs data as tab-separated values. This format is
    sometimes used for import into other data applications, such as
    spread-sheets and databases.

    Most TSV import/export systems disallow the tab character in data values.
    The formatter will normally replace any tab characters with a single space.
    If the "esc" argument has been provided, any tab characters will be
    replaced with the literal characters "\\t".

""",
    "json": """
json[:<unit>]

    <unit> : Unit specification. See "column" format for more info.

    The json formatter outputs data as an array of JSON objects. Each object
    represents one line of data, and uses the column names as field labels. All
    objects have the same fields. The formatter attempts to recognize numeric
    values, as well as JSON keywords, and convert them. Empty values are passed
    as an empty string (and not nil, or as a missing field).

    At this time the formatter does not escape quotes, so if a data value
    includes double-quotation marks, it will corrupt the JSON file.

""",
    "hdoc": """
hdoc[:<unit>][:title=<title>][:css=<URL>]

    <unit> : Unit specification. See "column" format for more info.
    title : string for HTML document title
    css : URL of CSS document to include

    The hdoc formatter generates a complete, verifiable (mostly), stand-alone
    HTML document. It is designed to be opened in a web browser, or included in
    a larger document via an <iframe>.

""",
    "htable": """
htable[:<unit>]

    <unit> : Unit specification. See "column" format for more info.

    The htable formatter outputs a raw HTML <table> without any of the
    surrounding HTML document. It is designed to be included into a larger HTML
    document. Although most web browsers will open and display the document, it
    is better to use the "hdoc" format for this type of use.

""",
}


def help_formats_text(name: str | None) -> str | None:
    """What ``--help-formats [name]`` prints; None for a name that is no format."""
    if not name:
        return FORMAT_LIST
    if name == "ALL":
        return "\nThe following formats are available:\n" + "".join(FORMAT_HELP.values())
    return FORMAT_HELP.get(name)


class HelpFormats(argparse.Action):
    """``--help-formats [NAME|ALL]``: describe the formats as nsys does, then exit."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        text = help_formats_text(values)
        if text is None:
            name = escape_text(values)
            parser.exit(2, f"strata: unknown format '{name}'; see --help-formats\n")
        sys.stdout.write(text)
        parser.exit(0)
