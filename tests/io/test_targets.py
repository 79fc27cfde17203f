"""casemill.io.targets: the checks every writing stage makes on its output paths."""

from __future__ import annotations

import pytest

from casemill.errors import UserError
from casemill.io.targets import check_targets


def test_distinct_new_files_pass(tmp_path):
    log = tmp_path / "a.jsonl"
    log.write_text("")
    check_targets([log], {"--out": tmp_path / "out.jsonl", "--quarantine": None})


def test_a_folder_is_refused_by_its_option(tmp_path):
    with pytest.raises(UserError, match=r"^--out .* is a folder: name a file"):
        check_targets([], {"--out": tmp_path})


def test_a_target_that_is_an_input_names_what_the_inputs_are(tmp_path):
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("")
    with pytest.raises(UserError, match=r"is also an input \(seed or corpus file\)"):
        check_targets([seeds], {"-o": seeds}, inputs="an input (seed or corpus file)")


def test_two_targets_on_one_path_are_refused(tmp_path):
    out = tmp_path / "out.jsonl"
    with pytest.raises(UserError, match=r"--quarantine .* is also --out"):
        check_targets([], {"--out": out, "--quarantine": tmp_path / "." / "out.jsonl"})


def test_mining_output_still_offers_it():
    from casemill.mining import output

    assert output.check_targets is check_targets
