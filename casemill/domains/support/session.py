"""Who a support case's agent serves (the customer its system turn says is signed in), and the
orders a customer's words name."""

from __future__ import annotations

import re

from casemill.case.model import Case

# the system turn that names the customer the agent serves (`Authenticated customer: C1040
# (Noah Fischer, noah.fischer@example.com)`; a full stop after the id ends the sentence)
SIGNED_IN = re.compile(r"Authenticated customer:\s*([^\s(),]+?)[.;:!?]*(?=[\s(),]|$)")


# an order id as customers write it (`W1001`, `#w1001`)
ORDER_ID = re.compile(r"(?<![A-Za-z0-9])#?[Ww]\d{4,}(?![0-9])")


def order_ids_of(text: str) -> list[str]:
    """The order ids `text` names, normalised (`#w1001` -> `W1001`), each once, in order."""
    return list(dict.fromkeys(m.group(0).lstrip("#").upper() for m in ORDER_ID.finditer(text)))


def signed_in_customer(case: Case) -> str | None:
    """The id of the customer the case's system turn says is signed in, or None."""
    for turn in case.conversation:
        if turn.role == "system" and (m := SIGNED_IN.search(turn.content)):
            return m.group(1)
    return None
