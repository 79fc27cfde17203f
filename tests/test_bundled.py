"""casemill.bundled: the data the package carries, which in a checkout is the project's own
top-level folders (tests/test_wheel.py checks an installed wheel)."""

from __future__ import annotations

from pathlib import Path

import pytest

from casemill.bundled import NAMES, data_path

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", NAMES)
def test_each_name_is_the_top_level_folder_of_a_checkout(name):
    assert data_path(name) == ROOT / name
    assert data_path(name).is_dir()


def test_a_file_inside_is_found_by_its_parts():
    gate = data_path("gates", "default.toml")
    assert gate == ROOT / "gates" / "default.toml" and gate.is_file()


def test_another_name_is_refused_with_the_names_there_are():
    with pytest.raises(ValueError, match=r"'lexicons' is not bundled .* corpus, gates, samples"):
        data_path("lexicons")
