"""Property: any well-formed companion sample from a domain without tool specifications
survives import -> export exactly (roles, arguments, routing), and re-importing gives the same
case id."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casemill.formats import export_companion, import_companion

SPEAKERS = ["patient", "attorney", "analyst", "warehouse_manager", "user", "customer", "parent"]
FUNCTIONS = ["assess_symptoms", "review_contract", "lookup_threat_intel", "create_purchase_order"]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40
)


@st.composite
def sample(draw: st.DrawFn) -> dict:
    speaker = draw(st.sampled_from(SPEAKERS))
    turns = [{"role": speaker, "content": draw(text)}]
    for _ in range(draw(st.integers(0, 2))):
        turns += [
            {"role": "assistant", "content": draw(text)},
            {"role": speaker, "content": draw(text)},
        ]
    record = {
        "sample_id": f"{draw(st.sampled_from(['intake', 'deal', 'alert', 'stock']))}_{draw(st.integers(0, 999))}",
        "input": turns,
        "expected_function_call": {
            "name": draw(st.sampled_from(FUNCTIONS)),
            "arguments": draw(
                st.dictionaries(
                    st.from_regex(r"[a-z_]{1,10}", fullmatch=True), json_values, max_size=4
                )
            ),
        },
    }
    routing = draw(
        st.none()
        | st.sampled_from(["inventory", "transportation"])
        | st.lists(st.text(max_size=5), max_size=2)
    )
    if routing is not None:
        record["expected_routing"] = routing
    return record


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sample())
def test_generic_samples_round_trip_exactly(record: dict) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "in.jsonl"
        source.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
        first = import_companion(source)
        assert not first.quarantined, [str(f) for f in first.findings]
        assert first.cases[0].domain.startswith("generic:")
        out = Path(tmp) / "out.jsonl"
        export_companion(first.cases, out)
        assert json.loads(out.read_text(encoding="utf-8")) == record
        assert [c.id for c in import_companion(out).cases] == [c.id for c in first.cases]
