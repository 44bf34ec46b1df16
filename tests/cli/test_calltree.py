"""``main.py calltree``: the samples' call tree for scripts, checked against sqlite3."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter

from strata.analysis.schema import tid_of
from strata.app.cli import main
from tests.conftest import REAL_DIR, fingerprint, requires_shared
from tests.helpers import sql_rows

SAXPY = REAL_DIR / "hpcgroup__pipit__saxpy-mpi-cuda_nsys_perlmutter0.sqlite"


@requires_shared
def test_bottom_up_csv_for_a_thread_and_range(capsys) -> None:
    (gtid,) = sql_rows(SAXPY, "SELECT globalTid FROM COMPOSITE_EVENTS GROUP BY globalTid "
                       "ORDER BY count(*) DESC LIMIT 1")[0]  # fmt: skip
    lo, hi = 600_000_000, 1_900_000_000
    before = fingerprint(SAXPY)
    status = main(["calltree", str(SAXPY), "-q", "--bottom-up", "-f", "csv", "--thread",
                   str(int(tid_of(gtid))), "--range", "600ms:1.9s"])  # fmt: skip
    assert status == 0
    assert fingerprint(SAXPY) == before
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    roots = Counter()
    for row in rows:
        if row["level"] == "0":
            roots[(row["symbol"], row["module"])] += int(row["total"])
    expected = sql_rows(
        SAXPY, "SELECT s.value, m.value FROM SAMPLING_CALLCHAINS c JOIN COMPOSITE_EVENTS e "
        "ON e.id = c.id JOIN StringIds s ON s.id = c.symbol JOIN StringIds m ON m.id = c.module "
        "WHERE c.stackDepth = 0 AND e.globalTid = ? AND e.start >= ? AND e.start < ?",
        gtid, lo, hi,
    )  # fmt: skip
    assert expected
    assert roots == Counter(expected)


@requires_shared
def test_json_counts_every_sample(capsys) -> None:
    assert main(["calltree", str(SAXPY), "-q", "-f", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    ((samples,),) = sql_rows(SAXPY, "SELECT count(*) FROM COMPOSITE_EVENTS")
    assert data["samples"] == samples
    assert not data["bottom_up"]
    assert (
        sum(n["self"] for n in data["nodes"])
        == sql_rows(SAXPY, "SELECT count(DISTINCT id) FROM SAMPLING_CALLCHAINS")[0][0]
    )


@requires_shared
def test_bad_arguments_are_one_line(capsys) -> None:
    for args in (["--range", "5:1"], ["--thread", "-3"], ["--range", "soon:later"]):
        assert main(["calltree", str(SAXPY), "-q", *args]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1
        assert err[0].startswith("strata: ")
