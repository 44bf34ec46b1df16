"""Hypothesis strategies: mutations of a seed report, of the cache, and command sequences.

Everything drawn is a small dataclass from :mod:`tests.fuzz.mutations` whose ``repr`` is the
reproducer, so a falsifying example reads as "these statements, then this command".
The named classes of :mod:`tests.fuzz.cases` are drawn too, beside the finer values here.
"""

from __future__ import annotations

import os

from hypothesis import strategies as st

from tests.fuzz import cases
from tests.fuzz.mutations import Bytes, CacheDamage, Seed, Sql, WalPending, qname

__all__ = [
    "LEAN_SPECS",
    "SUMMARIES",
    "benign_mutations",
    "byte_mutations",
    "cache_damages",
    "command_sequences",
    "sql_mutations",
]

#: The summaries whose cached output must equal the uncached one (issue #11).
SUMMARIES = (
    "cuda_gpu_kern_sum",
    "cuda_api_sum",
    "nvtx_sum",
    "osrt_sum",
    "cuda_gpu_mem_time_sum",
    "cuda_gpu_mem_size_sum",
)
#: Those served by the lean column reader (analysis/stats/lean.py), and their variants.
LEAN_SPECS = ("cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_kern_sum:base",
              "cuda_gpu_kern_sum:mangled")  # fmt: skip

#: Tables first in this order (Hypothesis shrinks towards the first): what Strata reads most.
_PRIORITY = (cases.KERNEL, cases.API, "StringIds", cases.NVTX, cases.OSRT, cases.MEMCPY,
             "CUPTI_ACTIVITY_KIND_MEMSET", "META_DATA_EXPORT", "TARGET_INFO_GPU",
             "TARGET_INFO_SESSION_START_TIME", "ThreadNames", "PROCESSES",
             "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "TARGET_INFO_CUDA_STREAM", "ANALYSIS_DETAILS",
             "SCHED_EVENTS", "COMPOSITE_EVENTS", "META_DATA_CAPTURE")  # fmt: skip

_INT_VALUES = (
    "NULL", "'abc'", "x'00ff'", "1.5", "'12'", "-1", "0", "2147483648", "4294967296",
    "2000000000", "9223372036854775807", "-9223372036854775808", "{c} + 4294967296", "-{c}",
    "{c} + 0.25", "{c} * 1000003",
)  # fmt: skip
_TIME_VALUES = (
    "NULL", "'abc'", "start - 1", f"start + {2**62}", f"-{2**62}", "start", "{c} + 0.5",
    "9223372036854775807", "x'0102'",
)  # fmt: skip
_TEXT_VALUES = (
    "NULL", "''", "char(27) || '[2J' || {c}", "CAST(x'fffe41' AS TEXT)", "{c} || char(10) || 'x'",
    "{c} || hex(zeroblob(20000))", "x'00ff'", "123", "char(0) || {c}", "{c} || char(155) || '2J'",
)  # fmt: skip
_REAL_VALUES = ("NULL", "'abc'", "1e308", "-1e308", "x'00'", "9223372036854775807")
_WHERE = (
    cases.FIRST,
    cases.FIRST2,
    "1",
    "rowid % 7 = 3",
    "rowid = (SELECT max(rowid) FROM {t})",
)
_ODD_NAMES = ('we"ird', "it's", "a]b[c", "with space", "new\nline", "ünï©ødé", "x;DROP TABLE y",
              "sqlite_stat9", "CUPTI_ACTIVITY_KIND_KERNEL_V2", "")  # fmt: skip


def _ordered_tables(seed: Seed) -> list[str]:
    first = [t for t in _PRIORITY if t in seed.tables]
    return first + sorted(t for t in seed.tables if t not in first)


def _pool(column: str, declared: str) -> tuple[str, ...]:
    if column in ("start", "end", "timestamp", "startTime", "stopTime"):
        return _TIME_VALUES
    if "INT" in declared:
        return _INT_VALUES
    if "REAL" in declared or "FLOA" in declared or "DOUB" in declared:
        return _REAL_VALUES
    return _TEXT_VALUES


@st.composite
def _set_value(draw: st.DrawFn, seed: Seed) -> Sql:
    table = draw(st.sampled_from(_ordered_tables(seed)))
    columns = seed.tables[table]
    # start/end and the name columns first: where nsys's meaning lives
    names = sorted(columns, key=lambda c: (c[0] not in ("start", "end"), "ame" not in c[0]))
    column, declared, _notnull = draw(st.sampled_from(names))
    value = draw(st.sampled_from(_pool(column, declared))).format(c=qname(column))
    where = draw(st.sampled_from(_WHERE))
    return cases.set_value(table, column, value, where, label=f"{table}.{column} = {value}")


@st.composite
def _structure(draw: st.DrawFn, seed: Seed) -> Sql | WalPending:
    tables = _ordered_tables(seed)
    table = draw(st.sampled_from(tables))
    t = qname(table)
    kind = draw(
        st.sampled_from(
            ("drop", "rename", "drop column", "duplicate", "delete", "odd table", "odd view",
             "table as view", "deep nvtx", "many streams", "wal")
        )
    )  # fmt: skip
    if kind == "drop":
        return Sql("drop table", (f"DROP TABLE {t}",))
    if kind == "rename":
        new = draw(st.sampled_from((table + "_OLD", 'x"y', table.lower() + "_")))
        return Sql("rename table", (f"ALTER TABLE {t} RENAME TO {qname(new)}",))
    if kind == "drop column":
        column = draw(st.sampled_from(seed.columns(table)))
        return Sql("drop column", (f"ALTER TABLE {t} DROP COLUMN {qname(column)}",))
    if kind in ("duplicate", "delete"):
        where = draw(st.sampled_from(_WHERE)).format(t=t)
        if kind == "delete":
            return Sql("delete rows", (f"DELETE FROM {t} WHERE {where}",))
        return Sql("duplicate rows", (f"INSERT INTO {t} SELECT * FROM {t} WHERE {where}",))
    if kind == "odd table":
        name = draw(st.sampled_from(_ODD_NAMES))
        column = draw(st.sampled_from(("x", 'q"uote', "start", "")))
        return Sql("odd table", (f"CREATE TABLE {qname(name)} ({qname(column)} INTEGER)",
                                 f"INSERT INTO {qname(name)} VALUES (1)"), valid=True)  # fmt: skip
    if kind == "odd view":
        name = draw(st.sampled_from(_ODD_NAMES[:4] + ("v",)))
        body = draw(st.sampled_from(("endless", "self", "over table")))
        if body == "self":
            return cases._circular_view(name)
        select = cases.endless_cte(["x"]) if body == "endless" else f"SELECT * FROM {t}"
        return Sql(f"{body} view", (f"CREATE VIEW {qname(name)} AS {select}",))
    if kind == "table as view":
        endless = draw(st.booleans())
        if endless:
            body = cases.endless_cte(seed.columns(table))
            return Sql("table as endless view", (f"DROP TABLE {t}", f"CREATE VIEW {t} AS {body}"))
        return Sql("table as view", (f"ALTER TABLE {t} RENAME TO _data",
                                     f"CREATE VIEW {t} AS SELECT * FROM _data"))  # fmt: skip
    if kind == "deep nvtx" and seed.has(cases.NVTX, "start", "end", "eventType", "globalTid"):
        return cases.deep_nvtx(seed, draw(st.sampled_from(_DEPTHS)))
    if kind == "many streams" and seed.has(cases.KERNEL, "streamId"):
        return cases.many_streams(seed, draw(st.sampled_from((10, 1000, 20_000))))
    where = draw(st.sampled_from(_WHERE)).format(t=t)
    return WalPending("only in the -wal", (f"DELETE FROM {t} WHERE {where}",))


#: NVTX nesting depths drawn (the long profile adds the issue's 200,000).
_DEPTHS = (8, 1000, 20_000) + (
    (200_000,) if os.environ.get("STRATA_FUZZ_PROFILE") == "long" else ()
)


#: Named classes too slow to draw often in the CI profile (each has its own named test).
_HEAVY = ("200,000", "100,000")


def _named(seed: Seed, byte_level: bool) -> st.SearchStrategy[tuple]:
    """The named classes of cases.py that fit ``seed``, at the byte or the SQL level."""
    long_run = os.environ.get("STRATA_FUZZ_PROFILE") == "long"
    built = []
    for label, build in cases.REPORT_CLASSES.items():
        if not long_run and label.startswith(_HEAVY):
            continue
        mutations = build(seed)
        if all(isinstance(m, Bytes) for m in mutations) != byte_level:
            continue
        text = repr(mutations)
        if all(t in seed.tables for t in cases.NSYS_TABLES if t in text):
            built.append(mutations)  # every nsys table it touches is in this seed
    return st.sampled_from(built)


def sql_mutations(seed: Seed) -> st.SearchStrategy[tuple]:
    """1-3 SQL-level mutations (hostile values, structure), or one named class."""
    one = st.one_of(_set_value(seed), _structure(seed))
    drawn = st.lists(one, min_size=1, max_size=3).map(tuple)
    return st.one_of(drawn, _named(seed, byte_level=False))


def benign_mutations(seed: Seed) -> st.SearchStrategy[tuple]:
    """Mutations that keep the report valid: drop, empty, duplicate or delete some rows."""
    tables = [t for t in _ordered_tables(seed) if t != "StringIds"]

    @st.composite
    def one(draw: st.DrawFn) -> Sql:
        t = qname(draw(st.sampled_from(tables)))
        where = draw(st.sampled_from(_WHERE)).format(t=t)
        return draw(st.sampled_from((
            Sql("drop table", (f"DROP TABLE {t}",)),
            Sql("delete rows", (f"DELETE FROM {t} WHERE {where}",)),
            Sql("duplicate rows", (f"INSERT INTO {t} SELECT * FROM {t} WHERE {where}",)),
        )))  # fmt: skip

    return st.lists(one(), max_size=2).map(tuple)


_HEADER_FIELDS = (0, 16, 17, 18, 19, 20, 21, 24, 28, 31, 32, 36, 40, 44, 48, 52, 56, 59, 64, 92)


@st.composite
def _one_byte_mutation(draw: st.DrawFn, seed: Seed) -> Bytes:
    size, page = seed.size, seed.page_size
    region = draw(st.sampled_from(("header", "first page", "anywhere")))
    top = {"header": 100, "first page": page, "anywhere": size}[region]
    op = draw(st.sampled_from(("flip", "zero", "set", "truncate", "append")))
    if op == "set":
        where = draw(st.sampled_from(_HEADER_FIELDS)) if region == "header" else None
        offset = where if where is not None else draw(st.integers(0, top - 1))
        return Bytes(f"{region} byte", "set", offset, draw(st.integers(0, 255)))
    if op == "truncate":
        cut = draw(
            st.one_of(
                st.integers(0, size - 1), st.integers(1, size // page - 1).map(lambda k: k * page)
            )
        )
        return Bytes("truncated", "truncate", cut)  # fmt: skip
    if op == "append":
        return Bytes("appended", "append", 0, draw(st.sampled_from((1, 512, page))))
    offset = draw(st.integers(0, top - 1))
    if op == "zero":
        return Bytes(f"{region} zeroed", "zero", offset, draw(st.sampled_from((1, 16, 512, page))))
    return Bytes(f"{region} bit flip", "flip", offset, draw(st.integers(0, 7)))


def byte_mutations(seed: Seed) -> st.SearchStrategy[tuple]:
    """1-4 changes of the file's bytes, or one named byte-level class."""
    drawn = st.lists(_one_byte_mutation(seed), min_size=1, max_size=4).map(tuple)
    return st.one_of(drawn, _named(seed, byte_level=True))


#: One command, without the report path: ("info",) or ("stats", "-r", "a,b").
_STATS_LEAN = st.lists(st.sampled_from(LEAN_SPECS), min_size=1, max_size=3, unique=True)
_STATS_ANY = st.lists(st.sampled_from(SUMMARIES + LEAN_SPECS[2:]), min_size=1, max_size=4,
                      unique=True)  # fmt: skip
_FORMAT = st.sampled_from(((), ("-f", "csv")))  # csv: the SQL oracle checks it too
_COMMAND = st.one_of(
    st.tuples(_STATS_LEAN, _FORMAT).map(lambda a: ("stats", *a[1], "-r", ",".join(a[0]))),
    st.tuples(_STATS_ANY, _FORMAT).map(lambda a: ("stats", *a[1], "-r", ",".join(a[0]))),
    st.just(("info",)),
    st.just(("stats",)),
)


def command_sequences(max_size: int = 4) -> st.SearchStrategy[tuple]:
    """A sequence of commands run one after the other on one report with one cache."""
    return st.lists(_COMMAND, min_size=1, max_size=max_size).map(tuple)


#: Cache files the stats read (the names' ends): drawn half of the time, else any file.
_CACHE_TARGETS = ("/kernels.arrow", "/cuda_api.arrow", "strings.arrow", "/meta.json",
                  "/nvtx.arrow", "/osrt.arrow", "/memcpy.arrow", "keys.arrow",
                  "frame.arrow", ".answer")  # fmt: skip


@st.composite
def _one_damage(draw: st.DrawFn) -> CacheDamage:
    op = draw(st.sampled_from(("flip", "scatter", "truncate", "zero", "delete", "empty")))
    match = draw(st.one_of(st.just(""), st.sampled_from(_CACHE_TARGETS)))
    # The middle of a file holds its data (an Arrow file's head and tail: schema, footer).
    where = draw(st.one_of(st.integers(200_000, 800_000), st.integers(0, 999_999)))
    return CacheDamage(
        pick=draw(st.integers(0, 10_000)),
        op=op,
        where=where,
        bit=draw(st.integers(0, 7)),
        match=match,
    )


def cache_damages() -> st.SearchStrategy[tuple]:
    """1-3 damages, each to one file of the cache."""
    return st.lists(_one_damage(), min_size=1, max_size=3).map(tuple)
