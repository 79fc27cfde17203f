"""The tau2-retail domain pack on a small hand-written environment (no shared data needed)."""

from __future__ import annotations

from casemill.case.model import Case
from casemill.domains import get_domain
from casemill.domains.tau2_retail import Tau2RetailDomain
from casemill.domains.tau2_retail.specs import infer_tool_specs, is_read_tool
from casemill.validation.semantic import semantic_findings

STATE = {
    "users": {
        "ana_diaz_1001": {
            "user_id": "ana_diaz_1001",
            "name": {"first_name": "Ana", "last_name": "Diaz"},
            "payment_methods": {"paypal_1": {"source": "paypal", "id": "paypal_1"}},
            "orders": ["#W1000001"],
        }
    },
    "orders": {
        "#W1000001": {
            "order_id": "#W1000001",
            "user_id": "ana_diaz_1001",
            "status": "delivered",
            "items": [{"name": "Mug", "product_id": "P1", "item_id": "111", "price": 9.5}],
        }
    },
    "products": {
        "P1": {
            "product_id": "P1",
            "name": "Mug",
            "variants": {"111": {"item_id": "111"}, "112": {"item_id": "112"}},
        }
    },
    "absent_ids": ["#9999"],
}


def _case(calls: list[dict], state: dict = STATE) -> Case:
    return Case.model_validate(
        {
            "domain": "tau2-retail",
            "environment": {"state": state},
            "user_scenario": "Return the mug.",
            "expected": {
                "tool_calls": calls,
                "outcome": "resolve",
                "optimal_steps": len(calls) + 1,
            },
        }
    )


def test_registered_with_read_and_write_tools_split_by_name() -> None:
    domain = get_domain("tau2-retail")
    assert isinstance(domain, Tau2RetailDomain) and not domain.has_simulator
    assert {"get_order_details", "find_user_id_by_email", "calculate"} <= domain.read_tools
    assert {"return_delivered_order_items", "transfer_to_human_agents"} <= domain.write_tools
    assert not domain.read_tools & domain.write_tools


def test_valid_references_pass() -> None:
    case = _case(
        [
            {"tool": "get_order_details", "params": {"order_id": "#9999"}},
            {
                "tool": "return_delivered_order_items",
                "params": {
                    "order_id": "#W1000001",
                    "item_ids": ["111"],
                    "payment_method_id": "paypal_1",
                },
            },
        ]
    )
    assert semantic_findings(case) == []


def test_missing_ids_are_named_by_field() -> None:
    case = _case(
        [
            {
                "tool": "return_delivered_order_items",
                "params": {
                    "order_id": "#W1000001",
                    "item_ids": ["112"],
                    "payment_method_id": "gift_card_9",
                },
            },
            {
                "tool": "cancel_pending_order",
                "params": {"order_id": "#9999", "reason": "no longer needed"},
            },
            {"tool": "get_user_details", "params": {"user_id": "bo_li_2002"}},
        ]
    )
    found = {(f.field, f.message) for f in semantic_findings(case)}
    assert found == {
        ("expected.tool_calls[0].params.item_ids[0]", "order #W1000001 has no item '112'"),
        (
            "expected.tool_calls[0].params.payment_method_id",
            "payment 'gift_card_9' is not in the environment",
        ),
        (
            "expected.tool_calls[1].params.order_id",
            "order '#9999' is not in the environment",
        ),  # absent ids only for reads
        ("expected.tool_calls[2].params.user_id", "user 'bo_li_2002' is not in the environment"),
    }


def test_state_shape_problems() -> None:
    broken = {
        "users": {},
        "orders": {"#W1": {"order_id": "#W2", "user_id": "nobody"}},
        "products": [],
    }
    domain = get_domain("tau2-retail")
    assert [p.field for p in domain.state_problems(broken)] == ["environment.state.products"]
    broken["products"] = {}
    assert {(p.field, p.rule) for p in domain.state_problems(broken)} == {
        ("environment.state.orders.#W1", "state-keys"),
        ("environment.state.orders.#W1.user_id", "missing-id"),
    }


def test_unknown_tool_and_wrong_param_type_are_findings() -> None:
    case = _case(
        [
            {"tool": "refund_everything", "params": {}},
            {"tool": "get_order_details", "params": {"order_id": 7}},
        ]
    )
    assert [f.rule for f in semantic_findings(case)] == ["unknown-tool", "param-schema"]


def test_spec_inference_records_names_types_and_required() -> None:
    (spec,) = infer_tool_specs(
        [
            {
                "name": "modify_order",
                "arguments": {"order_id": "#W1", "item_ids": ["1"], "note": "x"},
            },
            {
                "name": "modify_order",
                "arguments": {"order_id": "#W2", "item_ids": ["2", "3"], "note": None},
            },
            {"name": "modify_order", "arguments": {"order_id": "#W3", "item_ids": []}},
        ]
    )
    params = spec["function"]["parameters"]
    assert spec["function"]["name"] == "modify_order"
    assert params["properties"] == {
        "item_ids": {"type": "array", "items": {"type": "string"}},
        "note": {"type": ["null", "string"]},
        "order_id": {"type": "string"},
    }
    assert params["required"] == ["item_ids", "order_id"]
    assert params["additionalProperties"] is False
    assert is_read_tool("find_user_id_by_email") and not is_read_tool("modify_order")


def test_scoring_says_the_replay_check_is_missing_not_the_simulator() -> None:
    """The pack's sandbox runs agents; what it lacks is the replay check, and the note says so."""
    from casemill.evaluation.scoring import score
    from casemill.evaluation.trajectory import Trajectory

    case = _case([{"tool": "get_order_details", "params": {"order_id": "#W1000001"}}])
    trajectory = Trajectory(case_id=case.id, agent="a", agent_fingerprint="f", final_reply="ok")
    scored = score(case, trajectory)
    assert scored.metrics["state_success"] is None
    assert scored.notes == (
        "state check skipped: domain 'tau2-retail' has no replay check (its sandbox runs the "
        "agent's calls, but the benchmark's expected calls include failed attempts, so no "
        "expected final state is derived)",
    )
    assert not any("simulator" in note for note in scored.notes)
