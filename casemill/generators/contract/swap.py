"""Entity swap: one entity the case's writes name gets a new id everywhere the case holds it
(the state, the expected and forbidden calls, the conversation, the scenario, the customer's
facts and script).

The label rule: renaming is consistent across the whole case, so the expected state is the
old one under the new name. The new id has the old one's shape (the kind's `pattern`, else
letters for letters and digits for digits) and occurs nowhere in the case; a rename that
changes what the policy says about any expected write (it never should) is dropped.
"""

from __future__ import annotations

import json
import random
import re

from casemill.case.model import Case, derive
from casemill.domains.contract import entity_of
from casemill.generators.contract import pack_of, refusals, tagged
from casemill.generators.framework import NotApplicable, operator

SWAP_RULE = "an entity renamed everywhere in the case: expected calls follow the new id"
PARTS = ("environment", "expected", "conversation", "user_scenario", "customer")
LETTERS, DIGITS = "ABCDEFGHJKLMNPQRSTUVWXYZ", "0123456789"


@operator(kind="entity_swap", name="swap_entity", version="1", label_rule=SWAP_RULE)
def swap_entity(case: Case, rng: random.Random) -> list[Case]:
    """Rename one entity that an expected write names."""
    pack = pack_of(case)
    kinds = {k.name: k for k in pack.contract.entities if k.name in pack.contract.swappable}
    named = []
    for call in case.expected.tool_calls:
        found = entity_of(pack.contract, dict(call.params))
        if found and found[0].name in kinds and found not in named:
            named.append(found)
    if not named:
        raise NotApplicable("no expected write names an entity the pack lets swaps rename")
    kind, old = rng.choice(named)
    whole = case.model_dump(mode="json")
    dump = {p: whole[p] for p in PARTS if p in whole}  # a case without a customer dumps none
    text = json.dumps(dump, ensure_ascii=False)
    token = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(old)}(?![A-Za-z0-9_])")
    new = new_id(old, kind.pattern, rng)
    while new in text:
        new = new_id(old, kind.pattern, rng)
    swapped = json.loads(token.sub(new, text))
    made = derive(case, **swapped, tags=tagged(case, labels=(f"swap:{kind.name}",)))
    if refusals(pack, case.environment.state, list(case.expected.tool_calls)) != refusals(
        pack, made.environment.state, list(made.expected.tool_calls)
    ):
        raise NotApplicable("the rename changed what the policy says")
    return [made]


def new_id(old: str, pattern: str | None, rng: random.Random) -> str:
    """An id shaped like `pattern` (`A` a capital, `9` a digit), else like `old`."""
    out = []
    for c in pattern or old:
        if c.isalpha() and (not pattern or c == "A"):
            letter = rng.choice(LETTERS)
            out.append(letter.lower() if not pattern and c.islower() else letter)
        elif c.isdigit() and (not pattern or c == "9"):
            out.append(rng.choice(DIGITS))
        else:
            out.append(c)
    return "".join(out)
