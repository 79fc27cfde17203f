"""Domain packs: the built-in support domain, generic domains for imported cases, and the packs
installed packages declare (`casemill.domains.registry`)."""

from __future__ import annotations

from casemill.domains.base import Domain, GenericDomain, Problem, Sandbox, ToolResult
from casemill.domains.registry import get_domain, known_domains, register_domain
from casemill.domains.support import SupportDomain
from casemill.domains.tau2_retail import Tau2RetailDomain

__all__ = [
    "Domain",
    "GenericDomain",
    "Problem",
    "Sandbox",
    "SupportDomain",
    "Tau2RetailDomain",
    "ToolResult",
    "get_domain",
    "known_domains",
    "register_domain",
]
