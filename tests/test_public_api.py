"""casemill's curated API: every name in `casemill.__all__` is there, and importing casemill
alone imports none of the heavy stage dependencies (they load on first use of a name)."""

from __future__ import annotations

import subprocess
import sys

import casemill


def test_every_public_name_resolves_to_its_module_object():
    for name in casemill.__all__:
        value = getattr(casemill, name)
        assert value is not None, name
    assert casemill.run_mine.__module__ == "casemill.mining.stage"
    assert casemill.run_evaluate.__module__ == "casemill.evaluation.stage"
    assert set(casemill.__all__) <= set(dir(casemill))


def test_an_unknown_name_is_an_attribute_error():
    try:
        casemill.run_everything  # noqa: B018
    except AttributeError as exc:
        assert "run_everything" in str(exc)
    else:
        raise AssertionError("casemill.run_everything should not exist")


def test_importing_casemill_imports_no_stage_dependency():
    code = (
        "import sys, casemill; "
        "print(sorted(m for m in ('prefect', 'great_expectations', 'pandas', 'openai') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
