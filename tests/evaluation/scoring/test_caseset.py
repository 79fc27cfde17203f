"""What a run was evaluated on: the digest of its case ids, the one-line text, the path shown,
and the note for two runs on different case sets."""

from __future__ import annotations

import hashlib

from casemill.evaluation.scoring.caseset import (
    case_set,
    describe,
    difference_note,
    digest,
    shown_path,
)
from casemill.evaluation.scoring.model import CaseSet
from tests.evaluation.scoring.casebuild import cancel_case, clarify_case, refund_case


def test_digest_is_the_sha256_of_the_sorted_unique_ids_one_a_line():
    expected = hashlib.sha256(b"c_a\nc_b\nc_c\n").hexdigest()
    assert digest(["c_b", "c_c", "c_a"]) == expected
    assert digest(["c_a", "c_b", "c_c", "c_b"]) == expected  # a repeated case counts once
    assert digest(["c_a", "c_b"]) != expected


def test_case_set_is_stable_and_order_independent():
    refund, cancel, clarify = refund_case(), cancel_case(), clarify_case()
    one = case_set([refund, cancel, clarify], ["cases.jsonl"])
    other = case_set([clarify, refund, cancel, refund], ["cases.jsonl"])
    assert one == other
    assert one.count == 3
    assert one.digest == digest([refund.id, cancel.id, clarify.id])
    assert case_set([refund, cancel]).digest != one.digest


def test_describe_names_the_corpus_version_or_the_source():
    corpus = CaseSet(sources=("corpus",), corpus_version=2, count=1870, digest="ab" * 32)
    assert describe(corpus) == "corpus v0002 at corpus (1,870 cases, digest abababababab...)"
    plain = CaseSet(sources=("runs/subset.jsonl",), count=50, digest="0f" * 32)
    assert describe(plain) == "runs/subset.jsonl (50 cases, digest 0f0f0f0f0f0f...)"
    assert describe(None).startswith("not recorded")


def test_describe_says_one_case_in_the_singular():
    one = CaseSet(sources=("one.jsonl",), count=1, digest="0f" * 32)
    assert describe(one) == "one.jsonl (1 case, digest 0f0f0f0f0f0f...)"


def test_shown_path_is_relative_inside_the_root_and_as_given_outside(tmp_path):
    root = tmp_path / "project"
    (root / "corpus").mkdir(parents=True)
    assert shown_path(root / "corpus", root) == "corpus"
    assert shown_path(root, root) == "."
    assert (
        shown_path(tmp_path / "elsewhere.jsonl", root) == f"{tmp_path.as_posix()}/elsewhere.jsonl"
    )


def test_difference_note_gives_the_counts_and_both_corpora():
    current = CaseSet(sources=("corpus",), corpus_version=2, count=80, digest="a" * 64)
    baseline = CaseSet(sources=("corpus",), corpus_version=1, count=75, digest="b" * 64)
    assert difference_note(75, 5, 0, current, baseline) == (
        "case sets differ: 75 cases in common, 5 only in this run, 0 only in the baseline "
        "(this run: corpus v0002; the baseline: corpus v0001); compared on the 75 in common"
    )
    assert difference_note(3, 0, 1, None, baseline, names=("B", "A")) == (
        "case sets differ: 3 cases in common, 0 only in B, 1 only in A "
        "(B: not recorded; A: corpus v0001); compared on the 3 in common"
    )
    assert difference_note(75, 0, 0, current, baseline) == ""
