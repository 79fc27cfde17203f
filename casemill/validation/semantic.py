"""Semantic checks of one valid case against its domain: tool names exist, parameters fit the
tool's parameter schema, the environment has the domain's shape, referenced ids exist (and, in
the support domain, belong to the signed-in customer), and the replay check passes."""

from __future__ import annotations

from typing import Any

from casemill.case.model import Case
from casemill.domains import Domain, Problem, get_domain, recorded
from casemill.domains.base import param_errors, specs_by_name
from casemill.replay import replay
from casemill.validation.findings import Finding


def _f(problem: Problem, case: Case) -> Finding:
    return Finding("semantic", problem.rule, problem.message, field=problem.field, case_id=case.id)


def tool_findings(case: Case, domain: Domain) -> list[Finding]:
    """Unknown tools (expected, forbidden, faults) and expected parameters that do not fit the
    tool's parameter schema."""
    specs = specs_by_name(domain.tool_specs)
    if not specs:
        return []
    findings: list[Finding] = []
    groups = [("expected.tool_calls", list(case.expected.tool_calls))]
    groups.append(("expected.forbidden_calls", list(case.expected.forbidden_calls)))
    for prefix, calls in groups:
        for index, call in enumerate(calls):
            if call.tool is None:
                continue
            where = f"{prefix}[{index}]"
            if call.tool not in specs:
                known = ", ".join(sorted(specs))
                message = (
                    f"tool {call.tool!r} does not exist in domain {domain.name!r}; known: {known}"
                )
                findings.append(
                    Finding("semantic", "unknown-tool", message, f"{where}.tool", case_id=case.id)
                )
            elif prefix == "expected.tool_calls":
                for message in param_errors(specs[call.tool], dict(call.params)):
                    findings.append(
                        Finding(
                            "semantic",
                            "param-schema",
                            f"{call.tool} {message}",
                            f"{where}.params",
                            case_id=case.id,
                        )
                    )
    for index, fault in enumerate(case.environment.faults):
        if fault.tool not in specs:
            message = f"fault on unknown tool {fault.tool!r}"
            field = f"environment.faults[{index}].tool"
            findings.append(Finding("semantic", "unknown-tool", message, field, case_id=case.id))
    return findings


def semantic_findings(
    case: Case, domain: Domain | None = None, *, parsed: Any = None
) -> list[Finding]:
    """Every semantic finding of one model-valid case; stops after the first stage that fails
    (tools, environment shape, references, replay). `parsed`: for a domain with `check_state`,
    the case's state already parsed by the caller, equal to what the domain's parse makes of
    it; the check then owns it (the replay changes it)."""
    domain = domain or get_domain(case.domain)
    findings = tool_findings(case, domain)
    check_state = getattr(domain, "check_state", None)
    if check_state is not None:  # parse the state once for every stage (support domain)
        parsed, problems = check_state(case.environment.state, parsed=parsed)
    else:
        parsed, problems = None, domain.state_problems(case.environment.state)
    findings += [_f(p, case) for p in problems]
    if recorded.uses_recorded_tools(domain):  # two results for one recorded call, say
        findings += [_f(p, case) for p in recorded.recorded_problems(case)]
    if findings:
        return findings
    if parsed is not None:
        references = domain.reference_problems(case, parsed=parsed)
    else:
        references = domain.reference_problems(case)
    findings += [_f(p, case) for p in references]
    if findings:
        return findings
    sandbox = None
    if parsed is not None and domain.has_simulator:
        # the tool stage found every expected call's parameters fit its tool's specification
        # (when the domain has specifications): the replay does not check them again
        checked = bool(domain.tool_specs)
        sandbox = domain.sandbox(
            case.environment, faults=False, parsed=parsed, checked_params=checked
        )
    return [_f(p, case) for p in replay(case, domain, states=False, sandbox=sandbox).problems]
