"""Short labels that tell long, same-prefix names apart (analysis.shortnames)."""

from __future__ import annotations

import sqlite3

import pytest

from strata.analysis.names import kernel_display_names
from strata.analysis.shortnames import distinct_base_names, distinct_short_labels
from tests.conftest import REAL_DIR, requires_shared

V3 = "ayush-os__nsight-systems-deep-dive__vector_add_profile_v3.sqlite"
V4 = "ayush-os__nsight-systems-deep-dive__vector_add_profile_v4.sqlite"
HTA = "facebookresearch__HolisticTraceAnalysis__"


def test_same_prefix_names_get_distinct_labels_that_keep_the_difference():
    labels = distinct_short_labels([V3, V4], max_chars=24)
    assert len(set(labels)) == 2
    assert "v3" in labels[0]
    assert "v4" in labels[1]
    # The shared long prefix is gone, so a column cut at its end still shows the difference.
    assert all(not label.startswith("ayush") for label in labels)
    assert all(len(label) < len(V3) for label in labels)


def test_kineto_traces_sharing_prefix_and_suffix():
    names = [HTA + "trace_filter_sampled_rank-0.json.gz", HTA + "cpu_only_rank-34.trace.json.gz"]
    labels = distinct_short_labels(names, max_chars=24)
    assert labels[0].startswith("…trace_filter")
    assert labels[1].startswith("…cpu_only")
    assert len(set(labels)) == 2


@pytest.mark.parametrize(
    "names",
    [
        ["a.sqlite", "b.sqlite"],  # short: as they are
        [V3],  # one name: nothing to tell apart
        [V3, V3],  # equal names stay equal (uniqueness is report_labels' job)
    ],
)
def test_short_or_single_names_are_kept(names):
    assert distinct_short_labels(names) == names


def test_many_names_are_all_distinct():
    names = [f"{HTA}rank_{i}_{'x' * (i % 3)}.trace.json.gz" for i in range(12)]
    labels = distinct_short_labels(names, max_chars=10)
    assert len(set(labels)) == len(names)


CLOVER = REAL_DIR / "hpcgroup__pipit__perlmutter-cloverleaf-cuda.sqlite"


@requires_shared
@pytest.mark.skipif(not CLOVER.is_file(), reason=f"needs {CLOVER}")
def test_kernel_display_names_follow_the_kernel_table(load_report):
    report = load_report(CLOVER)
    uri = f"file:{CLOVER}?mode=ro"
    with sqlite3.connect(uri, uri=True) as db:
        expected = dict(
            db.execute(
                "SELECT DISTINCT d.value, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k"
                " JOIN StringIds d ON d.id = k.demangledName"
                " JOIN StringIds s ON s.id = k.shortName"
            ).fetchall()
        )
    base = kernel_display_names([report], "base")
    assert set(base) == set(expected)
    sharing = {}
    for full, short in expected.items():
        sharing.setdefault(short, []).append(full)
    for full, short in expected.items():
        # Each shown name starts with nsys's base name; a base name no other kernel has is
        # shown as it is, and those the ~100 lambdas share are told apart.
        assert base[full] == short if len(sharing[short]) == 1 else base[full].startswith(short)
    assert len(set(base.values())) == len(base), "two kernels read alike"
    assert max(len(sharing[s]) for s in sharing) > 10  # the case of issue 21 is in the data
    assert kernel_display_names([report], "demangled") == {k: k for k in expected}


def test_kernels_sharing_a_base_name_show_their_own_words():
    fulls = {
        "void k<f(int)::[lambda(int) (instance 16)]>(R, T1)": "k",
        "void k<f(int)::[lambda(int) (instance 5)]>(R, T1)": "k",
        "void k<g(const std::array<int, 4> &)::[lambda(int) (instance 1)]>(R, T1)": "k",
        "void other<float>(int)": "other",
    }
    shown = distinct_base_names(fulls)
    assert shown["void other<float>(int)"] == "other"
    # The lambda's number in a few characters: a table that cuts the name keeps it.
    assert shown["void k<f(int)::[lambda(int) (instance 16)]>(R, T1)"] == "k · f #16"
    assert shown["void k<f(int)::[lambda(int) (instance 5)]>(R, T1)"] == "k · f #5"
    assert shown[
        "void k<g(const std::array<int, 4> &)::[lambda(int) (instance 1)]>(R, T1)"
    ].startswith("k · g")


def test_names_with_no_words_of_their_own_are_numbered():
    shown = distinct_base_names({"k(int)": "k", "k(int) ": "k", "j": "j"})
    assert sorted(shown.values()) == ["j", "k #1", "k #2"]
