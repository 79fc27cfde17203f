"""Which tau2 domain a task is of, and what `casemill import --from tau2` does with it.

tau2-bench tasks name their domain in `user_scenario.instructions.domain` (`retail`, `airline`,
`telecom`; a top-level `domain` is read too). A task that names none is read as retail, as
tau2's retail tasks were before they named it.

| tau2 domain | Casemill pack | what the import does                                              |
| ----------- | ------------- | ----------------------------------------------------------------- |
| `retail`    | `tau2-retail` | imports it, its environment cut from the retail `db.json`         |
| `airline`   | `airline`     | quarantines it: an airline environment is cut from the airline    |
|             |               | database (users, reservations, flights), and the database this    |
|             |               | importer reads is the retail one (the airline pack's cases come   |
|             |               | from tau-bench's tasks: `casemill import --from tau-bench`)       |
| any other   | none          | quarantines it: there is no pack to import it into                |

The import's notes then say, per tau2 domain, how many tasks went into which pack and how many
were quarantined, and why.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from casemill.formats.records import SourceRecord
from casemill.formats.result import FieldProblem, ImportResult

RETAIL = "retail"
# tau2 domain -> the Casemill pack that holds its tasks' cases
PACKS = {RETAIL: "tau2-retail", "airline": "airline"}
FIELD = "user_scenario.instructions.domain"
UNKNOWN = "(unknown)"  # a record unreadable, or naming no domain by a name


def _named(task: Any) -> tuple[str, Any] | None:
    """(field, value) of the domain a task names, if it names one."""
    if not isinstance(task, dict):
        return None
    scenario = task.get("user_scenario")
    instructions = scenario.get("instructions") if isinstance(scenario, dict) else None
    if isinstance(instructions, dict) and "domain" in instructions:
        return FIELD, instructions["domain"]
    if "domain" in task:
        return "domain", task["domain"]
    return None


def task_domain(task: Any) -> tuple[str, str]:
    """The tau2 domain of `task` (retail when it names none) and the field naming it;
    `FieldProblem` for a domain that is not a name."""
    named = _named(task)
    if named is None:
        return RETAIL, FIELD
    where, value = named
    if not isinstance(value, str) or not value.strip():
        raise FieldProblem(
            where, f"expected a tau2 domain name (retail, airline...), got {value!r}"
        )
    return value.strip().lower(), where


def _with_packs() -> str:
    return "tau2 domains with a Casemill pack: " + ", ".join(f"{d} ({p})" for d, p in PACKS.items())


def _why_not(domain: str) -> str | None:
    """Why tasks of the tau2 `domain` are not imported (None: they are, into `tau2-retail`)."""
    if domain == RETAIL:
        return None
    if domain in PACKS:
        return (
            f"the {PACKS[domain]} pack exists, but this importer cuts environments from tau2's "
            f"retail database only (users, orders, products) and a {domain} environment needs "
            f"the {domain} database; not imported ({_with_packs()}; the airline pack imports "
            "tau-bench's airline tasks: casemill import --from tau-bench)"
        )
    return (
        f"Casemill has no {domain} domain pack to import it into ({_with_packs()}; this "
        "importer imports the retail ones)"
    )


def check_domain(task: Any) -> None:
    """`FieldProblem` (it quarantines the task) unless `task` is of a tau2 domain this
    importer imports."""
    domain, where = task_domain(task)
    why = _why_not(domain)
    if why is not None:
        rule = "tau2-domain-not-imported" if domain in PACKS else "tau2-domain-without-pack"
        raise FieldProblem(where, f"a tau2 {domain} task: {why}", rule=rule)


def _domain_of(value: Any) -> str:
    """The tau2 domain a record counts under in the summary (a parsed task, else the text of
    one that could not be parsed)."""
    try:
        return task_domain(value)[0] if isinstance(value, dict) else UNKNOWN
    except FieldProblem:
        return UNKNOWN


def per_domain(result: ImportResult, kept: list[SourceRecord]) -> dict[str, dict[str, Any]]:
    """Per tau2 domain: the pack its tasks went into (`kept`: the records that became cases),
    how many were imported and quarantined, and the quarantine reasons counted by rule."""
    out: dict[str, dict[str, Any]] = {}

    def entry(domain: str) -> dict[str, Any]:
        return out.setdefault(
            domain, {"pack": PACKS.get(domain), "imported": 0, "quarantined": 0, "reasons": {}}
        )

    for record in kept:
        entry(_domain_of(record.value))["imported"] += 1
    for q in result.quarantined:
        found = entry(_domain_of(q.record))
        found["quarantined"] += 1
        reasons = Counter(found["reasons"]) + Counter(f.rule for f in q.findings)
        found["reasons"] = dict(sorted(reasons.items()))
    return dict(sorted(out.items()))


def domain_notes(counts: dict[str, dict[str, Any]]) -> list[str]:
    """One line per tau2 domain: `tau2 retail: 112 tasks imported into tau2-retail, 2
    quarantined (missing-id 2)`."""
    notes = []
    for domain, c in counts.items():
        reasons = ", ".join(f"{rule} {n}" for rule, n in c["reasons"].items())
        quarantined = f"{c['quarantined']} quarantined" + (f" ({reasons})" if reasons else "")
        if domain == UNKNOWN:
            notes.append(
                f"tau2 records of no known domain (unreadable, or not named): {quarantined}"
            )
            continue
        into = f" into {c['pack']}" if c["imported"] else ""
        said = f"tau2 {domain}: {c['imported']} task(s) imported{into}, {quarantined}"
        why = _why_not(domain)
        if why is not None and c["quarantined"]:
            said += f": {why}"
        notes.append(said)
    return notes
