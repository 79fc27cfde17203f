"""Domain packs: the built-in support domain and generic domains for imported cases."""

from __future__ import annotations

from casemill.domains.base import Domain, GenericDomain, Problem, Sandbox, ToolResult
from casemill.domains.support import SupportDomain
from casemill.domains.tau2_retail import Tau2RetailDomain
from casemill.errors import UserError

_SUPPORT = SupportDomain()
_TAU2_RETAIL = Tau2RetailDomain()


def get_domain(name: str) -> Domain:
    """The domain pack called `name`: `support`, or `generic` / `generic:LABEL` (no simulator)."""
    if name == _SUPPORT.name:
        return _SUPPORT
    if name == _TAU2_RETAIL.name:
        return _TAU2_RETAIL
    if name == "generic" or name.startswith("generic:"):
        return GenericDomain(name=name)
    raise UserError(f"unknown domain {name!r}; known: support, tau2-retail, generic[:LABEL]")


__all__ = [
    "Domain",
    "GenericDomain",
    "Problem",
    "Sandbox",
    "SupportDomain",
    "Tau2RetailDomain",
    "ToolResult",
    "get_domain",
]
