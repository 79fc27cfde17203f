"""How much text one case may hold: one rule every command applies to a model-valid case.

The batch layer's suite bounds the longest text and the whole text of a case (`BatchRules`:
`max_turn_chars`, `max_case_chars`), but it runs over a whole set, after the per-record layers,
and `validate --no-batch`, `review enqueue`, `import` and `eval` never ran it, so a
10,000-turn case refused by `validate` was queued as valid elsewhere. The bounds are per case,
so they are checked here, as each case is loaded, wherever it is loaded (`Loader.load_line`,
the review intake and editor, the importers); the batch layer keeps the checks that need the
whole set.
"""

from __future__ import annotations

from casemill.case.model import Case
from casemill.validation.batch import BatchRules, text_lengths
from casemill.validation.findings import Finding

DEFAULT_RULES = BatchRules()


def size_findings(case: Case, rules: BatchRules | None = None) -> list[Finding]:
    """Errors for a case over `rules`' text bounds (the defaults unless given), at field
    `conversation`, under the batch layer's rule (`batch/text-length`)."""
    rules = rules or DEFAULT_RULES
    longest, total = text_lengths(case)
    out = []
    if longest > rules.max_turn_chars:
        message = (
            f"longest text is {longest:,} characters, over the limit of {rules.max_turn_chars:,}"
        )
        out.append(Finding("batch", "text-length", message, field="conversation", case_id=case.id))
    if total > rules.max_case_chars:
        limit = rules.max_case_chars
        message = f"the case holds {total:,} characters of text, over the limit of {limit:,}"
        out.append(Finding("batch", "text-length", message, field="conversation", case_id=case.id))
    return out
