"""Metric versions and the scoring config file."""

from __future__ import annotations

import pytest

from casemill.errors import UserError
from casemill.evaluation.scoring.registry import (
    DEFAULT_WEIGHTS,
    METRICS,
    higher_is_better,
    load_scoring_config,
    versions,
)


def test_every_weighted_metric_is_known_and_directions_are_right():
    assert set(DEFAULT_WEIGHTS) <= set(METRICS)
    assert higher_is_better("task_success") and not higher_is_better("forbidden_violations")
    assert not higher_is_better("latency_s") and higher_is_better("judge_truthful")
    assert versions({"tool_recall", "latency_s"}, "chapter") == {
        "latency_s": "1",
        "tool_recall": "chapter-1",
    }


def test_scoring_config_from_toml(tmp_path):
    path = tmp_path / "scoring.toml"
    path.write_text("usd_per_prompt_token = 0.5\n[weights]\ntask_success = 1.0\n")
    config = load_scoring_config(path)
    assert config.usd_per_prompt_token == 0.5
    assert config.weights == {"task_success": 1.0}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("usd_per_prompt_token = -1\n", ":1: field 'usd_per_prompt_token': Input should be"),
        ("price = 1\n", ":1: field 'price': Extra inputs are not permitted"),
        ("[weights]\ntask_sucess = 1.0\n", ":2: field 'weights': unknown metrics ['task_sucess']"),
        (
            "[weights]\ntask_success = 1.0\nparam_accuracy = -0.5\n",
            ":3: field 'weights.param_accuracy': a weight is 0 or more, not -0.5",
        ),
        (
            "[weights]\ntask_success = 0\n",
            ": field 'weights': every weight is 0; 'overall' needs one above 0",
        ),
        ("[weights\n", "not valid TOML"),
    ],
)
def test_bad_scoring_config_names_file_line_and_field(tmp_path, text, expected):
    path = tmp_path / "scoring.toml"
    path.write_text(text)
    with pytest.raises(UserError) as info:
        load_scoring_config(path)
    assert str(info.value).startswith(str(path))
    assert expected in str(info.value)
