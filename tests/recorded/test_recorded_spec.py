from pathlib import Path

import pytest

from casemill.errors import UserError
from casemill.recorded.spec import LogSpec, parse_spec


def test_a_bare_log_is_openai_jsonl_redacted_with_seed_0():
    assert parse_spec("logs/support.jsonl") == LogSpec(Path("logs/support.jsonl"))
    assert parse_spec("logs/support.jsonl").options == ""


def test_options_say_how_the_cases_were_mined():
    spec = parse_spec("logs/a.jsonl.gz?seed=3&redact=off&format=otel")
    assert (spec.path, spec.fmt, spec.seed, spec.redact) == (
        Path("logs/a.jsonl.gz"),
        "otel",
        3,
        False,
    )
    assert spec.options == "format=otel&seed=3&redact=off"


def test_a_csv_file_is_read_as_csv_with_its_mapping():
    spec = parse_spec("tickets.csv.gz?csv-mapping=map.json")
    assert (spec.fmt, spec.csv_mapping) == ("csv", Path("map.json"))


@pytest.mark.parametrize(
    ("rest", "said"),
    [
        ("", "recorded: needs the log the cases were mined from: recorded:LOG"),
        ("a.jsonl?sed=3", "unknown or repeated option 'sed'"),
        ("a.jsonl?seed=1&seed=2", "unknown or repeated option"),
        ("a.jsonl?seed", "unknown or repeated option"),
        ("a.jsonl?seed=three", "seed='three' is not a whole number"),
        ("a.jsonl?redact=maybe", "write redact=off for cases mined with --no-redact"),
        ("a.jsonl?format=yaml", "unknown log format 'yaml'"),
        ("a.jsonl?csv-mapping=m.json", "csv-mapping= applies to format csv only"),
    ],
)
def test_a_spec_it_cannot_read_says_what_to_write(rest, said):
    with pytest.raises(UserError, match=said.replace("?", r"\?")):
        parse_spec(rest)


def test_a_transcript_log_is_refused_it_shows_no_calls():
    with pytest.raises(UserError) as err:
        parse_spec("chats.txt?format=transcript")
    assert str(err.value) == (
        "a transcript log shows what tools returned, not the calls the agent made: it cannot "
        "be replayed as an agent. Replay a log with tool calls (openai-jsonl, otel, csv)"
    )


def test_the_named_entity_layer_of_the_mine_run_is_named_too():
    spec = parse_spec("a.jsonl?names-model=en_core_web_sm")
    assert spec.names_model == "en_core_web_sm"
    assert spec.options == "names-model=en_core_web_sm"
