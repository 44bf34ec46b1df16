"""Settings: recent files, pins per set of reports, alignment, in a private INI file."""

from __future__ import annotations

from pathlib import Path

from strata.app.settings import MAX_RECENT, Settings, report_set_key


def test_recent_files_newest_first_deduplicated_and_bounded(tmp_path: Path) -> None:
    settings = Settings(tmp_path / "s.ini")
    assert settings.recent_files() == []
    settings.add_recent_files([tmp_path / "a.sqlite"])
    settings.add_recent_files([tmp_path / "b.sqlite"])
    settings.add_recent_files([tmp_path / "a.sqlite"])
    assert settings.recent_files() == [str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite")]
    settings.add_recent_files(tmp_path / f"r{i}.sqlite" for i in range(2 * MAX_RECENT))
    assert len(settings.recent_files()) == MAX_RECENT
    settings.remove_recent_file(settings.recent_files()[0])
    assert len(settings.recent_files()) == MAX_RECENT - 1


def test_values_survive_a_new_settings_object_on_the_same_file(tmp_path: Path) -> None:
    first = Settings(tmp_path / "s.ini")
    first.add_recent_files([tmp_path / "only.sqlite"])  # a one-element list stays a list
    first.set_pinned_keys(["x/a.sqlite", "y/b.sqlite"], ["k1"])
    first.set_hidden_keys(["x/a.sqlite", "y/b.sqlite"], [])
    first.set_alignment(["x/a.sqlite", "y/b.sqlite"], "nvtx", "train step")
    first.set_alignment_nvtx_name("train step")
    first.sync()
    second = Settings(tmp_path / "s.ini")
    assert second.recent_files() == [str(tmp_path / "only.sqlite")]
    assert second.pinned_keys(["b.sqlite", "a.sqlite"]) == ["k1"]
    assert second.hidden_keys(["a.sqlite", "b.sqlite"]) == []
    assert second.alignment(["b.sqlite", "a.sqlite"]) == ("nvtx", "train step")
    assert second.alignment(["a.sqlite"]) is None  # another set of reports: none chosen
    assert second.alignment_nvtx_name() == "train step"


def test_report_set_key_ignores_order_and_folders_but_not_names() -> None:
    assert report_set_key(["/a/r1.sqlite", "/b/r2.sqlite"]) == report_set_key(
        ["/c/r2.sqlite", "r1.sqlite"]
    )
    assert report_set_key(["r1.sqlite"]) != report_set_key(["r1.sqlite", "r2.sqlite"])


def test_an_unknown_or_garbled_alignment_reads_as_none_chosen(tmp_path: Path) -> None:
    settings = Settings(tmp_path / "s.ini")
    settings.set_alignment(["a.sqlite"], "sideways", "")
    assert settings.alignment(["a.sqlite"]) is None
    settings.qsettings.setValue(f"alignment/{report_set_key(['a.sqlite'])}", "{not json")
    assert settings.alignment(["a.sqlite"]) is None


def test_garbage_in_a_list_value_reads_as_empty(tmp_path: Path) -> None:
    settings = Settings(tmp_path / "s.ini")
    settings.qsettings.setValue("recent/files", "{not json")
    assert settings.recent_files() == []


def test_collapsed_groups_round_trip_as_tuples(tmp_path: Path) -> None:
    settings = Settings(tmp_path / "s.ini")
    assert not settings.has_collapsed(["a.sqlite"])
    settings.set_collapsed_groups(["a.sqlite"], [("a.sqlite", "CPU (4 cores)"), ("a.sqlite",)])
    again = Settings(tmp_path / "s.ini")
    assert again.has_collapsed(["a.sqlite"])
    assert again.collapsed_groups(["a.sqlite"]) == [("a.sqlite", "CPU (4 cores)"), ("a.sqlite",)]
