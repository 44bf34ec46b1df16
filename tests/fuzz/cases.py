"""The named classes of bad input of issue #11, each as one concrete mutation of a report.

:data:`REPORT_CLASSES` maps a class label (the row of docs/reliability.md) to a function
``seed -> mutations``; :data:`CACHE_CLASSES` does the same for damage to the cache. The
deterministic tests run each once on the demo report; the Hypothesis strategies draw from
the same builders, and from their own finer-grained values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from tests.fuzz.mutations import Bytes, CacheDamage, Seed, Sql, WalPending, qname

__all__ = [
    "API",
    "CACHE_CLASSES",
    "KERNEL",
    "NSYS_TABLES",
    "NVTX",
    "REPORT_CLASSES",
    "call_chain",
    "deep_nvtx",
    "endless_cte",
    "many_streams",
    "valid",
]

KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
API = "CUPTI_ACTIVITY_KIND_RUNTIME"
NVTX = "NVTX_EVENTS"
OSRT = "OSRT_API"
MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMORY = "CUDA_GPU_MEMORY_USAGE_EVENTS"
#: The tables the named classes touch (a class applies to a seed that has all it touches).
NSYS_TABLES = (KERNEL, API, NVTX, OSRT, MEMCPY, "StringIds", "META_DATA_EXPORT", "PROCESSES",
               "ThreadNames", "TARGET_INFO_GPU", "TARGET_INFO_SESSION_START_TIME")  # fmt: skip

#: One row: the one with the smallest rowid (``{t}`` is the quoted table).
FIRST = "rowid = (SELECT min(rowid) FROM {t})"
#: The first push/pop range.
_FIRST_PUSH = "rowid = (SELECT min(rowid) FROM {t} WHERE eventType = 59)"
#: The first two rows.
FIRST2 = "rowid IN (SELECT rowid FROM {t} ORDER BY rowid LIMIT 2)"


def valid(*mutations: Sql) -> tuple[Sql, ...]:
    """Mark ``mutations`` as leaving a valid report (Strata must open it)."""
    return tuple(replace(m, valid=True) for m in mutations)


def set_value(table: str, column: str, value: str, where: str = FIRST, label: str = "") -> Sql:
    """``UPDATE table SET column = value WHERE where`` (NULL drops NOT NULL first)."""
    t = qname(table)
    sql = f"UPDATE {t} SET {qname(column)} = {value} WHERE {where.format(t=t)}"
    relax = (table,) if value.strip().upper() == "NULL" else ()
    return Sql(label or f"{column} = {value}", (sql,), relax)


def memory_usage(label: str, start: str = "1000", size: str = "4096") -> Sql:
    """nsys's CUDA memory-usage table (spec §1.4, absent from the demo) with one allocation
    of ``size`` bytes at ``start``; NOT NULL left off, so that a NULL goes in."""
    columns = ("start", "globalPid", "deviceId", "contextId", "address", "pc", "bytes",
               "memKind", "memoryOperationType", "name", "correlationId")  # fmt: skip
    create = f"CREATE TABLE {MEMORY} ({', '.join(f'{c} INTEGER' for c in columns)})"
    insert = f"INSERT INTO {MEMORY} VALUES ({start}, 0, 0, 1, 4096, 0, {size}, 2, 0, NULL, 0)"
    return Sql(label, (create, insert))


def call_chain(
    table: str, label: str, chain_id: str = "1", depth: str = "0", symbol: str = ""
) -> Sql:
    """A call-chain table (spec §1.4, §1.7; absent from the demo) with one frame: chain
    ``chain_id`` (sample 1, or the CUDA calls whose ``callchainId`` is 1), ``depth`` and
    ``symbol`` (default: a string the report has); NOT NULL left off."""
    symbol = symbol or "(SELECT min(id) FROM StringIds)"
    columns = ("id", "symbol", "module", "unresolved", "originalIP", "stackDepth")
    create = f"CREATE TABLE {table} ({', '.join(f'{c} INTEGER' for c in columns)})"
    module = "(SELECT max(id) FROM StringIds)"
    insert = f"INSERT INTO {table} VALUES ({chain_id}, {symbol}, {module}, 0, 4096, {depth})"
    return Sql(label, (create, insert))


def endless_cte(columns: list[str]) -> str:
    """A SELECT that never ends (a recursive CTE without a stop), with these column names."""
    cols = ", ".join(f"x AS {qname(c)}" for c in columns) or "x"
    return f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT {cols} FROM c"


def deep_nvtx(seed: Seed, depth: int) -> Sql:
    """``depth`` push/pop ranges nested on one thread (range i holds range i + 1)."""
    tid = "(SELECT globalTid FROM NVTX_EVENTS WHERE globalTid IS NOT NULL LIMIT 1)"
    base = '(SELECT coalesce(max("end"), 0) + 1000 FROM NVTX_EVENTS)'
    sql = (
        'INSERT INTO NVTX_EVENTS (start, "end", eventType, text, globalTid) '
        f"WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < {depth - 1}) "
        f"SELECT {base} + i, {base} + {2 * depth} - i, 59, 'level', {tid} FROM c"
    )
    return Sql(f"{depth} nested NVTX ranges on one thread", (sql,))


def many_streams(seed: Seed, count: int) -> Sql:
    """``count`` more kernels, each on its own stream (copies of the first kernel)."""
    shifted = {
        "start": "start + i * 10",
        "end": '"end" + i * 10',
        "streamId": "1000 + i",
        "correlationId": "1000000000 + i",
    }
    cols = seed.columns(KERNEL)
    select = ", ".join(shifted.get(c, qname(c)) for c in cols)
    sql = (
        f"INSERT INTO {KERNEL} ({', '.join(map(qname, cols))}) "
        f"WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < {count - 1}) "
        f"SELECT {select} FROM c, (SELECT * FROM {KERNEL} ORDER BY rowid LIMIT 1)"
    )
    return Sql(f"{count} kernels on {count} distinct streams", (sql,))


def _circular_view(name: str) -> Sql:
    # SQLite refuses to create a view on itself: create it plain, then rewrite its text.
    q = qname(name)
    return Sql(
        f"view {name} defined on itself",
        (
            f"CREATE VIEW {q} AS SELECT 1 AS x",
            "PRAGMA writable_schema = ON",
            f"UPDATE sqlite_master SET sql = 'CREATE VIEW {q} AS SELECT * FROM {q}' "
            f"WHERE name = '{name}'",
        ),
    )


def _table_as_view(table: str, body: str, label: str, seed: Seed) -> Sql:
    return Sql(label, (f"DROP TABLE {qname(table)}", f"CREATE VIEW {qname(table)} AS {body}"))


_HUGE = 2**62
_Builder = Callable[[Seed], tuple]

#: class label -> mutations of a seed report (the demo's schema: nsys 2023.4).
REPORT_CLASSES: dict[str, _Builder] = {
    # --- string ids
    "string id 2e9 (dense table would be 16 GB)": lambda s: (
        Sql("string id 2e9", ("INSERT INTO StringIds VALUES (2000000000, 'far away')",)),
    ),
    "string id >= 2^32 (aliases id - 2^32)": lambda s: (
        set_value(KERNEL, "demangledName", "demangledName + 4294967296"),
    ),
    "negative string id": lambda s: (set_value(API, "nameId", "-5"),),
    "string id with no string": lambda s: (
        Sql("dangling name id", (f"UPDATE {KERNEL} SET demangledName = 999999",)),
    ),
    "NULL string value": lambda s: (
        Sql(
            "NULL in StringIds.value",
            ("UPDATE StringIds SET value = NULL WHERE id = 1",),
            relax=("StringIds",),
        ),
    ),  # fmt: skip
    # --- NULLs and wrong types in event columns
    "NULL start": lambda s: (set_value(KERNEL, "start", "NULL"),),
    "NULL end": lambda s: (set_value(API, "end", "NULL"),),
    "NULL name id": lambda s: (set_value(KERNEL, "demangledName", "NULL"),),
    "text in an integer column": lambda s: (set_value(KERNEL, "start", "'abc'"),),
    "blob in an integer column": lambda s: (set_value(API, "nameId", "x'00ff'"),),
    "real in an integer column": lambda s: (set_value(KERNEL, "end", '"end" + 0.5'),),
    # Columns that `stats`'s lean read does not return but must still judge (issue #11): the
    # native reader's summaries of them, or ADBC's path's test of every row in SQL.
    "text in a kernel's grid size": lambda s: (set_value(KERNEL, "gridX", "'wide'"),),
    "real in a CUDA API correlation id": lambda s: (set_value(API, "correlationId", "1.5"),),
    "blob in a kernel's stream id": lambda s: (set_value(KERNEL, "streamId", "x'01'"),),
    "NULL in a kernel's optional column": lambda s: valid(
        set_value(KERNEL, "registersPerThread", "NULL"),
    ),
    "kernel short name with no string": lambda s: (set_value(KERNEL, "shortName", "999999"),),
    "negative kernel short name": lambda s: valid(set_value(KERNEL, "shortName", "-1")),
    "text in the NVTX text column's id": lambda s: (set_value(NVTX, "textId", "'twelve'"),),
    "text in the memory-usage bytes": lambda s: (memory_usage("text bytes", size="'lots'"),),
    "NULL memory-usage timestamp": lambda s: (memory_usage("NULL start", start="NULL"),),
    "memory-usage table with one allocation": lambda s: valid(memory_usage("one allocation")),
    "call-chain frame": lambda s: valid(call_chain("SAMPLING_CALLCHAINS", "one frame")),
    "CUDA backtrace frame with NULL symbol": lambda s: valid(
        call_chain("CUDA_CALLCHAINS", "NULL symbol", symbol="NULL")
    ),
    "text in a call-chain depth": lambda s: (
        call_chain("SAMPLING_CALLCHAINS", "text depth", depth="'deep'"),
    ),
    "real in a CUDA backtrace id": lambda s: (call_chain("CUDA_CALLCHAINS", "real id", "1.5"),),
    "call-chain symbol id with no string": lambda s: (
        call_chain("SAMPLING_CALLCHAINS", "absent symbol", symbol=str(2**31 + 5)),
    ),
    "call-chain depth and id near int64 limits": lambda s: valid(
        call_chain("SAMPLING_CALLCHAINS", "huge", "9223372036854775807", "-9223372036854775808")
    ),
    # --- times
    "end before start": lambda s: (set_value(KERNEL, "end", "start - 1000"),),
    "duration near 2^62": lambda s: (set_value(KERNEL, "end", f"start + {_HUGE}"),),
    "sum of durations overflows int64": lambda s: (
        set_value(KERNEL, "end", f"start + {_HUGE}", FIRST2),
        Sql(
            "same name",
            (
                f"UPDATE {KERNEL} SET demangledName = (SELECT demangledName FROM "
                f"{KERNEL} ORDER BY rowid LIMIT 1) WHERE {FIRST2.format(t=KERNEL)}",
            ),
        ),
    ),  # fmt: skip
    # Two groups of 2^62 each: every total fits, their sum (Time(%)'s divisor) does not.
    "sum of two groups' totals overflows int64": lambda s: (
        set_value(KERNEL, "end", f"start + {_HUGE}", FIRST2),
        Sql(
            "two names",
            (
                f"UPDATE {KERNEL} SET shortName = (SELECT min(id) FROM StringIds), "
                f"demangledName = (SELECT min(id) FROM StringIds) WHERE rowid = "
                f"(SELECT min(rowid) FROM {KERNEL})",
                f"UPDATE {KERNEL} SET shortName = (SELECT max(id) FROM StringIds), "
                f"demangledName = (SELECT max(id) FROM StringIds) WHERE rowid = "
                f"(SELECT max(rowid) FROM {KERNEL} WHERE {FIRST2.format(t=KERNEL)})",
            ),
        ),
    ),  # fmt: skip
    "end = int64 max": lambda s: (set_value(KERNEL, "end", "9223372036854775807"),),
    "start = int64 min": lambda s: (set_value(API, "start", "-9223372036854775808"),),
    # NVTX: an open range ends at the largest NVTX timestamp, so only an open range can
    # start too far before it; a mark (a real report's domain) may start before 0.
    "NVTX domain created before 0": lambda s: valid(
        set_value(NVTX, "start", "-1878291120", f"{FIRST} AND eventType = 75"),
    ),
    "open NVTX range starting before 0": lambda s: valid(
        set_value(NVTX, "start", "-1000", _FIRST_PUSH), set_value(NVTX, "end", "NULL", _FIRST_PUSH)
    ),
    # SQLite keeps any bytes as TEXT: read leniently (U+FFFD), as StringIds are.
    "NVTX inline text that is not UTF-8": lambda s: valid(
        set_value(NVTX, "text", "CAST(x'61ff62' AS TEXT)", _FIRST_PUSH),
    ),
    "open NVTX range starting at int64 min": lambda s: (
        set_value(NVTX, "start", "-9223372036854775808", _FIRST_PUSH),
        set_value(NVTX, "end", "NULL", _FIRST_PUSH),
    ),
    # --- rows and structure
    "duplicated rows": lambda s: valid(
        Sql(
            "duplicated rows",
            (
                f"INSERT INTO {KERNEL} SELECT * FROM {KERNEL}",
                f"INSERT INTO {API} SELECT * FROM {API}",
            ),
        ),
    ),  # fmt: skip
    "every event table empty": lambda s: valid(
        Sql("emptied", tuple(f"DELETE FROM {t}" for t in (KERNEL, API, NVTX, OSRT, MEMCPY))),
    ),
    "kernel table dropped": lambda s: valid(
        Sql("dropped", (f"DROP TABLE {KERNEL}",)),
    ),
    "StringIds dropped": lambda s: (Sql("dropped", ("DROP TABLE StringIds",)),),
    "table renamed": lambda s: valid(
        Sql("renamed", (f"ALTER TABLE {API} RENAME TO {API}_OLD",)),
    ),
    "start column dropped": lambda s: (
        Sql("dropped column", (f"ALTER TABLE {KERNEL} DROP COLUMN start",)),
    ),
    "name column dropped": lambda s: (
        Sql("dropped column", (f"ALTER TABLE {API} DROP COLUMN nameId",)),
    ),
    "extra table with a quote in its name": lambda s: valid(
        Sql(
            "odd table", ('CREATE TABLE "we""ird" (x INTEGER)', 'INSERT INTO "we""ird" VALUES (1)')
        ),
    ),
    "extra table with ' [ ] and a newline in its name": lambda s: valid(
        Sql("odd table", ('CREATE TABLE "it\'s [odd]\nname" ("a""b" TEXT)',)),
    ),
    "extra view that never ends (recursive CTE)": lambda s: (
        Sql("endless view", (f"CREATE VIEW endless AS {endless_cte(['x'])}",)),
    ),
    "extra view defined on itself": lambda s: (_circular_view("loop"),),
    "kernel table replaced by an endless view": lambda s: (
        _table_as_view(KERNEL, endless_cte(s.columns(KERNEL)), "endless view", s),
    ),
    "kernel table replaced by an equivalent view": lambda s: (
        Sql(
            "view",
            (
                f"ALTER TABLE {KERNEL} RENAME TO k_data",
                f"CREATE VIEW {KERNEL} AS SELECT * FROM k_data",
            ),
        ),
    ),  # fmt: skip
    # --- metadata tables
    "blob in META_DATA_EXPORT": lambda s: (
        Sql(
            "meta",
            (
                "UPDATE META_DATA_EXPORT SET value = x'ff00' "
                "WHERE name LIKE 'EXPORT_SCHEMA_VERSION%'",
            ),
        ),
    ),  # fmt: skip
    "text in TARGET_INFO_SESSION_START_TIME": lambda s: (
        set_value("TARGET_INFO_SESSION_START_TIME", "utcEpochNs", "'yesterday'", "1"),
    ),
    "text in TARGET_INFO_GPU ids": lambda s: (
        set_value("TARGET_INFO_GPU", "id", "'gpu zero'", "1"),
    ),
    "META_DATA_EXPORT empty": lambda s: valid(
        Sql("meta", ("DELETE FROM META_DATA_EXPORT",)),
    ),
    "huge thread and process ids": lambda s: valid(
        Sql(
            "ids",
            (
                "UPDATE ThreadNames SET globalTid = 9223372036854775807",
                "UPDATE PROCESSES SET globalPid = -1, pid = 4294967296",
            ),
        ),
    ),  # fmt: skip
    # --- names
    "terminal escapes in names": lambda s: valid(
        Sql(
            "escapes",
            (
                "UPDATE StringIds SET value = char(27) || '[2J' || char(27) || "
                "']0;pwned' || char(7) || value || char(13) || char(10) || 'x'",
                "UPDATE PROCESSES SET name = char(27) || '[31m' || name",
            ),
        ),
    ),  # fmt: skip
    "invalid UTF-8 in names": lambda s: valid(
        Sql("bytes", ("UPDATE StringIds SET value = CAST(x'fffe41c3' AS TEXT)",)),
    ),
    "1 MB name": lambda s: valid(
        Sql(
            "long",
            (
                "UPDATE StringIds SET value = value || hex(zeroblob(500000)) WHERE id IN "
                "(SELECT id FROM StringIds ORDER BY id LIMIT 3)",
            ),
        ),
    ),  # fmt: skip
    # --- size
    "200,000 nested NVTX ranges on one thread": lambda s: valid(
        deep_nvtx(s, 200_000),
    ),
    "100,000 distinct streams": lambda s: valid(
        many_streams(s, 100_000),
    ),
    # --- committed data only in a -wal file
    "newer data in a -wal file beside the report": lambda s: (
        WalPending("kernels deleted", (f"DELETE FROM {KERNEL} WHERE rowid % 2 = 0",)),
    ),
    # --- bytes
    "not SQLite (magic flipped)": lambda s: (Bytes("magic", "flip", 0, 0),),
    "page size field broken": lambda s: (Bytes("header", "set", 16, 0x03),),
    "text encoding field says UTF-16": lambda s: (Bytes("header", "set", 59, 2),),
    "database size field huge": lambda s: (Bytes("header", "set", 28, 0x7F),),
    "WAL mode flag without a -wal file": lambda s: (
        Bytes("header", "set", 18, 2),
        Bytes("header", "set", 19, 2),
    ),
    "truncated to the header": lambda s: (Bytes("truncated", "truncate", 100),),
    "truncated to half": lambda s: (Bytes("truncated", "truncate", s.size // 2),),
    "last byte missing": lambda s: (Bytes("truncated", "truncate", s.size - 1),),
    "schema page zeroed": lambda s: (Bytes("zeroed", "zero", 100, s.page_size - 100),),
    "a data page zeroed": lambda s: (
        Bytes("zeroed", "zero", s.page_size * (s.size // s.page_size // 2), s.page_size),
    ),
    "bit flips in the middle": lambda s: tuple(
        Bytes("flip", "flip", s.size // 2 + 37 * k, k % 8) for k in range(8)
    ),
    "garbage appended": lambda s: (Bytes("append", "append", 0, 5000),),
}


#: class label -> damage to an entry after a first cached run, and the commands priming it.
_ENTRY_CLASSES: dict[str, tuple[str, tuple[CacheDamage, ...]]] = {
    "string table bit flip (main cache)": ("full", (CacheDamage(0, "flip", 500_000, 3,
                                                                "strings.arrow"),)),
    # Two flips where the string table of the demo's entry keeps its values and its offsets
    # (FORMAT_VERSION 5): one named another string, one escaped as a SystemError.
    "string value bit flip (main cache)": ("full", (CacheDamage(0, "flip", 58_513, 7,
                                                                "strings.arrow"),)),
    "string offset bit flip (main cache)": ("full", (CacheDamage(0, "flip", 65_015, 7,
                                                                 "strings.arrow"),)),
    "kernel columns: a bit flipped every 64 bytes (main cache)": (
        "full", (CacheDamage(0, "scatter", 300_000, 2, "/kernels.arrow"),)),
    "string table truncated (main cache)": ("full", (CacheDamage(0, "truncate", 600_000, 0,
                                                                 "strings.arrow"),)),
    "kernel column bit flip (main cache)": ("full", (CacheDamage(0, "flip", 700_000, 1,
                                                                 "/kernels.arrow"),)),
    "kernel column zeroed (main cache)": ("full", (CacheDamage(0, "zero", 500_000, 0,
                                                               "/kernels.arrow"),)),
    "kernel column deleted (main cache)": ("full", (CacheDamage(0, "delete", 0, 0,
                                                                "/kernels.arrow"),)),
    "meta.json truncated (main cache)": ("full", (CacheDamage(0, "truncate", 500_000, 0,
                                                              "meta.json"),)),
    "frame file emptied (main cache)": ("full", (CacheDamage(0, "empty", 0, 0,
                                                             "threads.frame.arrow"),)),
    "duration column bit flip (partial entry)": ("lean", (CacheDamage(0, "flip", 900_000, 4,
                                                                      "/kernels.arrow"),)),
    "API columns: a bit flipped every 64 bytes (partial entry)": (
        "lean", (CacheDamage(0, "scatter", 300_000, 1, "/cuda_api.arrow"),)),
    "kernel columns truncated (partial entry)": ("lean", (CacheDamage(0, "truncate", 700_000, 0,
                                                                      "/kernels.arrow"),)),
    "string table bit flip (partial entry)": ("lean", (CacheDamage(0, "flip", 300_000, 0,
                                                                   "strings.arrow"),)),
    "meta.json bit flip (partial entry)": ("lean", (CacheDamage(0, "flip", 300_000, 0,
                                                                "meta.json"),)),
    "column file deleted (partial entry)": ("lean", (CacheDamage(0, "delete", 0, 0,
                                                                 "/cuda_api.arrow"),)),
}  # fmt: skip

#: Removes the stored answers after a damage to an entry: the next run reads that entry.
_NO_ANSWERS = CacheDamage(0, "delete-all", 0, 0, ".answer")
#: The stored answers (analysis/answers.py): a damaged one is recomputed, never printed.
_ANSWER_CLASSES: dict[str, tuple[str, tuple[CacheDamage, ...]]] = {
    "answer table bit flip": ("lean", (CacheDamage(0, "flip", 900_000, 2, ".answer"),)),
    "answer meta record bit flip": ("lean", (CacheDamage(0, "flip", 30_000, 5, ".answer"),)),
    "answer truncated": ("lean", (CacheDamage(0, "truncate", 500_000, 0, ".answer"),)),
    "answer emptied (full model)": ("full", (CacheDamage(0, "empty", 0, 0, ".answer"),)),
    "answer tables: a bit flipped every 64 bytes (full model)": (
        "full", (CacheDamage(3, "scatter", 100_000, 6, ".answer"),)),
}  # fmt: skip
#: class label -> damage to the cache after a first cached run, and the commands priming it.
CACHE_CLASSES = {
    **{label: (priming, (*damages, _NO_ANSWERS))
       for label, (priming, damages) in _ENTRY_CLASSES.items()},
    **_ANSWER_CLASSES,
}  # fmt: skip
