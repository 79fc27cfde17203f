"""The operator framework: registry, argument resolution, per-candidate randomness, lineage."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from casemill.cli import app
from casemill.errors import UserError
from casemill.generators import (
    KINDS,
    all_operators,
    apply_operator,
    candidate_rng,
    get_operator,
    operator,
)
from casemill.generators.framework import stable_int


def test_every_kind_has_operators_and_a_label_rule():
    specs = all_operators()
    assert {s.kind for s in specs} == set(KINDS)
    assert all(s.label_rule and s.version for s in specs)
    assert {s.name for s in specs if s.needs_llm} == {"llm_adversarial_rewrite", "llm_blend"}


def test_arguments_resolve_with_defaults_and_unknown_ones_are_refused():
    spec = get_operator("keyboard_typo")
    assert spec.resolve() == {"p": 0.08}
    assert spec.resolve({"p": 0.2}) == {"p": 0.2}
    with pytest.raises(UserError, match="takes no argument"):
        spec.resolve({"q": 1})
    with pytest.raises(UserError, match="unknown operator"):
        get_operator("nope")


def test_stable_hash_is_the_same_in_another_process():
    here = stable_int(7, "c_x", "slang", 3)
    code = "from casemill.generators.framework import stable_int; print(stable_int(7, 'c_x', 'slang', 3))"
    there = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "123"},
        cwd=".",
    )
    assert int(there.stdout) == here
    assert (
        candidate_rng(7, "c_x", "slang", 3).random() == candidate_rng(7, "c_x", "slang", 3).random()
    )
    assert (
        candidate_rng(7, "c_x", "slang", 3).random() != candidate_rng(7, "c_x", "slang", 4).random()
    )


def test_provenance_is_stamped_and_chains_compose(refund_case):
    swapped = apply_operator(get_operator("swap_order_id"), refund_case, seed=5, index=0)[0]
    typo = apply_operator(get_operator("keyboard_typo"), swapped, seed=5, index=0, args={"p": 0.3})[
        0
    ]
    prov = typo.provenance
    assert prov.origin == "generated" and prov.seed == 5
    assert prov.parents == (swapped.id, refund_case.id)
    assert [(s.kind, s.name, s.args) for s in prov.operators] == [
        ("entity_swap", "swap_order_id", {}),
        ("noise", "keyboard_typo", {"p": 0.3}),
    ]
    assert typo.review.status == "pending"
    assert typo.id != swapped.id != refund_case.id
    assert typo.expected == swapped.expected


def test_ops_list_json_lists_kind_name_version_rule_and_llm():
    result = CliRunner().invoke(app, ["ops", "list", "--json"])
    assert result.exit_code == 0, result.output
    listed = {o["name"]: o for o in json.loads(result.output)}
    assert listed["flip_shipped"]["kind"] == "outcome_flip"
    assert listed["llm_blend"]["needs_llm"] is True
    assert "forbid" in listed["fault_lookup_persistent"]["label_rule"]
    assert set(listed) == {s.name for s in all_operators()}


def test_default_arguments_are_recorded_like_explicit_ones(refund_case):
    spec = get_operator("slang")
    default = apply_operator(spec, refund_case, seed=2, index=0)[0]
    explicit = apply_operator(spec, refund_case, seed=2, index=0, args={"p": 0.7})[0]
    assert default.provenance.operators == explicit.provenance.operators
    assert default.provenance.operators[-1].args == {"p": 0.7}
    assert default.model_dump(mode="json") == explicit.model_dump(mode="json")


@pytest.mark.parametrize(
    ("declared", "says"),
    [
        ({"label_rule": ""}, "label_rule is empty; declare what the operator does"),
        ({"label_rule": "  "}, "label_rule is empty"),
        ({"version": ""}, "version is empty"),
        ({"version": 1}, "version is 1, not a string"),
    ],
)
def test_an_operator_must_declare_its_label_rule_and_version(declared, says):
    args = {"kind": "noise", "name": "undeclared_x", "version": "1", "label_rule": "r", **declared}
    with pytest.raises(ValueError, match=says):
        operator(**args)
    assert "undeclared_x" not in {s.name for s in all_operators()}


def test_an_operator_name_taken_by_another_function_is_refused():
    all_operators()  # the built-ins are registered

    def my_slang(case, rng):
        return []

    with pytest.raises(
        ValueError, match="'slang' is registered twice, by casemill.generators.noise.slang"
    ):
        operator(kind="noise", name="slang", version="9", label_rule="r")(my_slang)
    assert get_operator("slang").fn.__module__ == "casemill.generators.noise"
