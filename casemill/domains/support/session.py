"""Who a support case's agent serves: the customer its system turn says is signed in."""

from __future__ import annotations

import re

from casemill.case.model import Case

# the system turn that names the customer the agent serves (`Authenticated customer: C1040
# (Noah Fischer, noah.fischer@example.com)`; a full stop after the id ends the sentence)
SIGNED_IN = re.compile(r"Authenticated customer:\s*([^\s(),]+?)[.;:!?]*(?=[\s(),]|$)")


def signed_in_customer(case: Case) -> str | None:
    """The id of the customer the case's system turn says is signed in, or None."""
    for turn in case.conversation:
        if turn.role == "system" and (m := SIGNED_IN.search(turn.content)):
            return m.group(1)
    return None
