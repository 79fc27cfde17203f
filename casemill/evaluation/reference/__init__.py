"""The reference support agent (`reference`) and its faulty variants (`reference:NAME`)."""

from __future__ import annotations

from casemill.errors import UserError
from casemill.evaluation.agents.base import AgentInfo
from casemill.evaluation.reference.agent import ReferenceAgent
from casemill.evaluation.reference.variants import VARIANTS


def reference_agent(variant: str | None = None) -> ReferenceAgent:
    """`reference` (variant None) or one of its faulty variants by name."""
    if not variant:
        return ReferenceAgent()
    if variant not in VARIANTS:
        raise UserError(
            f"unknown reference variant {variant!r}; known: {', '.join(sorted(VARIANTS))} "
            "(see `casemill agents list`)"
        )
    return VARIANTS[variant]()


def builtin_infos() -> list[AgentInfo]:
    out = [AgentInfo("reference", ReferenceAgent.description)]
    for name, cls in VARIANTS.items():
        out.append(AgentInfo(f"reference:{name}", cls.description, cls.bug))
    return out


__all__ = ["VARIANTS", "ReferenceAgent", "builtin_infos", "reference_agent"]
