"""Mining production support logs into candidate cases, with personal data redacted.

    from mining import mine
    result = mine([Path("logs.jsonl")], "openai-jsonl", existing=CorpusStore("corpus").cases())
    result.cases        # candidate Cases, review status pending
    result.quarantined  # bad records, with file, line and reason
    result.summary      # counts: conversations, cases by kind and confidence, redactions, ...

Formats: `openai-jsonl`, `transcript`, `csv`, `otel` (see `mining.parsers`).
"""

from mining.model import Conversation, LoggedCall, Message, Quarantined
from mining.parsers import FORMATS
from mining.pipeline import (
    MineOptions,
    MineResult,
    MineSummary,
    iter_mine,
    merge_results,
    mine,
    mine_file,
)

__all__ = [
    "FORMATS",
    "Conversation",
    "LoggedCall",
    "Message",
    "MineOptions",
    "MineResult",
    "MineSummary",
    "Quarantined",
    "iter_mine",
    "merge_results",
    "mine",
    "mine_file",
]
