"""`expand(..., ExpandConfig(op_args=...))` checks the operators' arguments before any work: an
argument an operator does not take, an operator nobody registered, or one no chain applies is a
`UserError` naming the operator, the argument and the accepted ones, and no operator runs."""

from __future__ import annotations

import random

import pytest

from casemill.case.model import Case, derive
from casemill.errors import UserError
from casemill.generators import ExpandConfig, apply_operator, expand, get_operator
from casemill.generators.framework import REGISTRY, operator


@pytest.fixture
def counted_operator():
    """A noise operator taking `share`, counting its calls (a list of the parent ids)."""
    calls: list[str] = []

    @operator(kind="noise", name="counted_suffix", version="1", label_rule="test only")
    def counted(case: Case, rng: random.Random, share: float = 0.5) -> list[Case]:
        calls.append(case.id)
        return [derive(case, user_scenario=f"variant {rng.random():.6f} {share}")]

    yield "counted_suffix", calls
    REGISTRY.pop("counted_suffix")


def test_an_unknown_argument_is_refused_before_any_operator_runs(small_seeds, counted_operator):
    name, calls = counted_operator
    config = ExpandConfig(chains=(name, "slang"), per_seed=1, op_args={name: {"rate": 0.2}})
    with pytest.raises(UserError) as caught:
        expand(small_seeds, config, 0)
    assert str(caught.value) == (
        f"op_args['{name}']: operator '{name}' takes no argument 'rate'; accepted: share "
        "(default 0.5) (`casemill ops list --json` shows every operator's arguments)"
    )
    assert calls == []  # refused up front, not once an attempt (operator_error) for every seed


def test_several_unknown_arguments_of_a_builtin_operator_are_all_named(small_seeds):
    config = ExpandConfig(chains=("keyboard_typo",), op_args={"keyboard_typo": {"q": 1, "r": 2}})
    with pytest.raises(
        UserError,
        match=r"op_args\['keyboard_typo'\]: operator 'keyboard_typo' "
        r"takes no arguments 'q', 'r'; accepted: p \(default 0\.08\)",
    ):
        expand(small_seeds, config, 0)


def test_an_operator_without_arguments_says_it_takes_none(small_seeds):
    config = ExpandConfig(chains=("flip_intact",), op_args={"flip_intact": {"p": 1}})
    with pytest.raises(UserError, match="takes no argument 'p'; it takes no arguments at all"):
        expand(small_seeds, config, 0)


def test_arguments_the_framework_injects_are_not_the_callers(small_seeds):
    config = ExpandConfig(chains=("keyboard_typo",), op_args={"keyboard_typo": {"endpoint": 1}})
    with pytest.raises(UserError, match="endpoint: given by the framework, not by the caller"):
        expand(small_seeds, config, 0)


def test_op_args_for_an_unknown_operator_or_one_no_chain_applies_are_refused(
    small_seeds, counted_operator
):
    name, calls = counted_operator
    typo = ExpandConfig(chains=(name,), op_args={"counted_sufix": {"share": 0.1}})
    with pytest.raises(UserError) as caught:
        expand(small_seeds, typo, 0)
    assert str(caught.value) == (
        "op_args['counted_sufix']: unknown operator 'counted_sufix'; "
        "run `casemill ops list` to see them"
    )
    unused = ExpandConfig(chains=(name,), op_args={"slang": {"p": 0.1}})
    with pytest.raises(UserError) as caught:
        expand(small_seeds, unused, 0)
    assert str(caught.value).startswith(
        "op_args['slang']: no chain of this run applies operator 'slang', so its arguments "
        f"would be ignored; add it to the chains or drop its op_args (chains: {name})"
    )
    assert calls == []


def test_known_arguments_reach_the_operator_and_its_lineage(small_seeds, counted_operator):
    name, calls = counted_operator
    config = ExpandConfig(
        chains=(f"swap_order_id+{name}",), per_seed=1, op_args={name: {"share": 0.25}}
    )
    result = expand(small_seeds, config, 0)
    assert calls and result.candidates
    steps = [c.provenance.operators[-1] for c in result.candidates]
    assert {(s.name, s.args["share"]) for s in steps} == {(name, 0.25)}
    assert "operator_error" not in result.summary.rejected_by_reason


def test_apply_operator_refuses_an_unknown_argument_before_calling_the_operator(
    small_seeds, counted_operator
):
    name, calls = counted_operator
    with pytest.raises(UserError, match=f"operator '{name}' takes no argument 'shares'"):
        apply_operator(get_operator(name), small_seeds[0], seed=0, index=0, args={"shares": 1})
    assert calls == []


@pytest.mark.parametrize(
    ("value", "shown"),
    [("high", "'high' (str)"), (True, "True (bool)"), ([0.2], "[0.2] (list)"), (None, "None")],
)
def test_an_argument_of_the_wrong_type_is_refused_before_any_operator_runs(
    small_seeds, counted_operator, value, shown
):
    name, calls = counted_operator
    config = ExpandConfig(chains=(name,), per_seed=1, op_args={name: {"share": value}})
    with pytest.raises(UserError) as caught:
        expand(small_seeds, config, 0)
    assert str(caught.value).startswith(
        f"op_args['{name}']: operator '{name}' argument 'share' must be a number like its "
        f"default 0.5, not {shown}"
    )
    assert calls == []


def test_an_int_where_the_default_is_a_float_is_taken(small_seeds, counted_operator):
    name, calls = counted_operator
    config = ExpandConfig(chains=(name,), per_seed=1, op_args={name: {"share": 1}})
    result = expand(small_seeds, config, 0)
    assert calls and result.candidates
    assert get_operator("filler").resolve({"inserts": 3}) == {"inserts": 3}
    with pytest.raises(UserError, match="argument 'inserts' must be of type int like its default"):
        get_operator("filler").resolve({"inserts": 2.5})
