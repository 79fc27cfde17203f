"""prefect.yaml names real flows, with parameters those flows accept, and the cron schedules the
local `casemill serve` deployments use."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import yaml
from prefect.flows import load_flow_from_entrypoint

ROOT = Path(__file__).resolve().parents[2]
DEPLOYMENTS = yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]


@pytest.mark.parametrize("deployment", DEPLOYMENTS, ids=[d["name"] for d in DEPLOYMENTS])
def test_entrypoints_load_and_take_the_parameters(deployment, monkeypatch):
    monkeypatch.chdir(ROOT)
    flow = load_flow_from_entrypoint(deployment["entrypoint"])
    accepted = set(inspect.signature(flow.fn).parameters)
    assert set(deployment.get("parameters", {})) <= accepted
    for schedule in deployment.get("schedules", []):
        assert len(schedule["cron"].split()) == 5


def test_serve_deployments_match_prefect_yaml(monkeypatch):
    from casemill.flows.deployments import deployments

    served = {d.name: d for d in deployments()}
    declared = {d["name"]: d for d in DEPLOYMENTS}
    for name, deployment in served.items():
        assert name in declared
        assert deployment.entrypoint.endswith(declared[name]["entrypoint"].split(":")[1])
        assert deployment.schedules[0].schedule.cron == declared[name]["schedules"][0]["cron"]
