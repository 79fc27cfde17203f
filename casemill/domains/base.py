"""What every domain pack provides, and the sandbox machinery they share.

A domain pack is data plus a little code: tool specifications (OpenAI function definitions), which
tools only read, a sandbox that executes the tools on a copy of a case's environment, and checks
that a case's references (ids) exist in its environment.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from jsonschema import Draft202012Validator

from casemill.case.model import Case, Environment, ToolCall, ToolFault
from casemill.domains.fastschema import compile_acceptor


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    content: Any = None
    error: str | None = (
        None  # unknown_tool, invalid_params, not_found, policy, timeout, server_error
    )

    @classmethod
    def fail(cls, error: str, message: str) -> ToolResult:
        return cls(ok=False, content={"error": error, "message": message}, error=error)

    def as_text(self) -> str:
        return json.dumps(self.content, ensure_ascii=False, sort_keys=True)


@dataclass
class Recorded:
    call: ToolCall
    result: ToolResult


@functools.lru_cache(maxsize=256)
def _validator(spec_json: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(spec_json))


# Validators by the identity of a spec's parameters object (the object is kept alive beside its
# validator, so its id cannot be reused): saves serialising the spec on every call. Beside each,
# a fast acceptor (`fastschema`) that passes valid parameters without running jsonschema.
_BY_IDENTITY: dict[int, tuple[Any, Draft202012Validator, Any]] = {}


def _validator_for(parameters: dict[str, Any]) -> tuple[Draft202012Validator, Any]:
    hit = _BY_IDENTITY.get(id(parameters))
    if hit is not None and hit[0] is parameters:
        return hit[1], hit[2]
    validator = _validator(json.dumps(parameters, sort_keys=True))
    accept = compile_acceptor(parameters)
    if len(_BY_IDENTITY) < 1024:
        _BY_IDENTITY[id(parameters)] = (parameters, validator, accept)
    return validator, accept


# Tool specs by name, by the identity of a domain's spec tuple (kept alive beside its index).
_SPECS: dict[int, tuple[Any, dict[str, dict[str, Any]]]] = {}


def specs_by_name(specs: tuple[dict[str, Any], ...]) -> dict[str, dict[str, Any]]:
    """A domain's tool specs by tool name, built once per spec tuple (do not change it)."""
    hit = _SPECS.get(id(specs))
    if hit is not None and hit[0] is specs:
        return hit[1]
    index = {s["function"]["name"]: s for s in specs}
    if len(_SPECS) < 256:
        _SPECS[id(specs)] = (specs, index)
    return index


class SpecKinds:
    """For a pack whose tools are its `tool_specs`: which only read (the shared naming rule,
    `recorded.is_read_tool`) and which write (the rest)."""

    tool_specs: tuple[dict[str, Any], ...]

    @property
    def read_tools(self) -> frozenset[str]:
        from casemill.domains.recorded import is_read_tool

        return frozenset(n for n in specs_by_name(self.tool_specs) if is_read_tool(n))

    @property
    def write_tools(self) -> frozenset[str]:
        return frozenset(specs_by_name(self.tool_specs)) - self.read_tools


def param_errors(spec: dict[str, Any], params: dict[str, Any]) -> list[str]:
    """Problems of `params` against a tool spec's JSON Schema, in words."""
    validator, accept = _validator_for(spec["function"]["parameters"])
    if accept is not None and accept(params):
        return []
    out = []
    for err in sorted(validator.iter_errors(params), key=lambda e: list(e.absolute_path)):
        where = ".".join(str(p) for p in err.absolute_path) or "(parameters)"
        out.append(f"{where}: {err.message}")
    return out


class Sandbox:
    """Base sandbox: applies injected faults, records calls; subclasses implement `_dispatch`."""

    def __init__(self, environment: Environment, *, faults: bool = True):
        self._faults = list(environment.faults) if faults else []
        self._fault_hits: dict[int, int] = {}
        self.calls: list[Recorded] = []

    def call(
        self, tool: str, params: dict[str, Any] | None = None, call_id: str | None = None
    ) -> ToolResult:
        params = dict(params or {})
        fault = self._fault_for(tool, params)
        if fault is not None and fault.kind in ("timeout", "server_error", "missing"):
            result = _fault_result(fault)
        else:
            result = self._dispatch(tool, params)
            if fault is not None and result.ok:
                result = self.corrupt(fault, result)
        self.calls.append(Recorded(ToolCall(tool=tool, params=params, id=call_id), result))
        return result

    def _fault_for(self, tool: str, params: dict[str, Any]) -> ToolFault | None:
        for index, fault in enumerate(self._faults):
            if fault.tool != tool:
                continue
            if any(str(params.get(k)) != str(v) for k, v in fault.params.items()):
                continue
            if self._fault_hits.get(index, 0) < fault.times:
                self._fault_hits[index] = self._fault_hits.get(index, 0) + 1
                return fault
        return None

    def _dispatch(self, tool: str, params: dict[str, Any]) -> ToolResult:  # pragma: no cover
        raise NotImplementedError

    def corrupt(self, fault: ToolFault, result: ToolResult) -> ToolResult:
        return ToolResult(ok=True, content={"_truncated": True})

    def final_state(self) -> dict[str, Any]:
        return {}

    def comparable_state(self) -> dict[str, Any]:
        return self.final_state()

    def peek_state(self) -> dict[str, Any]:
        """The state as it is now, for reading only (a pack may answer without a copy)."""
        return self.final_state()


def replayed(domain: Domain, state: dict[str, Any], calls: Iterable[tuple[str, Any]]) -> Sandbox:
    """A sandbox of `domain` on `state` (no faults) after `calls`, (tool, params) pairs, in
    order (a failing call changes nothing)."""
    sandbox = domain.sandbox(Environment(state=state), faults=False)
    for tool, params in calls:
        sandbox.call(tool, dict(params))
    return sandbox


def dispatch_to_methods(
    sandbox: Any, specs: dict[str, dict[str, Any]], tool: str, params: dict[str, Any]
) -> ToolResult:
    """A spec-checked call to the sandbox's method `_t_<tool>`: unknown tools and parameters
    that do not fit the tool's specification answer a failed result."""
    if tool not in specs:
        return ToolResult.fail("unknown_tool", f"no tool named {tool!r}")
    problems = param_errors(specs[tool], params)
    if problems:
        return ToolResult.fail("invalid_params", "; ".join(problems))
    return getattr(sandbox, f"_t_{tool}")(**params)


class SpecSandbox(Sandbox):
    """A sandbox whose tools are its methods `_t_<tool>`, checked against `specs` (by name)
    before they run; it works on its own copy of the environment's state (`self.state`)."""

    def __init__(
        self, environment: Environment, specs: dict[str, dict[str, Any]], *, faults: bool = True
    ):
        super().__init__(environment, faults=faults)
        self.specs = specs
        self.state: dict[str, Any] = copy.deepcopy(environment.state)

    def _dispatch(self, tool: str, params: dict[str, Any]) -> ToolResult:
        return dispatch_to_methods(self, self.specs, tool, params)


def _fault_result(fault: ToolFault) -> ToolResult:
    messages = {
        "timeout": "the service did not answer in time",
        "server_error": "500 internal server error",
        "missing": "record not found",
    }
    kind = "not_found" if fault.kind == "missing" else fault.kind
    return ToolResult.fail(kind, messages[fault.kind])


@dataclass(frozen=True)
class Problem:
    """One semantic problem with a case: the field it concerns and what is wrong."""

    field: str
    message: str
    rule: str


class Domain(Protocol):
    name: str
    tool_specs: tuple[dict[str, Any], ...]
    read_tools: frozenset[str]
    write_tools: frozenset[str]
    has_simulator: bool
    # why cases of a domain without the replay check (`has_simulator` False) get no state check,
    # completing "state check skipped: domain 'x' ..." in the scores' notes; "" when it has one
    no_replay_reason: str

    def sandbox(self, environment: Environment, *, faults: bool = True) -> Sandbox: ...

    def state_problems(self, state: dict[str, Any]) -> list[Problem]: ...

    def reference_problems(self, case: Case) -> list[Problem]: ...


@dataclass
class GenericDomain:
    """A domain with no simulator: tools are known only by name (inferred from cases), any
    parameters are accepted, and no replay is possible. Imports of foreign formats land here."""

    name: str = "generic"
    tool_specs: tuple[dict[str, Any], ...] = ()
    read_tools: frozenset[str] = frozenset()
    write_tools: frozenset[str] = field(default_factory=frozenset)
    has_simulator: bool = False
    no_replay_reason: str = "has no simulator"
    # its cases run on their recorded tool results (`casemill.domains.recorded`); a pack
    # without a sandbox of its own says so with the same attribute
    recorded_tools: bool = True

    def sandbox(self, environment: Environment, *, faults: bool = True) -> Sandbox:
        raise NotImplementedError(
            f"domain {self.name!r} has no simulator: its cases run on recorded tools"
        )

    def state_problems(self, state: dict[str, Any]) -> list[Problem]:
        return []

    def reference_problems(self, case: Case) -> list[Problem]:
        return []
