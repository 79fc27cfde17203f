"""What changed between two corpus versions (casemill.corpus.diff)."""

from __future__ import annotations

import pytest
from fixtures.casebuild import approved, cancel_case, clarify_case, refund_case

from casemill.corpus import CorpusStore, diff_versions, parse_version
from casemill.errors import UserError

A, B, C = approved(refund_case(), cancel_case(), clarify_case())


@pytest.fixture
def store(tmp_path):
    store = CorpusStore(tmp_path / "corpus")
    store.add_version([A, B])  # v0001
    store.add_version([C], retire=[A.id])  # v0002
    store.add_version([A])  # v0003: A back
    return store


def ids(cases):
    return [c.id for c in cases]


def test_latest_against_the_one_before_by_default(store):
    diff = diff_versions(store)
    assert (diff.old, diff.new) == (2, 3)
    assert ids(diff.added) == [A.id] and ids(diff.retired) == []


def test_any_two_versions_and_the_empty_corpus(store):
    two = diff_versions(store, 1, 2)
    assert ids(two.added) == [C.id] and ids(two.retired) == [A.id]
    assert ids(diff_versions(store, 0, 1).added) == sorted([A.id, B.id])
    back = diff_versions(store, 1, 3)  # A retired and added again: in neither list
    assert ids(back.added) == [C.id] and ids(back.retired) == []
    assert ids(diff_versions(store, 3, 1).retired) == [C.id]


def test_unknown_versions_and_an_empty_corpus_are_user_errors(store, tmp_path):
    with pytest.raises(UserError, match="no version v0009 .versions v0001 to v0003"):
        diff_versions(store, 1, 9)
    with pytest.raises(UserError, match="no versions yet"):
        diff_versions(CorpusStore(tmp_path / "empty"))


@pytest.mark.parametrize(("text", "version"), [("v0002", 2), ("v2", 2), ("2", 2), ("0", 0)])
def test_parse_version(text, version):
    assert parse_version(text) == version


def test_parse_version_refuses_other_text():
    with pytest.raises(UserError, match="expected a corpus version such as v0002 or 2"):
        parse_version("latest")
