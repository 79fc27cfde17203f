"""`expand` and `casemill expand`: gates, rejections, quotas, lineage and determinism."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from casemill.case.model import Case, derive
from casemill.cli import app
from casemill.errors import UserError
from casemill.generators import KINDS, ExpandConfig, expand
from casemill.generators.framework import REGISTRY, operator
from casemill.validation.semantic import semantic_findings

ROOT = Path(__file__).resolve().parents[2]


def _lines(result):
    return [json.dumps(c.model_dump(mode="json"), sort_keys=True) for c in result.candidates]


def test_candidates_are_valid_pending_generated_and_cover_every_kind(small_seeds):
    result = expand(small_seeds, ExpandConfig(per_seed=1), 3)
    assert len(result.candidates) > 100
    assert len({c.id for c in result.candidates}) == len(result.candidates)
    for case in result.candidates:
        assert case.review.status == "pending" and case.provenance.origin == "generated"
        assert case.provenance.seed == 3 and case.provenance.parents[-1] in {
            s.id for s in small_seeds
        }
        assert [f for f in semantic_findings(case) if f.severity == "error"] == []
    assert set(result.summary.coverage) == set(KINDS)
    s = result.summary
    assert s.accepted == len(result.candidates)
    assert s.generated == s.accepted + sum(s.rejected_by_reason.values())
    assert s.near_duplicates == s.rejected_by_reason.get("near_duplicate", 0)


def test_same_seed_same_output_whatever_the_input_order(small_seeds):
    config = ExpandConfig(per_seed=1)
    one = _lines(expand(small_seeds, config, 11))
    two = _lines(expand(list(reversed(small_seeds)), config, 11))
    assert one == two
    assert one != _lines(expand(small_seeds, config, 12))


def test_an_invalid_seed_is_reported_and_skipped(small_seeds):
    bad = derive(
        small_seeds[0],
        environment={
            "state": {
                **small_seeds[0].environment.state,
                "orders": {
                    "W1001": {
                        **small_seeds[0].environment.state["orders"]["W1001"],
                        "status": "shipped",
                    }
                },
            }
        },
    )
    result = expand([bad, small_seeds[2]], ExpandConfig(chains=("slang",), per_seed=1), 0)
    assert [r.parent_id for r in result.skipped_seeds] == [bad.id]
    assert result.skipped_seeds[0].reason == "invalid_seed:replay"
    assert all(c.provenance.parents == (small_seeds[2].id,) for c in result.candidates)


@pytest.fixture
def exploding_operator():
    @operator(kind="noise", name="explode_on_cancel", version="1", label_rule="test only")
    def explode(case: Case, rng) -> list[Case]:
        if "cancel" in case.tags.intents:
            raise RuntimeError("boom")
        return [derive(case, user_scenario="a generated variant")]

    yield "explode_on_cancel"
    REGISTRY.pop("explode_on_cancel")


def test_an_operator_that_raises_costs_that_case_only(small_seeds, exploding_operator):
    result = expand(small_seeds, ExpandConfig(chains=(exploding_operator,), per_seed=1), 0)
    errors = [r for r in result.rejections if r.reason == "operator_error"]
    assert len(errors) == 2 and all("RuntimeError: boom" in r.detail for r in errors)
    assert len(result.candidates) == len(small_seeds) - 2


def test_near_duplicates_of_an_existing_corpus_are_removed(small_seeds):
    config = ExpandConfig(chains=("swap_order_id", "slang"), per_seed=1)
    first = expand(small_seeds, config, 0)
    again = expand(small_seeds, config, 0, existing=first.candidates)
    assert first.candidates and not again.candidates
    # every candidate the second run makes duplicates the corpus the first run made
    assert again.summary.near_duplicates == again.summary.generated >= len(first.candidates)


def test_quota_caps_a_kind(small_seeds):
    config = ExpandConfig(
        chains=("keyboard_typo", "swap_order_id"), per_seed=2, quotas={"noise": 3}
    )
    result = expand(small_seeds, config, 0)
    kinds = [c.provenance.operators[0].kind for c in result.candidates]
    assert kinds.count("noise") == 3 and kinds.count("entity_swap") > 3
    assert result.summary.quota_stopped > 0


def test_quota_caps_a_kind_and_intent_cell(small_seeds):
    config = ExpandConfig(
        chains=("swap_order_id", "slang"), per_seed=2, quotas={"entity_swap:refund": 1}
    )
    result = expand(small_seeds, config, 0)
    cells = [(c.provenance.operators[0].kind, c.tags.intents[0]) for c in result.candidates]
    assert cells.count(("entity_swap", "refund")) == 1
    assert cells.count(("noise", "refund")) >= 2


def test_quota_on_an_intent_counts_every_intent_as_the_coverage_table_does(small_seeds):
    # blended requests carry two or three intents: 'cancel' is often not the first one
    chains = ("blend_new_order", "blend_new_order+slang")
    free = expand(small_seeds, ExpandConfig(chains=chains, per_seed=4), 0)
    assert free.summary.coverage["interpolation"]["cancel"] > 3
    config = ExpandConfig(chains=chains, per_seed=4, quotas={"interpolation:cancel": 3})
    result = expand(small_seeds, config, 0)
    with_cancel = [c for c in result.candidates if "cancel" in c.tags.intents]
    assert len(with_cancel) == result.summary.coverage["interpolation"]["cancel"] == 3
    assert any(c.tags.intents[0] != "cancel" for c in with_cancel)
    assert result.summary.coverage["interpolation"]["refund"] > 3


def test_quota_on_a_kind_counts_every_kind_of_a_chain_as_the_coverage_table_does(small_seeds):
    config = ExpandConfig(
        chains=("keyboard_typo", "swap_order_id+keyboard_typo"), per_seed=2, quotas={"noise": 4}
    )
    result = expand(small_seeds, config, 0)
    noisy = [c for c in result.candidates if "noise" in {s.kind for s in c.provenance.operators}]
    assert len(noisy) == len(result.candidates) == 4
    assert sum(result.summary.coverage["noise"].values()) == 4  # one intent per seed


def test_cli_output_is_byte_identical_for_the_same_seed(tmp_path, small_seeds):
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps(c.model_dump(mode="json")) + "\n" for c in small_seeds))
    outs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.jsonl"
        result = CliRunner().invoke(
            app,
            [
                "expand",
                "--seeds",
                str(seeds),
                "-o",
                str(out),
                "--per-seed",
                "1",
                "--seed",
                "9",
                "--operators",
                "slang,swap_customer+keyboard_typo",
            ],
        )
        assert result.exit_code == 0, result.output
        outs.append(out.read_bytes())
        assert (tmp_path / f"{name}.rejects.jsonl").exists()
        summary = json.loads((tmp_path / f"{name}.summary.json").read_text())
        assert summary["accepted"] == len(out.read_bytes().splitlines())
    assert outs[0] == outs[1] and outs[0]
    assert "coverage" in result.output


def test_cli_refuses_a_corpus_folder_that_does_not_exist(tmp_path, small_seeds):
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps(c.model_dump(mode="json")) + "\n" for c in small_seeds))
    out, nope = tmp_path / "out.jsonl", tmp_path / "nope"
    result = CliRunner().invoke(
        app, ["expand", "--seeds", str(seeds), "-o", str(out), "--corpus", str(nope)]
    )
    assert isinstance(result.exception, UserError)  # `casemill` prints it and exits 2
    assert str(result.exception) == f"--corpus {nope}: no such corpus folder"
    assert not out.exists()


@pytest.mark.slow
def test_project_seeds_give_2000_valid_distinct_candidates():
    from casemill.validation import load_cases

    seeds = [c.case for c in load_cases([ROOT / "seeds"]).cases]
    result = expand(seeds, ExpandConfig(), 0)
    ids = [c.id for c in result.candidates]
    assert len(ids) >= 2000 and len(set(ids)) == len(ids)
    assert set(result.summary.coverage) == set(KINDS)
    seed_intents = {i for s in seeds for i in s.tags.intents}
    covered = {i for row in result.summary.coverage.values() for i in row}
    assert seed_intents <= covered
    assert not result.skipped_seeds


def test_cli_refuses_to_write_over_the_seeds(tmp_path, small_seeds):
    folder = tmp_path / "seeds"
    folder.mkdir()
    text = "".join(json.dumps(c.model_dump(mode="json")) + "\n" for c in small_seeds)
    (folder / "support.jsonl").write_text(text)
    # a seed file `-o more.jsonl` implies (named as a file: a folder's walk leaves it out)
    (folder / "more.rejects.jsonl").write_text(text)
    runs = (
        (folder, folder / "support.jsonl", "-o"),
        (folder / "more.rejects.jsonl", folder / "more.jsonl", "rejects"),
    )
    for seeds, target, option in runs:
        result = CliRunner().invoke(
            app, ["expand", "--seeds", str(seeds), "-o", str(target), "--operators", "slang"]
        )
        assert isinstance(result.exception, UserError), result.output
        assert str(result.exception).startswith(f"{option} ")
        assert "is also an input (seed or corpus file)" in str(result.exception)
    assert (folder / "support.jsonl").read_text() == text
    assert sorted(p.name for p in folder.iterdir()) == ["more.rejects.jsonl", "support.jsonl"]


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--dedup-threshold", "0"),
        ("--dedup-threshold", "1.5"),
        ("--dedup-threshold", "nan"),
        ("--per-seed", "0"),
    ],
)
def test_cli_options_out_of_range_are_usage_errors_naming_the_option(
    tmp_path, small_seeds, option, value
):
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps(c.model_dump(mode="json")) + "\n" for c in small_seeds))
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(
        app, ["expand", "--seeds", str(seeds), "-o", str(out), option, value]
    )
    if isinstance(result.exception, UserError):  # `casemill` prints it and exits 2
        assert str(result.exception).startswith(f"{option} ")
    else:
        assert result.exit_code == 2 and f"'{option}'" in result.output, result.output
    assert not out.exists()


def test_cli_quarantines_every_bad_seed_with_file_line_and_field(tmp_path, small_seeds):
    good = small_seeds[0].model_dump(mode="json")
    missing = {
        k: v
        for k, v in small_seeds[1].model_dump(mode="json").items()
        if k not in ("id", "expected")
    }
    unknown_order = small_seeds[2].model_dump(mode="json", exclude={"id"})
    unknown_order["expected"]["tool_calls"][0]["params"]["order_id"] = "W9999"
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text(
        "\n".join(
            [
                json.dumps(good),
                '{"schema_version": 1, "id": oops',
                json.dumps(missing),
                json.dumps(unknown_order),
            ]
        )
        + "\n"
    )
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(
        app, ["expand", "--seeds", str(seeds), "-o", str(out), "--operators", "slang"]
    )
    assert result.exit_code == 0, result.output
    rejects = [json.loads(x) for x in (tmp_path / "out.rejects.jsonl").read_text().splitlines()]
    skipped = [(r["line"], r["reason"], r.get("field")) for r in rejects if r["chain"] == "(seed)"]
    assert skipped == [
        (2, "invalid_seed:invalid-json", None),
        (3, "invalid_seed:missing-field", "expected"),
        (4, "invalid_seed:missing-id", "expected.tool_calls[0].params.order_id"),
    ]
    assert {r["file"] for r in rejects if r["chain"] == "(seed)"} == {str(seeds)}
    summary = json.loads((tmp_path / "out.summary.json").read_text())
    assert summary["seeds"] == 1 and summary["seeds_skipped"] == 3
    assert f"{seeds}:2: error [json/invalid-json]" in " ".join(result.output.split())
    assert all(
        c.provenance.parents == (small_seeds[0].id,)
        for c in (Case.model_validate_json(x) for x in out.read_text().splitlines())
    )


def test_an_output_over_the_models_limits_is_rejected_as_invalid_not_an_operator_error(
    small_seeds, caplog
):
    seed = small_seeds[0]
    turns = list(seed.conversation)
    last = max(i for i, t in enumerate(turns) if t.role == "customer")
    text = turns[last].content
    turns[last] = turns[last].model_copy(
        update={"content": text + " and" * ((99_990 - len(text)) // 4)}
    )
    long_seed = derive(seed, conversation=turns)
    result = expand([long_seed], ExpandConfig(chains=("filler",), per_seed=2), 0)
    assert [r.reason for r in result.rejections] == ["invalid:model"] * 2
    assert all(
        r.detail == f"filler: conversation.{last}.content: String should have at most "
        "100000 characters"
        for r in result.rejections
    )
    assert result.summary.rejected_by_reason == {"invalid:model": 2}
    assert not [r for r in caplog.records if r.levelname == "WARNING"]


def test_cli_help_names_the_files_written_beside_the_candidates():
    result = CliRunner().invoke(app, ["expand", "--help"], env={"COLUMNS": "200"})
    text = " ".join(result.output.split())
    assert "NAME.rejects.jsonl" in text and "NAME.summary.json" in text
    assert "or corpus folder (its active cases)" in text


def test_casing_variants_are_kept_not_taken_for_near_duplicates_of_their_seed(small_seeds):
    result = expand(small_seeds, ExpandConfig(chains=("casing",), per_seed=3), 0)
    assert result.candidates, result.summary.rejected_by_reason
    seeds = {s.id: s for s in small_seeds}
    texts = set()
    for case in result.candidates:
        parent = seeds[case.provenance.parents[0]]
        assert case.customer_text != parent.customer_text
        assert case.customer_text.lower() == parent.customer_text.lower()
        texts.add(case.customer_text)
    assert len(texts) == len(result.candidates)  # the same casing twice is still a duplicate


def test_cli_refuses_a_quota_for_an_intent_no_seed_has(tmp_path, small_seeds):
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps(c.model_dump(mode="json")) + "\n" for c in small_seeds))
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(
        app, ["expand", "--seeds", str(seeds), "-o", str(out), "--quota", "noise:refnd=3"]
    )
    assert isinstance(result.exception, UserError), result.output
    assert str(result.exception).startswith(
        "--quota noise:refnd=3: no seed has the intent 'refnd'; the seeds' intents: "
    )
    assert not out.exists()


def test_cli_prints_no_coverage_table_when_nothing_was_kept(tmp_path, small_seeds):
    """With no candidate the coverage table had no intent column, and its title wrapped into a
    column of word fragments; now it is left out and the rest of the summary still prints."""
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text("".join(json.dumps(c.model_dump(mode="json")) + "\n" for c in small_seeds))
    out = tmp_path / "out.jsonl"
    args = ["expand", "--seeds", str(seeds), "-o", str(out), "--operators", "slang"]
    result = CliRunner().invoke(app, [*args, "--quota", "noise=0"])
    assert result.exit_code == 0, result.output
    assert result.output.lstrip().startswith("0 candidates written to")
    assert "intent" not in result.output and "┃ kind" not in result.output
    assert "bigrams not in" in result.output


def test_cli_summary_counts_read_singular_for_one(tmp_path, small_seeds):
    """One seed, one skipped seed: '1 seed', '1 seed failed validation and was skipped', not
    '1 seeds' or '1 seed(s) ... were skipped'."""
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text(json.dumps(small_seeds[0].model_dump(mode="json")) + "\n" + '{"id": "x"}\n')
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(
        app, ["expand", "--seeds", str(seeds), "-o", str(out), "--operators", "slang"]
    )
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "generated from 1 seed," in said
    assert "1 seed failed validation and was skipped" in said
    assert "(s)" not in said and "1 seeds" not in said
