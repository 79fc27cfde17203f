"""Semantic checks of one valid case against its domain: tool names exist, parameters fit the
tool's parameter schema, the environment has the domain's shape, referenced ids exist, and the
replay check passes."""

from __future__ import annotations

from casemill.case.model import Case
from casemill.domains import Domain, Problem, get_domain
from casemill.domains.base import param_errors
from casemill.replay import replay
from casemill.validation.findings import Finding


def _f(problem: Problem, case: Case) -> Finding:
    return Finding("semantic", problem.rule, problem.message, field=problem.field, case_id=case.id)


def semantic_findings(case: Case, domain: Domain | None = None) -> list[Finding]:
    domain = domain or get_domain(case.domain)
    findings: list[Finding] = []
    specs = {s["function"]["name"]: s for s in domain.tool_specs}
    if specs:
        groups = [("expected.tool_calls", c) for c in case.expected.tool_calls]
        groups += [("expected.forbidden_calls", c) for c in case.expected.forbidden_calls if c.tool]
        counters: dict[str, int] = {}
        for prefix, call in groups:
            index = counters.get(prefix, 0)
            counters[prefix] = index + 1
            where = f"{prefix}[{index}]"
            if call.tool not in specs:
                findings.append(
                    Finding(
                        "semantic",
                        "unknown-tool",
                        f"tool {call.tool!r} does not exist in domain {domain.name!r}; "
                        f"known: {', '.join(sorted(specs))}",
                        field=f"{where}.tool",
                        case_id=case.id,
                    )
                )
                continue
            if prefix == "expected.tool_calls":
                for message in param_errors(specs[call.tool], dict(call.params)):
                    findings.append(
                        Finding(
                            "semantic",
                            "param-schema",
                            f"{call.tool} {message}",
                            field=f"{where}.params",
                            case_id=case.id,
                        )
                    )
        for index, fault in enumerate(case.environment.faults):
            if fault.tool not in specs:
                findings.append(
                    Finding(
                        "semantic",
                        "unknown-tool",
                        f"fault on unknown tool {fault.tool!r}",
                        field=f"environment.faults[{index}].tool",
                        case_id=case.id,
                    )
                )
    state = domain.state_problems(case.environment.state)
    findings += [_f(p, case) for p in state]
    if findings:
        return findings
    findings += [_f(p, case) for p in domain.reference_problems(case)]
    if findings:
        return findings
    return [_f(p, case) for p in replay(case, domain, states=False).problems]
