"""Reply similarity and meaning-based phrase matching. ROUGE-L and BLEU run the real libraries
(see test_scoring_metrics); the embedding path is exercised here with a small deterministic
encoder passed in place of the optional all-MiniLM-L6-v2 model, which is not part of the core
install."""

from __future__ import annotations

import re

import numpy as np
import pytest

from casemill.case.model import Case
from casemill.evaluation import similarity
from casemill.evaluation.scoring import SEMANTIC_LABEL, score
from tests.evaluation.scoring.casebuild import GOOD_REFUND, refund_case, trajectory

CONCEPTS = {"refund": 0, "money": 0, "back": 0, "reimbursed": 0, "mug": 1, "cup": 1, "14.50": 2}


class ConceptEncoder:
    """Bag of concepts: words with the same meaning share a dimension, other words are ignored."""

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), 3))
        for row, text in enumerate(texts):
            for word in re.findall(r"[\w.]+", text.lower()):
                concept = CONCEPTS.get(word.rstrip("."))
                if concept is not None:
                    out[row, concept] += 1.0
        return out


@pytest.fixture
def encoder(monkeypatch):
    monkeypatch.setattr(similarity.EMBEDDER, "_missing", False)
    monkeypatch.setattr(similarity.EMBEDDER, "_model", ConceptEncoder())
    similarity.clear_caches()
    yield
    similarity.clear_caches()


def test_phrases_match_by_meaning_when_the_case_asks(encoder):
    case = refund_case(labels=(SEMANTIC_LABEL,))
    reply = "Your money for the cup (14.50) is on its way back."
    s = score(case, trajectory(case, GOOD_REFUND, reply))
    assert s.metrics["phrase_recall"] == 1.0  # "refund" said as "money ... back"
    assert similarity.SEMANTIC_MISSING not in s.notes
    literal = score(refund_case(), trajectory(refund_case(), GOOD_REFUND, reply))
    assert literal.metrics["phrase_recall"] == 0.5  # without the label: literal only


@pytest.mark.slow  # ROUGE-L and BLEU run too: rouge-score imports nltk (seconds, once)
def test_embedding_similarity_lands_in_the_metrics(encoder):
    base = refund_case()
    reference = "Refund of 14.50 for the mug."
    expected = {**base.expected.model_dump(mode="json"), "reference_reply": reference}
    case = Case.model_validate({**base.model_dump(mode="json"), "id": "", "expected": expected})
    s = score(case, trajectory(case, GOOD_REFUND, "Money for the cup: 14.50."))
    assert s.metrics["embedding_similarity"] == pytest.approx(1.0)
    assert similarity.EMBEDDING_MISSING not in s.notes


def test_cosine_of_unrelated_meanings_is_zero(encoder):
    assert similarity.embedding_similarity("refund", "mug") == pytest.approx(0.0)
    assert similarity.phrase_meaning_found("refund", "A mug. Reimbursed!", 0.75) is True
    assert similarity.phrase_meaning_found("refund", "A mug. A cup.", 0.75) is False
