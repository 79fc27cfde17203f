"""Loading seeds and checking an expansion's outputs (generators.seeds)."""

from __future__ import annotations

import logging

import pytest
from fixtures.casebuild import approved

from casemill.errors import UserError
from casemill.generators.seeds import check_outputs, expand_outputs, load_seeds


def test_an_empty_corpus_folder_is_checked_without_a_warning(tmp_path, caplog):
    seeds, corpus = tmp_path / "seeds.jsonl", tmp_path / "corpus"
    seeds.write_text("{}\n")
    corpus.mkdir()
    outputs = expand_outputs(tmp_path / "out.jsonl")
    with caplog.at_level(logging.WARNING):
        check_outputs(seeds, corpus, outputs)
    assert caplog.records == []


def test_an_empty_seed_folder_is_warned_of_once(tmp_path, caplog):
    (tmp_path / "seeds").mkdir()
    with caplog.at_level(logging.WARNING):
        check_outputs(tmp_path / "seeds", None, expand_outputs(tmp_path / "out.jsonl"))
        with pytest.raises(UserError, match="no valid seed cases"):
            load_seeds(tmp_path / "seeds")
    assert [r.getMessage() for r in caplog.records] == [
        f"{tmp_path / 'seeds'}: no .jsonl or .jsonl.gz files in this folder"
    ]


def test_a_corpus_folder_gives_its_active_cases_not_the_retired_ones(tmp_path, small_seeds):
    from casemill.corpus import CorpusStore

    store = CorpusStore(tmp_path / "corpus")
    store.add_version(approved(*small_seeds[:3]))
    store.add_version(retire=[small_seeds[0].id])
    cases, skipped = load_seeds(tmp_path / "corpus")
    assert sorted(c.id for c in cases) == sorted(c.id for c in small_seeds[1:3])
    assert skipped == []
    store.add_version(retire=[c.id for c in small_seeds[1:3]])
    with pytest.raises(UserError, match="the corpus has no active cases to expand"):
        load_seeds(tmp_path / "corpus")
