"""Errors of the review queue. Each is a `UserError`: its message says what happened and what to
do, and the CLI and the web app show it as is."""

from __future__ import annotations

from casemill.errors import UserError
from casemill.validation.findings import Finding


class ReviewError(UserError):
    """Base of the review queue's errors."""


class NotFound(ReviewError):
    """No item (or batch) with that id."""


class StaleWrite(ReviewError):
    """The item changed since the writer read it (another decision, edit or claim came first)."""

    def __init__(self, case_id: str, expected: int, current: int, by: str | None):
        self.case_id = case_id
        self.expected = expected
        self.current = current
        self.by = by
        who = f" (last changed by {by})" if by else ""
        super().__init__(
            f"case {case_id} changed since you loaded it: you had version {expected}, the queue "
            f"has version {current}{who}; reload it and decide again"
        )


class LeaseHeld(ReviewError):
    """Another reviewer holds the item's lease."""

    def __init__(self, case_id: str, holder: str, expires: str):
        self.case_id = case_id
        self.holder = holder
        self.expires = expires
        # the stored lease end is a sortable ISO stamp; a reader wants the minute, in UTC
        until = f"{expires[:16].replace('T', ' ')} UTC" if len(expires) >= 16 else expires
        super().__init__(f"case {case_id} is being reviewed by {holder} until {until}")


class EditRefused(ReviewError):
    """An edited case failed validation; the original is kept."""

    def __init__(self, case_id: str, findings: list[Finding]):
        self.case_id = case_id
        self.findings = findings
        lines = "; ".join(str(f) for f in findings[:10])
        super().__init__(f"edit of case {case_id} refused, the original is kept: {lines}")


class DecisionBlocked(ReviewError):
    """The decision is not allowed in the item's current state (invalid case, exported, closed)."""


class NewDomainRefused(ReviewError):
    """An export would bring the corpus cases of a domain it does not hold yet."""

    def __init__(self, corpus: str, held: set[str], new: dict[str, int]):
        self.new = new
        said = ", ".join(f"{n} of {d}" for d, n in sorted(new.items()))
        super().__init__(
            f"the export would add {said} to {corpus}, which holds only "
            f"{', '.join(sorted(held))} cases; a gate or an evaluation of that corpus would then "
            "run on them too. Nothing was written and the cases stay approved: export them to "
            "another corpus (--corpus DIR), or add the domain on purpose with --new-domain"
        )
