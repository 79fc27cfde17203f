"""Mining production support logs into candidate cases, with personal data redacted.

    from casemill.mining import mine
    result = mine([Path("logs.jsonl")], "openai-jsonl", existing=CorpusStore("corpus").cases())
    result.cases        # candidate Cases, review status pending
    result.quarantined  # bad records, with file, line and reason
    result.summary      # counts: conversations, cases by kind and confidence, redactions, ...

Formats: `openai-jsonl`, `transcript`, `csv`, `otel` (see `casemill.mining.parsers`).

Redaction (`casemill.mining.redact`) replaces names, emails, phone numbers, card numbers, street lines,
postal codes, cities, user ids and dates of birth by surrogates, the same value by the same
surrogate throughout a conversation; states and countries are kept.
"""

from casemill.mining.model import Conversation, LoggedCall, Message, Quarantined
from casemill.mining.parsers import FORMATS, spans_files
from casemill.mining.pipeline import (
    MineOptions,
    MineResult,
    MineSummary,
    iter_mine,
    merge_results,
    mine,
    mine_file,
)
from casemill.mining.streams import StreamState, mine_end, mine_part

__all__ = [
    "FORMATS",
    "Conversation",
    "LoggedCall",
    "Message",
    "MineOptions",
    "MineResult",
    "MineSummary",
    "Quarantined",
    "StreamState",
    "iter_mine",
    "merge_results",
    "mine",
    "mine_end",
    "mine_file",
    "mine_part",
    "spans_files",
]
