"""From a case to what the agent receives: OpenAI chat messages, tool specs, a sandbox.

Roles map as `customer -> user`; `system`, `assistant` and `tool` stay as they are, with assistant
`tool_calls` in OpenAI shape (`{"id", "type": "function", "function": {"name", "arguments"}}`)
and each `tool` turn carrying the `tool_call_id` of the call it answers (ids are made up, in
order, when the case has none). A case with a `user_scenario` gives the scenario to the agent as
the first user message (after the leading system turns, before any scripted turn): the
scenario is the customer's request as a whole, and the simulated customer
(`casemill.evaluation.customer`) answers what the agent asks after it. A case whose customer
has a script (a mined conversation: the logged customer turns to come) and speaks in the
conversation keeps its scenario for the simulator: the agent hears the later turns in turn.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from casemill.case.model import Case
from casemill.domains import Sandbox, get_domain, recorded
from casemill.domains.recorded import RecordedSandbox
from casemill.evaluation.agents.base import Episode

ROLE_MAP = {"customer": "user", "assistant": "assistant", "tool": "tool", "system": "system"}


def case_messages(case: Case) -> list[dict[str, Any]]:
    """The case's conversation in OpenAI chat format."""
    messages: list[dict[str, Any]] = []
    pending_ids: list[str] = []
    for index, turn in enumerate(case.conversation):
        message: dict[str, Any] = {"role": ROLE_MAP[turn.role], "content": turn.content}
        if turn.tool_calls:
            calls = []
            for j, call in enumerate(turn.tool_calls):
                call_id = call.id or f"call_t{index}_{j}"
                calls.append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": call.tool,
                            "arguments": json.dumps(call.params, sort_keys=True),
                        },
                    }
                )
            message["tool_calls"] = calls
            pending_ids = [c["id"] for c in calls]
        if turn.role == "tool":
            message["tool_call_id"] = turn.tool_call_id or (
                pending_ids.pop(0) if pending_ids else f"call_t{index}"
            )
            if turn.tool_call_id in pending_ids:
                pending_ids.remove(turn.tool_call_id)
        messages.append(message)
    if case.user_scenario and not _scripted(case):
        at = next((i for i, m in enumerate(messages) if m["role"] != "system"), len(messages))
        messages.insert(at, {"role": "user", "content": case.user_scenario})
    return messages


def _scripted(case: Case) -> bool:
    """A case whose customer speaks in its conversation and has more to say (a script): its
    scenario is for the simulated customer, and the agent hears the rest when it asks."""
    script = case.customer is not None and bool(case.customer.script)
    return script and any(t.role == "customer" for t in case.conversation)


def new_episode(case: Case, *, max_steps: int = 20) -> Episode:
    """A fresh episode on a fresh sandbox (faults on) for `case`: the domain's simulator, or the
    case's recorded tools when the domain has none (`casemill.domains.recorded`)."""
    domain = get_domain(case.domain)
    if recorded.uses_recorded_tools(domain):
        sandbox: Sandbox = RecordedSandbox(case, faults=True)
        specs = domain.tool_specs or recorded.tool_specs(case)
    else:
        sandbox = domain.sandbox(case.environment, faults=True)
        specs = domain.tool_specs
    return Episode(
        case_id=case.id,
        messages=case_messages(case),
        tools=[dict(spec) for spec in specs],
        sandbox=sandbox,
        max_steps=max_steps,
        case=case,
        # a copy: a sandbox may hand out its live state, which the agent's writes then change
        initial_state=copy.deepcopy(sandbox.comparable_state()),
    )
