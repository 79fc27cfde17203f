"""An episode on a fake sandbox, for driving the recorded agent turn by turn without a domain."""

from __future__ import annotations

from typing import Any

from casemill.case.model import Case, Environment
from casemill.domains.base import Sandbox, ToolResult
from casemill.evaluation.agents import Episode


class EchoSandbox(Sandbox):
    """Answers every call with its tool and parameters (the sandbox's answers are not what the
    recorded agent is tested on: it ignores them, as it ignores the logged results)."""

    def __init__(self) -> None:
        super().__init__(Environment(), faults=False)

    def _dispatch(self, tool: str, params: dict[str, Any]) -> ToolResult:
        return ToolResult(ok=True, content={"tool": tool, **params})

    def comparable_state(self) -> dict[str, Any]:
        return {}


def episode(case: Case, turn: int = 0) -> Episode:
    return Episode(
        case_id=case.id, messages=[], tools=[], sandbox=EchoSandbox(), turn=turn, case=case
    )


def calls(ep: Episode) -> list[tuple[str, dict[str, Any]]]:
    return [(c.tool, c.params) for c in ep.calls]
