"""Property: whatever JSON a record holds, an import never raises; every record becomes a case
or a located quarantine entry."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casemill.formats import import_chapter, import_companion, import_tau2

leaf = (
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False)
    | st.text(max_size=6)
)
json_values = st.recursive(
    leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)
TURN = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["customer", "user", "assistant", "tool", "patient", 3]),
        "content": json_values,
    }
)
ORDER = st.fixed_dictionaries(
    {
        "order_id": json_values | st.just("B1"),
        "status": st.sampled_from(["Delivered", "Processing", "x"]) | json_values,
    },
    optional={
        "items": st.lists(
            st.dictionaries(st.sampled_from(["name", "qty", "unit_price", "sku"]), json_values),
            max_size=2,
        )
        | json_values,
        "currency": json_values,
    },
)
CALL = st.sampled_from(["cancel_order", "issue_refund", "modify_order", "other"]) | st.dictionaries(
    st.sampled_from(["tool", "params", "name", "arguments"]),
    json_values | st.sampled_from(["issue_refund", "cancel_order"]),
)
CHAPTER = st.fixed_dictionaries(
    {},
    optional={
        "order": ORDER | json_values,
        "conversation": st.lists(TURN, max_size=3) | json_values,
        "expected": st.fixed_dictionaries(
            {
                "final_state": st.fixed_dictionaries(
                    {},
                    optional={
                        "tool_calls": st.lists(CALL, max_size=2) | json_values,
                        "customer_msg_contains": json_values,
                    },
                )
            }
        )
        | json_values,
    },
)
COMPANION = st.fixed_dictionaries(
    {},
    optional={
        "sample_id": json_values | st.just("s_1"),
        "input": st.lists(TURN, max_size=3) | json_values,
        "expected_function_call": st.fixed_dictionaries(
            {},
            optional={
                "name": st.sampled_from(["issue_refund", "cancel_order", "assess", ""])
                | json_values,
                "arguments": json_values,
            },
        )
        | json_values,
        "order": ORDER | json_values,
        "expected_routing": json_values,
    },
)
TAU2 = st.fixed_dictionaries(
    {"id": json_values | st.just("0")},
    optional={
        "user_scenario": st.fixed_dictionaries(
            {},
            optional={
                "instructions": json_values | st.just({"reason_for_call": "Known: ana_diaz_1001"})
            },
        )
        | json_values,
        "evaluation_criteria": st.fixed_dictionaries(
            {},
            optional={
                "actions": st.lists(
                    st.fixed_dictionaries(
                        {
                            "name": json_values | st.just("get_order_details"),
                            "arguments": json_values,
                        }
                    ),
                    max_size=2,
                )
                | json_values,
                "communicate_info": json_values,
            },
        )
        | json_values,
        "initial_state": json_values,
    },
)
DB = {
    "users": {
        "ana_diaz_1001": {
            "user_id": "ana_diaz_1001",
            "name": {"first_name": "Ana", "last_name": "Diaz"},
            "address": {"zip": "10001"},
            "email": "a@example.com",
            "payment_methods": {},
            "orders": [],
        }
    },
    "orders": {},
    "products": {},
}
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _run(importer, records: list, suffix: str = ".jsonl", **kwargs) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"in{suffix}"
        text = (
            json.dumps(records)
            if suffix == ".json"
            else "\n".join(json.dumps(r) for r in records) + "\n"
        )
        path.write_text(text, encoding="utf-8")
        if "environment" in kwargs:
            (Path(tmp) / "db.json").write_text(json.dumps(DB), encoding="utf-8")
            kwargs["environment"] = Path(tmp) / "db.json"
        result = importer(path, **kwargs)
        assert result.read == len(records)
        assert len(result.cases) + len(result.quarantined) == len(records)
        assert all(q.line is not None and q.findings for q in result.quarantined)
        assert not any(f.rule == "mapper-error" for f in result.findings), [
            str(f) for f in result.findings
        ]


@FUZZ
@given(st.lists(CHAPTER, min_size=1, max_size=3))
def test_chapter_never_raises(records: list) -> None:
    _run(import_chapter, records)


@FUZZ
@given(st.lists(COMPANION, min_size=1, max_size=3))
def test_companion_never_raises(records: list) -> None:
    _run(import_companion, records)


@FUZZ
@given(st.lists(TAU2, min_size=1, max_size=3))
def test_tau2_never_raises(records: list) -> None:
    _run(import_tau2, records, suffix=".json", environment=True)
