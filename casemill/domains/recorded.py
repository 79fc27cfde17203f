"""Recorded tools: how a case of a domain without a simulator runs (mined logs of any domain,
imported cases a pack cannot take whole).

The case's own records answer the agent, in this order:

1. a call equal to a recorded one (`environment.state["calls"]`: same tool, the same arguments
   as canonical JSON) gets the recorded result, an error included (a call the log shows failing
   fails again);
2. a read of an entity the environment holds (`environment.state["records"]`: by collection,
   the tool's name without its `get_`/`find_`/`list_`/`search_` verb, then by what was asked:
   the single argument's value, or the arguments' canonical JSON) gets the entity;
3. a write equal to one of the case's expected calls, under the case's matching rules, is
   acknowledged (`{"status": "ok"}`, and a note that no result was recorded);
4. anything else is an `off_script` tool error naming the call: nothing was recorded for it.
   The agent is told and can carry on; the call stays in the trajectory and the report counts it.

There is no state to replay, so the state check of such a case compares the writes the agent
made with the expected calls instead (`state_check: calls`, in `casemill.evaluation.scoring`):
what `comparable_state` returns is that list of writes, for the report's diff.

Cases mined before recorded tools existed have `records` but no `calls`: they run as they are,
their writes answered by rule 3.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from casemill.case.ids import canonical_json
from casemill.case.matching import call_matches
from casemill.case.model import Case, ToolCall
from casemill.domains.base import Problem, Sandbox, ToolResult

READ_PREFIXES = ("get_", "find_", "list_", "search_", "calculate", "think")
VERBS = ("get_", "find_", "list_", "search_")
OFF_SCRIPT = "off_script"


def uses_recorded_tools(domain: Any) -> bool:
    """Whether cases of `domain` run on recorded tools: the generic domains, and a pack that
    declares `recorded_tools = True` (it has no sandbox of its own)."""
    return bool(getattr(domain, "recorded_tools", False))


def is_read_tool(name: str) -> bool:
    """The shared naming rule for tools a log does not declare: these names only read."""
    return name.startswith(READ_PREFIXES)


def collection(tool: str) -> str:
    """Where the records of a read tool are kept: its name without the verb."""
    for verb in VERBS:
        if tool.startswith(verb):
            return tool[len(verb) :] or tool
    return tool


def record_key(arguments: dict[str, Any]) -> str:
    """The key of what a read asked for: its one argument's value, else the canonical JSON."""
    values = [v for v in arguments.values() if isinstance(v, str | int)]
    if len(arguments) == 1 and len(values) == 1:
        return str(values[0])
    return canonical_json(arguments) if arguments else "-"


def call_key(tool: str, params: dict[str, Any]) -> str:
    return f"{tool}{canonical_json(params)}"


def declared_tools(case: Case) -> dict[str, dict[str, Any]]:
    """The tools a case of a domain without a simulator knows: those its environment declares
    (`state["tools"]`: kind and parameter names), then those its records, expected calls and
    conversation name. Kinds not declared follow `is_read_tool`."""
    state = case.environment.state
    tools: dict[str, dict[str, Any]] = {}
    declared = state.get("tools")
    if isinstance(declared, dict):
        for name, info in declared.items():
            info = info if isinstance(info, dict) else {}
            params = info.get("params") if isinstance(info.get("params"), list) else []
            kind = info.get("kind") if info.get("kind") in ("read", "write") else None
            tools[name] = {"kind": kind, "params": [p for p in params if isinstance(p, str)]}
    for tool, params in _named_calls(case):
        entry = tools.setdefault(tool, {"kind": None, "params": []})
        entry["params"] = sorted(set(entry["params"]) | set(params))
    for name, entry in tools.items():
        entry["kind"] = entry["kind"] or ("read" if is_read_tool(name) else "write")
    return dict(sorted(tools.items()))


def _named_calls(case: Case) -> Iterable[tuple[str, Iterable[str]]]:
    for call in case.expected.tool_calls:
        yield call.tool, call.params
    for turn in case.conversation:
        for call in turn.tool_calls:
            yield call.tool, call.params
    for entry in _entries(case.environment.state.get("calls")):
        yield entry["tool"], entry["params"]


def _entries(calls: Any) -> list[dict[str, Any]]:
    """The well-formed entries of a `calls` table (validation reports the others)."""
    if not isinstance(calls, list):
        return []
    return [
        c
        for c in calls
        if isinstance(c, dict)
        and isinstance(c.get("tool"), str)
        and isinstance(c.get("params"), dict)
    ]


def tool_specs(case: Case) -> tuple[dict[str, Any], ...]:
    """OpenAI function specs for `declared_tools(case)`: a name, its kind in words, and the
    parameter names seen (any value accepted: the log shows no more)."""
    specs = []
    for name, info in declared_tools(case).items():
        what = "reads" if info["kind"] == "read" else "changes"
        specs.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": f"{name} ({what} the records; known from the case's log)",
                    "parameters": {
                        "type": "object",
                        "properties": {p: {} for p in info["params"]},
                    },
                },
            }
        )
    return tuple(specs)


def write_tools(case: Case) -> frozenset[str]:
    return frozenset(n for n, info in declared_tools(case).items() if info["kind"] == "write")


class RecordedSandbox(Sandbox):
    """A case's recorded tool results as a sandbox (see the module docstring)."""

    def __init__(self, case: Case, *, faults: bool = True):
        super().__init__(case.environment, faults=faults)
        state = case.environment.state
        records = state.get("records")
        self.records: dict[str, Any] = records if isinstance(records, dict) else {}
        self.recorded: dict[str, dict[str, Any]] = {}
        for entry in _entries(state.get("calls")):
            key = call_key(entry["tool"], entry["params"])
            if key not in self.recorded or (entry.get("ok", True) and not self.recorded[key]["ok"]):
                self.recorded[key] = {"result": entry.get("result"), "ok": entry.get("ok", True)}
        self.tools = declared_tools(case)  # this sandbox's own copy
        self.expected = case.expected.tool_calls
        self.writes: list[dict[str, Any]] = []

    def _dispatch(self, tool: str, params: dict[str, Any]) -> ToolResult:
        if tool not in self.tools:
            if not (is_read_tool(tool) and collection(tool) in self.records):
                return ToolResult.fail("unknown_tool", f"no tool {tool!r} in this case's log")
            self.tools[tool] = {"kind": "read", "params": sorted(params)}  # its records tell
        result = self._answer(tool, params)
        if self.tools[tool]["kind"] == "write" and (result.ok or result.error == OFF_SCRIPT):
            self.writes.append({"tool": tool, "params": params})
        return result

    def _answer(self, tool: str, params: dict[str, Any]) -> ToolResult:
        found = self.recorded.get(call_key(tool, params))
        if found is not None:
            if found["ok"]:
                return ToolResult(ok=True, content=found["result"])
            return ToolResult(ok=False, content=found["result"], error="recorded_error")
        if self.tools[tool]["kind"] == "read":
            bucket = self.records.get(collection(tool))
            if isinstance(bucket, dict) and record_key(params) in bucket:
                return ToolResult(ok=True, content=bucket[record_key(params)])
        else:
            as_call = ToolCall(tool=tool, params=params)
            if any(call_matches(want, as_call) for want in self.expected):
                return ToolResult(
                    ok=True,
                    content={"status": "ok", "note": "an expected write; no result was recorded"},
                )
        shown = canonical_json(params)
        return ToolResult.fail(
            OFF_SCRIPT,
            f"{tool}({shown[:300]}): no result was recorded for this call in this case",
        )

    def final_state(self) -> dict[str, Any]:
        return {"writes": list(self.writes)}


def recorded_problems(case: Case) -> list[Problem]:
    """Two different recorded results for one call in `environment.state["calls"]`: which one
    answers the agent would be a guess. Each entry may name the log's turn (`turn`)."""
    seen: dict[str, tuple[int, Any]] = {}
    problems = []
    calls = case.environment.state.get("calls")
    for index, entry in enumerate(calls if isinstance(calls, list) else []):
        if entry not in _entries([entry]):
            problems.append(
                Problem(
                    f"environment.state.calls[{index}]",
                    "a recorded call needs 'tool' (a string) and 'params' (an object)",
                    "recorded-call-shape",
                )
            )
            continue
        key = call_key(entry["tool"], entry["params"])
        result = canonical_json(entry.get("result"))
        if key in seen and seen[key][1] != result:
            turn = f" (turn {entry['turn']})" if isinstance(entry.get("turn"), int) else ""
            problems.append(
                Problem(
                    f"environment.state.calls[{index}]",
                    f"{entry['tool']} with the same arguments has two different recorded results"
                    f"{turn}: calls[{seen[key][0]}] and calls[{index}]",
                    "recorded-conflict",
                )
            )
        seen.setdefault(key, (index, result))
    return problems
