"""A seeded log with more than 500 personal values of every kind real logs hold (IBANs, bank
accounts, IPs, passports, SSNs, SINs, NINOs, third parties' names under unknown keys and in
text without a cue, dates of birth, obfuscated emails, squashed accented names in conversation
ids, a card's last four said in text), mined by `casemill mine` and by the mine flow: none is
found byte for byte in anything either writes, surrogates keep shape and checks, and
`--keep-raw` maps every one back."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections import Counter
from pathlib import Path

import pytest
from mining_helpers import write_jsonl
from pii_log import pii_log
from stdnum import iban, luhn
from stdnum.ca import sin
from stdnum.us import ssn
from typer.testing import CliRunner

from casemill.case.model import Case
from casemill.cli import app

KINDS = {"account", "card", "dob", "email", "iban", "ip", "last4", "name", "nino", "passport"}
KINDS |= {"sin", "ssn"}


def _leaks(values: dict[str, str], outputs: dict[str, str]) -> list[tuple[str, str, str]]:
    return [
        (where, kind, value)
        for where, text in outputs.items()
        for value, kind in values.items()
        if value in text
    ]


@pytest.fixture(scope="module")
def mined(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pii")
    log = pii_log()
    path = write_jsonl(tmp / "log.jsonl", log.records)
    out, quarantine, raw = tmp / "out.jsonl", tmp / "q.jsonl", tmp / "raw.jsonl"
    args = ["mine", str(path), "-f", "openai-jsonl", "-o", str(out), "--quarantine"]
    args += [str(quarantine), "--keep-raw", str(raw)]
    logger = logging.getLogger("casemill")
    records: list[str] = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = lambda record: records.append(record.getMessage())  # type: ignore[method-assign]
    logger.addHandler(handler)
    old = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        as_json = CliRunner().invoke(app, [*args, "--json"])
        out.unlink()
        quarantine.unlink(missing_ok=True)
        raw.unlink()
        table = CliRunner().invoke(app, args)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old)
    return log, as_json, table, out, quarantine, raw, records


def test_the_log_holds_over_300_values_of_every_kind():
    log = pii_log()
    kinds = Counter(log.values.values())
    assert len(log.values) > 300
    assert set(kinds) == KINDS | {"id"}
    assert min(kinds.values()) >= 29


def test_no_value_reaches_anything_mine_writes(mined):
    log, as_json, table, out, quarantine, _, records = mined
    assert as_json.exit_code == 0, as_json.output
    assert table.exit_code == 0, table.output
    outputs = {
        "cases": out.read_text(encoding="utf-8"),
        "quarantine": quarantine.read_text(encoding="utf-8") if quarantine.exists() else "",
        "summary": as_json.stdout,
        "table": table.output,
        "logs": "\n".join(records),
    }
    assert _leaks(log.values, outputs) == []
    cases = [Case.model_validate_json(line) for line in outputs["cases"].splitlines()]
    assert len({c.provenance.source.conversation_id for c in cases}) == 30


def test_the_summary_counts_every_kind_and_says_what_names_were_searched(mined):
    summary = json.loads(mined[1].stdout)
    assert set(summary["redactions"]) >= KINDS
    assert summary["redactions"]["iban"] == 60 and summary["redactions"]["ssn"] == 30
    assert summary["uncued_names"].startswith("not searched: named-entity layer off")
    assert "named-entity layer off" in mined[2].output


def test_keep_raw_maps_every_value_back(mined):
    log, *_, raw, _ = mined
    kept = [json.loads(line) for line in raw.read_text(encoding="utf-8").splitlines()]
    raws = {r["raw"].lower() for r in kept}
    for value, kind in log.values.items():
        if kind == "name":  # kept token by token (a name's surrogate is its tokens')
            assert {w.lower() for w in value.split() if len(w) > 1} <= raws, value
        elif kind == "last4":
            assert value[-4:] in raws
        elif kind != "id":  # (an id is made of the name tokens kept)
            assert value.lower() in raws, (kind, value)


def test_surrogates_keep_shape_and_checks(mined):
    log, *_, raw, _ = mined
    kept = [json.loads(line) for line in raw.read_text(encoding="utf-8").splitlines()]
    by_kind: dict[str, list[tuple[str, str]]] = {}
    for r in kept:
        by_kind.setdefault(r["kind"], []).append((r["raw"], r["surrogate"]))
    for raw_value, sur in by_kind["iban"]:
        assert iban.is_valid(sur) and sur[:2] == raw_value[:2], sur
        assert (" " in sur) == (" " in raw_value) and len(sur) == len(raw_value)
    for _, sur in by_kind["card"]:
        assert luhn.is_valid(sur.replace(" ", "")), sur
    for _, sur in by_kind["ssn"]:
        assert ssn.is_valid(sur) and re.fullmatch(r"\d{3}-\d{2}-\d{4}", sur)
    for _, sur in by_kind["sin"]:
        assert sin.is_valid(sur) and re.fullmatch(r"\d{3} \d{3} \d{3}", sur)
    for raw_value, sur in by_kind["dob"]:
        shape = re.sub(r"\d", "0", raw_value)
        if raw_value[0].isalpha():  # September 10, 1996
            assert re.fullmatch(r"[A-Z][a-z]+ \d{1,2}, \d{4}", sur), (raw_value, sur)
        else:
            assert re.sub(r"\d", "0", sur) == shape, (raw_value, sur)
    for raw_value, sur in by_kind["ip"]:
        assert (":" in sur) == (":" in raw_value)


def test_last_four_said_in_text_agree_with_the_surrogate_card(mined):
    out = mined[3]
    checked = 0
    for line in out.read_text(encoding="utf-8").splitlines():
        case = Case.model_validate_json(line)
        text = json.dumps(case.model_dump(mode="json"))
        cards = set(re.findall(r'\\"number\\": \\"(\d{16})\\"', text))
        said = set(re.findall(r"card ending (\d{4})", text))
        last4 = set(re.findall(r'\\"last4\\": \\"(\d{4})\\"', text))
        if cards:
            assert said == last4 == {c[-4:] for c in cards}, (said, last4, cards)
            checked += 1
    assert checked >= 30


def test_amounts_flights_airports_order_ids_and_travel_dates_are_kept(mined):
    log, _, _, out, *_ = mined
    text = out.read_text(encoding="utf-8")
    for n in range(30):
        for kept in (f"HAT{170 + n}", f"#W{4100000 + n}", f"2024-05-{10 + n % 18:02d}"):
            assert kept in text, kept
        assert f'"amount": {125.5 + n}' in text or f'"amount":{125.5 + n}' in text
    assert text.count("$125.50 for flight") >= 30 and "JFK to SFO" in text


@pytest.mark.slow
def test_the_mine_flow_writes_no_value_either(prefect_harness, tmp_path):
    from prefect.client.orchestration import get_client

    from casemill.flows.mine import mine_logs

    log = pii_log()
    path = write_jsonl(tmp_path / "log.jsonl", log.records)
    out = tmp_path / "out.jsonl"
    result = mine_logs([str(path)], out=str(out), corpus_dir=None)

    async def artifacts() -> list[str]:
        async with get_client() as client:
            found = await client.read_artifacts()
        return [json.dumps(a.data, default=str) + (a.description or "") for a in found]

    outputs = {
        "cases": out.read_text(encoding="utf-8"),
        "result": json.dumps(result, default=str),
        "artifacts": "\n".join(asyncio.run(artifacts())),
    }
    for extra in tmp_path.glob("out*"):
        outputs[extra.name] = extra.read_text(encoding="utf-8")
    assert outputs["cases"] and outputs["artifacts"]
    assert _leaks(log.values, outputs) == []


def test_the_log_is_made_by_seed():
    assert pii_log(seed=5).records == pii_log(seed=5).records
    assert pii_log(seed=5).records != pii_log(seed=6).records
    assert isinstance(Path(__file__), Path)


@pytest.mark.shared_data
@pytest.mark.parametrize(
    "log, fmt",
    [
        ("tau-bench-airline-logs/support_logs.jsonl", "openai-jsonl"),
        ("tau-bench-retail-logs/retail_conversations.jsonl", "transcript"),
    ],
)
def test_nothing_but_personal_data_is_replaced_in_the_benchmark_logs(shared_data, log, fmt):
    """The benchmark logs hold none of the new kinds; what redaction keeps raw is personal:
    no flight number, airport code, order or product id, amount or date of travel."""
    from casemill.mining import MineOptions, mine

    result = mine([shared_data / log], fmt, options=MineOptions(keep_raw=True))
    kinds = {r["kind"] for r in result.raw_values}
    assert kinds <= {"address", "city", "dob", "email", "last4", "name", "payment", "postcode"} | {
        "user_id"
    }
    raws = {r["raw"] for r in result.raw_values}
    text = (shared_data / log).read_text(encoding="utf-8")
    travel = set(re.findall(r'"date": "(\d{4}-\d{2}-\d{2})"', text))
    kept = set(re.findall(r"\b(HAT\d{3}|#?W\d{7}|[A-Z]{3})\b", text))
    amounts = set(re.findall(r'"(?:amount|price)": (\d+(?:\.\d+)?)', text))
    assert raws.isdisjoint(travel | kept | amounts)
    assert all(r["raw"][:2] in ("19", "20") and r["raw"] < "2010" for r in result.raw_values
               if r["kind"] == "dob")  # fmt: skip
